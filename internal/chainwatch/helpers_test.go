package chainwatch_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/chainwatch"
	"creativeapi/internal/deposit"
	"creativeapi/internal/devchain"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
	"creativeapi/internal/trongrid"
)

// required is the confirmations the tests' deposits need; the simulated
// chain solidifies 19 blocks behind its head, as TRON does.
const required = 3

const hundredUSDT = 100_000_000

// bundle is what a watcher test works with: its database, a simulated
// chain behind a real HTTP server, and a user who owns deposits.
type bundle struct {
	d     *testenv.DB
	chain *devchain.Chain
	// upstream is the HTTP server the watcher reads; wrap, when set, sees
	// every request before the chain does.
	upstream *httptest.Server
	wrap     func(w http.ResponseWriter, r *http.Request, next http.Handler)
	user     uuid.UUID
}

func setup(t testing.TB, opts ...testenv.PoolOptions) (*chainwatch.Watcher, *bundle) {
	t.Helper()
	b := &bundle{d: testenv.NewDB(t, opts...), chain: devchain.New(devchain.Options{Contract: tron.MainnetUSDT})}
	h := b.chain.Handler()
	b.upstream = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b.wrap != nil {
			b.wrap(w, r, h)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(b.upstream.Close)
	b.user, _ = b.d.User(t, "Paying Paula")
	return b.watcher(t, b.d), b
}

// watcher is a new watcher of the bundle's chain on d (another replica
// when d is another pool on the same database).
func (b *bundle) watcher(t testing.TB, d *testenv.DB) *chainwatch.Watcher {
	t.Helper()
	api, err := trongrid.New(b.upstream.URL, nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return chainwatch.New(chainwatch.Config{
		Treasury: tron.DevTreasuryAddress, Contract: tron.MainnetUSDT,
		PollInterval: 20 * time.Millisecond, MonitoringWindow: 24 * time.Hour,
	}, d.Store, api, logger())
}

func logger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// deposit opens a deposit of base for the bundle's user.
func (b *bundle) deposit(t testing.TB, base int64) db.Deposit {
	t.Helper()
	var dep db.Deposit
	err := b.d.Store.InTx(context.Background(), func(q store.Tx) error {
		var err error
		dep, err = deposit.Create(context.Background(), q, deposit.Settings{
			Address: tron.DevTreasuryAddress, Confirmations: required,
			TTL: 30 * time.Minute, MonitoringWindow: 24 * time.Hour, MaxOpenPerUser: 1000,
		}, b.user, base)
		return err
	})
	if err != nil {
		t.Fatalf("create deposit: %v", err)
	}
	return dep
}

// pay sends amount to the treasury and mines it into a block.
func (b *bundle) pay(t *testing.T, amount int64) string {
	t.Helper()
	tx := b.chain.Pay(devchain.Payment{To: tron.DevTreasuryAddress, Value: itoa(amount)})
	b.chain.Mine(1)
	return tx
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// poll runs one poll and fails the test on error.
func poll(t testing.TB, w *chainwatch.Watcher) chainwatch.Result {
	t.Helper()
	res, err := w.Poll(context.Background())
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	return res
}

// state is a deposit as stored.
type state struct {
	Status        string
	Confirmations int32
	TxID          *string
	Credited      int64
	Reserved      bool
}

func (b *bundle) state(t testing.TB, id uuid.UUID) state {
	t.Helper()
	var s state
	err := b.d.Pool.QueryRow(context.Background(),
		"SELECT status, confirmations, transfer_tx_id, credited_amount_minor, reserved FROM deposits WHERE id = $1", id).
		Scan(&s.Status, &s.Confirmations, &s.TxID, &s.Credited, &s.Reserved)
	if err != nil {
		t.Fatalf("read deposit: %v", err)
	}
	return s
}

// transfer is a chain_transfers row.
type transfer struct {
	Status      string
	Reason      *string
	DepositID   *uuid.UUID
	NeedsReview bool
}

func (b *bundle) transfers(t *testing.T) []transfer {
	t.Helper()
	rows, err := b.d.Pool.Query(context.Background(), "SELECT status, reason, deposit_id, needs_review FROM chain_transfers ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []transfer
	for rows.Next() {
		var tr transfer
		if err := rows.Scan(&tr.Status, &tr.Reason, &tr.DepositID, &tr.NeedsReview); err != nil {
			t.Fatal(err)
		}
		out = append(out, tr)
	}
	return out
}

// balance is the user's ledger sum and entry count.
func (b *bundle) balance(t testing.TB) (sum int64, entries int) {
	t.Helper()
	err := b.d.Pool.QueryRow(context.Background(),
		"SELECT coalesce(sum(amount_minor), 0), count(*) FROM ledger_entries WHERE user_id = $1", b.user).Scan(&sum, &entries)
	if err != nil {
		t.Fatal(err)
	}
	return sum, entries
}

func (b *bundle) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if _, err := b.d.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// waitFor polls cond until it holds or a minute passes: generous, for
// these shared machines under load; a passing run waits only as long as
// cond takes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
