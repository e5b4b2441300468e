package deposit_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/deposit"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
)

func TestCredit_CreditsOnceAndReleasesTheAmount(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	user, _ := d.User(t, "Paying Paula")
	dep := mustCreate(t, d, user, hundredUSDT)
	ctx := context.Background()

	got, err := deposit.Credit(ctx, store.Tx{Queries: d.Store.Q}, dep.ID, "tx-1", dep.RequestedAmountMinor)
	if err != nil || got != deposit.Credited {
		t.Fatalf("first credit = %v, %v; want credited", got, err)
	}
	r := read(t, d, dep.ID)
	if r.Status != deposit.StatusCredited || r.Reserved || r.TxID == nil || *r.TxID != "tx-1" || r.CreditedAmount != dep.RequestedAmountMinor {
		t.Fatalf("deposit after credit: %+v", r)
	}
	var amount int64
	err = d.Pool.QueryRow(ctx, "SELECT amount_minor FROM ledger_entries WHERE source_type = 'deposit' AND source_id = $1 AND user_id = $2 AND currency = 'USDT'",
		dep.ID.String(), user).Scan(&amount)
	if err != nil || amount != dep.RequestedAmountMinor {
		t.Fatalf("ledger entry: %d, %v", amount, err)
	}

	t.Run("the same deposit again changes nothing", func(t *testing.T) {
		for _, tx := range []string{"tx-1", "tx-other"} {
			got, err := deposit.Credit(ctx, store.Tx{Queries: d.Store.Q}, dep.ID, tx, 1)
			if err != nil || got != deposit.AlreadyCredited {
				t.Fatalf("credit with %s = %v, %v; want already credited", tx, got, err)
			}
		}
		if r2 := read(t, d, dep.ID); r2.CreditedAmount != r.CreditedAmount || *r2.TxID != "tx-1" {
			t.Fatalf("deposit changed: %+v", r2)
		}
	})
	t.Run("the same transaction on another deposit changes nothing", func(t *testing.T) {
		other := mustCreate(t, d, user, hundredUSDT)
		got, err := deposit.Credit(ctx, store.Tx{Queries: d.Store.Q}, other.ID, "tx-1", other.RequestedAmountMinor)
		if err != nil || got != deposit.TransferAlreadyUsed {
			t.Fatalf("credit = %v, %v; want transfer already used", got, err)
		}
		if r := read(t, d, other.ID); r.Status != deposit.StatusAwaitingTransfer || !r.Reserved || r.TxID != nil {
			t.Fatalf("other deposit changed: %+v", r)
		}
	})
	if n := count(t, d, "SELECT count(*) FROM ledger_entries WHERE user_id = $1", user); n != 1 {
		t.Fatalf("%d ledger entries, want 1", n)
	}
}

func TestCredit_ConcurrentCallsCreditOnce(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	user, _ := d.User(t, "Racing Rita")
	dep := mustCreate(t, d, user, hundredUSDT)
	var wg sync.WaitGroup
	outcomes := make([]deposit.CreditOutcome, 10)
	errs := make([]error, 10)
	for i := range outcomes {
		wg.Go(func() {
			outcomes[i], errs[i] = deposit.Credit(context.Background(), store.Tx{Queries: d.Store.Q}, dep.ID, "tx-race", dep.RequestedAmountMinor)
		})
	}
	wg.Wait()
	credited := 0
	for i, o := range outcomes {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if o == deposit.Credited {
			credited++
		} else if o != deposit.AlreadyCredited {
			t.Fatalf("call %d: %v", i, o)
		}
	}
	if credited != 1 {
		t.Fatalf("%d calls credited, want 1", credited)
	}
	if n := count(t, d, "SELECT count(*) FROM ledger_entries WHERE user_id = $1", user); n != 1 {
		t.Fatalf("%d ledger entries, want 1", n)
	}
}

func TestCredit_RefusesWhatTheWatcherMustNotCredit(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	user, _ := d.User(t, "Careful Carl")
	ctx := context.Background()

	expired := mustCreate(t, d, user, hundredUSDT)
	exec(t, d, "UPDATE deposits SET expires_at = now() - interval '1 minute' WHERE id = $1", expired.ID)
	matched := mustCreate(t, d, user, hundredUSDT)
	exec(t, d, "UPDATE deposits SET status = 'confirming', transfer_tx_id = 'tx-seen' WHERE id = $1", matched.ID)

	tests := []struct {
		name   string
		id     uuid.UUID
		tx     string
		amount int64
		want   error
	}{
		{"a late transfer to an expired deposit is for review", expired.ID, "tx-late", expired.RequestedAmountMinor, deposit.ErrNotCreditable},
		{"a deposit matched to another transaction", matched.ID, "tx-other", matched.RequestedAmountMinor, deposit.ErrNotCreditable},
		{"a short transfer", matched.ID, "tx-seen", matched.RequestedAmountMinor - 1, deposit.ErrAmountMismatch},
		{"a transfer of the base amount without its suffix", matched.ID, "tx-seen", hundredUSDT, deposit.ErrAmountMismatch},
		{"a long transfer", matched.ID, "tx-seen", matched.RequestedAmountMinor + 1, deposit.ErrAmountMismatch},
		{"an unknown deposit", uuid.New(), "tx-x", hundredUSDT, store.ErrNotFound},
		{"an empty transaction id", matched.ID, "", hundredUSDT, deposit.ErrInvalidCredit},
		{"a zero amount", matched.ID, "tx-seen", 0, deposit.ErrInvalidCredit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := deposit.Credit(ctx, store.Tx{Queries: d.Store.Q}, tt.id, tt.tx, tt.amount)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Credit = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	if n := count(t, d, "SELECT count(*) FROM ledger_entries"); n != 0 {
		t.Fatalf("%d ledger entries, want none", n)
	}
	if r := read(t, d, matched.ID); r.Status != deposit.StatusConfirming || !r.Reserved {
		t.Fatalf("refused credits changed the deposit: %+v", r)
	}

	t.Run("a confirming deposit past its expiry is credited by its own transaction", func(t *testing.T) {
		exec(t, d, "UPDATE deposits SET expires_at = now() - interval '1 minute' WHERE id = $1", matched.ID)
		got, err := deposit.Credit(ctx, store.Tx{Queries: d.Store.Q}, matched.ID, "tx-seen", matched.RequestedAmountMinor)
		if err != nil || got != deposit.Credited {
			t.Fatalf("Credit = %v, %v; want credited", got, err)
		}
	})
}

func TestCreditLate_AnOperatorCreditsAnExpiredDepositOnceWithItsExactAmount(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	user, _ := d.User(t, "Late Larry")
	ctx := context.Background()
	dep := mustCreate(t, d, user, hundredUSDT)
	exec(t, d, "UPDATE deposits SET status = 'expired', expires_at = now() - interval '1 hour' WHERE id = $1", dep.ID)

	if _, err := deposit.Credit(ctx, store.Tx{Queries: d.Store.Q}, dep.ID, "tx-late", dep.RequestedAmountMinor); !errors.Is(err, deposit.ErrNotCreditable) {
		t.Fatalf("the watcher's Credit = %v; want not creditable", err)
	}
	if _, err := deposit.CreditLate(ctx, store.Tx{Queries: d.Store.Q}, dep.ID, "tx-late", dep.RequestedAmountMinor-1); !errors.Is(err, deposit.ErrAmountMismatch) {
		t.Fatalf("CreditLate of a short amount = %v; want amount mismatch", err)
	}
	got, err := deposit.CreditLate(ctx, store.Tx{Queries: d.Store.Q}, dep.ID, "tx-late", dep.RequestedAmountMinor)
	if err != nil || got != deposit.Credited {
		t.Fatalf("CreditLate = %v, %v; want credited", got, err)
	}
	got, err = deposit.CreditLate(ctx, store.Tx{Queries: d.Store.Q}, dep.ID, "tx-late", dep.RequestedAmountMinor)
	if err != nil || got != deposit.AlreadyCredited {
		t.Fatalf("second CreditLate = %v, %v; want already credited", got, err)
	}
	if r := read(t, d, dep.ID); r.Status != deposit.StatusCredited || r.CreditedAmount != dep.RequestedAmountMinor || r.Reserved {
		t.Fatalf("deposit: %+v", r)
	}
	if n := count(t, d, "SELECT count(*) FROM ledger_entries WHERE user_id = $1", user); n != 1 {
		t.Fatalf("%d ledger entries, want 1", n)
	}
}
