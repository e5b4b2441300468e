package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/user"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/chainwatch"
	"creativeapi/internal/config"
	"creativeapi/internal/deposit"
	"creativeapi/internal/devchain"
	"creativeapi/internal/metrics"
	"creativeapi/internal/money"
	"creativeapi/internal/store"
	"creativeapi/internal/tron"
	"creativeapi/internal/trongrid"
)

// upstreamTimeout bounds each call to the chain API.
const upstreamTimeout = 15 * time.Second

// startWatcher runs the chain watcher until ctx ends; done is closed once
// it stopped. m (nil: off) records every poll.
func startWatcher(ctx context.Context, cfg config.Config, st *store.Store, log *slog.Logger, m *metrics.Metrics) (done <-chan struct{}, err error) {
	api, err := newUpstreams(cfg)
	if err != nil {
		return nil, err
	}
	w := chainwatch.New(chainwatch.Config{
		Treasury: cfg.TreasuryAddress, Contract: cfg.TronUSDTContract,
		PollInterval: cfg.ChainPollInterval, MonitoringWindow: cfg.DepositMonitoringWindow,
		Tolerance: &cfg.DepositShortfallTolerance,
	}, st, api, log)
	if m != nil {
		w.OnPoll = m.ObservePoll
		m.WatchChain(w.Leading)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		w.Run(ctx)
	}()
	log.Info("chain watcher started", "api", strings.Join(cfg.TronAPIURLs, ","), "treasury", cfg.TreasuryAddress,
		"contract", cfg.TronUSDTContract, "api_keys", len(cfg.TronAPIKeys))
	return stopped, nil
}

// newUpstreams is the chain API of TRON_API_URL: each URL a client, tried
// in order (chainwatch.Upstreams).
func newUpstreams(cfg config.Config) (*chainwatch.Upstreams, error) {
	list := make([]chainwatch.Upstream, 0, len(cfg.TronAPIURLs))
	for _, u := range cfg.TronAPIURLs {
		api, err := trongrid.New(u, cfg.TronAPIKeys, upstreamTimeout)
		if err != nil {
			return nil, err
		}
		list = append(list, chainwatch.Upstream{Name: u, Chain: api})
	}
	return chainwatch.NewUpstreams(list, cfg.ChainPollInterval, 0), nil
}

// startDevchain serves the chain simulator on DEVCHAIN_ADDR, mining a block
// every DEVCHAIN_BLOCK_INTERVAL, and returns its URL.
func startDevchain(cfg config.Config, log *slog.Logger) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", cfg.DevchainAddr)
	if err != nil {
		return "", nil, fmt.Errorf("chain simulator: listen on DEVCHAIN_ADDR=%s: %w", cfg.DevchainAddr, err)
	}
	chain := devchain.New(devchain.Options{Contract: cfg.TronUSDTContract})
	srv := &http.Server{Handler: chain.Handler(), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go chain.Run(cfg.DevchainBlockInterval, done)
	go func() { _ = srv.Serve(ln) }()
	url = httpURL(ln.Addr())
	log.Warn("development chain simulator: deposits are paid with `creativeapi devchain pay`, never by a real chain",
		"url", url, "block_interval", cfg.DevchainBlockInterval.String())
	return url, func() { close(done); _ = srv.Close() }, nil
}

const devchainUsage = `usage:
  creativeapi devchain pay (--amount-minor M | --amount A) [--to ADDRESS] [--result REVERT] [--url URL]

Pays a deposit on the chain simulator that 'serve --devchain' runs (make run).
  --amount-minor  the deposit's amountMinor as the API answers it, in
                  micro-USDT (100001234 is 100.001234 USDT)
  --amount        the same amount in USDT, up to 6 decimals (100.001234)
  --to            the receiving address (default TREASURY_ADDRESS)
  --result        the receipt's result (default SUCCESS; REVERT fails it)
  --url           the simulator (default: the one the running development
                  server started, see creativeapi dev status; else
                  http://$DEVCHAIN_ADDR)

It says what the watcher will make of the payment, judged by the watcher's
own code against the server's database (DATABASE_URL, else the running
development server's): a warning when it will be recorded as unmatched,
late (the deposit goes under review) or failed, or that it cannot tell
when there is no database to ask.
`

// cmdDevchain runs `creativeapi devchain …`.
func cmdDevchain(ctx context.Context, e env, args []string) error {
	_, args, err := subcommand("devchain", args, "pay")
	if err != nil {
		return err
	}
	fs := newFlags("devchain pay")
	amount := fs.String("amount", "", "amount in USDT, up to 6 decimals")
	amountMinor := fs.String("amount-minor", "", "amount in micro-USDT (the deposit's amountMinor)")
	to := fs.String("to", "", "receiving address (default TREASURY_ADDRESS)")
	result := fs.String("result", "", "receipt result (default SUCCESS; REVERT makes it fail)")
	url := fs.String("url", "", "the simulator")
	if err := parse(fs, args); err != nil {
		return err
	}
	var minor int64
	switch {
	case (*amount == "") == (*amountMinor == ""):
		return usagef("devchain pay: give one of --amount-minor (micro-USDT, as amountMinor) and --amount (USDT) (see creativeapi devchain --help)")
	case *amount != "":
		if minor, err = parseUSDT(*amount); err != nil {
			return usageError{"devchain pay: " + err.Error()}
		}
	default:
		if minor, err = money.ParseMinor(*amountMinor); err != nil || minor == 0 {
			return usagef("devchain pay: --amount-minor %q: want a positive whole number of micro-USDT such as 100001234 (100.001234 USDT)", *amountMinor)
		}
	}
	cfg, err := config.Load(e.getenv)
	if err != nil {
		return err
	}
	if *to == "" {
		*to = cfg.TreasuryAddress
	}
	if *to == "" {
		*to = tron.DevTreasuryAddress
	}
	running, err := readRunState(cfg.DataDir)
	if err != nil && !errors.Is(err, errNoDevServer) {
		return err
	}
	if *url == "" {
		*url = running.Devchain
	}
	if *url == "" {
		*url = "http://" + cfg.DevchainAddr
	}
	if err := warnUnmatched(ctx, e, cfg, running, *to, minor, *result); err != nil {
		fmt.Fprintf(e.stderr, "devchain pay: could not check the open deposits (%v); paying anyway\n", err)
	}
	body, _ := json.Marshal(devchain.Payment{To: *to, Value: strconv.FormatInt(minor, 10), Result: *result})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(*url, "/")+"/transfers", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("devchain pay: is `make run` (serve --devchain) running? %w", err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("devchain pay: %s: %s", resp.Status, bytes.TrimSpace(out))
	}
	var paid struct {
		TransactionID string `json:"transactionId"`
	}
	_ = json.Unmarshal(out, &paid)
	fmt.Fprintf(e.stdout, "paid %s to %s in transaction %s (in the next block)\n", money.USDT.Format(minor), *to, paid.TransactionID)
	return nil
}

// warnUnmatched says on stderr what the watcher will make of this payment,
// judged by the watcher's own code (deposit.Judge) against the deposits
// the server reads: the same database (DATABASE_URL, else the running
// development server's), the same query (DepositsForAmounts) and the same
// candidate. Anything but paying an on-time deposit is a warning (a
// mistyped amount, or amountMinor given as --amount, pays millions); with
// no database to ask, it says it cannot tell.
func warnUnmatched(ctx context.Context, e env, cfg config.Config, running runState, address string, minor int64, result string) error {
	if cfg.DatabaseURL == "" {
		cfg.DatabaseURL = running.Database
	}
	if cfg.DatabaseURL == "" && !cfg.DevMode {
		fmt.Fprintf(e.stderr, "warning: no database to check the open deposits against (set DATABASE_URL, or run make run): cannot tell whether %s pays a deposit\n",
			money.USDT.Format(minor))
		return nil
	}
	pool, closeDB, err := openCommandDatabase(ctx, cfg, newLogger(e.stderr, cfg.LogLevel))
	if err != nil {
		return err
	}
	defer closeDB()
	// Not in a transaction: the rows' locks last this one statement.
	rows, err := store.New(pool).Q.DepositsForAmounts(ctx, db.DepositsForAmountsParams{
		Network: deposit.Network, Address: address, Currency: money.USDT.Code, Amounts: []int64{minor},
	})
	if err != nil {
		return err
	}
	var c *deposit.Candidate
	for _, r := range rows {
		c = &deposit.Candidate{ID: r.ID, Status: deposit.Status(r.Status), CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, TxID: r.TransferTxID}
	}
	if msg := predictPayment(c, result, address, minor, time.Now()); msg != "" {
		fmt.Fprintln(e.stderr, msg)
	}
	return nil
}

// predictPayment is what the watcher will record for a payment of minor
// to address with receipt result, mined at about now, for candidate c
// (the deposit reserving that amount, or nil): "" when it pays c on time,
// else a warning. It calls deposit.Judge as the watcher does, for a final
// block.
func predictPayment(c *deposit.Candidate, result, address string, minor int64, now time.Time) string {
	if result == "" {
		result = "SUCCESS"
	}
	status, reason, _ := deposit.Judge(deposit.Receipt{Succeeded: result == "SUCCESS", Result: result}, "", c, nil, now, "", true)
	amount := money.USDT.Format(minor)
	switch status {
	case deposit.TransferConfirming:
		return ""
	case deposit.TransferLate:
		return fmt.Sprintf("warning: the deposit %s awaiting %s expired at %s: this payment will be recorded as late and the deposit put under review for an operator (creativeapi transfers list --late)",
			c.ID, amount, c.ExpiresAt.UTC().Format(time.RFC3339))
	case deposit.TransferFailed:
		return fmt.Sprintf("warning: a %s receipt fails: this payment will be recorded as failed and pays nothing", result)
	}
	return fmt.Sprintf("warning: no open deposit to %s awaits exactly %s (%s): this payment will be recorded as unmatched (creativeapi transfers list --unmatched)",
		address, amount, reason)
}

// parseUSDT reads a decimal USDT amount ("100.001234") as micro-USDT.
func parseUSDT(s string) (int64, error) {
	whole, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
	if whole == "" || len(frac) > money.USDT.Scale {
		return 0, fmt.Errorf("--amount %q: want a USDT amount with at most %d decimals, such as 100.001234", s, money.USDT.Scale)
	}
	frac += strings.Repeat("0", money.USDT.Scale-len(frac))
	v, err := money.ParseMinor(whole + frac)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("--amount %q: want a positive USDT amount such as 100.001234", s)
	}
	return v, nil
}

const chainUsage = `usage:
  creativeapi chain rescan --since TIME

rescan reads the treasury's transfers again from TIME (RFC 3339, such as
2026-11-25T00:00:00Z, or a duration ago, such as 24h), through the
upstreams of TRON_API_URL, and records what the watcher missed. It is
idempotent: a transfer recorded before changes nothing, so nothing is
credited twice, and it may run while the server's watcher polls. A
transfer still pending on the node (reported as pending) is read again
by running it again.
`

// cmdChain runs the chain commands: rescan.
func cmdChain(ctx context.Context, e env, args []string) error {
	_, args, err := subcommand("chain", args, "rescan")
	if err != nil {
		return err
	}
	fs := newFlags("chain rescan")
	sinceFlag := fs.String("since", "", "read from this time (RFC 3339) or this long ago (a duration)")
	if err := parse(fs, args); err != nil {
		return err
	}
	since, err := parseSince(*sinceFlag, time.Now())
	if err != nil {
		return err
	}
	cfg, err := config.Load(e.getenv)
	if err != nil {
		return err
	}
	if cfg.TreasuryAddress == "" {
		return errors.New("chain rescan: TREASURY_ADDRESS is not set")
	}
	api, err := newUpstreams(cfg)
	if err != nil {
		return err
	}
	return withStore(ctx, e, func(st *store.Store) error {
		w := chainwatch.New(chainwatch.Config{
			Treasury: cfg.TreasuryAddress, Contract: cfg.TronUSDTContract,
			PollInterval: cfg.ChainPollInterval, MonitoringWindow: cfg.DepositMonitoringWindow,
			Tolerance: &cfg.DepositShortfallTolerance,
		}, st, api, newLogger(e.stderr, cfg.LogLevel))
		res, err := w.Rescan(ctx, since)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "rescanned from %s: %d listed, %d new (%d confirming, %d late, %d unmatched, %d failed), %d pending, %d credited\n",
			since.UTC().Format(time.RFC3339), res.Listed, res.New, res.Confirming, res.Late, res.Unmatched, res.Failed, res.Pending, res.Credited)
		return nil
	})
}

// parseSince reads --since: an RFC 3339 time, or a duration before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want an RFC 3339 time (2026-11-25T00:00:00Z) or a duration ago (24h)", s)
}

const transfersUsage = `usage:
  creativeapi transfers list [--late | --unmatched | --all] [--limit N] [--after ID]
  creativeapi transfers settle ID (--credit | --refund | --reject) --note TEXT [--operator NAME]

list shows the transfers waiting for review (late and unmatched) unless
--all. settle --credit credits a late transfer to its deposit (exactly once,
with the requested amount), or a claimed one with the amount
received; --refund records that it was sent back; --reject detaches a
late or claimed transfer from its deposit (the deposit waits again, or is
expired; the transfer is unmatched and waits for review again). Each
settlement is kept in an audit record with the operator (default the OS
user) and the note.
`

// cmdTransfers runs `creativeapi transfers …`.
func cmdTransfers(ctx context.Context, e env, args []string) error {
	sub, args, err := subcommand("transfers", args, "list", "settle")
	if err != nil {
		return err
	}
	fs := newFlags("transfers " + sub)
	switch sub {
	case "list":
		late := fs.Bool("late", false, "only late transfers")
		unmatched := fs.Bool("unmatched", false, "only unmatched transfers")
		all := fs.Bool("all", false, "every transfer, settled or not")
		limit := fs.Int("limit", 100, "at most this many (1-1000)")
		after := fs.Int64("after", 0, "page: transfers with an id above this")
		if err := parse(fs, args); err != nil {
			return err
		}
		if *limit < 1 || *limit > 1000 {
			return usagef("transfers list: --limit: want 1 to 1000")
		}
		p := db.ChainTransfersForReviewParams{Every: *all, AfterID: *after, RowLimit: int32(*limit)}
		switch {
		case *late && *unmatched:
			return usagef("transfers list: --late and --unmatched: pick one")
		case *late:
			p.Status = ptr(string(deposit.TransferLate))
		case *unmatched:
			p.Status = ptr(string(deposit.TransferUnmatched))
		}
		return withStore(ctx, e, func(st *store.Store) error {
			rows, err := st.Q.ChainTransfersForReview(ctx, p)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATUS\tREASON\tAMOUNT\tTX\tFROM\tBLOCK TIME\tDEPOSIT")
			for _, t := range rows {
				amount := t.AmountRaw + " (raw)"
				if t.AmountMinor != nil {
					amount = money.USDT.Format(*t.AmountMinor)
				}
				dep := "-"
				if t.DepositID != nil {
					dep = t.DepositID.String()
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.PublicID, t.Status, deref(t.Reason, "-"), amount,
					t.TxID, t.FromAddress, t.BlockTime.UTC().Format(time.RFC3339), dep)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if len(rows) == *limit {
				fmt.Fprintf(e.stderr, "more: --after %d\n", rows[len(rows)-1].ID)
			}
			return nil
		})
	case "settle":
		credit := fs.Bool("credit", false, "credit the late transfer to its deposit")
		refund := fs.Bool("refund", false, "record that the transfer was sent back")
		reject := fs.Bool("reject", false, "detach the late or claimed transfer from its deposit")
		note := fs.String("note", "", "why (kept in the audit record)")
		refundTx := fs.String("refund-tx", "", "with --refund: the transaction (64 hex) that sent it back, shown to the payer")
		operator := fs.String("operator", currentUser(), "who settles it")
		if len(args) == 0 {
			return usagef("transfers settle: missing transfer ID (see creativeapi transfers --help)")
		}
		id, err := uuid.Parse(args[0])
		if err != nil {
			return usagef("transfers settle: %q is not a transfer ID (see creativeapi transfers --help)", args[0])
		}
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		var decision deposit.Decision
		switch {
		case btoi(*credit)+btoi(*refund)+btoi(*reject) != 1:
			return usagef("transfers settle: pick one of --credit, --refund and --reject")
		case *refundTx != "" && (!*refund || !isTxID(*refundTx)):
			return usagef("transfers settle: --refund-tx takes the 64 hex digits of a transaction, with --refund")
		case *credit:
			decision = deposit.DecisionCredit
		case *reject:
			decision = deposit.DecisionReject
		default:
			decision = deposit.DecisionRefund
		}
		s, done := deposit.Settlements[decision], decision
		return withStore(ctx, e, func(st *store.Store) error {
			t, err := st.Q.ChainTransferGet(ctx, id)
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("transfer %s does not exist", id)
			}
			if err != nil {
				return err
			}
			if *refundTx != "" {
				err = st.InTx(ctx, func(q store.Tx) error {
					return deposit.SettleRefundTx(ctx, q, t.ID, *operator, *note, strings.ToLower(*refundTx))
				})
			} else {
				err = deposit.Settle(ctx, st, t.ID, s, *operator, *note)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "transfer %s settled: %s by %s\n", id, done, *operator)
			return nil
		})
	}
	return fmt.Errorf("%s: subcommand not handled", sub)
}

func ptr[T any](v T) *T { return &v }

// isTxID reports whether s is a TRON transaction id: 64 hex digits.
func isTxID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func deref(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}

func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// withStore opens the configured database for one management command.
func withStore(ctx context.Context, e env, fn func(*store.Store) error) error {
	cfg, err := config.Load(e.getenv)
	if err != nil {
		return err
	}
	pool, closeDB, err := openCommandDatabase(ctx, cfg, newLogger(e.stderr, cfg.LogLevel))
	if err != nil {
		return err
	}
	defer closeDB()
	return fn(store.New(pool))
}
