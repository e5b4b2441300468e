package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/testenv"
)

// logLines collects a server's log lines, safe for its concurrent writes.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// requestLine waits for the access log's line of the request whose answer
// carried traceID and returns it: the line is written after the answer.
func (l *logLines) requestLine(t *testing.T, traceID string) map[string]any {
	t.Helper()
	var found map[string]any
	testenv.Eventually(t, "the access log line of trace "+traceID, func() bool {
		sc := bufio.NewScanner(strings.NewReader(l.String()))
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "request" && line["trace_id"] == traceID {
				found = line
				return true
			}
		}
		return false
	})
	return found
}

// TestNoTokenCodeOrSecretReachesTheLog follows a share's link to this
// server, as it points here when APP_URL is unset (APP_URL defaults to
// PUBLIC_BASE_URL), and calls with tokens and codes in the query: the
// access log names every request, but writes each secret as [redacted]
// (docs/operations.md).
func TestNoTokenCodeOrSecretReachesTheLog(t *testing.T) {
	t.Parallel()
	logs := &logLines{}
	d := newReviewDesk(t, testenv.Options{Log: logs})
	if d.env.Config.AppURL != d.env.Config.PublicBaseURL {
		t.Fatalf("APP_URL %q: this test needs it unset", d.env.Config.AppURL)
	}
	c := d.creative(t, creativeSpec{versions: 1})
	r := d.createShare(t, "admin", map[string]any{"creativeIds": []uuid.UUID{c}, "permission": "comment"}, key("log-share"))
	if r.Status != http.StatusCreated {
		t.Fatalf("create share: %d %s", r.Status, r.Body)
	}
	var sh api.Share
	r.JSON(t, &sh)
	token, _ := sh.Token.Get()
	link, _ := sh.Url.Get()
	path, ok := strings.CutPrefix(link, d.env.Config.PublicBaseURL)
	if !ok || token == "" {
		t.Fatalf("share url %q does not point at this server", link)
	}
	anonymous := d.env.Client(t)
	calls := []struct {
		name, method, path string
		secrets            []string
		want               string // what the line's path or query says instead
	}{
		{"the share's link", http.MethodGet, path, []string{token}, "/share/[redacted]"},
		{"a one-click unsubscribe", http.MethodPost, "/api/v1/unsubscribe?token=unsub-secret-1", []string{"unsub-secret-1"}, "token=[redacted]"},
		{"a sign-on's return", http.MethodGet, "/api/v1/me?code=code-secret-2&state=state-secret-3&invitation=inv-secret-4&email=ada%40secret.test",
			[]string{"code-secret-2", "state-secret-3", "inv-secret-4", "ada%40secret.test", "ada@secret.test"},
			"code=[redacted]&state=[redacted]&invitation=[redacted]&email=[redacted]"},
	}
	for _, call := range calls {
		res := anonymous.Do(call.method, call.path, nil)
		line := logs.requestLine(t, res.Header.Get("Trace-Id"))
		if got := line["path"].(string) + "?" + func() string { q, _ := line["query"].(string); return q }(); !strings.Contains(got, call.want) {
			t.Errorf("%s: the log line writes %q, want it to contain %q", call.name, got, call.want)
		}
		for _, s := range call.secrets {
			if all := logs.String(); strings.Contains(all, s) {
				t.Errorf("%s: the log holds %q", call.name, s)
			}
		}
	}
}

// TestAnswersCarryReferrerPolicyNoReferrer: a link followed from any
// answer (a share's page, the docs, a Problem) sends no Referer naming
// this server's URLs (docs/operations.md).
func TestAnswersCarryReferrerPolicyNoReferrer(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Rita Referrer")
	anonymous := env.Client(t)
	for _, call := range []struct {
		c    *testenv.Client
		path string
	}{{c, mePath}, {anonymous, mePath}, {c, "/docs"}, {c, "/openapi.yaml"}, {c, "/healthz"}, {c, "/api/v1/nope"}, {c, "/share/x"}} {
		if r := call.c.Do(http.MethodGet, call.path, nil); r.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s (%d): Referrer-Policy %q", call.path, r.Status, r.Header.Get("Referrer-Policy"))
		}
	}
}
