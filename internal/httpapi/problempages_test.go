package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"creativeapi/internal/httpapi"
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

// TestDocsShowTheServerTheyAreServedFrom: /docs names PUBLIC_BASE_URL as
// its server (and in its examples' type URLs), not the spec's development
// server, and shows the server's description as text.
func TestDocsShowTheServerTheyAreServedFrom(t *testing.T) {
	t.Parallel()
	spec, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	dev := spec.Servers[0].URL
	env := testenv.New(t, testenv.Options{Env: map[string]string{"PUBLIC_BASE_URL": "https://api.example.test"}})
	r := env.Client(t).Do("GET", "/docs", nil)
	body := string(r.Body)
	if r.Status != http.StatusOK || !strings.Contains(body, `>https://api.example.test</div>`) {
		t.Errorf("/docs does not show https://api.example.test as its server")
	}
	if strings.Contains(body, dev) {
		t.Errorf("/docs still names %s", dev)
	}
	if !strings.Contains(body, `"type":"https://api.example.test/problems/`) {
		t.Errorf("/docs' examples do not use the served base URL")
	}
	if strings.Contains(body, "(`make run`)") {
		t.Errorf("/docs shows Markdown backticks in the servers box")
	}
}
