package chainwatch_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"creativeapi/internal/chainwatch"
	"creativeapi/internal/devchain"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

// openDeposits inserts n open deposits of the bundle's user straight in
// SQL, amounts 10.000001, 10.010001, … USDT, and returns their amounts.
func (b *bundle) openDeposits(t testing.TB, n int) []int64 {
	t.Helper()
	rows, err := b.d.Pool.Query(context.Background(), `
		INSERT INTO deposits (user_id, network, address, currency, base_amount_minor, suffix_minor,
			requested_amount_minor, confirmations_required, expires_at, reserved_until)
		SELECT $1, 'TRC20', $2, 'USDT', 10000000 + i * 10000, 1, 10000000 + i * 10000 + 1, $3,
		       now() + interval '1 day', now() + interval '2 days'
		FROM generate_series(0, $4 - 1) AS i
		RETURNING requested_amount_minor`, b.user, tron.DevTreasuryAddress, required, n)
	if err != nil {
		t.Fatal(err)
	}
	var amounts []int64
	for rows.Next() {
		var a int64
		_ = rows.Scan(&a)
		amounts = append(amounts, a)
	}
	if rows.Err() != nil || len(amounts) != n {
		t.Fatalf("open deposits: %d, %v", len(amounts), rows.Err())
	}
	slices.Sort(amounts)
	return amounts
}

func (b *bundle) payAll(amounts []int64) {
	for _, a := range amounts {
		b.chain.Pay(devchain.Payment{To: tron.DevTreasuryAddress, Value: itoa(a)})
	}
	b.chain.Mine(1)
}

func (b *bundle) count(t testing.TB, sql string) int {
	t.Helper()
	var n int
	if err := b.d.Pool.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPoll_AFullPageMatchesInAFixedNumberOfRoundTrips(t *testing.T) {
	t.Parallel()
	rt := &testenv.RoundTrips{}
	w, b := setup(t, testenv.PoolOptions{Tracer: rt})
	amounts := b.openDeposits(t, 10_000)

	trips := func(n int, from int) []string {
		b.payAll(amounts[from : from+n])
		var res chainwatch.Result
		got := rt.Record(func() { res = poll(t, w) })
		if res.New != n || res.Confirming != n {
			t.Fatalf("poll: %+v; want %d new confirming transfers", res, n)
		}
		return got
	}
	few := trips(20, 0)
	full := trips(200, 1000)
	t.Logf("a poll of 200 new transfers against 10 000 open deposits: %d round trips: %s", len(full), strings.Join(full, ", "))
	if len(full) != len(few) || len(full) > 10 {
		t.Fatalf("round trips: %d for 20 transfers, %d for 200; want the same few:\n 20: %v\n200: %v", len(few), len(full), few, full)
	}
	if n := b.count(t, "SELECT count(*) FROM deposits WHERE status = 'confirming'"); n != 220 {
		t.Fatalf("%d confirming deposits; want 220", n)
	}
}

func TestPoll_ARestartMidReadNeitherMissesNorRepeats(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	amounts := b.openDeposits(t, 450) // three pages
	b.payAll(amounts)

	t.Run("a page fails: nothing is half done", func(t *testing.T) {
		var calls atomic.Int64
		b.wrap = func(rw http.ResponseWriter, r *http.Request, next http.Handler) {
			if strings.Contains(r.URL.Path, "/transactions/trc20") && calls.Add(1) == 3 {
				rw.WriteHeader(http.StatusBadGateway)
				return
			}
			next.ServeHTTP(rw, r)
		}
		if _, err := w.Poll(context.Background()); err == nil {
			t.Fatal("poll succeeded with a failed page")
		}
	})
	t.Run("stopped after the first page was recorded", func(t *testing.T) {
		// The first run saw only the newest page before it stopped.
		b.wrap = func(rw http.ResponseWriter, r *http.Request, next http.Handler) {
			if !strings.Contains(r.URL.Path, "/transactions/trc20") {
				next.ServeHTTP(rw, r)
				return
			}
			rec := &capture{header: http.Header{}}
			next.ServeHTTP(rec, r)
			body := rec.body.String()
			if i := strings.Index(body, `"fingerprint"`); i >= 0 {
				body = body[:i] + `"cut":true}}`
			}
			rw.Header().Set("Content-Type", "application/json")
			_, _ = rw.Write([]byte(body + "\n"))
		}
		if res := poll(t, w); res.New != 200 {
			t.Fatalf("first run: %+v; want one page recorded", res)
		}
	})
	t.Run("the restarted watcher records the rest once", func(t *testing.T) {
		b.wrap = nil
		restarted := b.watcher(t, b.d)
		if res := poll(t, restarted); res.Listed != 450 || res.New != 250 {
			t.Fatalf("restart: %+v; want 450 listed, the 250 unseen recorded", res)
		}
		if res := poll(t, restarted); res.New != 0 {
			t.Fatalf("again: %+v; want nothing new", res)
		}
		if n := b.count(t, "SELECT count(*) FROM chain_transfers WHERE status = 'confirming'"); n != 450 {
			t.Fatalf("%d confirming transfers; want 450", n)
		}
		if n := b.count(t, "SELECT count(*) FROM deposits WHERE status = 'confirming'"); n != 450 {
			t.Fatalf("%d confirming deposits; want 450", n)
		}
	})
}

// BenchmarkPoll_FullPage is one poll that finds 200 new transfers paying
// 200 of 10 000 open deposits, against the simulator over HTTP. cpu-µs/poll
// is the process's CPU time (watcher and simulator; PostgreSQL is another
// process) per poll. The clock moves past the read overlap between polls,
// so each poll reads one page, as a steady stream of deposits would make it.
func BenchmarkPoll_FullPage(b *testing.B) {
	w, bu := setup(b)
	clock := time.Now()
	now := func() time.Time { return clock }
	bu.chain = devchain.New(devchain.Options{Contract: tron.MainnetUSDT, Now: now})
	h := bu.chain.Handler()
	bu.wrap = func(rw http.ResponseWriter, r *http.Request, _ http.Handler) { h.ServeHTTP(rw, r) }
	w.Now = now
	amounts := bu.openDeposits(b, 10_000)
	// Leave confirming transfers out of the measure: they solidify at once.
	bu.chain.Mine(devchain.DefaultSolidLag)
	var cpu time.Duration
	next := 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		if next+200 > len(amounts) {
			b.Fatal("out of deposits")
		}
		bu.payAll(amounts[next : next+200])
		next += 200
		clock = clock.Add(chainwatch.DefaultOverlap + time.Second)
		before := processCPU()
		b.StartTimer()
		res, err := w.Poll(context.Background())
		b.StopTimer()
		cpu += processCPU() - before
		if err != nil || res.New != 200 || res.Listed != 200 {
			b.Fatalf("poll: %+v, %v", res, err)
		}
		// Credit them, so the next poll meets only its own transfers.
		bu.chain.Mine(devchain.DefaultSolidLag + required)
		if res, err := w.Poll(context.Background()); err != nil || res.Credited != 200 {
			b.Fatalf("crediting poll: %+v, %v", res, err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/poll")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
