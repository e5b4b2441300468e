package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"creativeapi/gen/api"
	"creativeapi/internal/deposit"
	"creativeapi/internal/devchain"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

func topUpPath(id string) string { return depositsPath + "/" + id + "/top-up" }

func refundAddressPath(id string) string { return depositsPath + "/" + id + "/refund-address" }

// payAndConfirm pays value to the treasury, mines until its block is
// final with the confirmations, and polls: an on-time exact transfer is
// credited.
func (rc *reviewChain) payAndConfirm(t *testing.T, value string) string {
	t.Helper()
	tx := rc.chain.Pay(devchain.Payment{To: rc.env.Config.TreasuryAddress, Value: value})
	rc.chain.Mine(2)
	if _, err := rc.w.Poll(context.Background()); err != nil {
		t.Fatalf("poll: %v", err)
	}
	rc.chain.Mine(rc.env.Config.DepositConfirmations + devchain.DefaultSolidLag)
	if _, err := rc.w.Poll(context.Background()); err != nil {
		t.Fatalf("poll: %v", err)
	}
	return tx
}

// attachedByFingerprint checks that the watcher attached a short transfer
// carrying d's suffix to d, under review for the amount.
func attachedByFingerprint(t *testing.T, c *testenv.Client, d api.AccountDeposit) {
	t.Helper()
	got := getDeposit(t, c, d.Id.String())
	review, err := got.Review.Get()
	if got.Status != api.DepositStatusUnderReview || err != nil || review.Reason != api.AmountMismatch {
		t.Fatalf("the deposit is %s, review %+v (%v); want under_review for the amount", got.Status, review, err)
	}
}

// TestTopUp_AShortPaymentIsCompletedByATopUpAndCreditedWithBoth: through
// the API against the TronGrid fake, a payer 5 USDT short (beyond the
// tolerance, in whole cents: the transfer keeps the deposit's suffix) finds
// it attached to the deposit with no claim, asks for a top-up and gets the
// shortfall plus a suffix (the same answer when asked again, replayed
// under the same key), with a deposit.top_up_requested event; paying
// exactly that credits the deposit with the sum of both transfers, in one
// ledger entry naming both transactions; the claimed transfer is settled
// by the policy, and the balance is the sum of the entries.
func TestTopUp_AShortPaymentIsCompletedByATopUpAndCreditedWithBoth(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	c, _ := env.SignedIn(t, "Tina Top-up")
	d := createDeposit(t, c, "100000000")
	requested, _ := strconv.ParseInt(d.RequestedAmount.AmountMinor, 10, 64)
	short := rc.payShort(t, strconv.FormatInt(requested-5_000_000, 10))
	attachedByFingerprint(t, c, d)

	key := testenv.Header{Name: "Idempotency-Key", Value: "top-up-1"}
	r := c.Do(http.MethodPost, topUpPath(d.Id.String()), nil, key)
	if r.Status != http.StatusOK {
		t.Fatalf("top-up: %d %s", r.Status, r.Body)
	}
	var got api.AccountDeposit
	r.JSON(t, &got)
	review, _ := got.Review.Get()
	up, err := review.TopUp.Get()
	if got.Status != api.DepositStatusUnderReview || err != nil {
		t.Fatalf("after the top-up: %s, topUp %v; want under_review with a top-up", got.Status, err)
	}
	amount, _ := strconv.ParseInt(up.Amount.AmountMinor, 10, 64)
	if suffix := amount - 5_000_000; suffix < deposit.SuffixMin || suffix > deposit.SuffixMax || !up.ExpiresAt.After(got.CreatedAt) {
		t.Fatalf("top-up %s until %v; want 5 USDT plus a suffix", up.Amount.AmountMinor, up.ExpiresAt)
	}
	if again := c.Do(http.MethodPost, topUpPath(d.Id.String()), nil, key); again.Status != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the same key: %d %s", again.Status, again.Header)
	}
	var second api.AccountDeposit
	c.Do(http.MethodPost, topUpPath(d.Id.String()), nil).JSON(t, &second)
	if r2, _ := second.Review.Get(); !r2.TopUp.IsSpecified() || mustTopUp(t, r2).Amount != up.Amount {
		t.Fatalf("asked again while open: %+v; want the same top-up %s", r2.TopUp, up.Amount.AmountMinor)
	}
	if n := countDepositRows(t, env, "SELECT count(*) FROM outbox_events WHERE type = 'deposit.top_up_requested' AND payload->'data'->>'id' = $1", d.Id.String()); n != 1 {
		t.Fatalf("%d deposit.top_up_requested events; want 1", n)
	}
	// The top-up is no deposit of the payer's own.
	var list api.AccountDepositList
	c.Do(http.MethodGet, depositsPath, nil).JSON(t, &list)
	if len(list.Items) != 1 {
		t.Fatalf("the payer lists %d deposits; want 1", len(list.Items))
	}

	topUpTx := rc.payAndConfirm(t, up.Amount.AmountMinor)
	got = getDeposit(t, c, d.Id.String())
	if want := strconv.FormatInt(requested-5_000_000+amount, 10); got.Status != api.DepositStatusCredited || got.CreditedAmount.AmountMinor != want || !got.Review.IsNull() {
		t.Fatalf("after the top-up arrived: %s %s, review %v; want credited %s", got.Status, got.CreditedAmount.AmountMinor, got.Review, want)
	}
	var entries api.LedgerEntryList
	c.Do(http.MethodGet, "/api/v1/me/balance/entries", nil).JSON(t, &entries)
	if len(entries.Items) != 1 || entries.Items[0].Amount != got.CreditedAmount ||
		strings.Join(entries.Items[0].TransactionIds, ",") != short+","+topUpTx {
		t.Fatalf("entries %+v; want one of %s naming %s and %s", entries.Items, got.CreditedAmount.AmountMinor, short, topUpTx)
	}
	if id, _ := entries.Items[0].DepositId.Get(); id != d.Id {
		t.Fatalf("the entry names deposit %v; want %v", id, d.Id)
	}
	var b api.AccountBalance
	c.Do(http.MethodGet, "/api/v1/me/balance", nil).JSON(t, &b)
	if b.Available != got.CreditedAmount {
		t.Fatalf("balance %s; want the sum of the entries %s", b.Available.AmountMinor, got.CreditedAmount.AmountMinor)
	}
	var operator string
	if err := env.DB.Pool.QueryRow(context.Background(), `SELECT s.operator FROM chain_transfer_settlements s
		JOIN chain_transfers t ON t.id = s.transfer_id WHERE t.tx_id = $1 AND s.decision = 'credit'`, short).Scan(&operator); err != nil || operator != deposit.PolicyOperator {
		t.Fatalf("the claimed transfer's settlement: %q (%v); want policy", operator, err)
	}
	if r := c.Do(http.MethodPost, topUpPath(d.Id.String()), nil); r.Status != http.StatusConflict || r.Problem(t).Code != "invalid_transition" {
		t.Fatalf("a top-up of a credited deposit: %d %s", r.Status, r.Body)
	}
}

func mustTopUp(t *testing.T, r api.NullableDepositReview) api.NullableDepositTopUp {
	t.Helper()
	up, err := r.TopUp.Get()
	if err != nil {
		t.Fatalf("no top-up: %v", err)
	}
	return up
}

// TestTopUp_OnlyForADepositUnderReviewForAShortTransfer: a deposit
// awaiting its transfer, under review for a late exact transfer, or under
// review for a transfer its payer claimed, takes no top-up (409
// invalid_transition); someone else's deposit is 404, a
// malformed id 422.
func TestTopUp_OnlyForADepositUnderReviewForAShortTransfer(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	c, _ := env.SignedIn(t, "Ada Awaiting")
	d := createDeposit(t, c, "100000000")
	if r := c.Do(http.MethodPost, topUpPath(d.Id.String()), nil); r.Status != http.StatusConflict || r.Problem(t).Code != "invalid_transition" {
		t.Fatalf("awaiting: %d %s", r.Status, r.Body)
	}
	late := createDeposit(t, c, "20000000")
	rc.payLate(t, late)
	if g := getDeposit(t, c, late.Id.String()); g.Status != api.DepositStatusUnderReview {
		t.Fatalf("the late deposit is %s", g.Status)
	}
	if r := c.Do(http.MethodPost, topUpPath(late.Id.String()), nil); r.Status != http.StatusConflict {
		t.Fatalf("late: %d %s", r.Status, r.Body)
	}
	// A claimed transfer takes none: a claimant could top a stranger's
	// short payment up to their own amount.
	claimed, _ := claimShort(t, rc, c, "50000000", "40000000")
	if r := c.Do(http.MethodPost, topUpPath(claimed.Id.String()), nil); r.Status != http.StatusConflict || r.Problem(t).Code != "invalid_transition" {
		t.Fatalf("claimed: %d %s", r.Status, r.Body)
	}
	other, _ := env.SignedIn(t, "Otto Other")
	if r := other.Do(http.MethodPost, topUpPath(d.Id.String()), nil); r.Status != http.StatusNotFound {
		t.Fatalf("someone else's: %d %s", r.Status, r.Body)
	}
	if r := c.Do(http.MethodPost, topUpPath("not-a-uuid"), nil); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("a malformed id: %d %s", r.Status, r.Body)
	}
}

// TestTopUp_EveryReservationIsUniqueAcrossDepositsAndTopUps: with every
// suffix of the shortfall held by deposits but one, the top-up takes that
// one; the database refuses a deposit of the top-up's amount; with none
// free the top-up is 503 deposit_capacity_exhausted with Retry-After.
func TestTopUp_EveryReservationIsUniqueAcrossDepositsAndTopUps(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	filler, _ := env.DB.User(t, "Filler")
	fill := func(except int) {
		// Expired deposits inside their monitoring window: they hold their
		// amounts, and no transfer carries their fingerprint any more.
		execDepositSQL(t, env, `INSERT INTO deposits (user_id, network, address, currency, base_amount_minor, suffix_minor,
				requested_amount_minor, confirmations_required, created_at, expires_at, reserved_until, status)
			SELECT $1, 'TRC20', $2, 'USDT', 20000000, s, 20000000 + s, 19, now() - interval '31 minutes', now() - interval '1 minute',
			       now() + interval '1 day', 'expired'
			FROM generate_series(1, 9999) AS s WHERE s <> $3
			ON CONFLICT (network, address, currency, requested_amount_minor) WHERE reserved DO NOTHING`, filler, tron.DevTreasuryAddress, except)
	}
	c, _ := env.SignedIn(t, "Una Unique")
	// Paid 80 of 100.00xx: the shortfall is 20 USDT and the suffix.
	d := createDeposit(t, c, "100000000")
	requested, _ := strconv.ParseInt(d.RequestedAmount.AmountMinor, 10, 64)
	rc.payShort(t, strconv.FormatInt(requested-20_000_000, 10))
	attachedByFingerprint(t, c, d)
	fill(4242)
	r := c.Do(http.MethodPost, topUpPath(d.Id.String()), nil)
	var got api.AccountDeposit
	r.JSON(t, &got)
	review, _ := got.Review.Get()
	if r.Status != http.StatusOK || mustTopUp(t, review).Amount.AmountMinor != "20004242" {
		t.Fatalf("top-up with one suffix free: %d %s", r.Status, r.Body)
	}
	if _, err := env.DB.Pool.Exec(context.Background(), `INSERT INTO deposits (user_id, network, address, currency, base_amount_minor,
			suffix_minor, requested_amount_minor, confirmations_required, expires_at, reserved_until)
		VALUES ($1, 'TRC20', $2, 'USDT', 20000000, 4242, 20004242, 19, now() + interval '30 minutes', now() + interval '1 day')`,
		filler, tron.DevTreasuryAddress); err == nil || !strings.Contains(err.Error(), "deposits_reserved_amount_key") {
		t.Fatalf("a deposit of the top-up's amount: %v; want the unique reservation refused", err)
	}

	// Another short payment of the same shortfall finds no suffix free.
	d2 := createDeposit(t, c, "100000000")
	requested2, _ := strconv.ParseInt(d2.RequestedAmount.AmountMinor, 10, 64)
	rc.payShort(t, strconv.FormatInt(requested2-20_000_000, 10))
	attachedByFingerprint(t, c, d2)
	r = c.Do(http.MethodPost, topUpPath(d2.Id.String()), nil)
	if p := r.Problem(t); r.Status != http.StatusServiceUnavailable || p.Code != "deposit_capacity_exhausted" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("no suffix free: %d %s", r.Status, r.Body)
	}
}

// TestRefundAddress_ThePayerNamesItAndSeesTheOperatorsRefund: through the
// API against the TronGrid fake, the payer of a deposit under review names
// a TRON address (a bad checksum is 422, a deposit not under review 409);
// the operator sees it on the transfer and refunds with
// refundTransactionId (which goes with a refund only); the payer sees the refunded deposit with its review, the address,
// the refund's transaction and time, and nothing credited.
func TestRefundAddress_ThePayerNamesItAndSeesTheOperatorsRefund(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	c, _ := env.SignedIn(t, "Rhea Refund")
	awaiting := createDeposit(t, c, "30000000")
	payee := tron.EncodeAddress(bytes.Repeat([]byte{0x22}, 20))
	good := map[string]string{"address": payee}
	if r := c.Do(http.MethodPut, refundAddressPath(awaiting.Id.String()), good); r.Status != http.StatusConflict || r.Problem(t).Code != "invalid_transition" {
		t.Fatalf("not under review: %d %s", r.Status, r.Body)
	}
	d, transfer := claimShort(t, rc, c, "50000000", "40000000")
	last := "a"
	if strings.HasSuffix(payee, last) {
		last = "b"
	}
	bad := payee[:33] + last
	if r := c.Do(http.MethodPut, refundAddressPath(d.Id.String()), map[string]string{"address": bad}); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad checksum: %d %s", r.Status, r.Body)
	}
	r := c.Do(http.MethodPut, refundAddressPath(d.Id.String()), good)
	var got api.AccountDeposit
	r.JSON(t, &got)
	review, _ := got.Review.Get()
	refund, err := review.Refund.Get()
	if addr, _ := refund.Address.Get(); r.Status != http.StatusOK || err != nil || addr != payee || !refund.TransactionId.IsNull() {
		t.Fatalf("refund address: %d %s", r.Status, r.Body)
	}

	op, _ := signedInOperator(t, env, "Olga Operator")
	var seen api.OperatorTransfer
	op.Do(http.MethodGet, operatorTransfersPath+"/"+transfer.String(), nil).JSON(t, &seen)
	if addr, _ := seen.RefundAddress.Get(); addr != payee {
		t.Fatalf("the operator sees refund address %v; want the payer's", seen.RefundAddress)
	}
	refundTx := strings.Repeat("ab", 32)
	settle := func(body map[string]string, key string) *testenv.Response {
		return op.Do(http.MethodPost, operatorTransfersPath+"/"+transfer.String()+"/settlements", body, testenv.Header{Name: "Idempotency-Key", Value: key})
	}
	if r := settle(map[string]string{"decision": "credit", "note": "no", "refundTransactionId": refundTx}, "s-1"); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("a credit with a refund transaction: %d %s", r.Status, r.Body)
	}
	if r := settle(map[string]string{"decision": "refund", "note": "sent back to the payer's address", "refundTransactionId": strings.ToUpper(refundTx)}, "s-2"); r.Status != http.StatusOK {
		t.Fatalf("refund: %d %s", r.Status, r.Body)
	}
	got = getDeposit(t, c, d.Id.String())
	review, err = got.Review.Get()
	if err != nil || got.Status != api.DepositStatusRefunded || got.CreditedAmount.AmountMinor != "0" {
		t.Fatalf("after the refund: %s, review %v", got.Status, err)
	}
	refund, _ = review.Refund.Get()
	addr, _ := refund.Address.Get()
	tx, _ := refund.TransactionId.Get()
	if at, err := refund.At.Get(); addr != payee || tx != refundTx || err != nil || at.IsZero() {
		t.Fatalf("the payer sees refund %+v; want the address, %s and a time", refund, refundTx)
	}
	if r := c.Do(http.MethodPut, refundAddressPath(d.Id.String()), good); r.Status != http.StatusConflict {
		t.Fatalf("an address after the refund: %d %s", r.Status, r.Body)
	}
}

// TestRefundAddress_NoRefundToTheTreasuryTheContractOrTheZeroAddress: an
// address a refund would come back from (the treasury) or be lost at (the
// USDT contract, the zero address) is 422 naming address, and nothing is
// stored.
func TestRefundAddress_NoRefundToTheTreasuryTheContractOrTheZeroAddress(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	c, _ := env.SignedIn(t, "Rudi Refund")
	d, _ := claimShort(t, rc, c, "50000000", "40000000")
	for name, address := range map[string]string{
		"the treasury": env.Config.TreasuryAddress, "the USDT contract": env.Config.TronUSDTContract, "the zero address": tron.ZeroAddress,
	} {
		r := c.Do(http.MethodPut, refundAddressPath(d.Id.String()), map[string]string{"address": address})
		if p := r.Problem(t); r.Status != http.StatusUnprocessableEntity || len(p.FieldErrors) != 1 || p.FieldErrors[0].Field != "address" {
			t.Errorf("%s: %d %s; want 422 naming address", name, r.Status, r.Body)
		}
	}
	if got := getDeposit(t, c, d.Id.String()); mustReview(t, got).Refund.IsSpecified() && !mustReview(t, got).Refund.IsNull() {
		t.Fatalf("a refund address was stored: %+v", mustReview(t, got).Refund)
	}
}

func mustReview(t *testing.T, d api.AccountDeposit) api.NullableDepositReview {
	t.Helper()
	r, err := d.Review.Get()
	if err != nil {
		t.Fatalf("no review: %v", err)
	}
	return r
}
