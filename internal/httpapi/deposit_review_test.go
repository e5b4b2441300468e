package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"creativeapi/gen/api"
	"creativeapi/internal/chainwatch"
	"creativeapi/internal/deposit"
	"creativeapi/internal/devchain"
	"creativeapi/internal/testenv"
	"creativeapi/internal/trongrid"
)

// reviewChain is a chain simulator and a watcher on env's database that
// the test polls itself, so each step is one poll and nothing waits.
type reviewChain struct {
	chain *devchain.Chain
	w     *chainwatch.Watcher
	env   *testenv.Env
}

func newReviewChain(t *testing.T, env *testenv.Env) *reviewChain {
	t.Helper()
	chain := devchain.New(devchain.Options{Contract: env.Config.TronUSDTContract})
	srv := httptest.NewServer(chain.Handler())
	t.Cleanup(srv.Close)
	tg, err := trongrid.New(srv.URL, nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	w := chainwatch.New(chainwatch.Config{
		Treasury: env.Config.TreasuryAddress, Contract: env.Config.TronUSDTContract,
		PollInterval: time.Second, MonitoringWindow: env.Config.DepositMonitoringWindow,
	}, env.DB.Store, tg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return &reviewChain{chain: chain, w: w, env: env}
}

// payLate expires d (its lifetime passed a minute ago), pays its exact
// amount now and mines until its block is final, then polls once.
func (rc *reviewChain) payLate(t *testing.T, d api.AccountDeposit) string {
	t.Helper()
	execDepositSQL(t, rc.env, "UPDATE deposits SET expires_at = now() - interval '1 minute', created_at = now() - interval '31 minutes' WHERE id = $1", d.Id)
	tx := rc.chain.Pay(devchain.Payment{To: rc.env.Config.TreasuryAddress, Value: d.RequestedAmount.AmountMinor})
	// A late transfer is attached once its block is final.
	rc.chain.Mine(1 + devchain.DefaultSolidLag)
	if _, err := rc.w.Poll(context.Background()); err != nil {
		t.Fatalf("poll: %v", err)
	}
	return tx
}

func (rc *reviewChain) lateTransferID(t *testing.T, tx string) int64 {
	t.Helper()
	var id int64
	if err := rc.env.DB.Pool.QueryRow(context.Background(), "SELECT id FROM chain_transfers WHERE tx_id = $1 AND status = 'late'", tx).Scan(&id); err != nil {
		t.Fatalf("the late transfer %s: %v", tx, err)
	}
	return id
}

func getDeposit(t *testing.T, c *testenv.Client, id string) api.AccountDeposit {
	t.Helper()
	r := c.Do(http.MethodGet, depositsPath+"/"+id, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("get deposit: %d %s", r.Status, r.Body)
	}
	var d api.AccountDeposit
	r.JSON(t, &d)
	return d
}

// TestDeposit_ALateExactPaymentIsUnderReviewThenCredited: through the API
// (every answer validated against the spec), a late exact transfer puts
// the deposit under review with what arrived; an operator's credit makes
// it credited with the amount received, once, and the balance shows it.
func TestDeposit_ALateExactPaymentIsUnderReviewThenCredited(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	c, _ := env.SignedIn(t, "Larry Late")
	d := createDeposit(t, c, "100000000")
	tx := rc.payLate(t, d)

	got := getDeposit(t, c, d.Id.String())
	review, err := got.Review.Get()
	if got.Status != api.DepositStatusUnderReview || err != nil || review.Reason != api.Late ||
		review.ReceivedAmount.AmountMinor != d.RequestedAmount.AmountMinor || review.TransactionId != tx {
		t.Fatalf("after the late payment: %s, review %+v (%v); want under_review, late, the amount and transaction", got.Status, review, err)
	}
	if tid, _ := got.TransactionId.Get(); tid != tx || got.CreditedAmount.AmountMinor != "0" {
		t.Fatalf("transactionId %q, credited %s", tid, got.CreditedAmount.AmountMinor)
	}

	id := rc.lateTransferID(t, tx)
	if err := deposit.Settle(context.Background(), env.DB.Store, id, deposit.MoveSettleCredit, "ops-ana", "paid a minute late"); err != nil {
		t.Fatalf("settle: %v", err)
	}
	got = getDeposit(t, c, d.Id.String())
	if got.Status != api.DepositStatusCredited || got.CreditedAmount.AmountMinor != d.RequestedAmount.AmountMinor || !got.Review.IsNull() {
		t.Fatalf("after the credit: %s %s, review %v; want credited with the amount received, no review", got.Status, got.CreditedAmount.AmountMinor, got.Review)
	}
	var b api.AccountBalance
	c.Do(http.MethodGet, "/api/v1/me/balance", nil).JSON(t, &b)
	if b.Available.AmountMinor != d.RequestedAmount.AmountMinor {
		t.Fatalf("balance %s, want %s", b.Available.AmountMinor, d.RequestedAmount.AmountMinor)
	}
	if err := deposit.Settle(context.Background(), env.DB.Store, id, deposit.MoveSettleCredit, "ops-ana", "again"); err == nil {
		t.Fatal("a second credit was accepted")
	}
}

// TestDeposit_ARefundedLatePaymentReadsRefunded: the operator sends the
// late transfer back; the deposit is refunded, nothing is credited, and
// it keeps its review (what arrived, and when it went back).
func TestDeposit_ARefundedLatePaymentReadsRefunded(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	c, _ := env.SignedIn(t, "Rita Refund")
	d := createDeposit(t, c, "25000000")
	tx := rc.payLate(t, d)
	if err := deposit.Settle(context.Background(), env.DB.Store, rc.lateTransferID(t, tx), deposit.MoveSettleRefund, "ops-bo", "sent back"); err != nil {
		t.Fatalf("settle: %v", err)
	}
	got := getDeposit(t, c, d.Id.String())
	if review, err := got.Review.Get(); got.Status != api.DepositStatusRefunded || got.CreditedAmount.AmountMinor != "0" || err != nil || review.Reason != api.Late {
		t.Fatalf("after the refund: %s %s, review %v; want refunded, nothing credited, the review kept", got.Status, got.CreditedAmount.AmountMinor, got.Review)
	}
	var list api.AccountDepositList
	c.Do(http.MethodGet, depositsPath, nil).JSON(t, &list)
	if len(list.Items) != 1 || list.Items[0].Status != api.DepositStatusRefunded {
		t.Fatalf("list: %+v", list.Items)
	}
	var b api.AccountBalance
	c.Do(http.MethodGet, "/api/v1/me/balance", nil).JSON(t, &b)
	if n, _ := strconv.ParseInt(b.Available.AmountMinor, 10, 64); n != 0 {
		t.Fatalf("balance %s, want 0", b.Available.AmountMinor)
	}
}
