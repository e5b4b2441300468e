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
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/deposit"
	"creativeapi/internal/money"
	"creativeapi/internal/store"
	"creativeapi/internal/trongrid"
)

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
	// Tolerance is the shortfall a transfer carrying a deposit's
	// fingerprint may have and still be credited with no operator
	// (DEPOSIT_SHORTFALL_TOLERANCE); deposit.DefaultTolerance() when nil.
	Tolerance *deposit.Tolerance
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
	if cfg.Tolerance == nil {
		tol := deposit.DefaultTolerance()
		cfg.Tolerance = &tol
	}
	return &Watcher{cfg: cfg, st: st, chain: chain, log: log.With("component", "chain watcher"), Sleep: sleep, Now: time.Now}
}

// Result counts what one poll did.
type Result struct {
	Head, Solid int64
	// Listed transfers were read; New ones were judged and recorded.
	Listed, New int
	// Confirming, Late, Unmatched and Failed count the new transfers by
	// what they were recorded as; Pending ones the node did not know yet,
	// or late or unmatched ones whose block is not final yet.
	Confirming, Late, Unmatched, Failed, Pending int
	// Malformed items of the list were left out (and logged).
	Malformed int
	// Credited deposits, and Reverted ones whose transfer failed or vanished.
	Credited, Reverted int
}

// count counts a new transfer recorded as s.
func (r *Result) count(s deposit.TransferStatus) {
	switch s {
	case deposit.TransferConfirming:
		r.Confirming++
	case deposit.TransferLate:
		r.Late++
	case deposit.TransferUnmatched:
		r.Unmatched++
	default:
		r.Failed++
	}
}

// Recorded is how many new transfers the poll recorded as each of
// deposit.Recorded.
func (r Result) Recorded() map[deposit.TransferStatus]int {
	return map[deposit.TransferStatus]int{
		deposit.TransferConfirming: r.Confirming, deposit.TransferLate: r.Late,
		deposit.TransferUnmatched: r.Unmatched, deposit.TransferFailed: r.Failed,
	}
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
	return w.poll(ctx, time.Time{})
}

// Rescan reads the treasury's transfers again from since, however far back
// (docs/deposits.md, "Reading history again"): what was recorded before is
// recognised and changes nothing, what was missed is judged and recorded
// as a poll would, so it is idempotent and credits nothing twice. It keeps
// the watcher's position where it is (moving it only forward, as a poll
// does) and may run while the leader polls.
func (w *Watcher) Rescan(ctx context.Context, since time.Time) (Result, error) {
	if since.IsZero() {
		return Result{}, errors.New("chainwatch: rescan needs a time to read from")
	}
	return w.poll(ctx, since)
}

// poll is Poll, reading from rescanFrom when it is set.
func (w *Watcher) poll(ctx context.Context, rescanFrom time.Time) (Result, error) {
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
	var saved time.Time
	if pos, err := q.ChainPositionGet(ctx, key); err == nil {
		since, saved = later(since, pos.Add(-w.cfg.Overlap)), pos
	} else if !errors.Is(err, store.ErrNotFound) {
		return res, err
	}
	if !rescanFrom.IsZero() {
		since = rescanFrom
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
	lateAt, err := w.record(ctx, judged, res.Head, res.Solid, &res)
	if err != nil {
		return res, err
	}
	if !lateAt.IsZero() && (holdAt.IsZero() || lateAt.Before(holdAt)) {
		// A late or unmatched transfer waits for its block to be final: read
		// it again.
		holdAt = lateAt
	}
	position := started
	if !holdAt.IsZero() && holdAt.Before(position) {
		// A transfer whose receipt the node did not have yet is read again.
		position = holdAt.Add(-time.Millisecond)
	}
	if !rescanFrom.IsZero() && position.Before(saved) {
		// A rescan that held before the position leaves it: the regular
		// poll reads from there.
		position = saved
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
func (w *Watcher) record(ctx context.Context, all []judged, head, solid int64, res *Result) (lateAt time.Time, err error) {
	for chunk := range slices.Chunk(all, batchSize) {
		var waiting time.Time
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
						ID: r.ID, Status: deposit.Status(r.Status), CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, TxID: r.TransferTxID,
					}
				}
			}
			fingerprinted, err := w.fingerprints(ctx, q, chunk, candidates)
			if err != nil {
				return err
			}
			ts := make([]deposit.Transfer, 0, len(chunk))
			waiting = time.Time{}
			for _, o := range chunk {
				var fp *deposit.Fingerprinted
				if o.j.amount > 0 && candidates[o.j.amount] == nil {
					fp = deposit.Fingerprint(o.j.amount, o.t.BlockTime, fingerprinted, *w.cfg.Tolerance)
				}
				status, reason, depositID := deposit.Judge(deposit.Receipt{Succeeded: o.receipt.Succeeded(), Result: o.receipt.Result},
					o.j.reason, candidates[o.j.amount], fp, o.t.BlockTime, o.t.TxID, o.receipt.Block <= solid)
				if depositID != uuid.Nil {
					// The deposit is taken, by its amount and by its
					// fingerprint alike: a later transfer of the chunk
					// finds it paid either way.
					taken(depositID, o.t.TxID, candidates, fingerprinted)
				}
				if status == deposit.TransferUnseen {
					counts.Pending++
					if waiting.IsZero() || o.t.BlockTime.Before(waiting) {
						waiting = o.t.BlockTime
					}
					continue
				}
				counts.count(status)
				ts = append(ts, deposit.Transfer{
					TxID: o.t.TxID, Token: o.t.Token, From: o.t.From, To: o.t.To,
					AmountRaw: o.t.Value, AmountMinor: o.j.amount, BlockTime: o.t.BlockTime, Block: o.receipt.Block,
					Status: status, Reason: reason, DepositID: depositID,
				})
			}
			return deposit.Record(ctx, q, head, ts, w.Now())
		})
		if err != nil {
			return lateAt, err
		}
		res.New += len(chunk) - counts.Pending
		res.Pending += counts.Pending
		res.Confirming += counts.Confirming
		res.Late += counts.Late
		res.Unmatched += counts.Unmatched
		res.Failed += counts.Failed
		if !waiting.IsZero() && (lateAt.IsZero() || waiting.Before(lateAt)) {
			lateAt = waiting
		}
	}
	return lateAt, nil
}

// taken marks deposit id as paid by txID among the exact candidates and
// the fingerprint candidates of a chunk.
func taken(id uuid.UUID, txID string, exact map[int64]*deposit.Candidate, fps []deposit.FingerprintCandidate) {
	for _, c := range exact {
		if c.ID == id && c.TxID == nil {
			c.TxID = &txID
		}
	}
	for i := range fps {
		if fps[i].ID == id && fps[i].TxID == nil {
			fps[i].TxID = &txID
		}
	}
}

// fingerprints locks the deposits whose matching suffix one of chunk's
// transfers carries, for those no deposit reserves the amount of
// (deposit.Fingerprint judges them), in one statement; none when every
// transfer has an exact candidate.
func (w *Watcher) fingerprints(ctx context.Context, q store.Tx, chunk []judged, exact map[int64]*deposit.Candidate) ([]deposit.FingerprintCandidate, error) {
	var suffixes []int32
	var since time.Time
	for _, o := range chunk {
		fp := deposit.FingerprintOf(o.j.amount)
		if fp == 0 || exact[o.j.amount] != nil {
			continue
		}
		suffixes = append(suffixes, int32(fp))
		if since.IsZero() || o.t.BlockTime.Before(since) {
			since = o.t.BlockTime
		}
	}
	if len(suffixes) == 0 {
		return nil, nil
	}
	rows, err := q.DepositsForFingerprints(ctx, db.DepositsForFingerprintsParams{
		Network: deposit.Network, Address: w.cfg.Treasury, Currency: money.USDT.Code, Suffixes: suffixes, Since: since,
	})
	if err != nil {
		return nil, err
	}
	out := make([]deposit.FingerprintCandidate, len(rows))
	for i, r := range rows {
		out[i] = deposit.FingerprintCandidate{
			ID: r.ID, Suffix: int64(r.SuffixMinor), RequestedMinor: r.RequestedAmountMinor, Status: deposit.Status(r.Status),
			CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, CancelledAt: r.CancelledAt, TxID: r.TransferTxID,
		}
	}
	return out, nil
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
	var counts []deposit.Count
	var ends []deposit.Ending
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
			ends = append(ends, deposit.Ending{TransferID: r.ID, Status: deposit.TransferVanished, Reason: "the node no longer knows the transaction"})
		case !rc.Succeeded():
			ends = append(ends, deposit.Ending{TransferID: r.ID, Status: deposit.TransferFailed, Reason: "receipt " + rc.Result})
		case deposit.Creditable(head, solid, rc.Block, r.ConfirmationsRequired):
			credit = append(credit, r)
		default:
			counts = append(counts, deposit.Count{TransferID: r.ID, Block: rc.Block,
				Confirmations: deposit.Confirmations(head, rc.Block, r.ConfirmationsRequired)})
		}
	}
	if len(counts) > 0 {
		if err := w.st.InTx(ctx, func(q store.Tx) error { return deposit.Recount(ctx, q, counts, w.Now()) }); err != nil {
			return err
		}
	}
	if len(ends) > 0 {
		reverted, err := w.end(ctx, ends)
		if err != nil {
			return err
		}
		res.Reverted += len(reverted)
		for _, e := range ends {
			w.log.WarnContext(ctx, "a confirming transfer "+string(e.Status)+"; its deposit waits again", "transfer", e.TransferID, "reason", e.Reason)
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
		switch {
		case r.TopUpOf != nil:
			// A top-up: the deposit it completes is credited with both
			// transfers.
			outcome, err = deposit.CreditTopUp(ctx, q, r.ID, *r.DepositID, r.TxID, amount)
		case r.Reason != nil && *r.Reason == deposit.ReasonFingerprint:
			// Short by no more than the tolerance, with the deposit's
			// fingerprint: credited with what arrived, by policy.
			outcome, err = deposit.CreditByFingerprint(ctx, q, r.ID, *r.DepositID, r.TxID, amount)
		default:
			outcome, err = deposit.CreditTransfer(ctx, q, r.ID, *r.DepositID, r.TxID, amount)
		}
		if err == nil && outcome != deposit.Credited {
			err = errNotCredited
		}
		return err
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
	_, err = w.end(ctx, []deposit.Ending{{TransferID: r.ID, Status: deposit.TransferUnmatched, Reason: "not_creditable"}})
	return err
}

// end ends confirming transfers and puts their deposits back, with the
// deposits' events, in one transaction.
func (w *Watcher) end(ctx context.Context, es []deposit.Ending) ([]db.Deposit, error) {
	var deps []db.Deposit
	err := w.st.InTx(ctx, func(q store.Tx) error {
		var err error
		deps, err = deposit.End(ctx, q, es, w.Now())
		return err
	})
	return deps, err
}

var errNotCredited = errors.New("chainwatch: the deposit was not credited")
