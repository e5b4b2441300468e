package e2e_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/auth"
	"creativeapi/internal/deposit"
	"creativeapi/internal/httpapi"
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
