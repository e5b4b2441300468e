package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

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
	name := env.DB.Pool.Config().ConnConfig.Database
	admin := testenv.NewAdminConn(t)
	outage := func(allow bool) {
		t.Helper()
		ctx := context.Background()
		if _, err := admin.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s WITH ALLOW_CONNECTIONS %t", name, allow)); err != nil {
			t.Fatal(err)
		}
		if !allow {
			if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name); err != nil {
				t.Fatal(err)
			}
		}
	}
	outage(false)
	for _, path := range []string{"/readyz", "/api/v1/me"} {
		r := c.Do("GET", path, nil)
		if p := r.Problem(t); r.Status != http.StatusServiceUnavailable || p.Code != "service_unavailable" {
			t.Errorf("%s during the outage: %d %s", path, r.Status, r.Body)
		}
	}
	outage(true)
	if r := c.Do("GET", "/readyz", nil); r.Status != http.StatusOK {
		t.Fatalf("readyz after the outage: %d %s", r.Status, r.Body)
	}
	if r := c.Do("GET", "/api/v1/me", nil); r.Status == http.StatusServiceUnavailable {
		t.Fatalf("/api/v1/me after the outage: %d %s", r.Status, r.Body)
	}
}
