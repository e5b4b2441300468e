package reliability_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/testenv"
)

// crashLoad sizes TestSIGKILLMidFlightLosesNothing; SOAK=1 runs it longer.
type crashLoad struct {
	users, depositsPerUser, creatives, kills, workers int
}

func crashLoadSize() crashLoad {
	if soak() {
		return crashLoad{users: 8, depositsPerUser: 150, creatives: 800, kills: 12, workers: 16}
	}
	return crashLoad{users: 4, depositsPerUser: 25, creatives: 80, kills: 3, workers: 8}
}

// command is one idempotent command of the crash test and its final answer.
type command struct {
	session *session
	call    call
	// creative is the creative an archive acts on (uuid.Nil for deposits).
	creative uuid.UUID
	final    *testenv.Response
	// attempts counts the sends; more than one means a kill interrupted it.
	attempts int
}

// TestSIGKILLMidFlightLosesNothing runs the real binary under concurrent
// idempotent commands (deposit requests and archive actions, each with its
// own key), kills it with SIGKILL while requests are in flight, restarts it
// and lets every client retry with its key until it gets an answer. Then
// every key maps to exactly one effect (one deposit, one event), no effect
// exists without its key, and no key without its effect.
func TestSIGKILLMidFlightLosesNothing(t *testing.T) {
	t.Parallel()
	size := crashLoadSize()
	bin := testenv.BuildServer(t)
	d := testenv.NewDB(t)
	srv := startServer(t, bin, d.URL, map[string]string{"DEPOSIT_MAX_OPEN_PER_USER": "100000", "DB_MAX_CONNS": "20"})

	var cmds []*command
	for i := range size.users {
		user, _ := d.User(t, fmt.Sprint("Crash Depositor ", i))
		s := newSession(t, d, user)
		for j := range size.depositsPerUser {
			// Amounts vary so retries and first runs compete for suffixes of many amounts.
			cmds = append(cmds, &command{session: &s, call: call{method: "POST", path: "/api/v1/me/balance/deposits",
				body: depositBody(fmt.Sprintf("%d0000", 1000+j%7)), key: fmt.Sprintf("dep-%d-%d", i, j)}})
		}
	}
	org := d.Org(t, "Crash Org")
	admin, _ := d.User(t, "Crash Admin")
	d.Member(t, org, admin, "admin")
	adminSession := newSession(t, d, admin)
	for range size.creatives {
		c := d.DraftCreative(t, org, admin)
		cmds = append(cmds, &command{session: &adminSession, creative: c, call: call{method: "POST",
			path: fmt.Sprintf("/api/v1/organizations/%s/creatives/%s/actions", org, c),
			body: map[string]string{"action": "archive", "comment": "Crash test."}, key: "archive-" + c.String()}})
	}
	rand.Shuffle(len(cmds), func(i, j int) { cmds[i], cmds[j] = cmds[j], cmds[i] })

	queue := make(chan *command, len(cmds))
	for _, c := range cmds {
		queue <- c
	}
	close(queue)
	var (
		answered    = make(chan struct{}, len(cmds))
		inFlight    atomic.Int64
		lost        atomic.Int64 // sends that ended without an answer
		failures    = make(chan string, len(cmds))
		wg          sync.WaitGroup
		inFlightAtK []int64
	)
	for range size.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range queue {
				for c.final == nil {
					if c.attempts++; c.attempts > 50 {
						failures <- fmt.Sprintf("%s: no answer after 50 attempts", c.call.key)
						break
					}
					srv.waitUp()
					inFlight.Add(1)
					r, err := srv.do(context.Background(), c.session, c.call)
					inFlight.Add(-1)
					switch {
					case isSpecError(err):
						failures <- err.Error()
						c.final = r
					case err != nil:
						lost.Add(1) // the process died under the request: retry with the key
					case r.Status >= 500 || problemCode(r) == "idempotency_key_in_use":
						// The kill cut a transaction the database has not rolled back yet.
					default:
						c.final = r
					}
				}
				answered <- struct{}{}
			}
		}()
	}
	// The killer: after each share of the answers, SIGKILL and restart.
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		n := 0
		for k := 1; k <= size.kills; k++ {
			for n < k*len(cmds)/(size.kills+1) {
				<-answered
				n++
			}
			inFlightAtK = append(inFlightAtK, inFlight.Load())
			srv.kill()
			srv.start()
		}
	}()
	wg.Wait()
	<-killed
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	if t.Failed() {
		return
	}

	// Every command got its success, once.
	retried, replayed := 0, 0
	ids := map[string]bool{}
	for _, c := range cmds {
		want := http.StatusCreated
		if c.creative != uuid.Nil {
			want = http.StatusOK
		}
		if c.final.Status != want {
			t.Errorf("%s: final answer %d %s", c.call.key, c.final.Status, c.final.Body)
			continue
		}
		if c.attempts > 1 {
			retried++
		}
		if c.final.Header.Get("Idempotent-Replayed") == "true" {
			replayed++
		}
		if c.creative != uuid.Nil {
			continue
		}
		loc := c.final.Header.Get("Location")
		if ids[loc] {
			t.Errorf("%s: Location %s answered for two keys", c.call.key, loc)
		}
		ids[loc] = true
		if n := count(t, d, `SELECT count(*) FROM idempotency_keys k JOIN deposits dep ON k.response_location = '/api/v1/me/balance/deposits/' || dep.id
			WHERE k.user_id = $1 AND k.key = $2 AND k.status_code = 201 AND k.response_location = $3 AND dep.user_id = $1`,
			c.session.user, c.call.key, loc); n != 1 {
			t.Errorf("%s: key and deposit %s do not match (%d)", c.call.key, loc, n)
		}
	}
	deposits := size.users * size.depositsPerUser
	// No effect without its key, no key without its effect, one per key.
	checks := []struct {
		what string
		sql  string
		want int
	}{
		{"deposits", "SELECT count(*) FROM deposits", deposits},
		{"deposit keys", "SELECT count(*) FROM idempotency_keys WHERE user_id <> $1 AND status_code = 201 AND $2::uuid IS NOT NULL", deposits},
		{"deposits without their key", `SELECT count(*) FROM deposits dep WHERE NOT EXISTS (SELECT 1 FROM idempotency_keys k
			WHERE k.user_id = dep.user_id AND k.response_location = '/api/v1/me/balance/deposits/' || dep.id)`, 0},
		{"events", "SELECT count(*) FROM creative_events", size.creatives},
		{"creatives with other than one event", `SELECT count(*) FROM creatives c WHERE c.organization_id = $2 AND $1::uuid IS NOT NULL
			AND (SELECT count(*) FROM creative_events e WHERE e.creative_id = c.id) <> 1`, 0},
		{"archive keys", "SELECT count(*) FROM idempotency_keys WHERE user_id = $1 AND status_code = 200 AND $2::uuid IS NOT NULL", size.creatives},
		{"events without their key", `SELECT count(*) FROM creative_events e WHERE NOT EXISTS (SELECT 1 FROM idempotency_keys k
			WHERE k.user_id = e.actor_id AND k.key = 'archive-' || e.creative_id)`, 0},
		{"keys without an answer", "SELECT count(*) FROM idempotency_keys WHERE status_code IS NULL", 0},
		{"creatives not archived", "SELECT count(*) FROM creatives WHERE organization_id = $2 AND $1::uuid IS NOT NULL AND review_status <> 'archived'", 0},
		{"shared reserved amounts", `SELECT count(*) FROM (SELECT 1 FROM deposits WHERE reserved
			GROUP BY network, address, currency, requested_amount_minor HAVING count(*) > 1) dup`, 0},
	}
	for _, c := range checks {
		var args []any
		if strings.Contains(c.sql, "$1") {
			args = []any{admin, org}
		}
		if got := count(t, d, c.sql, args...); got != c.want {
			t.Errorf("%s: %d, want %d", c.what, got, c.want)
		}
	}
	t.Logf("%d commands (%d deposit requests by %d users, %d archive actions) by %d workers; %d SIGKILLs with %v requests in flight; "+
		"%d sends lost with the process, %d commands retried, %d answers replayed; effects: %d deposits, %d events, every one with its key",
		len(cmds), deposits, size.users, size.creatives, size.workers, size.kills, inFlightAtK,
		lost.Load(), retried, replayed, count(t, d, "SELECT count(*) FROM deposits"), count(t, d, "SELECT count(*) FROM creative_events"))
}
