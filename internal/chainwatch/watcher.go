// Package chainwatch is the chain watcher: it reads USDT transfers to the
// treasury from a TronGrid-compatible API, matches them to deposits by
// their exact amount, counts confirmations, and credits each paid deposit
// exactly once (docs/deposits.md says what it decides and why).
//
// One replica watches at a time, elected with a PostgreSQL advisory lock;
// the others wait and take over when the leader's connection ends. Where
// the watcher stands is kept in PostgreSQL, so a restart neither misses
// nor repeats anything: transfers are re-read with an overlap, and one seen
// before changes nothing.
package chainwatch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"creativeapi/gen/db"
	"creativeapi/internal/deposit"
	"creativeapi/internal/money"
	"creativeapi/internal/store"
	"creativeapi/internal/trongrid"
)

// leaderLock is the advisory lock key whose holder is the one watcher.
const leaderLock = 7_305_551_002

// Defaults of Config.
const (
	// DefaultOverlap is how far back of its position each poll reads again:
	// more than the time a transfer takes to show in the API after its
	// block (seconds on TronGrid).
	DefaultOverlap = 2 * time.Minute
	// DefaultMaxBackoff caps the wait after repeated upstream errors.
	DefaultMaxBackoff = 5 * time.Minute
	// maxPages bounds one poll's read: 100 pages of 200 transfers.
	maxPages = 100
	// batchSize is how many transfers one transaction records, and how
	// many confirming transfers one poll checks.
	batchSize = 200
	// receiptWorkers bounds the upstream calls in flight at once.
	receiptWorkers = 4
)

// Config is what the watcher watches.
type Config struct {
	// Treasury is the address deposits are paid to; Contract the USDT contract.
	Treasury string
	Contract string
	// PollInterval is the pause between polls.
	PollInterval time.Duration
	// MonitoringWindow is how far back a poll ever reads: the time a
	// deposit's amount stays reserved after its expiry.
	MonitoringWindow time.Duration
	// Overlap: DefaultOverlap when zero.
	Overlap time.Duration
	// MaxBackoff: DefaultMaxBackoff when zero.
	MaxBackoff time.Duration
}

// Chain is the part of the TronGrid API the watcher reads
// (*trongrid.Client).
type Chain interface {
	Transfers(ctx context.Context, q trongrid.TransfersQuery) (trongrid.Page, error)
	NowBlock(ctx context.Context, solid bool) (int64, error)
	TransactionInfo(ctx context.Context, txID string) (trongrid.Receipt, error)
}

// Watcher polls the chain and credits deposits.
type Watcher struct {
	cfg   Config
	st    *store.Store
	chain Chain
	log   *slog.Logger
	// Sleep waits d or until ctx ends (false then); tests replace it.
	Sleep func(ctx context.Context, d time.Duration) bool
	// Now is the clock of the read position; tests replace it.
	Now func() time.Time
	// OnPoll, when set, sees the outcome of every poll (for metrics).
	OnPoll func(Result, error)

	leading atomic.Bool
}

// New returns a watcher; Run starts it.
func New(cfg Config, st *store.Store, chain Chain, log *slog.Logger) *Watcher {
	if cfg.Overlap <= 0 {
		cfg.Overlap = DefaultOverlap
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	return &Watcher{cfg: cfg, st: st, chain: chain, log: log.With("component", "chain watcher"), Sleep: sleep, Now: time.Now}
}

// Leading reports whether this watcher is the one polling.
func (w *Watcher) Leading() bool { return w.leading.Load() }

// Run tries to become the watcher every poll interval and, once it is,
// polls until ctx ends or its lock connection is lost. It returns when ctx
// ends; it never gives up on errors.
func (w *Watcher) Run(ctx context.Context) {
	for {
		if err := w.lead(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("lost the watcher lock; trying again", "error", err)
		}
		if !w.Sleep(ctx, w.cfg.PollInterval) {
			return
		}
	}
}

// lead holds the leader lock on a connection of its own, outside the
// request pool (which it would otherwise shrink by one), while it polls.
// It returns nil at once when another replica holds the lock.
func (w *Watcher) lead(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, w.st.Pool.Config().ConnConfig.Copy())
	if err != nil {
		return store.Translate(err)
	}
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", leaderLock).Scan(&got); err != nil || !got {
		_ = conn.Close(context.WithoutCancel(ctx))
		return store.Translate(err)
	}
	defer w.resign(ctx, conn)
	w.leading.Store(true)
	w.log.Info("leading: this replica polls the chain", "treasury", w.cfg.Treasury, "interval", w.cfg.PollInterval.String())

	failures := 0
	for {
		res, err := w.Poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if w.OnPoll != nil {
			w.OnPoll(res, err)
		}
		delay := w.cfg.PollInterval
		if err != nil {
			failures++
			delay = Backoff(err, failures, w.cfg.PollInterval, w.cfg.MaxBackoff, rand.Float64)
			w.log.Warn("poll failed; backing off", "error", err, "failures", failures, "retry_in", delay.String())
		} else {
			failures = 0
			res.log(ctx, w.log)
		}
		if !w.Sleep(ctx, delay) {
			return nil
		}
		// Still the leader only while the lock's connection lives.
		if _, err := conn.Exec(ctx, "SELECT 1"); err != nil {
			return fmt.Errorf("lock connection: %w", err)
		}
	}
}

// resign gives up the lock by closing its connection.
func (w *Watcher) resign(ctx context.Context, conn *pgx.Conn) {
	w.leading.Store(false)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}

// Backoff is the wait after the failures-th failed poll in a row:
// exponential from the poll interval, with jitter in its upper half,
// capped, and never shorter than the upstream's Retry-After. rnd returns a
// number in [0, 1).
func Backoff(err error, failures int, interval, maxWait time.Duration, rnd func() float64) time.Duration {
	d := interval
	for i := 1; i < failures && d < maxWait; i++ {
		d *= 2
	}
	d = min(d, maxWait)
	d = d/2 + time.Duration(rnd()*float64(d/2))
	var ge *trongrid.Error
	if errors.As(err, &ge) && ge.RetryAfter > d {
		d = ge.RetryAfter
	}
	return max(d, interval)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Result counts what one poll did.
type Result struct {
	Head, Solid int64
	// Listed transfers were read; New ones were judged and recorded.
	Listed, New int
	// Confirming, Late, Unmatched and Failed count the new transfers by
	// what they were recorded as; Pending ones the node did not know yet.
	Confirming, Late, Unmatched, Failed, Pending int
	// Malformed items of the list were left out (and logged).
	Malformed int
	// Credited deposits, and Reverted ones whose transfer failed or vanished.
	Credited, Reverted int
}

func (r Result) log(ctx context.Context, log *slog.Logger) {
	attrs := []any{"head", r.Head, "solid", r.Solid, "listed", r.Listed, "new", r.New,
		"confirming", r.Confirming, "late", r.Late, "unmatched", r.Unmatched, "failed", r.Failed,
		"pending", r.Pending, "credited", r.Credited, "reverted", r.Reverted}
	if r.New > 0 || r.Credited > 0 || r.Reverted > 0 {
		log.InfoContext(ctx, "poll", attrs...)
	} else {
		log.DebugContext(ctx, "poll", attrs...)
	}
}

// Poll reads the chain once: new transfers are judged and recorded, the
// confirming ones counted, credited or put back. The caller must be the
// leader; polls are nonetheless safe to overlap (a stale leader's), since
// every write is conditional on the state it read.
func (w *Watcher) Poll(ctx context.Context) (Result, error) {
	var res Result
	started := w.Now()
	head, err := w.chain.NowBlock(ctx, false)
	if err != nil {
		return res, err
	}
	solid, err := w.chain.NowBlock(ctx, true)
	if err != nil {
		return res, err
	}
	res.Head, res.Solid = head, min(solid, head)

	q := w.st.Q
	key := db.ChainPositionGetParams{Network: deposit.Network, Address: w.cfg.Treasury, Token: w.cfg.Contract}
	since := started.Add(-w.cfg.MonitoringWindow)
	if pos, err := q.ChainPositionGet(ctx, key); err == nil {
		since = later(since, pos.Add(-w.cfg.Overlap))
	} else if !errors.Is(err, store.ErrNotFound) {
		return res, err
	}

	listed, err := w.list(ctx, since, &res)
	if err != nil {
		return res, err
	}
	fresh, err := w.unknown(ctx, listed)
	if err != nil {
		return res, err
	}
	judged, holdAt, lookupErr := w.receipts(ctx, fresh, &res)
	position := started
	if !holdAt.IsZero() && holdAt.Before(position) {
		// A transfer whose receipt the node did not have yet is read again.
		position = holdAt.Add(-time.Millisecond)
	}
	if err := w.record(ctx, judged, res.Head, &res); err != nil {
		return res, err
	}
	if err := q.ChainPositionSave(ctx, db.ChainPositionSaveParams{
		Network: key.Network, Address: key.Address, Token: key.Token,
		Position: position, HeadBlock: res.Head, SolidBlock: res.Solid,
	}); err != nil {
		return res, err
	}
	if err := w.confirm(ctx, res.Head, res.Solid, &res); err != nil {
		return res, err
	}
	// What could be read was recorded; a failed lookup still ends the poll
	// as failed, so the watcher backs off instead of asking again at once.
	return res, lookupErr
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// transferKey identifies a transfer event, as chain_transfers' unique key does.
type transferKey struct{ tx, token, from, value string }

func keyOf(t trongrid.Transfer) transferKey {
	return transferKey{t.TxID, t.Token, t.From, t.Value}
}

// list reads every page of transfers since the given time, oldest first,
// each transfer once.
func (w *Watcher) list(ctx context.Context, since time.Time, res *Result) ([]trongrid.Transfer, error) {
	var all []trongrid.Transfer
	seen := map[transferKey]bool{}
	fingerprints := map[string]bool{}
	q := trongrid.TransfersQuery{Account: w.cfg.Treasury, Contract: w.cfg.Contract, Since: since}
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("more than %d pages of transfers since %s", maxPages, since.Format(time.RFC3339))
		}
		p, err := w.chain.Transfers(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, m := range p.Malformed {
			w.log.ErrorContext(ctx, "left out a malformed transfer of the chain API's answer", "item", m)
		}
		res.Malformed += len(p.Malformed)
		for _, t := range p.Transfers {
			if k := keyOf(t); !seen[k] {
				seen[k] = true
				all = append(all, t)
			}
		}
		if p.Fingerprint == "" {
			break
		}
		if fingerprints[p.Fingerprint] {
			return nil, &trongrid.Error{Kind: trongrid.Malformed, Op: "trc20 transfers", Err: errors.New("a page repeats its fingerprint")}
		}
		fingerprints[p.Fingerprint] = true
		q.Fingerprint = p.Fingerprint
	}
	slices.SortStableFunc(all, func(a, b trongrid.Transfer) int {
		return cmp.Or(a.BlockTime.Compare(b.BlockTime), cmp.Compare(a.TxID, b.TxID))
	})
	res.Listed = len(all)
	return all, nil
}

// unknown keeps the transfers not recorded before, in one statement.
func (w *Watcher) unknown(ctx context.Context, listed []trongrid.Transfer) ([]trongrid.Transfer, error) {
	if len(listed) == 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(listed))
	for _, t := range listed {
		ids = append(ids, t.TxID)
	}
	rows, err := w.st.Q.ChainTransfersKnown(ctx, db.ChainTransfersKnownParams{Network: deposit.Network, TxIds: ids})
	if err != nil {
		return nil, err
	}
	known := make(map[transferKey]bool, len(rows))
	for _, r := range rows {
		known[transferKey{r.TxID, r.Token, r.FromAddress, r.AmountRaw}] = true
	}
	var fresh []trongrid.Transfer
	for _, t := range listed {
		if !known[keyOf(t)] {
			fresh = append(fresh, t)
		}
	}
	return fresh, nil
}

// judged is a new transfer with its judgement and receipt.
type judged struct {
	t       trongrid.Transfer
	j       judgement
	receipt trongrid.Receipt
}

// receipts judges the new transfers and reads each one's receipt. It
// returns those to record; the earliest block time of a transfer whose
// receipt it could not read or the node did not know yet (zero when none),
// before which the position stays; and the first error of a lookup.
func (w *Watcher) receipts(ctx context.Context, fresh []trongrid.Transfer, res *Result) ([]judged, time.Time, error) {
	var out []judged
	for _, t := range fresh {
		j := judge(t, w.cfg.Treasury, w.cfg.Contract)
		if !j.forTreasury {
			w.log.WarnContext(ctx, "the chain API listed a transfer not to the treasury; ignored", "tx", t.TxID, "to", t.To)
			continue
		}
		out = append(out, judged{t: t, j: j})
	}
	receipts, errs := w.lookup(ctx, len(out), func(i int) string { return out[i].t.TxID })
	var hold time.Time
	var firstErr error
	kept := out[:0]
	for i, o := range out {
		if errs[i] != nil || !receipts[i].Known {
			if errs[i] != nil && firstErr == nil {
				firstErr = errs[i]
			}
			res.Pending++
			if hold.IsZero() || o.t.BlockTime.Before(hold) {
				hold = o.t.BlockTime
			}
			continue
		}
		o.receipt = receipts[i]
		kept = append(kept, o)
	}
	return kept, hold, firstErr
}

// lookup reads n receipts, a few at a time.
func (w *Watcher) lookup(ctx context.Context, n int, txID func(int) string) ([]trongrid.Receipt, []error) {
	receipts := make([]trongrid.Receipt, n)
	errs := make([]error, n)
	sem := make(chan struct{}, receiptWorkers)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			receipts[i], errs[i] = w.chain.TransactionInfo(ctx, txID(i))
		})
	}
	wg.Wait()
	return receipts, errs
}

// record matches the judged transfers against the deposits reserving their
// amounts and records them, batchSize at a time, each batch in one
// transaction of three round trips whatever its size.
func (w *Watcher) record(ctx context.Context, all []judged, head int64, res *Result) error {
	for chunk := range slices.Chunk(all, batchSize) {
		var counts Result
		err := w.st.InTx(ctx, func(q store.Tx) error {
			counts = Result{}
			amounts := make([]int64, 0, len(chunk))
			for _, o := range chunk {
				if o.j.amount > 0 {
					amounts = append(amounts, o.j.amount)
				}
			}
			candidates := map[int64]*deposit.Candidate{}
			if len(amounts) > 0 {
				rows, err := q.DepositsForAmounts(ctx, db.DepositsForAmountsParams{
					Network: deposit.Network, Address: w.cfg.Treasury, Currency: money.USDT.Code, Amounts: amounts,
				})
				if err != nil {
					return err
				}
				for _, r := range rows {
					candidates[r.RequestedAmountMinor] = &deposit.Candidate{
						ID: r.ID, Status: r.Status, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, TxID: r.TransferTxID,
					}
				}
			}
			p := db.ChainTransfersRecordParams{Network: deposit.Network, HeadBlock: head}
			for _, o := range chunk {
				status, reason, depositID := w.verdict(o, candidates)
				switch status {
				case string(deposit.Confirming):
					counts.Confirming++
				case string(deposit.Late):
					counts.Late++
				case string(deposit.Unmatched):
					counts.Unmatched++
				default:
					counts.Failed++
				}
				p.TxIds = append(p.TxIds, o.t.TxID)
				p.Tokens = append(p.Tokens, o.t.Token)
				p.FromAddresses = append(p.FromAddresses, o.t.From)
				p.ToAddresses = append(p.ToAddresses, o.t.To)
				p.AmountRaws = append(p.AmountRaws, o.t.Value)
				p.AmountMinors = append(p.AmountMinors, o.j.amount)
				p.BlockTimes = append(p.BlockTimes, o.t.BlockTime)
				p.BlockNumbers = append(p.BlockNumbers, o.receipt.Block)
				p.Statuses = append(p.Statuses, status)
				p.Reasons = append(p.Reasons, reason)
				p.DepositIds = append(p.DepositIds, depositID)
			}
			deps, err := q.ChainTransfersRecord(ctx, p)
			if err != nil {
				return err
			}
			return deposit.WriteEvents(ctx, q, deps, w.Now())
		})
		if err != nil {
			return err
		}
		res.New += len(chunk)
		res.Confirming += counts.Confirming
		res.Late += counts.Late
		res.Unmatched += counts.Unmatched
		res.Failed += counts.Failed
	}
	return nil
}

// verdict is what a judged transfer is recorded as. A confirming match
// takes its deposit, so a second transfer of the same amount in the batch
// finds it paid.
func (w *Watcher) verdict(o judged, candidates map[int64]*deposit.Candidate) (status, reason string, depositID uuid.UUID) {
	switch {
	case !o.receipt.Succeeded():
		return "failed", "receipt " + o.receipt.Result, uuid.Nil
	case o.j.reason != "":
		return string(deposit.Unmatched), o.j.reason, uuid.Nil
	}
	c := candidates[o.j.amount]
	v, reason := deposit.Match(c, o.t.BlockTime)
	switch v {
	case deposit.Confirming:
		c.TxID = &o.t.TxID
		return string(v), "", c.ID
	case deposit.Late:
		return string(v), "", c.ID
	}
	return string(v), reason, uuid.Nil
}

// confirm checks every confirming transfer against the node: one that
// failed or vanished puts its deposit back, one solidified with enough
// confirmations credits it, the others update their count.
func (w *Watcher) confirm(ctx context.Context, head, solid int64, res *Result) error {
	rows, err := w.st.Q.ChainTransfersConfirming(ctx, db.ChainTransfersConfirmingParams{Network: deposit.Network, RowLimit: batchSize})
	if err != nil || len(rows) == 0 {
		return err
	}
	receipts, errs := w.lookup(ctx, len(rows), func(i int) string { return rows[i].TxID })
	var update db.ChainConfirmationsSetParams
	var revert db.ChainTransfersRevertParams
	var credit []db.ChainTransfersConfirmingRow
	var firstErr error
	for i, r := range rows {
		rc := receipts[i]
		switch {
		case errs[i] != nil:
			// Judged again next poll; nothing is decided on an error.
			if firstErr == nil {
				firstErr = errs[i]
			}
		case !rc.Known:
			revert.TransferIds = append(revert.TransferIds, r.ID)
			revert.Statuses = append(revert.Statuses, "vanished")
			revert.Reasons = append(revert.Reasons, "the node no longer knows the transaction")
		case !rc.Succeeded():
			revert.TransferIds = append(revert.TransferIds, r.ID)
			revert.Statuses = append(revert.Statuses, "failed")
			revert.Reasons = append(revert.Reasons, "receipt "+rc.Result)
		case deposit.Creditable(head, solid, rc.Block, r.ConfirmationsRequired):
			credit = append(credit, r)
		default:
			update.TransferIds = append(update.TransferIds, r.ID)
			update.BlockNumbers = append(update.BlockNumbers, rc.Block)
			update.Confirmations = append(update.Confirmations, deposit.Confirmations(head, rc.Block, r.ConfirmationsRequired))
		}
	}
	if len(update.TransferIds) > 0 {
		if err := w.st.InTx(ctx, func(q store.Tx) error {
			deps, err := q.ChainConfirmationsSet(ctx, update)
			if err != nil {
				return err
			}
			return deposit.WriteEvents(ctx, q, deps, w.Now())
		}); err != nil {
			return err
		}
	}
	if len(revert.TransferIds) > 0 {
		reverted, err := w.revert(ctx, revert)
		if err != nil {
			return err
		}
		res.Reverted += len(reverted)
		for i, id := range revert.TransferIds {
			w.log.WarnContext(ctx, "a confirming transfer "+revert.Statuses[i]+"; its deposit waits again", "transfer", id, "reason", revert.Reasons[i])
		}
	}
	for _, r := range credit {
		if err := w.credit(ctx, r); err != nil {
			return err
		}
		res.Credited++
	}
	return firstErr
}

// credit pays one deposit: the deposit, its ledger entry and the transfer
// record change in one transaction.
func (w *Watcher) credit(ctx context.Context, r db.ChainTransfersConfirmingRow) error {
	var amount int64
	if r.AmountMinor != nil {
		amount = *r.AmountMinor
	}
	var outcome deposit.CreditOutcome
	err := w.st.InTx(ctx, func(q store.Tx) error {
		var err error
		outcome, err = deposit.Credit(ctx, q, *r.DepositID, r.TxID, amount)
		if err != nil {
			return err
		}
		if outcome != deposit.Credited {
			return errNotCredited
		}
		return q.Next().ChainTransferCredited(ctx, r.ID)
	})
	if err == nil {
		w.log.InfoContext(ctx, "deposit credited", "deposit", r.DepositID.String(), "tx", r.TxID, "amount", money.USDT.Format(amount))
		return nil
	}
	if !errors.Is(err, errNotCredited) && !errors.Is(err, deposit.ErrNotCreditable) && !errors.Is(err, deposit.ErrAmountMismatch) {
		return err
	}
	// The deposit cannot take this transfer (it cannot happen unless the
	// data was changed by hand): an operator looks at it.
	w.log.ErrorContext(ctx, "a confirmed transfer could not credit its deposit; marked for review",
		"deposit", r.DepositID.String(), "tx", r.TxID, "outcome", outcome.String(), "error", err)
	_, err = w.revert(ctx, db.ChainTransfersRevertParams{
		TransferIds: []int64{r.ID}, Statuses: []string{string(deposit.Unmatched)}, Reasons: []string{"not_creditable"},
	})
	return err
}

// revert ends confirming transfers and puts their deposits back, with the
// deposits' events, in one transaction.
func (w *Watcher) revert(ctx context.Context, p db.ChainTransfersRevertParams) ([]db.Deposit, error) {
	var deps []db.Deposit
	err := w.st.InTx(ctx, func(q store.Tx) error {
		var err error
		if deps, err = q.ChainTransfersRevert(ctx, p); err != nil {
			return err
		}
		return deposit.WriteEvents(ctx, q, deps, w.Now())
	})
	return deps, err
}

var errNotCredited = errors.New("chainwatch: the deposit was not credited")
