package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"creativeapi/internal/testenv"
)

// waitFor polls cond every few milliseconds until it holds, failing the
// test if limit passes first.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(limit)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s: not within %s", what, limit)
		}
	}
}

// TestSIGTERMDrainsInFlightRequests sends SIGTERM to the binary under load
// while a slow command (blocked on a row lock the test holds) is in flight:
// the listener closes at once, the slow command still completes 200, the
// load sees answers or refused connections and nothing in between, the
// process exits 0, and every effect has its key.
func TestSIGTERMDrainsInFlightRequests(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildServer(t)
	d := testenv.NewDB(t)
	srv := startServer(t, bin, d.URL, map[string]string{"DB_LOCK_TIMEOUT": "60s", "DEPOSIT_MAX_OPEN_PER_USER": "100000", "LOG_LEVEL": "info"})
	ctx := context.Background()

	org := d.Org(t, "Drain Org")
	admin, _ := d.User(t, "Drain Admin")
	d.Member(t, org, admin, "admin")
	adminSession := newSession(t, d, admin)
	creative := d.DraftCreative(t, org, admin)

	// The test holds the creative's row: the archive waits inside its
	// transaction, holding its key's claim, until the test lets go.
	tx, err := d.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM creatives WHERE id = $1 FOR UPDATE", creative); err != nil {
		t.Fatal(err)
	}
	type result struct {
		r   *testenv.Response
		err error
	}
	slow := make(chan result, 1)
	go func() {
		r, err := srv.do(ctx, &adminSession, call{method: "POST", key: "slow-archive",
			path: fmt.Sprintf("/api/v1/organizations/%s/creatives/%s/actions", org, creative), body: map[string]string{"action": "archive"}})
		slow <- result{r, err}
	}()
	waitFor(t, "the archive waits for the row lock", 10*time.Second, func() bool {
		return count(t, d, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'") == 1
	})

	// Load: workers send deposit requests and reads until a connection is refused.
	const workers = 8
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		answers  []*testenv.Response
		problems []string
		started  = make(chan struct{}, 10*workers)
	)
	for w := range workers {
		user, _ := d.User(t, fmt.Sprint("Drain Load ", w))
		s := newSession(t, d, user)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100_000 {
				c := call{method: "GET", path: "/api/v1/me"}
				if i%2 == 0 {
					c = call{method: "POST", path: "/api/v1/me/balance/deposits", body: depositBody("10000000"), key: fmt.Sprintf("drain-%d-%d", w, i)}
				}
				r, err := srv.do(ctx, &s, c)
				mu.Lock()
				switch {
				case errors.Is(err, syscall.ECONNREFUSED):
					mu.Unlock()
					return
				case err != nil:
					problems = append(problems, err.Error())
					mu.Unlock()
					return
				case r.Status != http.StatusOK && r.Status != http.StatusCreated:
					problems = append(problems, fmt.Sprintf("%s %s: %d %s", c.method, c.path, r.Status, r.Body))
				}
				answers = append(answers, r)
				mu.Unlock()
				select {
				case started <- struct{}{}:
				default:
				}
			}
		}()
	}
	for range 25 * workers {
		<-started
	}

	mu.Lock()
	beforeTerm := len(answers)
	mu.Unlock()
	srv.signal(syscall.SIGTERM)
	waitFor(t, "new connections are refused", 10*time.Second, func() bool { return refused(srv.addr) })
	select {
	case res := <-slow:
		t.Fatalf("the slow command ended before its lock was released: %v %v", res.r, res.err)
	default:
	}
	// The process is still draining: it has not exited.
	select {
	case <-srv.done:
		t.Fatal("the server exited with a request in flight")
	default:
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	res := <-slow
	if res.err != nil || res.r.Status != http.StatusOK {
		t.Fatalf("the in-flight command: %v %v", res.r, res.err)
	}
	state := srv.wait(30 * time.Second)
	if state.ExitCode() != 0 {
		t.Fatalf("exit code %d", state.ExitCode())
	}
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}

	// Nothing half-written: the slow command's event and key, and one
	// deposit per 201 answer, each with its key.
	created := 0
	for _, r := range answers {
		if r.Status == http.StatusCreated {
			created++
		}
	}
	if n := count(t, d, "SELECT count(*) FROM creative_events WHERE creative_id = $1", creative); n != 1 {
		t.Errorf("%d events for the drained command", n)
	}
	if n := count(t, d, "SELECT count(*) FROM idempotency_keys WHERE key = 'slow-archive' AND status_code = 200"); n != 1 {
		t.Errorf("the drained command's key: %d", n)
	}
	if n := count(t, d, "SELECT count(*) FROM deposits"); n != created {
		t.Errorf("%d deposits for %d answers 201", n, created)
	}
	if n := count(t, d, `SELECT count(*) FROM deposits dep WHERE NOT EXISTS (SELECT 1 FROM idempotency_keys k
		WHERE k.user_id = dep.user_id AND k.response_location = '/api/v1/me/balance/deposits/' || dep.id)`); n != 0 {
		t.Errorf("%d deposits without their key", n)
	}
	if n := count(t, d, "SELECT count(*) FROM idempotency_keys WHERE status_code IS NULL"); n != 0 {
		t.Errorf("%d keys without an answer", n)
	}
	logs, _ := os.ReadFile(srv.logs.Name())
	if !strings.Contains(string(logs), `"msg":"stopped"`) {
		t.Errorf("no clean stop in the log")
	}
	t.Logf("SIGTERM under %d workers after %d answers (%d more answered after it, none cut; %d deposits created); "+
		"the slow command finished 200 after the listener closed; exit code 0", workers, beforeTerm, len(answers)-beforeTerm, created)
}
