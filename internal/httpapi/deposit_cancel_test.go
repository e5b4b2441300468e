package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/devchain"
	"creativeapi/internal/testenv"
)

func cancelPath(id string) string { return depositsPath + "/" + id + "/cancel" }

// TestCancelDeposit_AnAwaitingDepositIsCancelledForGoodAndItsAmountFreed:
// the payer cancels a deposit awaiting its transfer: 200 cancelled, its
// amount no longer reserved, its deposit.cancelled event written; a second
// cancel is 409 invalid_transition; someone else's deposit is 404, a bad
// id 422, a forged CSRF token 403, no session 401.
func TestCancelDeposit_AnAwaitingDepositIsCancelledForGoodAndItsAmountFreed(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Cal Cancel")
	other, _ := env.SignedIn(t, "Oda Other")
	d := createDeposit(t, c, "20000000")

	if r := other.Do(http.MethodPost, cancelPath(d.Id.String()), nil); r.Status != http.StatusNotFound || r.Problem(t).Code != "not_found" {
		t.Fatalf("another user's cancel: %d %s", r.Status, r.Body)
	}
	if r := c.Do(http.MethodPost, cancelPath(d.Id.String()), nil, testenv.Header{Name: "X-CSRF-Token", Value: "forged"}); r.Status != http.StatusForbidden {
		t.Fatalf("forged CSRF token: %d %s", r.Status, r.Body)
	}
	if r := env.Client(t).Do(http.MethodPost, cancelPath(d.Id.String()), nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("signed out: %d %s", r.Status, r.Body)
	}
	if r := c.Do(http.MethodPost, cancelPath("not-a-uuid"), nil); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad id: %d %s", r.Status, r.Body)
	}

	r := c.Do(http.MethodPost, cancelPath(d.Id.String()), nil)
	var got api.AccountDeposit
	r.JSON(t, &got)
	if r.Status != http.StatusOK || got.Status != api.DepositStatusCancelled || got.CreditedAmount.AmountMinor != "0" {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	var reserved bool
	var events int
	if err := env.DB.Pool.QueryRow(context.Background(), `SELECT reserved, (SELECT count(*) FROM outbox_events
		WHERE type = 'deposit.cancelled' AND payload->'data'->>'id' = $1) FROM deposits WHERE id = $2`, d.Id.String(), d.Id).Scan(&reserved, &events); err != nil {
		t.Fatal(err)
	}
	if reserved || events != 1 {
		t.Fatalf("after the cancel: reserved %v, deposit.cancelled events %d; want the amount free and one event", reserved, events)
	}
	if again := c.Do(http.MethodPost, cancelPath(d.Id.String()), nil); again.Status != http.StatusConflict || again.Problem(t).Code != "invalid_transition" {
		t.Fatalf("a second cancel: %d %s", again.Status, again.Body)
	}
	if g := getDeposit(t, c, d.Id.String()); g.Status != api.DepositStatusCancelled {
		t.Fatalf("read after the cancel: %s", g.Status)
	}
}

// TestCancelDeposit_ATransferAfterTheCancelIsLateForReview: the exact
// amount of a cancelled deposit, paid afterwards, pays nothing: the
// transfer is recorded late (reason cancelled), attached to no deposit,
// waiting for an operator; the deposit stays cancelled, nothing credited.
func TestCancelDeposit_ATransferAfterTheCancelIsLateForReview(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	c, _ := env.SignedIn(t, "Lou Late")
	d := createDeposit(t, c, "20000000")
	if r := c.Do(http.MethodPost, cancelPath(d.Id.String()), nil); r.Status != http.StatusOK {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	tx := rc.chain.Pay(devchain.Payment{To: env.Config.TreasuryAddress, Value: d.RequestedAmount.AmountMinor})
	rc.chain.Mine(1 + devchain.DefaultSolidLag)
	if _, err := rc.w.Poll(context.Background()); err != nil {
		t.Fatalf("poll: %v", err)
	}
	var status, reason string
	var needsReview bool
	var depositID *uuid.UUID
	if err := env.DB.Pool.QueryRow(context.Background(), "SELECT status, reason, needs_review, deposit_id FROM chain_transfers WHERE tx_id = $1", tx).
		Scan(&status, &reason, &needsReview, &depositID); err != nil {
		t.Fatal(err)
	}
	if status != "late" || reason != "cancelled" || !needsReview || depositID != nil {
		t.Fatalf("the transfer: %s (%s), needs review %v, deposit %v; want late, cancelled, for review, no deposit", status, reason, needsReview, depositID)
	}
	if g := getDeposit(t, c, d.Id.String()); g.Status != api.DepositStatusCancelled || g.CreditedAmount.AmountMinor != "0" {
		t.Fatalf("the deposit: %s credited %s; want cancelled, nothing credited", g.Status, g.CreditedAmount.AmountMinor)
	}
}
