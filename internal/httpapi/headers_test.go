package httpapi_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/testenv"
)

func TestAuthenticatedAnswersAreNeverCached(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Nora Nostore")
	calls := 0
	for _, call := range specCalls(t) {
		if !call.declares[http.StatusUnauthorized] {
			continue // no session involved (probes, signIn)
		}
		for _, client := range []*testenv.Client{c, env.Client(t)} {
			r := client.Do(call.method, call.path, call.body)
			if got := r.Header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("%s → %d: Cache-Control %q", call.operationID, r.Status, got)
			}
			calls++
		}
	}
	// signIn answers with the session's csrfToken.
	_, email := env.DB.User(t, "Sid Signin")
	if r := env.Client(t).SignIn(email, testenv.Password); r.Status != http.StatusOK || r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("signIn → %d: Cache-Control %q", r.Status, r.Header.Get("Cache-Control"))
	}
	t.Logf("%d answers checked", calls+1)
}

func TestEveryAnswerIsNosniffWithoutAServerBanner(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Bea Banner")
	check := func(what string, h http.Header) {
		t.Helper()
		if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", what, got)
		}
		for _, name := range []string{"Server", "X-Powered-By"} {
			if v, ok := h[name]; ok {
				t.Errorf("%s: %s %q names the software", what, name, v)
			}
		}
	}
	for _, call := range specCalls(t) {
		r := c.Do(call.method, call.path, call.body)
		check(call.operationID, r.Header)
	}
	for _, path := range []string{"/docs", "/openapi.yaml", "/nope", "/api/v1/nope"} {
		r := c.Do("GET", path, nil)
		check(path, r.Header)
	}
	check("a refused method", c.Do("DELETE", "/api/v1/me", nil).Header)
}

const appOrigin = "https://app.example.test"

// corsEnv trusts appOrigin.
func corsEnv(t *testing.T) (*testenv.Env, *testenv.Client) {
	t.Helper()
	env := testenv.New(t, testenv.Options{Env: map[string]string{"ALLOWED_ORIGINS": appOrigin + ", https://admin.example.test"}})
	c, _ := env.SignedIn(t, "Cory Cors")
	return env, c
}

func headerList(h http.Header, name string) []string {
	var out []string
	for _, v := range h.Values(name) {
		for _, item := range strings.Split(v, ",") {
			out = append(out, strings.ToLower(strings.TrimSpace(item)))
		}
	}
	return out
}

func hasAll(h http.Header, name string, want ...string) bool {
	got := headerList(h, name)
	for _, w := range want {
		if !slices.Contains(got, strings.ToLower(w)) {
			return false
		}
	}
	return true
}

var corsHeaders = []string{
	"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Allow-Methods",
	"Access-Control-Allow-Headers", "Access-Control-Expose-Headers", "Access-Control-Max-Age",
}

func TestCORSAllowsTheConfiguredOriginsWithCredentials(t *testing.T) {
	t.Parallel()
	env, c := corsEnv(t)
	origin := testenv.Header{Name: "Origin", Value: appOrigin}
	crossSite := testenv.Header{Name: "Sec-Fetch-Site", Value: "cross-site"}

	t.Run("a read names the origin and allows credentials", func(t *testing.T) {
		r := c.Do("GET", "/api/v1/me", nil, origin, crossSite)
		if r.Status != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != appOrigin ||
			r.Header.Get("Access-Control-Allow-Credentials") != "true" || !hasAll(r.Header, "Vary", "Origin") {
			t.Fatalf("got %d %v", r.Status, r.Header)
		}
		if !hasAll(r.Header, "Access-Control-Expose-Headers", "Location", "Idempotent-Replayed", "Retry-After") {
			t.Fatalf("exposed: %v", r.Header.Values("Access-Control-Expose-Headers"))
		}
	})
	t.Run("a command from the origin runs and its Location is readable", func(t *testing.T) {
		r := c.Do("POST", "/api/v1/me/balance/deposits", depositBody("25000000"), origin, crossSite, key("cors-1"))
		if r.Status != http.StatusCreated || r.Header.Get("Access-Control-Allow-Origin") != appOrigin ||
			!hasAll(r.Header, "Access-Control-Expose-Headers", "Location") {
			t.Fatalf("got %d %v %s", r.Status, r.Header, r.Body)
		}
	})
	t.Run("an error answer is readable too", func(t *testing.T) {
		r := env.Client(t).Do("GET", "/api/v1/me", nil, origin)
		if r.Status != http.StatusUnauthorized || r.Header.Get("Access-Control-Allow-Origin") != appOrigin {
			t.Fatalf("got %d %v", r.Status, r.Header)
		}
	})
	t.Run("a preflight is answered with the methods and headers", func(t *testing.T) {
		for _, path := range []string{"/api/v1/me/balance/deposits", actionPath} {
			res := preflight(t, env, path, appOrigin, "POST", "content-type, x-csrf-token, idempotency-key, traceparent")
			h := res.Header
			if res.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != appOrigin ||
				h.Get("Access-Control-Allow-Credentials") != "true" || h.Get("Access-Control-Max-Age") == "" ||
				!hasAll(h, "Access-Control-Allow-Methods", "GET", "POST", "PATCH", "DELETE") ||
				!hasAll(h, "Access-Control-Allow-Headers", "Content-Type", "X-CSRF-Token", "Idempotency-Key", "traceparent") ||
				!hasAll(h, "Vary", "Origin") {
				t.Fatalf("%s: got %d %v", path, res.StatusCode, h)
			}
		}
	})
	t.Run("the second configured origin is allowed as well", func(t *testing.T) {
		r := c.Do("GET", "/api/v1/me", nil, testenv.Header{Name: "Origin", Value: "https://admin.example.test"})
		if r.Header.Get("Access-Control-Allow-Origin") != "https://admin.example.test" {
			t.Fatalf("got %v", r.Header)
		}
	})
}

func TestCORSGivesOtherOriginsNothing(t *testing.T) {
	t.Parallel()
	env, c := corsEnv(t)
	for _, o := range []string{"https://evil.test", "null", appOrigin + ".evil.test", "http://app.example.test", appOrigin + ":443", strings.ToUpper(appOrigin)} {
		t.Run(o, func(t *testing.T) {
			origin := testenv.Header{Name: "Origin", Value: o}
			r := c.Do("GET", "/api/v1/me", nil, origin)
			noCORS(t, r.Header)
			if r.Status != http.StatusOK || !hasAll(r.Header, "Vary", "Origin") {
				t.Fatalf("got %d %v", r.Status, r.Header)
			}
			r = c.Do("POST", "/api/v1/me/balance/deposits", depositBody("25000000"), origin, testenv.Header{Name: "Sec-Fetch-Site", Value: "cross-site"})
			noCORS(t, r.Header)
			if r.Status != http.StatusForbidden || r.Problem(t).Code != "csrf_failed" {
				t.Fatalf("unsafe call: %d %s", r.Status, r.Body)
			}
			// The preflight is answered as any OPTIONS, without CORS
			// headers: the browser then refuses the call itself.
			res := preflight(t, env, "/api/v1/me/balance/deposits", o, "POST", "content-type")
			noCORS(t, res.Header)
			if res.StatusCode != http.StatusNoContent || res.Header.Get("Allow") != "GET, HEAD, POST, OPTIONS" {
				t.Fatalf("preflight: %d %v", res.StatusCode, res.Header)
			}
		})
	}
	if n := count(t, env, "SELECT count(*) FROM deposits"); n != 0 {
		t.Fatalf("%d deposits from other origins", n)
	}
	t.Run("without ALLOWED_ORIGINS no origin is allowed", func(t *testing.T) {
		env := testenv.New(t)
		c, _ := env.SignedIn(t, "Nadia NoCors")
		noCORS(t, c.Do("GET", "/api/v1/me", nil, testenv.Header{Name: "Origin", Value: appOrigin}).Header)
		noCORS(t, preflight(t, env, "/api/v1/me", appOrigin, "GET", "").Header)
	})
}

func noCORS(t *testing.T, h http.Header) {
	t.Helper()
	for _, name := range corsHeaders {
		if v, ok := h[name]; ok {
			t.Errorf("%s: %q", name, v)
		}
	}
}

// preflight sends the browser's CORS preflight, checked as any OPTIONS
// against the spec's "Methods".
func preflight(t *testing.T, env *testenv.Env, path, origin, method, headers string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodOptions, env.Server.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", method)
	if headers != "" {
		req.Header.Set("Access-Control-Request-Headers", headers)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if err := testenv.CheckResponse(req, &testenv.Response{Status: res.StatusCode, Header: res.Header, Body: body}, t.Name()); err != nil {
		t.Errorf("preflight: %v", err)
	}
	return res
}

// raw sends method to path with a plain client (no body), validated
// against the spec.
func raw(t *testing.T, env *testenv.Env, method, path string, headers ...testenv.Header) *testenv.Response {
	t.Helper()
	req, err := http.NewRequest(method, env.Server.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		req.Header.Set(h.Name, h.Value)
	}
	return send(t, req)
}

func TestHEADAnswersWhereverGETDoesWithoutTheBody(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Hedda Head")
	token, _ := rawSession(t, env)
	cookie := testenv.Header{Name: "Cookie", Value: "session=" + token}
	paths := []string{"/healthz", "/readyz", "/docs", "/docs/changelog", "/openapi.yaml"}
	for _, call := range specCalls(t) {
		if call.method == http.MethodGet {
			paths = append(paths, call.path)
		}
	}
	for _, path := range paths {
		get := c.Do(http.MethodGet, path, nil)
		head := raw(t, env, http.MethodHead, path, cookie)
		if head.Status != get.Status || len(head.Body) != 0 || head.Header.Get("Content-Type") != get.Header.Get("Content-Type") {
			t.Errorf("HEAD %s: %d %q %q, GET: %d %q", path, head.Status, head.Header.Get("Content-Type"), head.Body, get.Status, get.Header.Get("Content-Type"))
		}
	}
	// A path without GET refuses HEAD as any other method.
	if r := raw(t, env, http.MethodHead, depositsPath+"/"+uuid.NewString()+"/nope", cookie); r.Status != http.StatusNotFound {
		t.Errorf("HEAD of an unknown path: %d", r.Status)
	}
	if r := raw(t, env, http.MethodHead, signOutPath, cookie); r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST, OPTIONS" {
		t.Errorf("HEAD of sign-out: %d %v", r.Status, r.Header)
	}
}

func TestOPTIONSAndA405ListTheMethodsOfThePath(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	org, creative := uuid.NewString(), uuid.NewString()
	allow := map[string]string{
		"/healthz":                            "GET, HEAD, OPTIONS",
		"/docs":                               "GET, HEAD, OPTIONS",
		"/openapi.yaml":                       "GET, HEAD, OPTIONS",
		signInPath:                            "POST, OPTIONS",
		mePath:                                "GET, HEAD, OPTIONS",
		depositsPath:                          "GET, HEAD, POST, OPTIONS",
		depositsPath + "/" + uuid.NewString(): "GET, HEAD, OPTIONS",
		"/api/v1/organizations/" + org + "/creatives/" + creative + "/actions": "POST, OPTIONS",
	}
	for path, want := range allow {
		if r := raw(t, env, http.MethodOptions, path); r.Status != http.StatusNoContent || r.Header.Get("Allow") != want || len(r.Body) != 0 {
			t.Errorf("OPTIONS %s: %d Allow %q, want 204 %q", path, r.Status, r.Header.Get("Allow"), want)
		}
		if r := raw(t, env, http.MethodDelete, path); r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != want || r.Problem(t).Code != "method_not_allowed" {
			t.Errorf("DELETE %s: %d Allow %q, want 405 %q", path, r.Status, r.Header.Get("Allow"), want)
		}
	}
	if r := raw(t, env, http.MethodOptions, "/api/v1/nope"); r.Status != http.StatusNotFound {
		t.Errorf("OPTIONS of an unknown path: %d", r.Status)
	}
}

func TestAnswersRefuseFramingAnd401sNameTheirChallenge(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Fred Frame")
	for _, path := range []string{mePath, "/docs", "/openapi.yaml", "/healthz", "/api/v1/nope"} {
		if r := c.Do(http.MethodGet, path, nil); r.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: X-Frame-Options %q", path, r.Header.Get("X-Frame-Options"))
		}
	}
	if csp := c.Do(http.MethodGet, "/docs", nil).Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("/docs CSP %q", csp)
	}
	// Every 401: no session on any operation that needs one, and a wrong password.
	anonymous := env.Client(t)
	for _, call := range specCalls(t) {
		if !call.declares[http.StatusUnauthorized] || call.operationID == "signIn" || call.operationID == "createGuestSession" {
			continue // their 401 is a wrong password's, below and in the shares' tests
		}
		if r := anonymous.Do(call.method, call.path, call.body); r.Status != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") != `Cookie realm="creativeapi"` {
			t.Errorf("%s: %d WWW-Authenticate %q", call.operationID, r.Status, r.Header.Get("WWW-Authenticate"))
		}
	}
	if r := anonymous.SignIn("nobody@example.test", "wrong-password"); r.Status != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") != `Cookie realm="creativeapi"` {
		t.Errorf("signIn: %d WWW-Authenticate %q", r.Status, r.Header.Get("WWW-Authenticate"))
	}
}
