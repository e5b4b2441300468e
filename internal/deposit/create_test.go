package deposit_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"creativeapi/gen/db"
	"creativeapi/internal/deposit"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
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
// and another user's creates are not held up by the limit. The limits
// cover a user far from their limit, whose creates run side by side in
// several slots, and one who reaches it, whose creates then take turns.
func TestCreate_TheLimitIsExactUnderConcurrentCreates(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ limit, openBefore, rush int }{
		"a limit of 5, two slots, one deposit open before": {5, 1, 16},
		"a limit of 12, six slots, none open before":       {12, 0, 16},
		"a limit of 40, eight slots, 30 open before":       {40, 30, 16},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := testenv.NewDB(t)
			s := settings()
			s.MaxOpenPerUser = c.limit
			busy, _ := d.User(t, "Rushing Rita")
			for i := range c.openBefore {
				if _, err := create(t, d, s, busy, hundredUSDT+int64(i)*deposit.CentMinor); err != nil {
					t.Fatal(err)
				}
			}
			calm, _ := d.User(t, "Calm Carl")
			warmPool(t, d, c.rush+3)
			var created, refused, calmCreated atomic.Int32
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range c.rush {
				wg.Go(func() {
					<-start
					_, err := create(t, d, s, busy, 2*hundredUSDT+int64(i)*deposit.CentMinor)
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
			room := int32(c.limit - c.openBefore)
			if created.Load() != room || refused.Load() != int32(c.rush)-room {
				t.Fatalf("%d created, %d refused; want %d (the room left under the limit of %d) and %d",
					created.Load(), refused.Load(), room, c.limit, int32(c.rush)-room)
			}
			if n := count(t, d, "SELECT count(*) FROM deposits WHERE user_id = $1", busy); n != c.limit {
				t.Fatalf("%d deposits of the user, want %d", n, c.limit)
			}
			if calmCreated.Load() != 3 {
				t.Fatalf("another user created %d of 3", calmCreated.Load())
			}
			if b, r := reservedBound(t, d, busy), count(t, d, "SELECT count(*) FROM deposits WHERE user_id = $1 AND reserved", busy); b < r {
				t.Fatalf("the user's reserved bound is %d, below the %d reserved deposits", b, r)
			}
		})
	}
}

// TestCreate_FarBelowTheLimitAUsersCreatesRunSideBySide: while one create
// of a user holds its transaction open, another create of the same user
// goes through at once (it would wait out its lock timeout if creates took
// turns).
func TestCreate_FarBelowTheLimitAUsersCreatesRunSideBySide(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	s := settings()
	s.MaxOpenPerUser = 100
	user, _ := d.User(t, "Parallel Pat")
	release := holdCreate(t, d, s, user)
	if _, err := createWithin(t, d, s, user, "5s"); err != nil {
		t.Fatalf("a second create while the first is open: %v, want it to go through", err)
	}
	if err := release(); err != nil {
		t.Fatalf("the first create: %v", err)
	}
	if n := count(t, d, "SELECT count(*) FROM deposits WHERE user_id = $1", user); n != 2 {
		t.Fatalf("%d deposits, want 2", n)
	}
}

// TestCreate_NearTheLimitAUsersCreatesTakeTurns: with one room left, a
// create waits for the one in flight to end, then counts it.
func TestCreate_NearTheLimitAUsersCreatesTakeTurns(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	s := settings()
	s.MaxOpenPerUser = 4
	user, _ := d.User(t, "Patient Paula")
	for i := range 3 {
		if _, err := create(t, d, s, user, hundredUSDT+int64(i)*deposit.CentMinor); err != nil {
			t.Fatal(err)
		}
	}
	release := holdCreate(t, d, s, user)
	_, err := createWithin(t, d, s, user, "200ms")
	if code := pgCode(err); code != "55P03" {
		t.Fatalf("a create while the last room is being taken: %v, want a lock wait (55P03 lock_not_available)", err)
	}
	if err := release(); err != nil {
		t.Fatalf("the first create: %v", err)
	}
	if _, err := create(t, d, s, user, hundredUSDT); !errors.Is(err, deposit.ErrTooManyOpen) {
		t.Fatalf("a create once the last room is taken: %v, want ErrTooManyOpen", err)
	}
}

// TestCreate_FarBelowTheLimitTheBoundDecidesAndNothingIsCounted: a
// create far below the limit reads the user's reserved bound, so what it
// costs does not grow with the user's open deposits. Four open deposits
// written behind the bound's back are not counted: the create goes
// through in a slot and adds 1 to the bound, where counting them would
// have turned it to the exclusive lock and set the bound to 5.
func TestCreate_FarBelowTheLimitTheBoundDecidesAndNothingIsCounted(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	s := settings()
	user, _ := d.User(t, "Unseen Una")
	exec(t, d, `INSERT INTO deposits (user_id, network, address, currency, base_amount_minor, suffix_minor,
			requested_amount_minor, confirmations_required, expires_at, reserved_until)
		SELECT $1, 'TRC20', $2, 'USDT', 300000000, s, 300000000 + s, 19, now() + interval '30 minutes', now() + interval '1 day'
		FROM generate_series(1, 4) AS s`, user, tron.DevTreasuryAddress)
	if _, err := create(t, d, s, user, hundredUSDT); err != nil {
		t.Fatal(err)
	}
	if b := reservedBound(t, d, user); b != 1 {
		t.Fatalf("reserved bound %d, want 1 (the create counted the open deposits)", b)
	}
}

// TestCreate_NearTheLimitTheBoundIsSetBackToTheReservedDeposits: a
// create that takes the exclusive lock sets the user's bound back to the
// reserved deposits, so once released deposits stop weighing on it the
// next creates far below the limit need not count again.
func TestCreate_NearTheLimitTheBoundIsSetBackToTheReservedDeposits(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	user, _ := d.User(t, "Returning Rhea")
	for i := range 4 {
		mustCreate(t, d, user, hundredUSDT+int64(i)*deposit.CentMinor)
	}
	// Two of them expired and their amounts were released (the sweeper,
	// past the monitoring window); the bound still counts them.
	exec(t, d, `UPDATE deposits SET status = 'expired', reserved = false
		WHERE id IN (SELECT id FROM deposits WHERE user_id = $1 ORDER BY created_at LIMIT 2)`, user)
	for i := range 2 {
		mustCreate(t, d, user, 2*hundredUSDT+int64(i)*deposit.CentMinor)
	}
	if b := reservedBound(t, d, user); b != 6 {
		t.Fatalf("reserved bound %d before the near-limit create, want 6", b)
	}
	mustCreate(t, d, user, 3*hundredUSDT) // 4 open: near the limit of 5
	reserved := count(t, d, "SELECT count(*) FROM deposits WHERE user_id = $1 AND reserved", user)
	if b := reservedBound(t, d, user); b != reserved || reserved != 5 {
		t.Fatalf("reserved bound %d after the near-limit create, want the %d reserved deposits (5)", b, reserved)
	}
}

// reservedBound is the user's reserved bound (deposit_reserved_bounds).
func reservedBound(t *testing.T, d *testenv.DB, user uuid.UUID) int {
	t.Helper()
	return count(t, d, "SELECT coalesce(sum(reserved), 0) FROM deposit_reserved_bounds WHERE user_id = $1", user)
}

// holdCreate creates a deposit for user in a transaction it keeps open
// until the returned function is called, which commits it.
func holdCreate(t *testing.T, d *testenv.DB, s deposit.Settings, user uuid.UUID) (commit func() error) {
	t.Helper()
	created, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- d.Store.InTx(context.Background(), func(q store.Tx) error {
			if _, err := deposit.Create(context.Background(), q, s, user, 3*hundredUSDT); err != nil {
				return err
			}
			close(created)
			<-release
			return nil
		})
	}()
	select {
	case <-created:
	case err := <-done:
		t.Fatalf("the held create: %v", err)
	}
	var once sync.Once
	commit = func() error {
		once.Do(func() { close(release) })
		return <-done
	}
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	return commit
}

// createWithin creates a deposit for user with lock waits bounded by
// lockTimeout (a PostgreSQL interval).
func createWithin(t *testing.T, d *testenv.DB, s deposit.Settings, user uuid.UUID, lockTimeout string) (db.Deposit, error) {
	t.Helper()
	var dep db.Deposit
	err := d.Store.InPgxTx(context.Background(), func(tx pgx.Tx, q store.Tx) error {
		if _, err := tx.Exec(context.Background(), "SELECT set_config('lock_timeout', $1, true)", lockTimeout); err != nil {
			return err
		}
		var err error
		dep, err = deposit.Create(context.Background(), q, s, user, 4*hundredUSDT)
		return err
	})
	return dep, err
}

// pgCode is err's SQLSTATE, or "" when it has none.
func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
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
