package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"creativeapi/gen/api"
	"creativeapi/internal/deposit"
	"creativeapi/internal/testenv"
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

func transferIDs(l api.OperatorTransferList) []int64 {
	out := make([]int64, len(l.Items))
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

	d, claimed := claimShort(t, rc, payer, "100000000", "99500000")
	loose := rc.payShort(t, "1234567")

	all := listOperatorTransfers(t, op, "")
	if len(all.Items) != 2 || all.Items[0].Id != claimed || all.Items[1].TransactionId != loose || all.NextCursor.IsSpecified() && !all.NextCursor.IsNull() {
		t.Fatalf("all: %+v", all)
	}
	first := all.Items[0]
	dep, err := first.DepositId.Get()
	amount, aerr := first.Amount.Get()
	if err != nil || dep != d.Id || aerr != nil || amount.AmountMinor != "99500000" || first.Status != api.TransferUnmatched ||
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
	if err := deposit.Settle(context.Background(), env.DB.Store, claimed, deposit.MoveSettleCredit, opEmail, "short by 0.5, customer confirmed"); err != nil {
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

	r = op.Do(http.MethodGet, fmt.Sprintf("%s/%d", operatorTransfersPath, claimed), nil)
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
		got.Settlements[0].Decision != api.SettlementCredited || got.Settlements[0].Note != "short by 0.5, customer confirmed" ||
		got.Settlements[0].Operator.Name != opEmail {
		t.Fatalf("settled transfer: %+v (%v)", got, err)
	}
	r = op.Do(http.MethodGet, operatorTransfersPath+"/999999", nil)
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
	_, id := claimShort(t, rc, payer, "100000000", "99000000")
	for _, path := range []string{operatorTransfersPath, fmt.Sprintf("%s/%d", operatorTransfersPath, id)} {
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
