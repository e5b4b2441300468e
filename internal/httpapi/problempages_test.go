package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"creativeapi/internal/problem"
	"creativeapi/internal/testenv"
)

// TestEveryProblemTypeURLLeadsToItsPage: the type of a Problem answer is
// a page this server serves, and every code has one.
func TestEveryProblemTypeURLLeadsToItsPage(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c := env.Client(t)

	r := c.Do("GET", "/api/v1/me", nil)
	p := r.Problem(t)
	u, err := url.Parse(p.Type)
	if r.Status != http.StatusUnauthorized || err != nil || u.Path != "/problems/unauthenticated" {
		t.Fatalf("got %d, type %q", r.Status, p.Type)
	}
	page := c.Do("GET", u.Path, nil)
	if page.Status != http.StatusOK || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(page.Body), "SameSite=Lax") {
		t.Fatalf("%s: %d %s", u.Path, page.Status, page.Body)
	}

	index := c.Do("GET", "/problems", nil)
	for _, code := range problem.Codes() {
		r := c.Do("GET", "/problems/"+string(code), nil)
		body := string(r.Body)
		if r.Status != http.StatusOK || !strings.Contains(body, "<code>"+string(code)+"</code> "+problem.Title(code)) ||
			!strings.Contains(body, "What to do") || !strings.Contains(r.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("/problems/%s: %d %v\n%s", code, r.Status, r.Header, body)
		}
		if !strings.Contains(string(index.Body), `href="/problems/`+string(code)+`"`) {
			t.Errorf("/problems does not link %s", code)
		}
	}
	if r := c.Do("GET", "/problems/no_such_code", nil); r.Status != http.StatusNotFound || r.Problem(t).Code != "not_found" {
		t.Errorf("an unknown code: %d %s", r.Status, r.Body)
	}
}
