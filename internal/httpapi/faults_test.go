package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"creativeapi/internal/config"
	"creativeapi/internal/email"
	"creativeapi/internal/httpapi"
	"creativeapi/internal/testenv"
)

func TestPanicIsA500ProblemWithoutInternals(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	env.Echo.GET("/test/panic", func(echo.Context) error { panic("secret internal detail") })
	r := env.Client(t).Do("GET", "/test/panic", nil)
	p := r.Problem(t)
	if r.Status != http.StatusInternalServerError || p.Code != "internal_error" || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
	if strings.Contains(string(r.Body), "secret") || strings.Contains(string(r.Body), "goroutine") {
		t.Fatalf("the answer leaks internals: %s", r.Body)
	}
}

func TestDatabaseOutageIsA503AndRecoversByItself(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Olga Outage")
	if r := c.Do("GET", "/readyz", nil); r.Status != http.StatusOK {
		t.Fatalf("readyz before the outage: %d", r.Status)
	}
	setAllowConnections(t, env, false)
	for _, path := range []string{"/readyz", "/api/v1/me"} {
		r := c.Do("GET", path, nil)
		if p := r.Problem(t); r.Status != http.StatusServiceUnavailable || p.Code != "service_unavailable" {
			t.Errorf("%s during the outage: %d %s", path, r.Status, r.Body)
		}
	}
	setAllowConnections(t, env, true)
	if r := c.Do("GET", "/readyz", nil); r.Status != http.StatusOK {
		t.Fatalf("readyz after the outage: %d %s", r.Status, r.Body)
	}
	if r := c.Do("GET", "/api/v1/me", nil); r.Status == http.StatusServiceUnavailable {
		t.Fatalf("/api/v1/me after the outage: %d %s", r.Status, r.Body)
	}
}

// specCall is one valid call of an operation: its path with made-up ids and
// the example body of the spec.
type specCall struct {
	operationID, method, path string
	body                      any
	declares                  map[int]bool
}

// specCalls lists a valid call of every operation in openapi.yaml, so a new
// operation is covered by the fault tests without a change here.
func specCalls(t *testing.T) []specCall {
	t.Helper()
	spec, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var calls []specCall
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			c := specCall{operationID: op.OperationID, method: method, path: path, declares: map[int]bool{}}
			for _, name := range []string{"organizationId", "creativeId", "depositId", "webhookId", "deliveryId", "commentId", "uploadId", "assetId"} {
				c.path = strings.ReplaceAll(c.path, "{"+name+"}", uuid.NewString())
			}
			// Required query parameters get valid values too: an unsubscribe
			// token signed as the test servers (DEV_MODE) sign.
			sep := "?"
			for _, p := range op.Parameters {
				if p.Value != nil && p.Value.In == "query" && p.Value.Required && p.Value.Name == "token" {
					c.path += sep + "token=" + email.NewTokens(config.DevUnsubscribeSecret).Sign(uuid.New(), "mention")
					sep = "&"
				}
			}
			if rb := op.RequestBody; rb != nil {
				c.body = rb.Value.Content["application/json"].Example
			}
			for code := range op.Responses.Map() {
				if n, err := strconv.Atoi(code); err == nil {
					c.declares[n] = true
				}
			}
			calls = append(calls, c)
		}
	}
	return calls
}

func TestEveryOperationAnswers503WhileTheDatabaseIsDown(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Dora Down")
	env.AddGuest(t, c) // the guest paths take a guest session
	setAllowConnections(t, env, false)
	for _, call := range specCalls(t) {
		if !call.declares[http.StatusServiceUnavailable] {
			continue // needs no database (getHealth)
		}
		r := c.Do(call.method, call.path, call.body)
		if r.Status != http.StatusServiceUnavailable || r.Problem(t).Code != "service_unavailable" {
			t.Errorf("%s during the outage: %d %s", call.operationID, r.Status, r.Body)
		}
	}
}

func TestEveryOperationAnswers500OnAnUnexpectedDatabaseError(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Ivo Internal")
	env.AddGuest(t, c) // the guest paths take a guest session
	// A broken migration: the users table is gone, which no handler
	// expects, and the shares table (the one a guest's sign-in with an
	// unknown token and a guest session's lookup read).
	if _, err := env.DB.Pool.Exec(context.Background(), "ALTER TABLE users RENAME TO users_gone; ALTER TABLE shares RENAME TO shares_gone"); err != nil {
		t.Fatal(err)
	}
	for _, call := range specCalls(t) {
		if !call.declares[http.StatusInternalServerError] {
			continue // touches no table (getHealth, getReadiness)
		}
		r := c.Do(call.method, call.path, call.body)
		p := r.Problem(t)
		if r.Status != http.StatusInternalServerError || p.Code != "internal_error" || strings.Contains(string(r.Body), "_gone") {
			t.Errorf("%s with the users table gone: %d %s", call.operationID, r.Status, r.Body)
		}
	}
}

// setAllowConnections starts (false) or ends (true) an outage of the test's
// database: no new connections, and the open ones are terminated.
func setAllowConnections(t *testing.T, env *testenv.Env, allow bool) {
	t.Helper()
	ctx := context.Background()
	name := env.DB.Pool.Config().ConnConfig.Database
	admin := testenv.NewAdminConn(t)
	if _, err := admin.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s WITH ALLOW_CONNECTIONS %t", name, allow)); err != nil {
		t.Fatal(err)
	}
	if !allow {
		if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name); err != nil {
			t.Fatal(err)
		}
	}
}

// TestALockTimeoutIsA503 proves the translation at the database boundary:
// whichever query meets the lock timeout (a list's rows or a single row),
// the answer is the same retryable 503, not a 500.
func TestALockTimeoutIsA503(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{LockTimeout: 200 * time.Millisecond})
	c, user := env.SignedIn(t, "Lorna Locked")
	org := env.DB.Org(t, "Locked Ads")
	env.DB.Member(t, org, user, "author")
	creative := env.DB.DraftCreative(t, org, user)
	// A migration holds the creatives table: every read of it waits.
	ctx := context.Background()
	tx, err := env.DB.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE creatives IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{
		"listing creatives":  fmt.Sprintf("/api/v1/organizations/%s/creatives", org),
		"getting a creative": fmt.Sprintf("/api/v1/organizations/%s/creatives/%s", org, creative),
	} {
		r := c.Do("GET", path, nil)
		if p := r.Problem(t); r.Status != http.StatusServiceUnavailable || p.Code != "service_unavailable" || r.Header.Get("Retry-After") == "" {
			t.Errorf("%s while the table is locked: %d %s", name, r.Status, r.Body)
		}
	}
}
