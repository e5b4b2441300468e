package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/chainwatch"
	"creativeapi/internal/deposit"
	"creativeapi/internal/devchain"
	"creativeapi/internal/testenv"
	"creativeapi/internal/trongrid"
)

const operatorTransfersPath = "/api/v1/operator/transfers"

// signedInOperator signs a new user in and makes them an operator (as
// users set-operator does); it answers their client and email.
func signedInOperator(t *testing.T, env *testenv.Env, name string) (*testenv.Client, string) {
	t.Helper()
	c, id := env.SignedIn(t, name)
	execDepositSQL(t, env, "UPDATE users SET operator = true WHERE id = $1", id)
	var email string
	if err := env.DB.Pool.QueryRow(t.Context(), "SELECT email FROM users WHERE id = $1", id).Scan(&email); err != nil {
		t.Fatal(err)
	}
	return c, email
}

func listOperatorTransfers(t *testing.T, c *testenv.Client, query string) api.OperatorTransferList {
	t.Helper()
	r := c.Do(http.MethodGet, operatorTransfersPath+query, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("list %s: %d %s", query, r.Status, r.Body)
	}
	var l api.OperatorTransferList
	r.JSON(t, &l)
	return l
}

func transferIDs(l api.OperatorTransferList) []uuid.UUID {
	out := make([]uuid.UUID, len(l.Items))
	for i, it := range l.Items {
		out[i] = it.Id
	}
	return out
}

// TestOperatorTransfers_OperatorsListAndReadTransfersWithTheirSettlements:
// through the API against the chain simulator, a claimed short transfer
// and an unclaimed one wait for review; the filters narrow the list, the
// cursor pages it, and a transfer settled by the transfers command (the
// same deposit.Settle) shows its audit record with the operator.
func TestOperatorTransfers_OperatorsListAndReadTransfersWithTheirSettlements(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	payer, _ := env.SignedIn(t, "Pia Payer")
	op, opEmail := signedInOperator(t, env, "Otto Operator")

	d, claimed := claimShort(t, rc, payer, "100000000", "95000000")
	loose := rc.payShort(t, "1234567")

	all := listOperatorTransfers(t, op, "")
	if len(all.Items) != 2 || all.Items[0].Id != claimed || all.Items[1].TransactionId != loose || all.NextCursor.IsSpecified() && !all.NextCursor.IsNull() {
		t.Fatalf("all: %+v", all)
	}
	first := all.Items[0]
	dep, err := first.DepositId.Get()
	amount, aerr := first.Amount.Get()
	if err != nil || dep != d.Id || aerr != nil || amount.AmountMinor != "95000000" || first.Status != api.TransferUnmatched ||
		!first.NeedsReview || len(first.Settlements) != 0 {
		t.Fatalf("claimed transfer: %+v", first)
	}
	if !all.Items[1].DepositId.IsNull() {
		t.Fatalf("the unclaimed transfer names a deposit: %+v", all.Items[1])
	}

	// Paged one by one.
	page := listOperatorTransfers(t, op, "?limit=1")
	next, err := page.NextCursor.Get()
	if len(page.Items) != 1 || page.Items[0].Id != claimed || err != nil {
		t.Fatalf("page 1: %+v", page)
	}
	page = listOperatorTransfers(t, op, "?limit=1&cursor="+next)
	if len(page.Items) != 1 || page.Items[0].TransactionId != loose {
		t.Fatalf("page 2: %+v", page)
	}
	r := op.Do(http.MethodGet, operatorTransfersPath+"?cursor=bm90LWEtY3Vyc29y", nil)
	if p := r.Problem(t); r.Status != http.StatusUnprocessableEntity || p.Code != "invalid_request" {
		t.Fatalf("a foreign cursor: %d %s", r.Status, r.Body)
	}

	// Settled by the transfers command's code, with the operator's email.
	if err := deposit.Settle(context.Background(), env.DB.Store, ledgerID(t, env, claimed), deposit.MoveSettleCredit, opEmail, "short by 0.5, customer confirmed"); err != nil {
		t.Fatal(err)
	}
	if got := transferIDs(listOperatorTransfers(t, op, "?needsReview=true")); len(got) != 1 || all.Items[1].Id != got[0] {
		t.Fatalf("needsReview=true: %v", got)
	}
	if got := transferIDs(listOperatorTransfers(t, op, "?needsReview=false")); len(got) != 1 || got[0] != claimed {
		t.Fatalf("needsReview=false: %v", got)
	}
	if got := transferIDs(listOperatorTransfers(t, op, "?status=credited")); len(got) != 1 || got[0] != claimed {
		t.Fatalf("status=credited: %v", got)
	}
	if got := transferIDs(listOperatorTransfers(t, op, "?status=late")); len(got) != 0 {
		t.Fatalf("status=late: %v", got)
	}
	r = op.Do(http.MethodGet, operatorTransfersPath+"?status=paid", nil)
	if p := r.Problem(t); r.Status != http.StatusUnprocessableEntity || p.Code != "invalid_request" {
		t.Fatalf("an unknown status: %d %s", r.Status, r.Body)
	}

	r = op.Do(http.MethodGet, fmt.Sprintf("%s/%s", operatorTransfersPath, claimed), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("get: %d %s", r.Status, r.Body)
	}
	var got api.OperatorTransfer
	r.JSON(t, &got)
	opID, err := func() (string, error) {
		if len(got.Settlements) != 1 {
			return "", fmt.Errorf("%d settlements", len(got.Settlements))
		}
		id, err := got.Settlements[0].Operator.Id.Get()
		return id.String(), err
	}()
	var wantID string
	if qerr := env.DB.Pool.QueryRow(t.Context(), "SELECT id::text FROM users WHERE email = $1", opEmail).Scan(&wantID); qerr != nil {
		t.Fatal(qerr)
	}
	if got.Status != api.TransferCredited || got.NeedsReview || err != nil || opID != wantID ||
		got.Settlements[0].Decision != api.SettlementCredit || got.Settlements[0].Note != "short by 0.5, customer confirmed" ||
		got.Settlements[0].Operator.Name != opEmail {
		t.Fatalf("settled transfer: %+v (%v)", got, err)
	}
	r = op.Do(http.MethodGet, operatorTransfersPath+"/"+uuid.NewString(), nil)
	if p := r.Problem(t); r.Status != http.StatusNotFound || p.Code != "not_found" {
		t.Fatalf("an unknown transfer: %d %s", r.Status, r.Body)
	}
}

// TestOperatorTransfers_DoNotExistForAnyoneElse: a signed-in user who is
// not an operator gets 404 not_found on the list and on a transfer that
// exists; signed out is 401.
func TestOperatorTransfers_DoNotExistForAnyoneElse(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	payer, _ := env.SignedIn(t, "Nina Notop")
	_, id := claimShort(t, rc, payer, "100000000", "90000000")
	for _, path := range []string{operatorTransfersPath, fmt.Sprintf("%s/%s", operatorTransfersPath, id)} {
		r := payer.Do(http.MethodGet, path, nil)
		if p := r.Problem(t); r.Status != http.StatusNotFound || p.Code != "not_found" {
			t.Errorf("%s as a non-operator: %d %s", path, r.Status, r.Body)
		}
		r = env.Client(t).Do(http.MethodGet, path, nil)
		if p := r.Problem(t); r.Status != http.StatusUnauthorized || p.Code != "unauthenticated" {
			t.Errorf("%s signed out: %d %s", path, r.Status, r.Body)
		}
	}
}

func settlementsPath(id uuid.UUID) string {
	return fmt.Sprintf("%s/%s/settlements", operatorTransfersPath, id)
}

// TestSettleOperatorTransfer_CreditsTheAmountReceivedOnceOverHTTP: short
// transfer, the payer's claim, the operator's credit over HTTP: the deposit
// is credited with what arrived, the balance shows exactly that, the same
// key replays the answer, and a second credit is 409 invalid_transition
// with nothing credited twice; the audit record names the operator.
func TestSettleOperatorTransfer_CreditsTheAmountReceivedOnceOverHTTP(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	payer, _ := env.SignedIn(t, "Cora Credit")
	op, opEmail := signedInOperator(t, env, "Olaf Operator")
	d, id := claimShort(t, rc, payer, "100000000", "95000000")

	key := testenv.Header{Name: "Idempotency-Key", Value: "settle-credit-1"}
	body := map[string]string{"decision": "credit", "note": "short by 0.5, customer confirmed"}
	r := op.Do(http.MethodPost, settlementsPath(id), body, key)
	if r.Status != http.StatusOK {
		t.Fatalf("credit: %d %s", r.Status, r.Body)
	}
	var got api.OperatorTransfer
	r.JSON(t, &got)
	if got.Status != api.TransferCredited || got.NeedsReview || len(got.Settlements) != 1 ||
		got.Settlements[0].Decision != api.SettlementCredit || got.Settlements[0].Operator.Name != opEmail || got.Settlements[0].Operator.Id.IsNull() {
		t.Fatalf("credited transfer: %+v", got)
	}
	dep := getDeposit(t, payer, d.Id.String())
	if dep.Status != api.DepositStatusCredited || dep.CreditedAmount.AmountMinor != "95000000" {
		t.Fatalf("deposit: %s credited %s; want credited 95000000", dep.Status, dep.CreditedAmount.AmountMinor)
	}
	replay := op.Do(http.MethodPost, settlementsPath(id), body, key)
	if replay.Status != http.StatusOK || replay.Header.Get("Idempotent-Replayed") != "true" || string(replay.Body) != string(r.Body) {
		t.Fatalf("replay: %d %s", replay.Status, replay.Body)
	}
	again := op.Do(http.MethodPost, settlementsPath(id), body)
	if p := again.Problem(t); again.Status != http.StatusConflict || p.Code != "invalid_transition" {
		t.Fatalf("a second credit: %d %s", again.Status, again.Body)
	}
	br := payer.Do(http.MethodGet, "/api/v1/me/balance", nil)
	var bal api.AccountBalance
	br.JSON(t, &bal)
	if br.Status != http.StatusOK || bal.Available.AmountMinor != "95000000" {
		t.Fatalf("balance: %d %s; want 95000000 once", br.Status, br.Body)
	}
}

// TestSettleOperatorTransfer_RefundsAndRefusesWhatItCannotSettle: refund of
// a claimed transfer over HTTP makes the deposit refunded; credit of an
// unclaimed transfer (no deposit) is 409 invalid_transition; a bad decision
// or note is 422; a non-operator gets 404 even with a valid body; signed
// out 401; without the CSRF token 403.
func TestSettleOperatorTransfer_RefundsAndRefusesWhatItCannotSettle(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	payer, _ := env.SignedIn(t, "Rita Refund")
	op, _ := signedInOperator(t, env, "Oskar Operator")
	d, id := claimShort(t, rc, payer, "100000000", "90000000")
	refund := map[string]string{"decision": "refund", "note": "sent back in tx 9f"}

	r := payer.Do(http.MethodPost, settlementsPath(id), refund)
	if p := r.Problem(t); r.Status != http.StatusNotFound || p.Code != "not_found" {
		t.Fatalf("a non-operator: %d %s", r.Status, r.Body)
	}
	r = env.Client(t).Do(http.MethodPost, settlementsPath(id), refund)
	if p := r.Problem(t); r.Status != http.StatusUnauthorized || p.Code != "unauthenticated" {
		t.Fatalf("signed out: %d %s", r.Status, r.Body)
	}
	r = op.Do(http.MethodPost, settlementsPath(id), refund, testenv.Header{Name: "X-CSRF-Token", Value: "forged"})
	if p := r.Problem(t); r.Status != http.StatusForbidden || p.Code != "csrf_failed" {
		t.Fatalf("without the CSRF token: %d %s", r.Status, r.Body)
	}
	for _, bad := range []map[string]string{
		{"decision": "approve", "note": "x"}, {"decision": "refund", "note": ""}, {"decision": "refund", "note": "   "},
		{"decision": "refund", "note": strings.Repeat("n", 1001)},
	} {
		r = op.Do(http.MethodPost, settlementsPath(id), bad)
		if p := r.Problem(t); r.Status != http.StatusUnprocessableEntity || p.Code != "invalid_request" {
			t.Errorf("%v: %d %s; want 422", bad, r.Status, r.Body)
		}
	}
	r = op.Do(http.MethodPost, settlementsPath(uuid.New()), refund)
	if p := r.Problem(t); r.Status != http.StatusNotFound || p.Code != "not_found" {
		t.Fatalf("an unknown transfer: %d %s", r.Status, r.Body)
	}

	r = op.Do(http.MethodPost, settlementsPath(id), refund)
	var got api.OperatorTransfer
	r.JSON(t, &got)
	if r.Status != http.StatusOK || got.Status != api.TransferRefunded || len(got.Settlements) != 1 || got.Settlements[0].Decision != api.SettlementRefund {
		t.Fatalf("refund: %d %s", r.Status, r.Body)
	}
	if dep := getDeposit(t, payer, d.Id.String()); dep.Status != api.DepositStatusRefunded || dep.CreditedAmount.AmountMinor != "0" {
		t.Fatalf("deposit after refund: %s credited %s", dep.Status, dep.CreditedAmount.AmountMinor)
	}

	loose := rc.payShort(t, "7000000")
	var looseID uuid.UUID
	if err := env.DB.Pool.QueryRow(t.Context(), "SELECT public_id FROM chain_transfers WHERE tx_id = $1", loose).Scan(&looseID); err != nil {
		t.Fatal(err)
	}
	r = op.Do(http.MethodPost, settlementsPath(looseID), map[string]string{"decision": "credit", "note": "whose?"})
	if p := r.Problem(t); r.Status != http.StatusConflict || p.Code != "invalid_transition" {
		t.Fatalf("credit with no deposit: %d %s", r.Status, r.Body)
	}
}

// transferByTx answers the id of the transfer of transaction tx.
func transferByTx(t *testing.T, env *testenv.Env, tx string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	if err := env.DB.Pool.QueryRow(t.Context(), "SELECT public_id FROM chain_transfers WHERE tx_id = $1", tx).Scan(&id); err != nil {
		t.Fatalf("transfer %s: %v", tx, err)
	}
	return id
}

// TestSettleOperatorTransfer_RejectThenClaimAgain: through the API against
// the chain simulator (every answer validated against the spec), a payer
// claims a stray transfer that is not theirs; the operator rejects it: the
// transfer is unmatched again and waits for review, its audit record names
// the deposit, and the deposit is awaiting_transfer again with no review
// and no transaction; the same key replays the answer; the deposit cannot
// claim the rejected transfer again (409 transfer_taken), claims the right
// one, and the operator's credit pays exactly what arrived, once. A reject
// of the credited transfer is 409 invalid_transition, and so is a reject of
// the rejected one (no deposit attached any more).
func TestSettleOperatorTransfer_RejectThenClaimAgain(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	payer, _ := env.SignedIn(t, "Jonas Rejected")
	op, opEmail := signedInOperator(t, env, "Olga Operator")
	d := createDeposit(t, payer, "100000000")

	stray := rc.payShort(t, "7000000")
	if r := payer.Do(http.MethodPost, claimPath(d.Id.String()), claimBody(stray)); r.Status != http.StatusOK {
		t.Fatalf("the wrong claim: %d %s", r.Status, r.Body)
	}
	strayID := transferByTx(t, env, stray)
	key := testenv.Header{Name: "Idempotency-Key", Value: "settle-reject-1"}
	body := map[string]string{"decision": "reject", "note": "not this payer's transfer"}
	r := op.Do(http.MethodPost, settlementsPath(strayID), body, key)
	if r.Status != http.StatusOK {
		t.Fatalf("reject: %d %s", r.Status, r.Body)
	}
	var got api.OperatorTransfer
	r.JSON(t, &got)
	if got.Status != api.TransferUnmatched || !got.NeedsReview || !got.DepositId.IsNull() || len(got.Settlements) != 1 {
		t.Fatalf("rejected transfer: %+v", got)
	}
	s := got.Settlements[0]
	if dep, err := s.DepositId.Get(); s.Decision != api.SettlementReject || s.Operator.Name != opEmail || err != nil || dep != d.Id {
		t.Fatalf("the audit record: %+v", s)
	}
	if reason, _ := got.Reason.Get(); reason != "rejected" {
		t.Fatalf("reason %q; want rejected", reason)
	}
	back := getDeposit(t, payer, d.Id.String())
	if back.Status != api.DepositStatusAwaitingTransfer || !back.Review.IsNull() || !back.TransactionId.IsNull() || back.CreditedAmount.AmountMinor != "0" {
		t.Fatalf("deposit after the reject: %s, review %v, transaction %v, credited %s", back.Status, back.Review, back.TransactionId, back.CreditedAmount.AmountMinor)
	}
	replay := op.Do(http.MethodPost, settlementsPath(strayID), body, key)
	if replay.Status != http.StatusOK || replay.Header.Get("Idempotent-Replayed") != "true" || string(replay.Body) != string(r.Body) {
		t.Fatalf("replay: %d %s", replay.Status, replay.Body)
	}
	again := op.Do(http.MethodPost, settlementsPath(strayID), body)
	if p := again.Problem(t); again.Status != http.StatusConflict || p.Code != "invalid_transition" {
		t.Fatalf("a reject of a transfer no deposit has: %d %s", again.Status, again.Body)
	}
	r = payer.Do(http.MethodPost, claimPath(d.Id.String()), claimBody(stray))
	if p := r.Problem(t); r.Status != http.StatusConflict || p.Code != "transfer_taken" {
		t.Fatalf("a claim of the rejected transfer: %d %s", r.Status, r.Body)
	}

	// The right transaction: claimed, credited with what arrived, once.
	right := rc.payShort(t, "95000000")
	r = payer.Do(http.MethodPost, claimPath(d.Id.String()), claimBody(right))
	if r.Status != http.StatusOK {
		t.Fatalf("the right claim: %d %s", r.Status, r.Body)
	}
	rightID := transferByTx(t, env, right)
	r = op.Do(http.MethodPost, settlementsPath(rightID), map[string]string{"decision": "credit", "note": "short by 0.5, confirmed"})
	if r.Status != http.StatusOK {
		t.Fatalf("credit: %d %s", r.Status, r.Body)
	}
	if dep := getDeposit(t, payer, d.Id.String()); dep.Status != api.DepositStatusCredited || dep.CreditedAmount.AmountMinor != "95000000" {
		t.Fatalf("deposit: %s credited %s; want credited 95000000", dep.Status, dep.CreditedAmount.AmountMinor)
	}
	r = op.Do(http.MethodPost, settlementsPath(rightID), body)
	if p := r.Problem(t); r.Status != http.StatusConflict || p.Code != "invalid_transition" {
		t.Fatalf("a reject of a credited transfer: %d %s", r.Status, r.Body)
	}
	var bal api.AccountBalance
	payer.Do(http.MethodGet, "/api/v1/me/balance", nil).JSON(t, &bal)
	if bal.Available.AmountMinor != "95000000" {
		t.Fatalf("balance %s; want 95000000 once", bal.Available.AmountMinor)
	}
	// The stray transfer still waits for an operator: refunded, it is settled.
	r = op.Do(http.MethodPost, settlementsPath(strayID), map[string]string{"decision": "refund", "note": "sent back"})
	r.JSON(t, &got)
	if r.Status != http.StatusOK || got.Status != api.TransferRefunded || len(got.Settlements) != 2 ||
		got.Settlements[1].Decision != api.SettlementRefund || !got.Settlements[1].DepositId.IsNull() {
		t.Fatalf("refund of the rejected transfer: %d %s", r.Status, r.Body)
	}
}

// TestSettleOperatorTransfer_RejectOfALateTransferExpiresTheDeposit: a
// late exact transfer the watcher attached is rejected; the deposit is
// expired again (its block was after expiresAt) and claims another
// transaction inside the monitoring window.
func TestSettleOperatorTransfer_RejectOfALateTransferExpiresTheDeposit(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	payer, _ := env.SignedIn(t, "Lena Late")
	op, _ := signedInOperator(t, env, "Odo Operator")
	d := createDeposit(t, payer, "25000000")
	late := rc.payLate(t, d)
	r := op.Do(http.MethodPost, settlementsPath(apiTransferID(t, env, rc.lateTransferID(t, late))), map[string]string{"decision": "reject", "note": "another customer's"})
	var got api.OperatorTransfer
	r.JSON(t, &got)
	if r.Status != http.StatusOK || got.Status != api.TransferUnmatched || !got.NeedsReview || !got.DepositId.IsNull() {
		t.Fatalf("reject of a late transfer: %d %s", r.Status, r.Body)
	}
	if dep := getDeposit(t, payer, d.Id.String()); dep.Status != api.DepositStatusExpired || !dep.Review.IsNull() || !dep.TransactionId.IsNull() {
		t.Fatalf("deposit after the reject: %s, review %v, transaction %v; want expired", dep.Status, dep.Review, dep.TransactionId)
	}
	short := rc.payShort(t, "24000000")
	r = payer.Do(http.MethodPost, claimPath(d.Id.String()), claimBody(short))
	var dep api.AccountDeposit
	r.JSON(t, &dep)
	if review, err := dep.Review.Get(); r.Status != http.StatusOK || dep.Status != api.DepositStatusUnderReview || err != nil || review.TransactionId != short {
		t.Fatalf("claim of another transaction: %d %s", r.Status, r.Body)
	}
}

// TestSettleOperatorTransfer_CreditsALateTransferOverHTTP: a late exact
// transfer puts the deposit under review; the operator's credit over HTTP
// makes it credited with the amount received, once.
func TestSettleOperatorTransfer_CreditsALateTransferOverHTTP(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	rc := newReviewChain(t, env)
	payer, _ := env.SignedIn(t, "Lou Late")
	op, _ := signedInOperator(t, env, "Ove Operator")
	d := createDeposit(t, payer, "40000000")
	id := apiTransferID(t, env, rc.lateTransferID(t, rc.payLate(t, d)))
	if dep := getDeposit(t, payer, d.Id.String()); dep.Status != api.DepositStatusUnderReview {
		t.Fatalf("after the late payment: %s", dep.Status)
	}
	credit := map[string]string{"decision": "credit", "note": "paid a minute late"}
	r := op.Do(http.MethodPost, settlementsPath(id), credit)
	var got api.OperatorTransfer
	r.JSON(t, &got)
	if r.Status != http.StatusOK || got.Status != api.TransferCredited || len(got.Settlements) != 1 || got.Settlements[0].Decision != api.SettlementCredit {
		t.Fatalf("credit: %d %s", r.Status, r.Body)
	}
	if dep := getDeposit(t, payer, d.Id.String()); dep.Status != api.DepositStatusCredited || dep.CreditedAmount.AmountMinor != d.RequestedAmount.AmountMinor {
		t.Fatalf("deposit: %s credited %s; want credited %s", dep.Status, dep.CreditedAmount.AmountMinor, d.RequestedAmount.AmountMinor)
	}
	if r := op.Do(http.MethodPost, settlementsPath(id), credit); r.Status != http.StatusConflict {
		t.Fatalf("a second credit: %d %s", r.Status, r.Body)
	}
	var bal api.AccountBalance
	payer.Do(http.MethodGet, "/api/v1/me/balance", nil).JSON(t, &bal)
	if bal.Available.AmountMinor != d.RequestedAmount.AmountMinor {
		t.Fatalf("balance %s; want %s once", bal.Available.AmountMinor, d.RequestedAmount.AmountMinor)
	}
}

// TestDeposit_AFailingFirstUpstreamDoesNotStopCrediting: the watcher reads
// a chain API that answers 503 first and the simulator second; a deposit
// created and read through the API is paid and credited all the same.
func TestDeposit_AFailingFirstUpstreamDoesNotStopCrediting(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	chain := devchain.New(devchain.Options{Contract: env.Config.TronUSDTContract})
	sim := httptest.NewServer(chain.Handler())
	t.Cleanup(sim.Close)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	var list []chainwatch.Upstream
	for _, u := range []string{down.URL, sim.URL} {
		tg, err := trongrid.New(u, nil, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, chainwatch.Upstream{Name: u, Chain: tg})
	}
	w := chainwatch.New(chainwatch.Config{
		Treasury: env.Config.TreasuryAddress, Contract: env.Config.TronUSDTContract,
		PollInterval: time.Second, MonitoringWindow: env.Config.DepositMonitoringWindow,
	}, env.DB.Store, chainwatch.NewUpstreams(list, time.Hour, 2*time.Hour), slog.New(slog.NewTextHandler(io.Discard, nil)))

	payer, _ := env.SignedIn(t, "Uma Upstream")
	d := createDeposit(t, payer, "30000000")
	chain.Pay(devchain.Payment{To: env.Config.TreasuryAddress, Value: d.RequestedAmount.AmountMinor})
	chain.Mine(1)
	if _, err := w.Poll(context.Background()); err != nil {
		t.Fatalf("poll with the first upstream down: %v", err)
	}
	if dep := getDeposit(t, payer, d.Id.String()); dep.Status != api.DepositStatusConfirming {
		t.Fatalf("after the first poll: %s; want confirming", dep.Status)
	}
	chain.Mine(devchain.DefaultSolidLag + env.Config.DepositConfirmations)
	if _, err := w.Poll(context.Background()); err != nil {
		t.Fatalf("poll: %v", err)
	}
	if dep := getDeposit(t, payer, d.Id.String()); dep.Status != api.DepositStatusCredited || dep.CreditedAmount.AmountMinor != d.RequestedAmount.AmountMinor {
		t.Fatalf("deposit: %s credited %s; want credited", dep.Status, dep.CreditedAmount.AmountMinor)
	}
}

// apiTransferID is the API id of the transfer whose internal key is key.
func apiTransferID(t *testing.T, env *testenv.Env, key int64) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	if err := env.DB.Pool.QueryRow(t.Context(), "SELECT public_id FROM chain_transfers WHERE id = $1", key).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
