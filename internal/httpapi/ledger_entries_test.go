package httpapi_test

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/deposit"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
)

// TestLedgerEntries_NewestFirstInPagesAndTheBalanceIsTheirSum: three
// credited deposits are three entries, newest first, two pages of two;
// each names its deposit and transaction; the balance is their sum. No
// session is 401, a cursor the list did not make 422.
func TestLedgerEntries_NewestFirstInPagesAndTheBalanceIsTheirSum(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Lee Ledger")
	var want []uuid.UUID
	for i, amount := range []string{"10000000", "20000000", "30000000"} {
		d := createDeposit(t, c, amount)
		tx := fmt.Sprintf("%064x", 7700+i)
		minor, _ := new(big.Int).SetString(d.RequestedAmount.AmountMinor, 10)
		if out, err := deposit.Credit(context.Background(), store.Tx{Queries: env.DB.Store.Q}, uuid.UUID(d.Id), tx, minor.Int64()); err != nil || out != deposit.Credited {
			t.Fatalf("credit %s: %v %v", amount, out, err)
		}
		want = append([]uuid.UUID{uuid.UUID(d.Id)}, want...)
	}

	var got []api.LedgerEntry
	path := "/api/v1/me/balance/entries?limit=2"
	for pages := 0; path != ""; pages++ {
		if pages > 2 {
			t.Fatal("more pages than entries")
		}
		r := c.Do(http.MethodGet, path, nil)
		var page api.LedgerEntryList
		r.JSON(t, &page)
		if r.Status != http.StatusOK {
			t.Fatalf("page: %d %s", r.Status, r.Body)
		}
		got = append(got, page.Items...)
		path = ""
		if next, err := page.NextCursor.Get(); err == nil {
			path = "/api/v1/me/balance/entries?limit=2&cursor=" + next
		}
	}
	sum := new(big.Int)
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i, e := range got {
		dep, err := e.DepositId.Get()
		if err != nil || uuid.UUID(dep) != want[i] || e.Kind != api.LedgerEntryKind(deposit.EntryKindDepositCredit) || len(e.TransactionIds) != 1 {
			t.Fatalf("entry %d: %+v; want deposit %s, newest first", i, e, want[i])
		}
		v, _ := new(big.Int).SetString(e.Amount.AmountMinor, 10)
		sum.Add(sum, v)
	}
	var b api.AccountBalance
	c.Do(http.MethodGet, "/api/v1/me/balance", nil).JSON(t, &b)
	if b.Available.AmountMinor != sum.String() {
		t.Fatalf("balance %s, entries sum to %s", b.Available.AmountMinor, sum)
	}

	if r := env.Client(t).Do(http.MethodGet, "/api/v1/me/balance/entries", nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("signed out: %d %s", r.Status, r.Body)
	}
	if r := c.Do(http.MethodGet, "/api/v1/me/balance/entries?cursor=not-ours", nil); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("a foreign cursor: %d %s", r.Status, r.Body)
	}
}
