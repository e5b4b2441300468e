package httpapi_test

import (
	"context"
	"net/http"
	"strconv"
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
// with what arrived; the same key replays the answer; another payer's
// claim of it makes both contested; the deposit cannot be claimed again.
func TestClaimDeposit_AShortTransferIsClaimedAndGoesUnderReview(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	c, _ := env.SignedIn(t, "Sam Short")
	d := createDeposit(t, c, "100000000")
	c2, _ := env.SignedIn(t, "Claire Contest")
	d2 := createDeposit(t, c2, "50000000")

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

	// Contested: another payer's deposit claims it too; a claim takes
	// nothing from the first, and both show the contest.
	r = c2.Do(http.MethodPost, claimPath(d2.Id.String()), claimBody(tx))
	var second api.AccountDeposit
	r.JSON(t, &second)
	if review, err := second.Review.Get(); r.Status != http.StatusOK || err != nil || !review.Contested {
		t.Fatalf("a second claim: %d %s; want under_review, contested", r.Status, r.Body)
	}
	if first, err := getDeposit(t, c, d.Id.String()).Review.Get(); err != nil || !first.Contested {
		t.Fatalf("the first claimant's review %+v (%v); want contested", first, err)
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
	if d2 := getDeposit(t, c2, d2.Id.String()); d2.Status != api.DepositStatusUnderReview {
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

// TestClaimDeposit_NeverCreditsAStrangersTransfer: through the API, a
// user claims a stranger's transfer short of their deposit by a fee of
// 0.4 USDT (inside the tolerance, which once credited it at once): the
// deposit waits for an operator, nothing is credited and no policy settles
// it. A fourth open claim is 409 too_many_claims.
func TestClaimDeposit_NeverCreditsAStrangersTransfer(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	c, _ := env.SignedIn(t, "Thief Theo")
	d := createDeposit(t, c, "100000000")
	tx := rc.payShort(t, "99600000") // a stranger's: it carries no suffix of d's
	r := c.Do(http.MethodPost, claimPath(d.Id.String()), claimBody(tx))
	var got api.AccountDeposit
	r.JSON(t, &got)
	if r.Status != http.StatusOK || got.Status != api.DepositStatusUnderReview || got.CreditedAmount.AmountMinor != "0" {
		t.Fatalf("claim within the tolerance: %d %s; want under_review, nothing credited", r.Status, r.Body)
	}
	var b api.AccountBalance
	c.Do(http.MethodGet, "/api/v1/me/balance", nil).JSON(t, &b)
	if b.Available.AmountMinor != "0" {
		t.Fatalf("balance %s, want 0", b.Available.AmountMinor)
	}
	if n := countDepositRows(t, env, `SELECT count(*) FROM chain_transfer_settlements s
		JOIN chain_transfers t ON t.id = s.transfer_id WHERE t.tx_id = $1`, tx); n != 0 {
		t.Fatalf("%d settlements of a claimed transfer; want none", n)
	}
	for i := 1; i < deposit.MaxOpenClaims; i++ {
		dep := createDeposit(t, c, strconv.Itoa(100_000_000+i*10_000))
		if r := c.Do(http.MethodPost, claimPath(dep.Id.String()), claimBody(rc.payShort(t, strconv.Itoa(1_000_000*i)))); r.Status != http.StatusOK {
			t.Fatalf("claim %d: %d %s", i, r.Status, r.Body)
		}
	}
	dep := createDeposit(t, c, "100500000")
	r = c.Do(http.MethodPost, claimPath(dep.Id.String()), claimBody(rc.payShort(t, "7000000")))
	if p := r.Problem(t); r.Status != http.StatusConflict || p.Code != "too_many_claims" {
		t.Fatalf("a fourth open claim: %d %s; want 409 too_many_claims", r.Status, r.Body)
	}
}

// TestDeposit_ATransferCarryingItsSuffixWithinTheToleranceIsCreditedByPolicy:
// a payer short by a fee in whole cents (0.4 USDT, under 1% and 1 USDT)
// keeps the deposit's suffix: the watcher credits what arrived with no
// claim and no operator; the deposit keeps its review (amount_mismatch),
// the operator's view shows the settlement by policy, and the balance is
// the amount received.
func TestDeposit_ATransferCarryingItsSuffixWithinTheToleranceIsCreditedByPolicy(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	c, _ := env.SignedIn(t, "Fee Short")
	d := createDeposit(t, c, "100000000")
	requested, _ := strconv.ParseInt(d.RequestedAmount.AmountMinor, 10, 64)
	received := strconv.FormatInt(requested-400_000, 10)
	tx := rc.payShort(t, received)
	got := getDeposit(t, c, d.Id.String())
	review, err := got.Review.Get()
	if got.Status != api.DepositStatusCredited || got.CreditedAmount.AmountMinor != received || err != nil ||
		review.Reason != api.AmountMismatch || review.ReceivedAmount.AmountMinor != received || review.TransactionId != tx {
		t.Fatalf("the deposit: %s %s, review %+v (%v); want credited with what arrived, its review kept", got.Status, got.CreditedAmount.AmountMinor, review, err)
	}
	var b api.AccountBalance
	c.Do(http.MethodGet, "/api/v1/me/balance", nil).JSON(t, &b)
	if b.Available.AmountMinor != received {
		t.Fatalf("balance %s, want %s", b.Available.AmountMinor, received)
	}
	var id uuid.UUID
	if err := env.DB.Pool.QueryRow(context.Background(), "SELECT public_id FROM chain_transfers WHERE tx_id = $1", tx).Scan(&id); err != nil {
		t.Fatal(err)
	}
	op, _ := signedInOperator(t, env, "Otis Operator")
	var seen api.OperatorTransfer
	op.Do(http.MethodGet, operatorTransfersPath+"/"+id.String(), nil).JSON(t, &seen)
	if len(seen.Settlements) != 1 || seen.Settlements[0].Operator.Name != deposit.PolicyOperator ||
		seen.Settlements[0].Decision != api.TransferSettlementDecision(deposit.DecisionCredit) || seen.Status != api.TransferCredited {
		t.Fatalf("the operator sees %+v; want one credit by policy", seen)
	}
}
