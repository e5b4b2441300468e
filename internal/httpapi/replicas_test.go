package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/deposit"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

// replicaLoad sizes TestTwoReplicasUnderLoadStayCorrect; SOAK=1 (make soak)
// runs it larger.
type replicaLoad struct {
	users, depositsPerUser, creatives, sweeps int
}

func replicaLoadSize() replicaLoad {
	if os.Getenv("SOAK") == "1" {
		return replicaLoad{users: 100, depositsPerUser: 12, creatives: 500, sweeps: 300}
	}
	return replicaLoad{users: 12, depositsPerUser: 8, creatives: 24, sweeps: 10}
}

// answer is one request's outcome, kept for the checks after the load.
type answer struct {
	key    string
	user   uuid.UUID
	status int
	code   string
	body   []byte
	loc    string
}

// TestTwoReplicasUnderLoadStayCorrect runs two servers, each with its own
// connection pool, on one database. Every command goes to both at once
// under one Idempotency-Key, while both run the sweepers: each key has one
// effect, the open-deposit limit holds, every reserved amount is unique,
// and the sweepers expire, release and purge exactly what is due.
func TestTwoReplicasUnderLoadStayCorrect(t *testing.T) {
	t.Parallel()
	size := replicaLoadSize()
	const maxOpen = 5
	envVars := map[string]string{"DEPOSIT_MAX_OPEN_PER_USER": fmt.Sprint(maxOpen)}
	a := testenv.New(t, testenv.Options{MaxConns: 30, Env: envVars})
	b := a.Replica(t, 30, testenv.Options{Env: envVars})
	ctx := context.Background()

	// What the sweepers have to do: a user's deposits past their lifetime
	// (half also past the monitoring window) and keys past their TTL.
	swept, _ := a.DB.User(t, "Sam Swept")
	for i := range 40 {
		reservedUntil := "now() + interval '1 hour'"
		if i%2 == 0 {
			reservedUntil = "now() - interval '1 second'"
		}
		if _, err := a.DB.Pool.Exec(ctx, `INSERT INTO deposits (user_id, network, address, currency, base_amount_minor, suffix_minor,
			requested_amount_minor, confirmations_required, expires_at, reserved_until)
			VALUES ($1, $2, $3, 'USDT', 20000000, $4, 20000000 + $4, 19, now() - interval '1 minute', `+reservedUntil+`)`,
			swept, deposit.Network, tron.DevTreasuryAddress, i+1); err != nil {
			t.Fatal(err)
		}
		if _, err := a.DB.Pool.Exec(ctx, `INSERT INTO idempotency_keys (user_id, key, fingerprint, status_code, response_body, expires_at)
			VALUES ($1, $2, '\x00', 201, '{}', now() - interval '1 second')`, swept, fmt.Sprint("old-", i)); err != nil {
			t.Fatal(err)
		}
	}

	org := a.DB.Org(t, "Replica Org")
	admin, _ := a.DB.User(t, "Ada Admin")
	author, _ := a.DB.User(t, "Art Author")
	a.DB.Member(t, org, admin, "admin")
	a.DB.Member(t, org, author, "author")
	clients := func(user uuid.UUID) [2]*testenv.Client {
		ca := a.SessionFor(t, user)
		cb := b.Client(t)
		cb.CopySession(ca)
		return [2]*testenv.Client{ca, cb}
	}

	var (
		mu      sync.Mutex
		answers []answer
		wg      sync.WaitGroup
	)
	// both sends one request to each replica at once. A 503 (the machine
	// overloaded: no connection or no answer in time) is resent with the
	// same key, as clients are told to: it stored nothing, and the resend
	// gets the answer the other replica stored, or runs the command once.
	var resent atomic.Int64
	both := func(cs [2]*testenv.Client, user uuid.UUID, path string, body any, k string) {
		for _, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := c.Do("POST", path, body, key(k))
				for try := 1; r.Status == http.StatusServiceUnavailable && try <= 20; try++ {
					resent.Add(1)
					time.Sleep(time.Duration(try) * 50 * time.Millisecond)
					r = c.Do("POST", path, body, key(k))
				}
				ans := answer{key: k, user: user, status: r.Status, body: r.Body, loc: r.Header.Get("Location")}
				if r.Status >= 400 {
					ans.code = r.Problem(t).Code
				}
				mu.Lock()
				answers = append(answers, ans)
				mu.Unlock()
			}()
		}
	}
	users := make([]uuid.UUID, size.users)
	for i := range users {
		users[i], _ = a.DB.User(t, fmt.Sprint("Load User ", i))
		cs := clients(users[i])
		for d := range size.depositsPerUser {
			// One amount for everyone: every deposit competes for the same suffixes.
			both(cs, users[i], "/api/v1/me/balance/deposits", depositBody("10000000"), fmt.Sprintf("dep-%d-%d", i, d))
		}
	}
	creatives := make([]uuid.UUID, size.creatives)
	authorClients, adminClients := clients(author), clients(admin)
	for i := range creatives {
		creatives[i] = a.DB.DraftCreative(t, org, author)
		path := fmt.Sprintf("/api/v1/organizations/%s/creatives/%s/actions", org, creatives[i])
		both(authorClients, author, path, map[string]string{"action": "submit"}, fmt.Sprint("submit-", i))
		both(adminClients, admin, path, map[string]string{"action": "archive"}, fmt.Sprint("archive-", i))
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	sweepErrs := make(chan error, 4*size.sweeps)
	for _, st := range []*store.Store{a.DB.Store, b.DB.Store} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range size.sweeps {
				sweepErrs <- deposit.Sweep(ctx, st, log)
				sweepErrs <- idempotency.Purge(ctx, st, log)
			}
		}()
	}
	wg.Wait()
	close(sweepErrs)
	for err := range sweepErrs {
		if err != nil {
			t.Errorf("sweep: %v", err)
		}
	}

	// Every answer is a success or a refusal the contract allows, and the
	// two answers under one key are the same bytes: one stored answer. A
	// 409 is not stored (it depends on state that changes), so each replica
	// judged the key afresh, and they agree on the refusal.
	byKey := map[string][]answer{}
	for _, ans := range answers {
		byKey[ans.user.String()+" "+ans.key] = append(byKey[ans.user.String()+" "+ans.key], ans)
		switch {
		case ans.status == http.StatusCreated, ans.status == http.StatusOK:
		case ans.status == http.StatusConflict && (ans.code == "too_many_open_deposits" || ans.code == "invalid_transition" || ans.code == "idempotency_key_in_use"):
		default:
			t.Errorf("%s: %d %s %s", ans.key, ans.status, ans.code, ans.body)
		}
	}
	inUse, stored := 0, 0
	for k, pair := range byKey {
		if pair[0].code == "idempotency_key_in_use" || pair[1].code == "idempotency_key_in_use" {
			inUse++
			if pair[0].status != http.StatusConflict || pair[1].status != http.StatusConflict {
				stored++
			}
			continue
		}
		if pair[0].status == http.StatusConflict && pair[1].status == http.StatusConflict {
			if pair[0].code != pair[1].code {
				t.Errorf("%s refused differently by the replicas: %s / %s", k, pair[0].code, pair[1].code)
			}
			continue
		}
		stored++
		if pair[0].status != pair[1].status || !bytes.Equal(pair[0].body, pair[1].body) {
			t.Errorf("%s answered differently by the replicas: %d %s / %d %s", k, pair[0].status, pair[0].body, pair[1].status, pair[1].body)
		}
	}

	// Deposits: the limit holds per user, every stored 201 is one deposit,
	// every deposit has its key.
	for _, u := range users {
		if n := count(t, a, "SELECT count(*) FROM deposits WHERE user_id = $1", u); n != maxOpen {
			t.Errorf("user %s has %d deposits, want the limit %d", u, n, maxOpen)
		}
	}
	if n := count(t, a, `SELECT count(*) FROM deposits d WHERE d.user_id <> $1 AND NOT EXISTS (SELECT 1 FROM idempotency_keys k
		WHERE k.user_id = d.user_id AND k.response_location = '/api/v1/me/balance/deposits/' || d.id)`, swept); n != 0 {
		t.Errorf("%d deposits without their key", n)
	}
	if n := count(t, a, `SELECT count(*) FROM idempotency_keys k WHERE k.status_code = 201 AND k.user_id <> $1 AND NOT EXISTS
		(SELECT 1 FROM deposits d WHERE k.response_location = '/api/v1/me/balance/deposits/' || d.id)`, swept); n != 0 {
		t.Errorf("%d keys answered 201 without their deposit", n)
	}
	if n := count(t, a, `SELECT count(*) FROM (SELECT requested_amount_minor FROM deposits WHERE reserved
		GROUP BY network, address, currency, requested_amount_minor HAVING count(*) > 1) dup`); n != 0 {
		t.Errorf("%d reserved amounts are shared", n)
	}

	// Creatives: one event per action that answered 200, none for refusals.
	for i, c := range creatives {
		ok := 0
		for _, k := range []string{"submit-", "archive-"} {
			who := author
			if k == "archive-" {
				who = admin
			}
			if pair := byKey[who.String()+" "+k+fmt.Sprint(i)]; pair[0].status == http.StatusOK || pair[1].status == http.StatusOK {
				ok++
			}
		}
		if n := count(t, a, "SELECT count(*) FROM creative_events WHERE creative_id = $1", c); n != ok || n == 0 {
			t.Errorf("creative %d: %d events for %d successful actions", i, n, ok)
		}
		if n := count(t, a, "SELECT count(*) FROM creatives WHERE id = $1 AND review_status = 'archived'", c); n != 1 {
			t.Errorf("creative %d is not archived", i)
		}
	}

	// Sweepers: every due deposit expired, the due half released, every
	// stale key purged, and no live key touched.
	if n := count(t, a, "SELECT count(*) FROM deposits WHERE user_id = $1 AND status <> 'expired'", swept); n != 0 {
		t.Errorf("%d due deposits not expired", n)
	}
	if n := count(t, a, "SELECT count(*) FROM deposits WHERE user_id = $1 AND reserved", swept); n != 20 {
		t.Errorf("%d reservations kept, want the 20 inside their window", n)
	}
	if n := count(t, a, "SELECT count(*) FROM idempotency_keys WHERE user_id = $1", swept); n != 0 {
		t.Errorf("%d stale keys left", n)
	}
	if n := count(t, a, "SELECT count(*) FROM idempotency_keys WHERE user_id <> $1", swept); n != stored {
		t.Errorf("%d live keys, want %d (the keys whose answer is not a 409)", n, stored)
	}
	t.Logf("%d requests over 2 replicas (%d resent after a 503; %d keys, %d waited out as in use), %d deposits for %d users at one amount, %d creatives, %d sweeps per replica",
		len(answers), resent.Load(), len(byKey), inUse, count(t, a, "SELECT count(*) FROM deposits WHERE user_id <> $1", swept), size.users, size.creatives, size.sweeps)
}
