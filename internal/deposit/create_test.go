package deposit_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

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

// TestCreate_TheLimitIsExactUnderConcurrentCreates: a user's creates sent
// at once, each in its own transaction, open exactly the deposits the
// limit leaves room for; the others are refused with ErrTooManyOpen, none
// fails otherwise (the waits are lock waits, never a retry or a timeout),
// and another user's creates are not held up by the limit.
func TestCreate_TheLimitIsExactUnderConcurrentCreates(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	s := settings()
	s.MaxOpenPerUser = 5
	busy, _ := d.User(t, "Rushing Rita")
	mustCreate(t, d, busy, hundredUSDT) // one slot taken before the rush
	calm, _ := d.User(t, "Calm Carl")
	const rush = 16
	warmPool(t, d, rush+3)
	var created, refused, calmCreated atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range rush {
		wg.Go(func() {
			<-start
			_, err := create(t, d, s, busy, hundredUSDT+int64(i)*deposit.CentMinor)
			switch {
			case err == nil:
				created.Add(1)
			case errors.Is(err, deposit.ErrTooManyOpen):
				refused.Add(1)
			default:
				t.Errorf("create %d: %v", i, err)
			}
		})
	}
	for range 3 {
		wg.Go(func() {
			<-start
			if _, err := create(t, d, s, calm, hundredUSDT); err != nil {
				t.Errorf("another user's create: %v", err)
				return
			}
			calmCreated.Add(1)
		})
	}
	close(start)
	wg.Wait()
	if created.Load() != 4 || refused.Load() != rush-4 {
		t.Fatalf("%d created, %d refused; want 4 (the room left under the limit of 5) and %d", created.Load(), refused.Load(), rush-4)
	}
	if n := count(t, d, "SELECT count(*) FROM deposits WHERE user_id = $1", busy); n != 5 {
		t.Fatalf("%d deposits of the user, want 5", n)
	}
	if calmCreated.Load() != 3 {
		t.Fatalf("another user created %d of 3", calmCreated.Load())
	}
}

// warmPool opens n of the pool's connections, so creates sent at once run
// at once instead of one by one behind connection set-up.
func warmPool(t *testing.T, d *testenv.DB, n int) {
	t.Helper()
	var conns []*pgxpool.Conn
	for range n {
		c, err := d.Pool.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Release()
	}
}
