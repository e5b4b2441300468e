package reliability_test

import (
	"context"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/deposit"
	"creativeapi/internal/devchain"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

// TestChainWatcher_TwoServersOnePollerAndTheLeaderKilled runs two server
// processes watching one simulated chain: one leads and credits a deposit
// once; SIGKILL of the leader hands the watch to the other, which credits
// the next deposit.
func TestChainWatcher_TwoServersOnePollerAndTheLeaderKilled(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildServer(t)
	d := testenv.NewDB(t)
	user, _ := d.User(t, "Chain Chen")
	chain := devchain.New(devchain.Options{Contract: tron.MainnetUSDT, SolidLag: 3})
	sim := httptest.NewServer(chain.Handler())
	defer sim.Close()
	stop := make(chan struct{})
	defer close(stop)
	go chain.Run(50*time.Millisecond, stop)

	vars := map[string]string{"TRON_API_URL": sim.URL, "CHAIN_POLL_INTERVAL": "100ms", "DEPOSIT_CONFIRMATIONS": "3", "LOG_LEVEL": "info"}
	a := startServer(t, bin, d.URL, vars)
	waitLog(t, a, leadingLine)
	b := startServer(t, bin, d.URL, vars)

	payAndWait := func(base int64) {
		t.Helper()
		var dep db.Deposit
		err := d.Store.InTx(context.Background(), func(q store.Tx) error {
			var err error
			dep, err = deposit.Create(context.Background(), q, deposit.Settings{Address: tron.DevTreasuryAddress,
				Confirmations: 3, TTL: time.Hour, MonitoringWindow: time.Hour, MaxOpenPerUser: 5}, user, base)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		chain.Pay(devchain.Payment{To: tron.DevTreasuryAddress, Value: strconv.FormatInt(dep.RequestedAmountMinor, 10)})
		waitCredited(t, d, dep.ID)
	}
	payAndWait(50_000_000)
	if logged(b, leadingLine) {
		t.Fatal("both servers lead")
	}

	a.kill()
	waitLog(t, b, leadingLine)
	payAndWait(60_000_000)
	var entries int
	if err := d.Pool.QueryRow(context.Background(), "SELECT count(*) FROM ledger_entries WHERE user_id = $1", user).Scan(&entries); err != nil || entries != 2 {
		t.Fatalf("%d ledger entries, %v; want one per deposit", entries, err)
	}
}

const leadingLine = "leading: this replica polls the chain"

// logged reports whether the server's log holds line.
func logged(s *server, line string) bool {
	out, _ := os.ReadFile(s.logs.Name())
	return strings.Contains(string(out), line)
}

func waitLog(t *testing.T, s *server, line string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !logged(s, line) {
		if time.Now().After(deadline) {
			t.Fatalf("the server never logged %q", line)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitCredited(t *testing.T, d *testenv.DB, id uuid.UUID) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var status string
		if err := d.Pool.QueryRow(context.Background(), "SELECT status FROM deposits WHERE id = $1", id).Scan(&status); err != nil {
			t.Fatal(err)
		}
		if status == "credited" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("deposit %s is still %s after 30s", id, status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
