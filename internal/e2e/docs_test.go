package e2e_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/auth"
	"creativeapi/internal/deposit"
	"creativeapi/internal/httpapi"
	"creativeapi/internal/seed"
	"creativeapi/internal/testenv"
)

// chromiumInstallHint is how a machine gets the browser the docs test needs.
const chromiumInstallHint = "chromium is not installed: run `sudo apt-get install -y chromium` (or `make deps`), or set CHROMIUM=/path/to/chromium"

// TestDocsPageWorksOfflineInABrowser opens the real server's /docs in
// headless Chromium: the reference must show both commands and the Problem
// schema with no failed request, no request off 127.0.0.1 and no console
// error (a CSP violation is one); its title must show the spec's version
// and its change policy link the changelog; an EventSource on the page's
// origin must receive the signed-in user's deposit event from the live
// stream. It saves test-artifacts/docs.png.
func TestDocsPageWorksOfflineInABrowser(t *testing.T) {
	t.Parallel()
	node, root := requireNode(t)
	browser := chromiumPath(t)
	env := testenv.New(t, testenv.Options{Events: true})
	session := depositEventFor(t, env)

	shot := filepath.Join(root, "test-artifacts", "docs.png")
	if err := os.MkdirAll(filepath.Dir(shot), 0o755); err != nil {
		t.Fatal(err)
	}
	out := runTool(t, root, []string{
		"DOCS_URL=" + env.Server.URL + "/docs",
		"CHROMIUM=" + browser,
		"USER_DATA_DIR=" + t.TempDir(),
		"SCREENSHOT=" + shot,
		"SPEC_VERSION=" + specVersion(t),
		"SESSION_COOKIE=" + session,
		"NODE_OPTIONS=",
	}, node, filepath.Join("internal", "e2e", "testdata", "docs-browser.mjs"))
	t.Logf("%s screenshot: %s", out, shot)
}

// chromiumPath is $CHROMIUM or Debian's /usr/bin/chromium. A missing browser
// fails the test with the install hint; only a developer machine (CI unset)
// may skip it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(path); err == nil {
		return path
	}
	if os.Getenv("CI") == "" {
		t.Skip(chromiumInstallHint)
	}
	t.Fatal(chromiumInstallHint)
	return ""
}

// specVersion is openapi.yaml's info.version.
func specVersion(t *testing.T) string {
	t.Helper()
	spec, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	return spec.Info.Version
}

// depositEventFor signs a user in and moves one of their deposits as the
// server does (a deposit past its lifetime, expired by the sweeper, which
// writes deposit.expired), and returns the session cookie ("name=value").
func depositEventFor(t *testing.T, env *testenv.Env) string {
	t.Helper()
	c, user := env.SignedIn(t, "Eve Eventsource")
	r := c.Do(http.MethodPost, "/api/v1/me/balance/deposits",
		map[string]any{"amount": map[string]any{"amountMinor": "25000000", "currency": "USDT", "scale": 6}},
		testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()})
	if r.Status != http.StatusCreated {
		t.Fatalf("create a deposit: %d %s", r.Status, r.Body)
	}
	ctx := context.Background()
	if _, err := env.DB.Pool.Exec(ctx, "UPDATE deposits SET expires_at = now() - interval '1 second' WHERE user_id = $1", user); err != nil {
		t.Fatal(err)
	}
	if err := deposit.Sweep(ctx, env.DB.Store, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	token, _ := env.DB.Session(t, user)
	return auth.SessionConfig{CookieSecure: env.Config.CookieSecure}.CookieName() + "=" + token
}

// TestTheRecommendedFrontendSetupKeepsTheSession: a page on a frontend
// dev server at http://localhost:<port> keeps its session through the dev
// server's /api proxy (docs/frontend.md's Vite setup) and against the API named
// localhost, and loses it, silently but for the server's warning, against
// the API named 127.0.0.1 (another site for the SameSite=Lax cookie).
func TestTheRecommendedFrontendSetupKeepsTheSession(t *testing.T) {
	t.Parallel()
	node, root := requireNode(t)
	browser := chromiumPath(t)

	// The dev server's origin must be known to the API (ALLOWED_ORIGINS):
	// a proxy passes the page's Origin on, as Vite's does.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	devOrigin := fmt.Sprintf("http://localhost:%d", port)
	env := seededServer(t, map[string]string{"ALLOWED_ORIGINS": devOrigin})
	api, err := url.Parse(env.Server.URL)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", httputil.NewSingleHostReverseProxy(api))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><title>frontend dev server</title>")
	})
	dev := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = dev.Serve(ln) }()
	t.Cleanup(func() { _ = dev.Close() })

	out := runTool(t, root, []string{
		"DEV_URL=" + devOrigin + "/",
		"DIRECT_URL=http://localhost:" + api.Port(),
		"CROSS_URL=http://127.0.0.1:" + api.Port(),
		"CHROMIUM=" + browser,
		"EMAIL=author@acme.test",
		"PASSWORD=" + seed.DemoPassword,
		"NODE_OPTIONS=",
	}, node, filepath.Join("internal", "e2e", "testdata", "session-browser.mjs"))
	for _, want := range []string{"proxy 200 200", "direct 200 200", "cross 200 401"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("want %q:\n%s", want, out)
		}
	}
}
