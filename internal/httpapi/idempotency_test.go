package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
)

// command is one of the two idempotent commands, with what counts as its effect.
type command struct {
	name string
	// setup prepares a caller and returns the path and body of one call.
	setup func(t *testing.T, env *testenv.Env, c *testenv.Client, user uuid.UUID) (path string, body, other any)
	// effects counts the command's effect rows for user.
	effects func(t *testing.T, env *testenv.Env, user uuid.UUID) int
	// status is the status of a successful first execution.
	status int
}

var commands = []command{
	{
		name: "createAccountDeposit",
		setup: func(t *testing.T, env *testenv.Env, c *testenv.Client, user uuid.UUID) (string, any, any) {
			return "/api/v1/me/balance/deposits",
				map[string]any{"amount": map[string]any{"amountMinor": "25000000", "currency": "USDT", "scale": 6}},
				map[string]any{"amount": map[string]any{"amountMinor": "26000000", "currency": "USDT", "scale": 6}}
		},
		effects: func(t *testing.T, env *testenv.Env, user uuid.UUID) int {
			return count(t, env, "SELECT count(*) FROM deposits WHERE user_id = $1", user)
		},
		status: http.StatusCreated,
	},
	{
		name: "executeCreativeAction",
		setup: func(t *testing.T, env *testenv.Env, c *testenv.Client, user uuid.UUID) (string, any, any) {
			org := env.DB.Org(t, "Idem Org")
			env.DB.Member(t, org, user, "author")
			creative := env.DB.DraftCreative(t, org, user)
			return fmt.Sprintf("/api/v1/organizations/%s/creatives/%s/actions", org, creative),
				map[string]any{"action": "submit"},
				map[string]any{"action": "submit", "comment": "A different request."}
		},
		effects: func(t *testing.T, env *testenv.Env, user uuid.UUID) int {
			return count(t, env, "SELECT count(*) FROM creative_events WHERE actor_id = $1", user)
		},
		status: http.StatusOK,
	},
	{
		name: "createCreative",
		setup: func(t *testing.T, env *testenv.Env, c *testenv.Client, user uuid.UUID) (string, any, any) {
			org := env.DB.Org(t, "Idem Org")
			env.DB.Member(t, org, user, "author")
			return creativesURL(org), newCreativeBody("Idempotent creative"), newCreativeBody("Another creative")
		},
		effects: func(t *testing.T, env *testenv.Env, user uuid.UUID) int {
			return count(t, env, "SELECT count(*) FROM creative_events WHERE actor_id = $1 AND type = 'created'", user)
		},
		status: http.StatusCreated,
	},
	{
		name: "addCreativeVersion",
		setup: func(t *testing.T, env *testenv.Env, c *testenv.Client, user uuid.UUID) (string, any, any) {
			org := env.DB.Org(t, "Idem Org")
			env.DB.Member(t, org, user, "author")
			creative := env.DB.DraftCreative(t, org, user)
			return creativeURL(org, creative) + "/versions",
				map[string]any{"assets": []any{pngAsset("idem.png")}},
				map[string]any{"assets": []any{pngAsset("other.png")}}
		},
		effects: func(t *testing.T, env *testenv.Env, user uuid.UUID) int {
			return count(t, env, "SELECT count(*) FROM creative_events WHERE actor_id = $1 AND type = 'version_added'", user)
		},
		status: http.StatusCreated,
	},
	{
		name: "createWebhookEndpoint",
		setup: func(t *testing.T, env *testenv.Env, c *testenv.Client, user uuid.UUID) (string, any, any) {
			org := env.DB.Org(t, "Idem Org")
			env.DB.Member(t, org, user, "admin")
			return webhooksURL(org),
				map[string]any{"url": "https://hooks.example.test/idem", "eventTypes": []string{"creative.approved"}},
				map[string]any{"url": "https://hooks.example.test/other", "eventTypes": []string{"creative.approved"}}
		},
		effects: func(t *testing.T, env *testenv.Env, user uuid.UUID) int {
			return count(t, env, "SELECT count(*) FROM webhook_endpoints w JOIN memberships m USING (organization_id) WHERE m.user_id = $1", user)
		},
		status: http.StatusCreated,
	},
	{
		// The platform's endpoints belong to no organization: an
		// operator's are told apart by their url.
		name: "createPlatformWebhookEndpoint",
		setup: func(t *testing.T, env *testenv.Env, c *testenv.Client, user uuid.UUID) (string, any, any) {
			execDepositSQL(t, env, "UPDATE users SET operator = true WHERE id = $1", user)
			return platformWebhooks,
				map[string]any{"url": "https://hooks.example.test/" + user.String(), "eventTypes": []string{"deposit.*"}},
				map[string]any{"url": "https://hooks.example.test/other", "eventTypes": []string{"deposit.*"}}
		},
		effects: func(t *testing.T, env *testenv.Env, user uuid.UUID) int {
			return count(t, env, "SELECT count(*) FROM webhook_endpoints WHERE organization_id IS NULL AND url = 'https://hooks.example.test/' || $1", user.String())
		},
		status: http.StatusCreated,
	},
}

func key(h string) testenv.Header { return testenv.Header{Name: "Idempotency-Key", Value: h} }

func TestIdempotencyKeyReplaysTheStoredAnswer(t *testing.T) {
	t.Parallel()
	for _, cmd := range commands {
		t.Run(cmd.name, func(t *testing.T) {
			t.Parallel()
			env := testenv.New(t)
			c, user := env.SignedIn(t, "Rhea Retry")
			path, body, other := cmd.setup(t, env, c, user)

			first := c.Do("POST", path, body, key("k-1"))
			if first.Status != cmd.status || first.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("first: %d %v %s", first.Status, first.Header, first.Body)
			}
			t.Run("a repeat with the same body replays byte for byte", func(t *testing.T) {
				again := c.Do("POST", path, body, key("k-1"))
				if again.Status != first.Status || !bytes.Equal(again.Body, first.Body) {
					t.Fatalf("replay differs: %d %s\nfirst: %s", again.Status, again.Body, first.Body)
				}
				if again.Header.Get("Idempotent-Replayed") != "true" || again.Header.Get("Location") != first.Header.Get("Location") {
					t.Fatalf("replay headers: %v", again.Header)
				}
			})
			t.Run("the quoted structured-field form is the same key", func(t *testing.T) {
				again := c.Do("POST", path, body, key(`"k-1"`))
				if !bytes.Equal(again.Body, first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
					t.Fatalf("quoted key did not replay: %d %s", again.Status, again.Body)
				}
			})
			t.Run("the same key with another body is idempotency_key_reused", func(t *testing.T) {
				r := c.Do("POST", path, other, key("k-1"))
				if r.Status != http.StatusUnprocessableEntity || r.Problem(t).Code != "idempotency_key_reused" {
					t.Fatalf("got %d %s", r.Status, r.Body)
				}
			})
			t.Run("the same key on another endpoint is idempotency_key_reused", func(t *testing.T) {
				otherCmd := commands[0]
				if cmd.name == otherCmd.name {
					otherCmd = commands[1]
				}
				p, b, _ := otherCmd.setup(t, env, c, user)
				r := c.Do("POST", p, b, key("k-1"))
				if r.Status != http.StatusUnprocessableEntity || r.Problem(t).Code != "idempotency_key_reused" {
					t.Fatalf("got %d %s", r.Status, r.Body)
				}
			})
			if n := cmd.effects(t, env, user); n != 1 {
				t.Fatalf("%d effects, want exactly 1", n)
			}
		})
	}
}

func TestIdempotencyKeysBelongToTheirUser(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	for _, cmd := range commands {
		t.Run(cmd.name, func(t *testing.T) {
			a, userA := env.SignedIn(t, "Ann")
			b, userB := env.SignedIn(t, "Ben")
			pathA, bodyA, _ := cmd.setup(t, env, a, userA)
			pathB, bodyB, _ := cmd.setup(t, env, b, userB)
			ra := a.Do("POST", pathA, bodyA, key("shared-key-"+cmd.name))
			rb := b.Do("POST", pathB, bodyB, key("shared-key-"+cmd.name))
			if ra.Status != cmd.status || rb.Status != cmd.status || rb.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("a: %d, b: %d %v", ra.Status, rb.Status, rb.Header)
			}
			if cmd.effects(t, env, userA) != 1 || cmd.effects(t, env, userB) != 1 {
				t.Fatal("each user's command must run once")
			}
		})
	}
}

// TestConcurrentRepeatsRunOnce sends 50 requests with one key at once, split
// across two server instances on one database (two replicas): exactly one
// effect, and every 2xx body identical. A request refused with 503 (the
// database did not answer in time: 50 requests wait on one key, and under
// the race detector on a busy machine a wait can outlast its bound) is
// sent again with the same key, as a client does: the retry must replay,
// never run the command a second time.
func TestConcurrentRepeatsRunOnce(t *testing.T) {
	t.Parallel()
	for _, cmd := range commands {
		t.Run(cmd.name, func(t *testing.T) {
			t.Parallel()
			env := testenv.New(t, testenv.Options{MaxConns: 60})
			replica := testenv.NewOn(t, env.DB, testenv.Options{})
			c, user := env.SignedIn(t, "Connie Current")
			path, body, _ := cmd.setup(t, env, c, user)
			c2 := replica.Client(t)
			c2.CopySession(c)

			const n = 50
			var wg sync.WaitGroup
			results := make([]*testenv.Response, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					client := c
					if i%2 == 1 {
						client = c2
					}
					r := client.Do("POST", path, body, key("one-key"))
					for try := 0; try < 3 && r.Status == http.StatusServiceUnavailable; try++ {
						r = client.Do("POST", path, body, key("one-key"))
					}
					results[i] = r
				}()
			}
			wg.Wait()
			var first []byte
			for i, r := range results {
				if r.Status == http.StatusConflict && r.Problem(t).Code == "idempotency_key_in_use" {
					continue // allowed by the contract, though the lock wait makes it rare
				}
				if r.Status != cmd.status {
					t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
				}
				if first == nil {
					first = r.Body
				} else if !bytes.Equal(first, r.Body) {
					t.Fatalf("request %d answered differently:\n%s\n%s", i, r.Body, first)
				}
			}
			if got := cmd.effects(t, env, user); got != 1 {
				t.Fatalf("%d effects, want exactly 1", got)
			}
		})
	}
}

func TestACommandAbortedMidwayLeavesNothingAndTheRetryRuns(t *testing.T) {
	t.Parallel()
	for _, cmd := range commands {
		t.Run(cmd.name, func(t *testing.T) {
			t.Parallel()
			env := testenv.New(t)
			c, user := env.SignedIn(t, "Cal Crash")
			path, body, _ := cmd.setup(t, env, c, user)
			env.Idempotency.SetAfterCommand(func(context.Context) error { return errors.New("simulated crash after the effect") })
			r := c.Do("POST", path, body, key("crash-key"))
			if r.Status != http.StatusInternalServerError {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
			if n := cmd.effects(t, env, user); n != 0 {
				t.Fatalf("%d effects survived the abort", n)
			}
			if n := count(t, env, "SELECT count(*) FROM idempotency_keys WHERE user_id = $1", user); n != 0 {
				t.Fatalf("%d keys survived the abort", n)
			}
			env.Idempotency.SetAfterCommand(nil)
			r = c.Do("POST", path, body, key("crash-key"))
			if r.Status != cmd.status || r.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("retry: %d %s", r.Status, r.Body)
			}
			if n := cmd.effects(t, env, user); n != 1 {
				t.Fatalf("%d effects after the retry", n)
			}
		})
	}
}

func TestAnExpiredKeyRunsAgain(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, user := env.SignedIn(t, "Ezra Expired")
	path, body, _ := commands[0].setup(t, env, c, user)
	first := c.Do("POST", path, body, key("old-key"))
	if _, err := env.DB.Pool.Exec(context.Background(), "UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE user_id = $1", user); err != nil {
		t.Fatal(err)
	}
	again := c.Do("POST", path, body, key("old-key"))
	if again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "" || bytes.Equal(first.Body, again.Body) {
		t.Fatalf("expired key replayed: %d %s", again.Status, again.Body)
	}
	if n := commands[0].effects(t, env, user); n != 2 {
		t.Fatalf("%d deposits, want 2", n)
	}
}

func TestARepeatWhileTheFirstRunsWaitsThenAnswersInUse(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{LockTimeout: 300 * time.Millisecond})
	for _, cmd := range commands {
		t.Run(cmd.name, func(t *testing.T) {
			t.Parallel()
			c, user := env.SignedIn(t, "Ian InFlight")
			path, body, _ := cmd.setup(t, env, c, user)
			// Another request holds the key: its transaction has claimed it and not committed.
			ctx := context.Background()
			tx, err := env.DB.Pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, "INSERT INTO idempotency_keys (user_id, key, fingerprint, expires_at) VALUES ($1, 'busy', '\\x00', now() + interval '1 hour')", user); err != nil {
				t.Fatal(err)
			}
			r := c.Do("POST", path, body, key("busy"))
			p := r.Problem(t)
			if r.Status != http.StatusConflict || p.Code != "idempotency_key_in_use" || r.Header.Get("Retry-After") == "" {
				t.Fatalf("got %d %v %s", r.Status, r.Header, r.Body)
			}
			if n := cmd.effects(t, env, user); n != 0 {
				t.Fatalf("%d effects while the key was in use", n)
			}
		})
	}
}

func TestExpiredKeysArePurged(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, user := env.SignedIn(t, "Pia Purge")
	path, body, _ := commands[0].setup(t, env, c, user)
	c.Do("POST", path, body, key("live"))
	c.Do("POST", path, map[string]any{"amount": map[string]any{"amountMinor": "27000000", "currency": "USDT", "scale": 6}}, key("stale"))
	if _, err := env.DB.Pool.Exec(context.Background(), "UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = 'stale'"); err != nil {
		t.Fatal(err)
	}
	if err := idempotencyPurge(env); err != nil {
		t.Fatal(err)
	}
	if n := count(t, env, "SELECT count(*) FROM idempotency_keys WHERE user_id = $1", user); n != 1 {
		t.Fatalf("%d keys left, want the live one", n)
	}
}

func count(t *testing.T, env *testenv.Env, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := env.DB.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestConflictsWithTheCurrentStateAreNotStoredUnderTheKey(t *testing.T) {
	t.Parallel()
	replayed := func(r *testenv.Response) bool { return r.Header.Get("Idempotent-Replayed") == "true" }
	t.Run("too_many_open_deposits: the same key creates the deposit once a slot is free", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t, testenv.Options{Env: map[string]string{"DEPOSIT_MAX_OPEN_PER_USER": "1"}})
		c, user := env.SignedIn(t, "Fiona Full")
		if r := c.Do("POST", depositsPath, depositRequest("10000000"), key("first")); r.Status != http.StatusCreated {
			t.Fatalf("first: %d %s", r.Status, r.Body)
		}
		k := key("second")
		for range 2 {
			if r := c.Do("POST", depositsPath, depositRequest("20000000"), k); r.Status != http.StatusConflict || replayed(r) || r.Problem(t).Code != "too_many_open_deposits" {
				t.Fatalf("over the limit: %d %v %s", r.Status, r.Header, r.Body)
			}
		}
		if n := count(t, env, "SELECT count(*) FROM idempotency_keys WHERE user_id = $1 AND key = 'second'", user); n != 0 {
			t.Fatalf("the refusal left its key (%d rows)", n)
		}
		execDepositSQL(t, env, "UPDATE deposits SET status = 'expired' WHERE user_id = $1", user)
		r := c.Do("POST", depositsPath, depositRequest("20000000"), k)
		if r.Status != http.StatusCreated || replayed(r) {
			t.Fatalf("the retry once the first expired: %d %s", r.Status, r.Body)
		}
		if again := c.Do("POST", depositsPath, depositRequest("20000000"), k); again.Status != http.StatusCreated || !replayed(again) || !bytes.Equal(again.Body, r.Body) {
			t.Fatalf("the 201 is stored: %d %v", again.Status, again.Header)
		}
	})
	t.Run("version_conflict and invalid_transition: the retry is judged on the creative as it is then", func(t *testing.T) {
		t.Parallel()
		d := newReviewDesk(t)
		id := d.creative(t, creativeSpec{status: review.StatusDraft, versions: 1})
		// Approving a draft, expecting the version it will have once submitted.
		k := key(uuid.NewString())
		body := map[string]any{"action": "approve", "expectedVersion": 2}
		if r := d.act("reviewer", id, body, k); r.Status != http.StatusConflict || problemCode(t, r) != "version_conflict" || replayed(r) {
			t.Fatalf("approve v1 expecting v2: %d %s", r.Status, r.Body)
		}
		// Without expectedVersion: approve is no transition from draft.
		bodyNoVersion := map[string]any{"action": "approve"}
		k2 := key(uuid.NewString())
		if r := d.act("reviewer", id, bodyNoVersion, k2); r.Status != http.StatusConflict || problemCode(t, r) != "invalid_transition" || replayed(r) {
			t.Fatalf("approve a draft: %d %s", r.Status, r.Body)
		}
		if r := d.act("author", id, map[string]any{"action": "submit"}); r.Status != http.StatusOK {
			t.Fatalf("submit: %d %s", r.Status, r.Body)
		}
		if r := d.act("reviewer", id, body, k); r.Status != http.StatusOK || replayed(r) {
			t.Fatalf("version_conflict retried with its key once the creative moved on: %d %s", r.Status, r.Body)
		}
		// The creative is approved now: the other key's retry is judged on that.
		if r := d.act("reviewer", id, bodyNoVersion, k2); r.Status != http.StatusConflict || problemCode(t, r) != "invalid_transition" || replayed(r) {
			t.Fatalf("approve an approved creative: %d %s", r.Status, r.Body)
		}
	})
	t.Run("a final refusal is stored: action_forbidden replays", func(t *testing.T) {
		t.Parallel()
		d := newReviewDesk(t)
		id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
		k := key(uuid.NewString())
		first := d.act("author", id, map[string]any{"action": "approve"}, k)
		again := d.act("author", id, map[string]any{"action": "approve"}, k)
		if first.Status != http.StatusForbidden || again.Status != http.StatusForbidden || !replayed(again) || !bytes.Equal(first.Body, again.Body) {
			t.Fatalf("action_forbidden: %d, then %d %v", first.Status, again.Status, again.Header)
		}
	})
}

func TestAStoredAnswerComesBackWhateverTheConfigurationSaysToday(t *testing.T) {
	t.Parallel()
	before := testenv.New(t)
	c, _ := before.SignedIn(t, "Rhea Replay")
	k := key(uuid.NewString())
	first := c.Do("POST", depositsPath, depositRequest("10000000"), k)
	if first.Status != http.StatusCreated {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	for _, tt := range []struct {
		name string
		vars map[string]string
		// newKey is today's answer to the same request under a new key.
		newKey int
	}{
		{"deposits switched off", map[string]string{"TREASURY_ADDRESS": ""}, http.StatusServiceUnavailable},
		{"a minimum above the amount", map[string]string{"DEPOSIT_MIN_MINOR": "20000000"}, http.StatusUnprocessableEntity},
		{"a maximum below the amount", map[string]string{"DEPOSIT_MIN_MINOR": "1000000", "DEPOSIT_MAX_MINOR": "5000000"}, http.StatusUnprocessableEntity},
		{"another treasury", map[string]string{"TREASURY_ADDRESS": "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7"}, http.StatusCreated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The same database after a restart with other settings.
			after := testenv.NewOn(t, before.DB, testenv.Options{Env: tt.vars})
			a := after.Client(t)
			a.CopySession(c)
			r := a.Do("POST", depositsPath, depositRequest("10000000"), k)
			if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r.Body, first.Body) ||
				r.Header.Get("Location") != first.Header.Get("Location") {
				t.Fatalf("replay: %d %v %s", r.Status, r.Header, r.Body)
			}
			// A new key is judged by today's configuration.
			if r := a.Do("POST", depositsPath, depositRequest("10000000"), key(uuid.NewString())); r.Status != tt.newKey {
				t.Fatalf("a new key: %d %s, want %d", r.Status, r.Body, tt.newKey)
			}
		})
	}
}

// TestAReplayGoesOnlyToACallerWhoMayStillRunTheCommand: a stored answer is
// not a pass. A caller demoted since gets the command's 403, one removed
// from the organization its 404, before the stored answer is looked at.
func TestAReplayGoesOnlyToACallerWhoMayStillRunTheCommand(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	setRole := func(who, role string) {
		t.Helper()
		sql, args := "UPDATE memberships SET role = $3 WHERE organization_id = $1 AND user_id = $2", []any{d.org, d.users[who], role}
		if role == "" {
			sql, args = "DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2", args[:2]
		}
		if _, err := d.env.DB.Pool.Exec(context.Background(), sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(what string, r *testenv.Response, status int, code string) {
		t.Helper()
		if r.Status != status || problemCode(t, r) != code || r.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("%s: %d %s, want %d %s", what, r.Status, r.Body, status, code)
		}
	}
	webhook := map[string]any{"url": "https://hooks.example.test/in", "eventTypes": []string{"creative.approved"}}
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	draft := map[string]any{"title": "Replayed", "type": "static", "aspectRatio": "1:1", "geo": "US", "language": "en"}
	for _, tc := range []struct {
		name, who, demotedTo string
		send                 func(k testenv.Header) *testenv.Response
	}{
		{"creating a webhook endpoint (its answer holds the secret)", "admin", "viewer", func(k testenv.Header) *testenv.Response {
			return d.clients["admin"].Do(http.MethodPost, webhooksURL(d.org), webhook, k)
		}},
		{"a review action", "reviewer", "viewer", func(k testenv.Header) *testenv.Response {
			return d.act("reviewer", id, map[string]any{"action": "approve"}, k)
		}},
		{"creating a creative", "author", "reviewer", func(k testenv.Header) *testenv.Response {
			return d.clients["author"].Do(http.MethodPost, creativesURL(d.org), draft, k)
		}},
		{"writing a review comment", "other reviewer", "viewer", func(k testenv.Header) *testenv.Response {
			return d.clients["other reviewer"].Do(http.MethodPost, commentsURL(d.org, id), map[string]any{"body": "Replayed remark"}, k)
		}},
	} {
		k := key(uuid.NewString())
		first := tc.send(k)
		if first.Status/100 != 2 {
			t.Fatalf("%s: %d %s", tc.name, first.Status, first.Body)
		}
		if again := tc.send(k); again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.Body, first.Body) {
			t.Fatalf("%s, replayed while allowed: %d %s", tc.name, again.Status, again.Body)
		}
		setRole(tc.who, tc.demotedTo)
		refused(tc.name+", demoted", tc.send(k), http.StatusForbidden, "action_forbidden")
		setRole(tc.who, "")
		refused(tc.name+", removed", tc.send(k), http.StatusNotFound, "not_found")
	}
}
