package chainwatch_test

import (
	"net/http"
	"testing"

	"creativeapi/gen/api"
	"creativeapi/internal/devchain"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

// TestDepositLifecycle_ThroughTheAPI follows one deposit as a frontend sees
// it, through the real server (every answer checked against openapi.yaml):
// created, paid, confirming with its transaction, credited, in the balance.
func TestDepositLifecycle_ThroughTheAPI(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	env := testenv.NewOn(t, b.d, testenv.Options{Env: map[string]string{"DEPOSIT_CONFIRMATIONS": "3"}})
	c, _ := env.SignedIn(t, "Frontend Fran")
	get := func(path string, v any) {
		t.Helper()
		r := c.Do(http.MethodGet, path, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		r.JSON(t, v)
	}

	r := c.Do(http.MethodPost, "/api/v1/me/balance/deposits",
		map[string]any{"amount": map[string]any{"amountMinor": "100000000", "currency": "USDT", "scale": 6}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var d api.AccountDeposit
	r.JSON(t, &d)
	if !d.TransactionId.IsNull() {
		t.Fatalf("a new deposit has transactionId %v; want null", d.TransactionId)
	}
	path := "/api/v1/me/balance/deposits/" + d.Id.String()

	tx := b.chain.Pay(devchain.Payment{To: tron.DevTreasuryAddress, Value: d.RequestedAmount.AmountMinor})
	b.chain.Mine(2)
	poll(t, w)
	get(path, &d)
	if got, _ := d.TransactionId.Get(); d.Status != api.DepositStatusConfirming || d.Confirmations != 2 || got != tx {
		t.Fatalf("after two blocks: status %s, %d/%d confirmations, transaction %q; want confirming 2/3 of %s",
			d.Status, d.Confirmations, d.ConfirmationsRequired, got, tx)
	}

	b.chain.Mine(devchain.DefaultSolidLag)
	poll(t, w)
	get(path, &d)
	if d.Status != api.DepositStatusCredited || d.CreditedAmount != d.RequestedAmount || d.Confirmations != d.ConfirmationsRequired {
		t.Fatalf("after solidification: %+v", d)
	}
	var balance api.AccountBalance
	get("/api/v1/me/balance", &balance)
	if balance.Available.AmountMinor != d.RequestedAmount.AmountMinor {
		t.Fatalf("balance %s; want %s", balance.Available.AmountMinor, d.RequestedAmount.AmountMinor)
	}
}
