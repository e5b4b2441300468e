package chainwatch_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"creativeapi/internal/chainwatch"
	"creativeapi/internal/devchain"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
	"creativeapi/internal/trongrid"
)

// replica is a watcher on a pool of its own, running until stopped.
type replica struct {
	w    *chainwatch.Watcher
	stop context.CancelFunc
	done chan struct{}
	// frozen stands for a process that died: its next wait never ends,
	// so it neither polls nor tries for the lock again.
	frozen atomic.Bool
}

func (b *bundle) startReplica(t *testing.T) *replica {
	t.Helper()
	pool, err := store.Open(context.Background(), b.d.URL, store.PoolConfig{ConnectTimeout: 5 * time.Second, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	w := b.watcher(t, &testenv.DB{URL: b.d.URL, Pool: pool, Store: store.New(pool)})
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{w: w, stop: cancel, done: make(chan struct{})}
	w.Sleep = func(ctx context.Context, d time.Duration) bool {
		if r.frozen.Load() {
			<-ctx.Done()
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	go func() {
		defer close(r.done)
		w.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
		pool.Close()
	})
	return r
}

func leaders(rs ...*replica) int {
	n := 0
	for _, r := range rs {
		if r.w.Leading() {
			n++
		}
	}
	return n
}

func TestRun_TwoReplicasPollOnceAndCreditOnce(t *testing.T) {
	t.Parallel()
	_, b := setup(t)
	var polls atomic.Int64
	b.wrap = func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if strings.HasSuffix(r.URL.Path, "/wallet/getnowblock") {
			polls.Add(1)
		}
		next.ServeHTTP(w, r)
	}
	a, c := b.startReplica(t), b.startReplica(t)
	waitFor(t, "a replica leads", func() bool { return leaders(a, c) == 1 })

	dep := b.deposit(t, hundredUSDT)
	b.pay(t, dep.RequestedAmountMinor)
	b.chain.Mine(devchain.DefaultSolidLag + required)
	waitFor(t, "the deposit is credited", func() bool { return b.state(t, dep.ID).Status == "credited" })
	for range 5 {
		if n := leaders(a, c); n != 1 {
			t.Fatalf("%d replicas lead; want exactly one", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if sum, n := b.balance(t); sum != dep.RequestedAmountMinor || n != 1 {
		t.Fatalf("balance %d in %d entries; want one credit", sum, n)
	}

	t.Run("the leader stopped: the other takes over", func(t *testing.T) {
		leader, other := a, c
		if c.w.Leading() {
			leader, other = c, a
		}
		leader.stop()
		<-leader.done
		waitFor(t, "the other replica leads", other.w.Leading)
		before := polls.Load()
		waitFor(t, "the new leader polls", func() bool { return polls.Load() > before+2 })
	})
}

func TestRun_TheLeaderDiesTheOtherTakesOver(t *testing.T) {
	t.Parallel()
	_, b := setup(t)
	a, c := b.startReplica(t), b.startReplica(t)
	waitFor(t, "a replica leads", func() bool { return leaders(a, c) == 1 })
	leader, other := a, c
	if c.w.Leading() {
		leader, other = c, a
	}
	// The leader dies: its process stops acting, and its database
	// connection ends (the server notices the closed socket), releasing the
	// lock. (internal/reliability does this to a real process with SIGKILL.)
	leader.frozen.Store(true)
	admin := testenv.NewAdminConn(t)
	if _, err := admin.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND (classid::bigint << 32 | objid::bigint) = $1
		  AND database = (SELECT oid FROM pg_database WHERE datname = $2)`,
		int64(7_305_551_002), b.d.Pool.Config().ConnConfig.Database); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the other replica leads", other.w.Leading)

	dep := b.deposit(t, hundredUSDT)
	b.pay(t, dep.RequestedAmountMinor)
	b.chain.Mine(devchain.DefaultSolidLag + required)
	waitFor(t, "the deposit is credited", func() bool { return b.state(t, dep.ID).Status == "credited" })
	if _, n := b.balance(t); n != 1 {
		t.Fatalf("%d ledger entries; want one", n)
	}
}

// sleeps records the watcher's waits without waiting, and ends Run after max.
type sleeps struct {
	mu  sync.Mutex
	got []time.Duration
	max int
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, d)
	return len(s.got) < s.max
}

func TestRun_UpstreamTroubleBacksOffAndNeverCreditsWrongly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault func(w http.ResponseWriter, r *http.Request)
		// atLeast is the shortest wait after the first failure.
		atLeast time.Duration
	}{
		{"429 with Retry-After", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		}, 7 * time.Second},
		{"403 over quota", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusForbidden) }, 0},
		{"500", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }, 0},
		{"503 with a date Retry-After", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", time.Now().Add(30*time.Second).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		}, 20 * time.Second},
		{"a timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Second): // past the client's 200ms
			}
		}, 0},
		{"bad JSON", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"data": [`)) }, 0},
		{"HTML", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`<html>gateway</html>`)) }, 0},
		{"a block without a number", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"block_header":{"raw_data":{}}}`))
		}, 0},
		{"a block number that is text", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"block_header":{"raw_data":{"number":"many"}}}`))
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, b := setup(t)
			api, _ := trongrid.New(b.upstream.URL, nil, 200*time.Millisecond)
			w := chainwatch.New(chainwatch.Config{Treasury: tron.DevTreasuryAddress, Contract: tron.MainnetUSDT,
				PollInterval: time.Second, MonitoringWindow: 24 * time.Hour}, b.d.Store, api, logger())
			dep := b.deposit(t, hundredUSDT)
			b.pay(t, dep.RequestedAmountMinor)
			b.chain.Mine(devchain.DefaultSolidLag + required)
			var broken atomic.Bool
			broken.Store(true)
			b.wrap = func(w http.ResponseWriter, r *http.Request, next http.Handler) {
				if broken.Load() {
					tt.fault(w, r)
					return
				}
				next.ServeHTTP(w, r)
			}
			s := &sleeps{max: 5}
			w.Sleep = s.sleep
			w.Run(context.Background())
			if n := len(s.got); n < 5 {
				t.Fatalf("%d waits; want 5 (Run must keep going)", n)
			}
			for i, d := range s.got {
				if d < time.Second {
					t.Fatalf("wait %d is %s: shorter than the poll interval (a tight loop)", i, d)
				}
			}
			if s.got[0] < tt.atLeast {
				t.Fatalf("first wait %s; want at least %s", s.got[0], tt.atLeast)
			}
			if s.got[3] < 4*time.Second {
				t.Fatalf("the fourth wait is %s; want the back-off grown to at least 4s (waits %v)", s.got[3], s.got)
			}
			if st := b.state(t, dep.ID); st.Status != "awaiting_transfer" {
				t.Fatalf("deposit: %+v", st)
			}

			// The upstream recovers: a watcher whose calls may take as long
			// as production allows (the 200ms above only makes the timeout
			// case quick) credits, once.
			broken.Store(false)
			recovered := b.watcher(t, b.d)
			poll(t, recovered)
			poll(t, recovered)
			if sum, n := b.balance(t); sum != dep.RequestedAmountMinor || n != 1 {
				t.Fatalf("after recovery: balance %d in %d entries", sum, n)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	half := func() float64 { return 0.5 }
	tests := []struct {
		name     string
		err      error
		failures int
		want     time.Duration
	}{
		{"first failure: about the interval", errors.New("x"), 1, 3 * time.Second},
		{"doubles with each failure", errors.New("x"), 3, 9 * time.Second},
		{"capped", errors.New("x"), 30, 225 * time.Second},
		{"Retry-After above the back-off wins", &trongrid.Error{Kind: trongrid.RateLimited, RetryAfter: time.Minute}, 1, time.Minute},
		{"Retry-After below the back-off does not shorten it", &trongrid.Error{Kind: trongrid.RateLimited, RetryAfter: time.Second}, 3, 9 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := chainwatch.Backoff(tt.err, tt.failures, 3*time.Second, 5*time.Minute, half); got != tt.want {
				t.Fatalf("Backoff = %s; want %s", got, tt.want)
			}
		})
	}
}

func TestPoll_AFailedReceiptLookupFailsThePollAndTheTransferIsReadAgain(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	dep := b.deposit(t, hundredUSDT)
	b.pay(t, dep.RequestedAmountMinor)
	var failing atomic.Bool
	failing.Store(true)
	b.wrap = func(rw http.ResponseWriter, r *http.Request, next http.Handler) {
		if failing.Load() && strings.HasSuffix(r.URL.Path, "/gettransactioninfobyid") {
			rw.Header().Set("Retry-After", "30")
			rw.WriteHeader(http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(rw, r)
	}
	res, err := w.Poll(context.Background())
	var ge *trongrid.Error
	if !errors.As(err, &ge) || ge.RetryAfter != 30*time.Second || res.Pending != 1 || res.New != 0 {
		t.Fatalf("poll: %+v, %v; want the 429 reported and the transfer pending", res, err)
	}
	failing.Store(false)
	if res := poll(t, w); res.Confirming != 1 {
		t.Fatalf("next poll: %+v; want the transfer read again and confirming", res)
	}
}
