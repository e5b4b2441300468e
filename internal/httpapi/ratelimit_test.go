package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/ratelimit"
	"creativeapi/internal/testenv"
)

// limited is a test server whose callers may send reads and commands per
// minute.
func limited(t *testing.T, reads, commands int) *testenv.Env {
	return testenv.New(t, testenv.Options{Env: limits(reads, commands)})
}

func limits(reads, commands int) map[string]string {
	return map[string]string{
		"RATE_LIMIT_READS_PER_MINUTE": strconv.Itoa(reads), "RATE_LIMIT_COMMANDS_PER_MINUTE": strconv.Itoa(commands),
	}
}

func TestEveryOperationAnswers429OverItsCallersBudget(t *testing.T) {
	t.Parallel()
	env := limited(t, 1, 1)
	c, id := env.SignedIn(t, "Rita Rate")
	execDepositSQL(t, env, "UPDATE users SET operator = true WHERE id = $1", id) // the operator API too
	env.AddGuest(t, c)                                                           // and the guest paths
	// Spend each budget the calls below draw on: the caller's reads and
	// commands, and the client address's commands (sign-in and unsubscribe
	// have no caller). Each counts, whatever its answer.
	c.Do("GET", "/api/v1/me", nil)
	c.Do("POST", "/api/v1/me/balance/deposits", map[string]any{})
	c.Do("POST", "/api/v1/auth/sign-in", map[string]any{"email": "nobody@example.test", "password": "not-the-password"})
	c.Do("GET", "/api/v1/guest/creatives", nil) // the guest's own budget
	c.Do("POST", "/api/v1/guest/creatives/"+uuid.NewString()+"/actions", map[string]any{})
	for _, call := range specCalls(t) {
		if !call.declares[http.StatusTooManyRequests] {
			continue // outside /api/ (health, readiness, the JWKS): no budget
		}
		r := c.Do(call.method, call.path, call.body)
		if r.Status != http.StatusTooManyRequests || r.Problem(t).Code != "rate_limited" {
			t.Errorf("%s over the budget: %d %s", call.operationID, r.Status, r.Body)
			continue
		}
		class := "reads"
		if call.method != http.MethodGet {
			class = "commands"
		}
		if got := r.Header.Get("RateLimit-Policy"); got != `"`+class+`";q=1;w=60` {
			t.Errorf("%s: RateLimit-Policy %q", call.operationID, got)
		}
		if got := r.Header.Get("RateLimit"); !strings.HasPrefix(got, `"`+class+`";r=0;t=`) {
			t.Errorf("%s: RateLimit %q", call.operationID, got)
		}
		if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
			t.Errorf("%s: Retry-After %q", call.operationID, r.Header.Get("Retry-After"))
		}
	}
}

func TestEveryAnswerCarriesTheRateLimitHeaders(t *testing.T) {
	t.Parallel()
	env := limited(t, 600, 120)
	c, _ := env.SignedIn(t, "Hedda Header")
	for _, tc := range []struct {
		name, method, path string
		client             *testenv.Client
		status             int
		policy, limit      string
	}{
		{"a read", "GET", "/api/v1/me", c, http.StatusOK, `"reads";q=600;w=60`, `"reads";r=599;t=1`},
		{"a command the gate refuses", "POST", "/api/v1/me/balance/deposits", c, http.StatusUnprocessableEntity, `"commands";q=120;w=60`, `"commands";r=119;t=1`},
		// Refused before it counts: the client address's budget, as it is.
		{"a request without a session", "GET", "/api/v1/me", env.Client(t), http.StatusUnauthorized, `"reads";q=600;w=60`, `"reads";r=600;t=0`},
	} {
		var body any
		if tc.method != "GET" {
			body = map[string]any{}
		}
		r := tc.client.Do(tc.method, tc.path, body)
		if r.Status != tc.status || r.Header.Get("RateLimit-Policy") != tc.policy || r.Header.Get("RateLimit") != tc.limit {
			t.Errorf("%s: %d, RateLimit-Policy %q, RateLimit %q", tc.name, r.Status, r.Header.Get("RateLimit-Policy"), r.Header.Get("RateLimit"))
		}
	}
}

func TestTheLimitsAreOffWhenZero(t *testing.T) {
	t.Parallel()
	env := limited(t, 0, 0)
	c, _ := env.SignedIn(t, "Otto Off")
	for range 5 {
		r := c.Do("GET", "/api/v1/me", nil)
		if r.Status != http.StatusOK || r.Header.Get("RateLimit") != "" {
			t.Fatalf("%d, RateLimit %q", r.Status, r.Header.Get("RateLimit"))
		}
	}
}

func TestTwoReplicasEnforceOneBudget(t *testing.T) {
	t.Parallel()
	const budget = 10
	one := limited(t, 0, budget)
	two := one.Replica(t, 5, testenv.Options{Env: limits(0, budget)})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	r1, r2 := ratelimit.NewRegistry(one.Limits, one.DB.Store, log), ratelimit.NewRegistry(two.Limits, two.DB.Store, log)
	for _, r := range []*ratelimit.Registry{r1, r2, r1} { // the first beats again to see the second
		if err := r.Beat(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := one.Limits.Replicas(); n != 2 {
		t.Fatalf("the first replica sees %d replicas", n)
	}
	_, user := one.SignedIn(t, "Ravi Replicas")
	clients := []*testenv.Client{one.SessionFor(t, user), two.SessionFor(t, user)}
	allowed := 0
	for i := range 4 * budget {
		// A balancer spreading the caller's commands over both replicas.
		if r := clients[i%2].Do("POST", "/api/v1/me/balance/deposits", map[string]any{}); r.Status != http.StatusTooManyRequests {
			allowed++
		}
	}
	if allowed != budget {
		t.Fatalf("the two replicas allowed %d commands, want the one budget, %d", allowed, budget)
	}
}
