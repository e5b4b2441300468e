package deposit_test

import (
	"errors"
	"testing"

	"creativeapi/internal/deposit"
	"creativeapi/internal/testenv"
)

const hundredUSDT = 100_000_000

func TestCreate_PicksTheOnlyFreeSuffix(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	fillSuffixes(t, d, hundredUSDT, true, 4242)
	user, _ := d.User(t, "Late Larry")
	dep := mustCreate(t, d, user, hundredUSDT)
	if dep.SuffixMinor != 4242 || dep.RequestedAmountMinor != hundredUSDT+4242 {
		t.Fatalf("suffix %d, requested %d; want the only free suffix 4242", dep.SuffixMinor, dep.RequestedAmountMinor)
	}
}

func TestCreate_RefusesWhenEverySuffixIsReserved(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	fillSuffixes(t, d, hundredUSDT, true)
	user, _ := d.User(t, "Unlucky Una")
	if _, err := create(t, d, settings(), user, hundredUSDT); !errors.Is(err, deposit.ErrCapacityExhausted) {
		t.Fatalf("err = %v, want ErrCapacityExhausted", err)
	}
	// Another amount is unaffected.
	mustCreate(t, d, user, hundredUSDT+deposit.CentMinor)
}

// TestCreate_ReleasedAmountsAreFreeAgain: every suffix of the amount is
// held by a deposit whose reservation was released, so the new deposit
// must reuse one of those requested amounts, and hold it reserved.
func TestCreate_ReleasedAmountsAreFreeAgain(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	fillSuffixes(t, d, hundredUSDT, false)
	user, _ := d.User(t, "Patient Pat")
	dep := mustCreate(t, d, user, hundredUSDT)
	if dep.SuffixMinor < 1 || dep.SuffixMinor > 9999 || dep.RequestedAmountMinor != hundredUSDT+int64(dep.SuffixMinor) {
		t.Fatalf("suffix %d, requested %d; want a suffix of 1 to 9999 on %d", dep.SuffixMinor, dep.RequestedAmountMinor, hundredUSDT)
	}
	if !read(t, d, dep.ID).Reserved {
		t.Error("the new deposit does not hold its amount reserved")
	}
	if n := count(t, d, "SELECT count(*) FROM deposits WHERE requested_amount_minor = $1 AND NOT reserved AND id <> $2",
		dep.RequestedAmountMinor, dep.ID); n != 1 {
		t.Errorf("%d released deposits of the amount %d, want the 1 whose amount was reused", n, dep.RequestedAmountMinor)
	}
}

func TestCreate_RefusesAtTheLimitBeforeWriting(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	user, _ := d.User(t, "Busy Bea")
	s := settings()
	s.MaxOpenPerUser = 2
	for range 2 {
		if _, err := create(t, d, s, user, hundredUSDT); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := create(t, d, s, user, hundredUSDT); !errors.Is(err, deposit.ErrTooManyOpen) {
		t.Fatalf("third create: %v, want ErrTooManyOpen", err)
	}
	if n := count(t, d, "SELECT count(*) FROM deposits WHERE user_id = $1", user); n != 2 {
		t.Fatalf("%d deposits, want 2", n)
	}
}

func TestCreate_ConfirmingCountsAndExpiredDoesNot(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	user, _ := d.User(t, "Counting Cam")
	s := settings()
	s.MaxOpenPerUser = 2
	confirming, _ := create(t, d, s, user, hundredUSDT)
	expired, _ := create(t, d, s, user, hundredUSDT)
	// Past expiry: confirming stays open (its transfer was seen), awaiting
	// is expired even though no sweeper marked it.
	exec(t, d, "UPDATE deposits SET expires_at = now() - interval '1 minute' WHERE id IN ($1, $2)", confirming.ID, expired.ID)
	exec(t, d, "UPDATE deposits SET status = 'confirming' WHERE id = $1", confirming.ID)
	if _, err := create(t, d, s, user, hundredUSDT); err != nil {
		t.Fatalf("create with one expired slot: %v", err)
	}
	if _, err := create(t, d, s, user, hundredUSDT); !errors.Is(err, deposit.ErrTooManyOpen) {
		t.Fatalf("create over the limit: %v, want ErrTooManyOpen", err)
	}
}
