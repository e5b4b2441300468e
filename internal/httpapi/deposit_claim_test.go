package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/deposit"
	"creativeapi/internal/devchain"
	"creativeapi/internal/testenv"
)

// payShort pays value (not any deposit's amount) to the treasury, mines
// until its block is final and polls once: the watcher records it
// unmatched.
func (rc *reviewChain) payShort(t *testing.T, value string) string {
	t.Helper()
	tx := rc.chain.Pay(devchain.Payment{To: rc.env.Config.TreasuryAddress, Value: value})
	rc.chain.Mine(1 + devchain.DefaultSolidLag)
	if _, err := rc.w.Poll(context.Background()); err != nil {
		t.Fatalf("poll: %v", err)
	}
	return tx
}

func claimPath(id string) string { return depositsPath + "/" + id + "/claim" }

func claimBody(tx string) map[string]string { return map[string]string{"transactionId": tx} }

// TestClaimDeposit_AShortTransferIsClaimedAndGoesUnderReview: through the
// API against the chain simulator, a payer who sent less than asked names
// their transaction: before the watcher saw it the claim is 409
// transfer_unknown with Retry-After; once seen the deposit is under review
// with what arrived; the same key replays the answer; the transfer cannot
// be claimed for another deposit, nor the deposit claimed again.
func TestClaimDeposit_AShortTransferIsClaimedAndGoesUnderReview(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	c, _ := env.SignedIn(t, "Sam Short")
	d := createDeposit(t, c, "100000000")

	tx := rc.chain.Pay(devchain.Payment{To: env.Config.TreasuryAddress, Value: "95000000"})
	key := testenv.Header{Name: "Idempotency-Key", Value: "claim-short-1"}
	r := c.Do(http.MethodPost, claimPath(d.Id.String()), claimBody(tx), key)
	if p := r.Problem(t); r.Status != http.StatusConflict || p.Code != "transfer_unknown" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("claim before the watcher saw it: %d %s (Retry-After %q)", r.Status, r.Body, r.Header.Get("Retry-After"))
	}

	// Seen but not final yet: still unknown, for it is not recorded.
	rc.chain.Mine(1)
	if _, err := rc.w.Poll(context.Background()); err != nil {
		t.Fatalf("poll: %v", err)
	}
	r = c.Do(http.MethodPost, claimPath(d.Id.String()), claimBody(tx), key)
	if p := r.Problem(t); r.Status != http.StatusConflict || p.Code != "transfer_unknown" {
		t.Fatalf("claim before the block is final: %d %s", r.Status, r.Body)
	}
	rc.chain.Mine(devchain.DefaultSolidLag)
	if _, err := rc.w.Poll(context.Background()); err != nil {
		t.Fatalf("poll: %v", err)
	}
	// The 409 was not stored: the same key now claims (with the id in
	// capitals, which names the same transaction).
	r = c.Do(http.MethodPost, claimPath(d.Id.String()), claimBody(strings.ToUpper(tx)), key)
	if r.Status != http.StatusOK {
		t.Fatalf("claim: %d %s", r.Status, r.Body)
	}
	var got api.AccountDeposit
	r.JSON(t, &got)
	review, err := got.Review.Get()
	if got.Status != api.DepositStatusUnderReview || err != nil || review.Reason != api.AmountMismatch ||
		review.ReceivedAmount.AmountMinor != "95000000" || review.TransactionId != tx || got.CreditedAmount.AmountMinor != "0" {
		t.Fatalf("claimed: %s, review %+v (%v), credited %s; want under_review, amount_mismatch, 95000000 received", got.Status, review, err, got.CreditedAmount.AmountMinor)
	}
	if again := getDeposit(t, c, d.Id.String()); again.Status != api.DepositStatusUnderReview {
		t.Fatalf("read back: %s", again.Status)
	}
	replay := c.Do(http.MethodPost, claimPath(d.Id.String()), claimBody(strings.ToUpper(tx)), key)
	if replay.Status != http.StatusOK || replay.Header.Get("Idempotent-Replayed") != "true" || string(replay.Body) != string(r.Body) {
		t.Fatalf("replay: %d %s (replayed %q)", replay.Status, replay.Body, replay.Header.Get("Idempotent-Replayed"))
	}

	// Taken: another deposit of the same payer cannot claim it.
	d2 := createDeposit(t, c, "50000000")
	r = c.Do(http.MethodPost, claimPath(d2.Id.String()), claimBody(tx))
	if p := r.Problem(t); r.Status != http.StatusConflict || p.Code != "transfer_taken" {
		t.Fatalf("claim of a taken transfer: %d %s", r.Status, r.Body)
	}
	// The deposit under review cannot be claimed again.
	other := rc.payShort(t, "1000000")
	r = c.Do(http.MethodPost, claimPath(d.Id.String()), claimBody(other))
	if p := r.Problem(t); r.Status != http.StatusConflict || p.Code != "invalid_transition" {
		t.Fatalf("claim of a deposit under review: %d %s", r.Status, r.Body)
	}
	// Someone else's deposit does not exist for them.
	mallory, _ := env.SignedIn(t, "Mallory")
	r = mallory.Do(http.MethodPost, claimPath(d2.Id.String()), claimBody(other))
	if p := r.Problem(t); r.Status != http.StatusNotFound || p.Code != "not_found" {
		t.Fatalf("claim of another user's deposit: %d %s", r.Status, r.Body)
	}
	if d2 := getDeposit(t, c, d2.Id.String()); d2.Status != api.DepositStatusAwaitingTransfer {
		t.Fatalf("the other deposit is %s", d2.Status)
	}
}

// TestClaimDeposit_RefusesAMalformedOrUnfitTransaction: 422 on
// transactionId for anything but 64 hex characters, and for a transfer
// that cannot pay the deposit (here: one that failed on the chain).
func TestClaimDeposit_RefusesAMalformedOrUnfitTransaction(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	c, _ := env.SignedIn(t, "Fay Format")
	d := createDeposit(t, c, "100000000")
	for _, bad := range []any{
		claimBody("abc"), claimBody(strings.Repeat("g", 64)), claimBody(strings.Repeat("a", 65)),
		map[string]any{"transactionId": 7}, map[string]any{},
	} {
		r := c.Do(http.MethodPost, claimPath(d.Id.String()), bad)
		p := r.Problem(t)
		if r.Status != http.StatusUnprocessableEntity || p.Code != "invalid_request" || len(p.FieldErrors) != 1 || p.FieldErrors[0].Field != "transactionId" {
			t.Errorf("claim %v: %d %s; want 422 on transactionId", bad, r.Status, r.Body)
		}
	}
	r := c.Do(http.MethodPost, claimPath(d.Id.String()), `{"transactionId":`)
	if p := r.Problem(t); r.Status != http.StatusBadRequest || p.Code != "malformed_json" {
		t.Fatalf("malformed JSON: %d %s", r.Status, r.Body)
	}
	r = c.Do(http.MethodPost, claimPath(d.Id.String()), claimBody(strings.Repeat("a", 64)), testenv.Header{Name: "X-CSRF-Token", Value: "forged"})
	if p := r.Problem(t); r.Status != http.StatusForbidden || p.Code != "csrf_failed" {
		t.Fatalf("without the CSRF token: %d %s", r.Status, r.Body)
	}
	r = env.Client(t).Do(http.MethodPost, claimPath(d.Id.String()), claimBody(strings.Repeat("a", 64)))
	if p := r.Problem(t); r.Status != http.StatusUnauthorized || p.Code != "unauthenticated" {
		t.Fatalf("signed out: %d %s", r.Status, r.Body)
	}
	failed := rc.chain.Pay(devchain.Payment{To: env.Config.TreasuryAddress, Value: "99000000", Result: "REVERT"})
	rc.chain.Mine(1)
	if _, err := rc.w.Poll(context.Background()); err != nil {
		t.Fatalf("poll: %v", err)
	}
	r = c.Do(http.MethodPost, claimPath(d.Id.String()), claimBody(failed))
	if p := r.Problem(t); r.Status != http.StatusUnprocessableEntity || len(p.FieldErrors) != 1 || p.FieldErrors[0].Field != "transactionId" {
		t.Fatalf("claim of a failed transfer: %d %s", r.Status, r.Body)
	}
}

// claimShort creates a deposit for c, pays short to the treasury and
// claims it through the API; it answers the deposit and the transfer's id.
func claimShort(t *testing.T, rc *reviewChain, c *testenv.Client, amount, paid string) (api.AccountDeposit, uuid.UUID) {
	t.Helper()
	d := createDeposit(t, c, amount)
	tx := rc.payShort(t, paid)
	if r := c.Do(http.MethodPost, claimPath(d.Id.String()), claimBody(tx)); r.Status != http.StatusOK {
		t.Fatalf("claim: %d %s", r.Status, r.Body)
	}
	var id uuid.UUID
	if err := rc.env.DB.Pool.QueryRow(context.Background(), "SELECT public_id FROM chain_transfers WHERE tx_id = $1", tx).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return d, id
}

// TestClaimDeposit_AnOperatorCreditsTheAmountReceivedOnce: short transfer,
// claim, then the operator's credit (deposit.Settle, which the transfers
// command calls): the deposit is credited with what arrived, once, and the
// balance shows exactly that.
func TestClaimDeposit_AnOperatorCreditsTheAmountReceivedOnce(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	c, _ := env.SignedIn(t, "Carl Credit")
	d, id := claimShort(t, rc, c, "100000000", "95000000")
	if err := deposit.Settle(context.Background(), env.DB.Store, ledgerID(t, env, id), deposit.MoveSettleCredit, "ops-ana", "short by 5, customer confirmed"); err != nil {
		t.Fatalf("settle: %v", err)
	}
	got := getDeposit(t, c, d.Id.String())
	if got.Status != api.DepositStatusCredited || got.CreditedAmount.AmountMinor != "95000000" || !got.Review.IsNull() {
		t.Fatalf("after the credit: %s %s, review %v; want credited 95000000", got.Status, got.CreditedAmount.AmountMinor, got.Review)
	}
	if err := deposit.Settle(context.Background(), env.DB.Store, ledgerID(t, env, id), deposit.MoveSettleCredit, "ops-ana", "again"); err == nil {
		t.Fatal("a second credit was accepted")
	}
	var b api.AccountBalance
	c.Do(http.MethodGet, "/api/v1/me/balance", nil).JSON(t, &b)
	if b.Available.AmountMinor != "95000000" {
		t.Fatalf("balance %s, want 95000000", b.Available.AmountMinor)
	}
}

// TestClaimDeposit_AnOperatorRefundsAClaimedTransfer: the deposit is
// refunded, nothing credited, and keeps its review.
func TestClaimDeposit_AnOperatorRefundsAClaimedTransfer(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	c, _ := env.SignedIn(t, "Rob Refund")
	d, id := claimShort(t, rc, c, "50000000", "40000000")
	if err := deposit.Settle(context.Background(), env.DB.Store, ledgerID(t, env, id), deposit.MoveSettleRefund, "ops-bo", "sent back"); err != nil {
		t.Fatalf("settle: %v", err)
	}
	got := getDeposit(t, c, d.Id.String())
	review, err := got.Review.Get()
	if got.Status != api.DepositStatusRefunded || got.CreditedAmount.AmountMinor != "0" || err != nil || review.ReceivedAmount.AmountMinor != "40000000" {
		t.Fatalf("after the refund: %s %s, review %v", got.Status, got.CreditedAmount.AmountMinor, got.Review)
	}
	// The refunded deposit keeps its review, with when it was refunded
	// (no address was named, no refund transaction recorded).
	if refund, err := review.Refund.Get(); err != nil || !refund.Address.IsNull() || !refund.TransactionId.IsNull() || refund.At.IsNull() {
		t.Fatalf("refund %+v (%v); want its time only", refund, err)
	}
	var b api.AccountBalance
	c.Do(http.MethodGet, "/api/v1/me/balance", nil).JSON(t, &b)
	if b.Available.AmountMinor != "0" {
		t.Fatalf("balance %s, want 0", b.Available.AmountMinor)
	}
}

// ledgerID is the internal key of the transfer whose API id is id (what
// deposit.Settle, the command line's code, takes).
func ledgerID(t *testing.T, env *testenv.Env, id uuid.UUID) int64 {
	t.Helper()
	var key int64
	if err := env.DB.Pool.QueryRow(context.Background(), "SELECT id FROM chain_transfers WHERE public_id = $1", id).Scan(&key); err != nil {
		t.Fatal(err)
	}
	return key
}

// TestClaimDeposit_WithinTheShortfallToleranceIsCreditedByPolicy: through
// the API, a payer short by a fee of 0.4 USDT (under 1% and 1 USDT) claims
// their transaction and finds the deposit credited with what arrived, at
// once; the operator's view of the transfer shows the settlement by
// `policy`, and the balance is the amount received.
func TestClaimDeposit_WithinTheShortfallToleranceIsCreditedByPolicy(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	c, _ := env.SignedIn(t, "Fee Short")
	d := createDeposit(t, c, "100000000")
	tx := rc.payShort(t, "99600000")
	r := c.Do(http.MethodPost, claimPath(d.Id.String()), claimBody(tx))
	var got api.AccountDeposit
	r.JSON(t, &got)
	if r.Status != http.StatusOK || got.Status != api.DepositStatusCredited || got.CreditedAmount.AmountMinor != "99600000" {
		t.Fatalf("claim within the tolerance: %d %s", r.Status, r.Body)
	}
	var b api.AccountBalance
	c.Do(http.MethodGet, "/api/v1/me/balance", nil).JSON(t, &b)
	if b.Available.AmountMinor != "99600000" {
		t.Fatalf("balance %s, want 99600000", b.Available.AmountMinor)
	}
	var operator, decision string
	if err := env.DB.Pool.QueryRow(context.Background(), `SELECT s.operator, s.decision FROM chain_transfer_settlements s
		JOIN chain_transfers t ON t.id = s.transfer_id WHERE t.tx_id = $1`, tx).Scan(&operator, &decision); err != nil ||
		operator != deposit.PolicyOperator || decision != string(deposit.DecisionCredit) {
		t.Fatalf("settlement: %q %q (%v); want policy, credit", operator, decision, err)
	}
}
