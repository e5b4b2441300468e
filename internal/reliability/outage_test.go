package reliability_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"creativeapi/internal/testenv"
)

// outcome is one request of a load phase.
type outcome struct {
	// phase and endPhase are the phases the request started and ended in.
	phase    string
	endPhase string
	call     string
	status   int
	code     string
	duration time.Duration
	err      error
}

// loadRun sends a mix of reads, readiness probes and deposit requests from
// several workers until stopped, labelling each outcome with the phase it
// started in. Deposit requests answered 503 are kept to be retried with
// their keys once the database is back.
type loadRun struct {
	srv     *server
	phase   atomic.Pointer[string]
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	results []outcome
	retry   map[*session][]call
	counts  map[string]chan struct{}
}

func startLoad(t *testing.T, srv *server, d *testenv.DB, workers int, phase string) *loadRun {
	t.Helper()
	l := &loadRun{srv: srv, stop: make(chan struct{}), retry: map[*session][]call{}, counts: map[string]chan struct{}{}}
	l.setPhase(phase)
	for w := range workers {
		user, _ := d.User(t, fmt.Sprint("Outage Load ", w))
		s := newSession(t, d, user)
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			calls := []call{{method: "GET", path: "/api/v1/me"}, {method: "GET", path: "/readyz"}, {method: "GET", path: "/api/v1/me/balance/deposits"}}
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				c := calls[i%len(calls)]
				if i%4 == 3 {
					c = call{method: "POST", path: "/api/v1/me/balance/deposits", body: depositBody("10000000"), key: fmt.Sprintf("outage-%d-%d", w, i)}
				}
				phase := *l.phase.Load()
				start := time.Now()
				r, err := srv.do(context.Background(), &s, c)
				o := outcome{phase: phase, endPhase: *l.phase.Load(), call: c.method + " " + c.path, duration: time.Since(start), err: err}
				if r != nil {
					o.status, o.code = r.Status, problemCode(r)
				}
				l.mu.Lock()
				l.results = append(l.results, o)
				if c.key != "" && o.status == http.StatusServiceUnavailable {
					l.retry[&s] = append(l.retry[&s], c)
				}
				ch := l.counts[phase]
				l.mu.Unlock()
				if ch != nil {
					select {
					case ch <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	return l
}

func (l *loadRun) setPhase(p string) {
	l.mu.Lock()
	l.counts[p] = make(chan struct{}, 1024)
	l.mu.Unlock()
	l.phase.Store(&p)
}

// await waits until n requests that started in phase p have finished.
func (l *loadRun) await(t *testing.T, p string, n int, limit time.Duration) {
	t.Helper()
	l.mu.Lock()
	ch := l.counts[p]
	l.mu.Unlock()
	deadline := time.After(limit)
	for range n {
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("phase %s: fewer than %d answers within %s", p, n, limit)
		}
	}
}

func (l *loadRun) finish() []outcome {
	close(l.stop)
	l.wg.Wait()
	return l.results
}

// judge checks every outcome: an answer (never a lost connection); none
// that met the outage slower than bound (a busy machine may slow the others);
// 503 service_unavailable for a request that started and
// ended inside the outage, 2xx for one that started and ended outside it,
// either for one the outage began or ended under. It returns how many
// requests started in each phase and the slowest that met the outage.
func judge(t *testing.T, results []outcome, outage string, bound time.Duration) (map[string]int, time.Duration) {
	t.Helper()
	perPhase := map[string]int{}
	var slowest time.Duration
	for _, o := range results {
		perPhase[o.phase]++
		unavailable := o.status == http.StatusServiceUnavailable && o.code == "service_unavailable"
		ok := o.status >= 200 && o.status < 300
		inside := o.phase == outage && o.endPhase == outage
		outside := o.phase == o.endPhase && o.phase != outage && o.phase != "transition"
		if !outside {
			slowest = max(slowest, o.duration)
		}
		switch {
		case o.err != nil:
			t.Errorf("%s (%s → %s): %v", o.call, o.phase, o.endPhase, o.err)
		case o.duration > bound && !outside:
			t.Errorf("%s (%s → %s): answered %d after %s, beyond the bound %s", o.call, o.phase, o.endPhase, o.status, o.duration, bound)
		case inside && !unavailable, outside && !ok, !unavailable && !ok:
			t.Errorf("%s (%s → %s): %d %s", o.call, o.phase, o.endPhase, o.status, o.code)
		}
	}
	return perPhase, slowest
}

// retryDeposits resends every deposit request answered 503 with its key:
// each now gets its 201 (first run or replay), and the effects match.
func (l *loadRun) retryDeposits(t *testing.T, d *testenv.DB) int {
	t.Helper()
	n := 0
	for s, calls := range l.retry {
		for _, c := range calls {
			r, err := l.srv.do(context.Background(), s, c)
			if err != nil || r.Status != http.StatusCreated {
				t.Errorf("retry of %s: %v %v", c.key, r, err)
			}
			n++
		}
	}
	created := 0
	for _, o := range l.results {
		if o.status == http.StatusCreated {
			created++
		}
	}
	if got := count(t, d, "SELECT count(*) FROM deposits"); got != created+n {
		t.Errorf("%d deposits for %d answers 201 and %d retried keys", got, created, n)
	}
	if got := count(t, d, "SELECT count(*) FROM idempotency_keys WHERE status_code IS NULL OR status_code >= 500"); got != 0 {
		t.Errorf("%d keys without a stored answer", got)
	}
	return n
}

// setAllowConnections starts (false) or ends (true) an outage of database
// name: no new connections, and the open ones are terminated.
func setAllowConnections(t *testing.T, name string, allow bool) {
	t.Helper()
	ctx := context.Background()
	admin := testenv.NewAdminConn(t)
	if _, err := admin.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s WITH ALLOW_CONNECTIONS %t", pgx.Identifier{name}.Sanitize(), allow)); err != nil {
		t.Fatal(err)
	}
	if !allow {
		if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDatabaseOutageUnderLoad refuses every connection to the binary's
// database (and ends the open ones) while workers keep calling: every
// request answers 503 service_unavailable within DB_CONNECT_TIMEOUT plus
// slack, never a 500, /readyz included; once connections are allowed again
// the same process serves 2xx, and every deposit request retried with its
// key has exactly one deposit.
func TestDatabaseOutageUnderLoad(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildServer(t)
	d := testenv.NewDB(t)
	const connectTimeout = time.Second
	srv := startServer(t, bin, d.URL, map[string]string{"DB_CONNECT_TIMEOUT": connectTimeout.String(), "DEPOSIT_MAX_OPEN_PER_USER": "100000"})
	pid := srv.pid()
	n := 40
	if soak() {
		n = 1000
	}
	load := startLoad(t, srv, d, 6, "before")
	load.await(t, "before", n, 30*time.Second)

	load.setPhase("transition")
	setAllowConnections(t, d.Pool.Config().ConnConfig.Database, false)
	load.setPhase("outage")
	load.await(t, "outage", n, 30*time.Second)

	load.setPhase("transition")
	setAllowConnections(t, d.Pool.Config().ConnConfig.Database, true)
	d.Pool.Reset() // the test's own connections were terminated too
	waitReady(t, srv, 10*time.Second)
	load.setPhase("after")
	load.await(t, "after", n, 30*time.Second)
	results := load.finish()

	perPhase, slowest := judge(t, results, "outage", connectTimeout+3*time.Second)
	if srv.pid() != pid {
		t.Fatal("the process did not survive the outage")
	}
	retried := load.retryDeposits(t, d)
	t.Logf("%d requests by 6 workers (before %d, outage %d, at the switches %d, after %d); slowest meeting the outage %s (bound %s); %d deposit requests answered 503 and retried with their keys, one deposit each",
		len(results), perPhase["before"], perPhase["outage"], perPhase["transition"], perPhase["after"], slowest.Round(time.Millisecond), connectTimeout+3*time.Second, retried)
}

// TestUnreachableDatabaseUnderLoad freezes a TCP proxy between the binary
// and PostgreSQL: packets stop, connections stay open (a network
// partition), so no error ever comes back by itself. Every request still
// answers 503 within REQUEST_TIMEOUT plus slack; after the thaw the same
// process serves 2xx.
func TestUnreachableDatabaseUnderLoad(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildServer(t)
	d := testenv.NewDB(t)
	proxy := newFreezingProxy(t, d.Pool.Config().ConnConfig.Host, d.Pool.Config().ConnConfig.Port)
	u, err := url.Parse(d.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = proxy.addr
	const requestTimeout = 2 * time.Second
	srv := startServer(t, bin, u.String(), map[string]string{
		"REQUEST_TIMEOUT": requestTimeout.String(), "DB_CONNECT_TIMEOUT": "1s", "DB_ACQUIRE_TIMEOUT": "1s",
		"DEPOSIT_MAX_OPEN_PER_USER": "100000",
	})
	n := 30
	if soak() {
		n = 300
	}
	load := startLoad(t, srv, d, 6, "before")
	load.await(t, "before", n, 30*time.Second)

	load.setPhase("transition")
	proxy.freeze()
	load.setPhase("outage")
	load.await(t, "outage", n, 60*time.Second)

	load.setPhase("transition")
	proxy.thaw()
	waitReady(t, srv, 20*time.Second)
	load.setPhase("after")
	load.await(t, "after", n, 30*time.Second)
	results := load.finish()

	bound := requestTimeout + 3*time.Second
	perPhase, slowest := judge(t, results, "outage", bound)
	retried := load.retryDeposits(t, d)
	t.Logf("%d requests by 6 workers (before %d, partition %d, at the switches %d, after %d); slowest meeting the outage %s (bound %s); %d deposit requests answered 503 and retried with their keys, one deposit each",
		len(results), perPhase["before"], perPhase["outage"], perPhase["transition"], perPhase["after"], slowest.Round(time.Millisecond), bound, retried)
}

// TestPoolExhaustionAnswers503 takes both connections of a DB_MAX_CONNS=2
// pool with commands blocked on row locks the test holds: further requests
// wait at most DB_ACQUIRE_TIMEOUT for a connection and answer 503, and the
// blocked commands finish once the locks go.
func TestPoolExhaustionAnswers503(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildServer(t)
	d := testenv.NewDB(t)
	const acquireTimeout = 300 * time.Millisecond
	srv := startServer(t, bin, d.URL, map[string]string{
		"DB_MAX_CONNS": "2", "DB_ACQUIRE_TIMEOUT": acquireTimeout.String(), "DB_LOCK_TIMEOUT": "60s",
	})
	ctx := context.Background()
	org := d.Org(t, "Busy Org")
	admin, _ := d.User(t, "Busy Admin")
	d.Member(t, org, admin, "admin")
	s := newSession(t, d, admin)
	creatives := []string{d.DraftCreative(t, org, admin).String(), d.DraftCreative(t, org, admin).String()}
	tx, err := d.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM creatives WHERE id = ANY($1::uuid[]) FOR UPDATE", creatives); err != nil {
		t.Fatal(err)
	}
	blocked := make(chan *testenv.Response, len(creatives))
	for i, c := range creatives {
		go func() {
			// The pool opens its connections on demand: on a busy machine
			// opening one (a new backend, the password exchange) can take
			// longer than the acquire bound, and the command answers 503.
			// It is retried with its key, as clients do, until it waits.
			for {
				r, err := srv.do(ctx, &s, call{method: "POST", path: fmt.Sprintf("/api/v1/organizations/%s/creatives/%s/actions", org, c),
					body: map[string]string{"action": "archive"}, key: fmt.Sprint("busy-", i)})
				if err != nil {
					t.Error(err)
				}
				if err == nil && r.Status == http.StatusServiceUnavailable {
					continue
				}
				blocked <- r
				return
			}
		}()
	}
	waitFor(t, "both commands hold a connection, waiting for their row", 10*time.Second, func() bool {
		return count(t, d, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'") == 2
	})

	const requests = 20
	var wg sync.WaitGroup
	durations := make([]time.Duration, requests)
	for i := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := []call{{method: "GET", path: "/api/v1/me"}, {method: "GET", path: "/readyz"},
				{method: "POST", path: "/api/v1/me/balance/deposits", body: depositBody("10000000"), key: fmt.Sprint("starved-", i)}}[i%3]
			start := time.Now()
			r, err := srv.do(ctx, &s, c)
			durations[i] = time.Since(start)
			if err != nil || r.Status != http.StatusServiceUnavailable || problemCode(r) != "service_unavailable" || r.Header.Get("Retry-After") == "" {
				t.Errorf("%s %s with the pool taken: %v %v", c.method, c.path, r, err)
			}
		}()
	}
	wg.Wait()
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	bound := acquireTimeout + 3*time.Second
	if slowest := durations[requests-1]; slowest > bound {
		t.Errorf("the slowest 503 took %s, beyond %s", slowest, bound)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for range creatives {
		if r := <-blocked; r == nil || r.Status != http.StatusOK {
			t.Errorf("a blocked command: %v", r)
		}
	}
	if r, err := srv.do(ctx, &s, call{method: "GET", path: "/api/v1/me"}); err != nil || r.Status != http.StatusOK {
		t.Errorf("after the locks: %v %v", r, err)
	}
	if n := count(t, d, "SELECT count(*) FROM deposits"); n != 0 {
		t.Errorf("%d deposits from requests answered 503", n)
	}
	t.Logf("%d requests with both pooled connections taken: all 503 service_unavailable with Retry-After in %s to %s (DB_ACQUIRE_TIMEOUT %s); the 2 blocked commands then finished 200",
		requests, durations[0].Round(time.Millisecond), durations[requests-1].Round(time.Millisecond), acquireTimeout)
}

// freezingProxy forwards TCP to PostgreSQL until frozen: then it stops
// moving bytes in both directions and holds new connections without
// answering, as a network partition does, until thawed.
type freezingProxy struct {
	addr   string
	mu     sync.Mutex
	frozen chan struct{} // nil while traffic flows; closed by thaw
}

func newFreezingProxy(t *testing.T, host string, port uint16) *freezingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &freezingProxy{addr: ln.Addr().String()}
	upstream := net.JoinHostPort(host, fmt.Sprint(port))
	t.Cleanup(func() {
		ln.Close()
		p.thaw()
	})
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer client.Close()
				p.gate()
				server, err := net.Dial("tcp", upstream)
				if err != nil {
					return
				}
				defer server.Close()
				done := make(chan struct{}, 2)
				go func() { p.pipe(server, client); done <- struct{}{} }()
				go func() { p.pipe(client, server); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	return p
}

// gate blocks while the proxy is frozen.
func (p *freezingProxy) gate() {
	p.mu.Lock()
	ch := p.frozen
	p.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// pipe copies src to dst, holding every chunk while frozen.
func (p *freezingProxy) pipe(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.gate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *freezingProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen == nil {
		p.frozen = make(chan struct{})
	}
}

func (p *freezingProxy) thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen != nil {
		close(p.frozen)
		p.frozen = nil
	}
}

// waitReady waits until the server's /readyz answers 200 again.
func waitReady(t *testing.T, srv *server, within time.Duration) {
	t.Helper()
	waitFor(t, "/readyz answers 200 again", within, func() bool {
		res, err := http.Get(srv.url("/readyz"))
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}
