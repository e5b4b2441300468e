package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"creativeapi/internal/s3server"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

// lockedBuffer is a buffer a running command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// envOf is a getenv of vars and nothing else.
func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// serveUntilUp runs serve with args until it prints its URLs, stops it like
// SIGTERM would, and returns what it wrote to stderr.
func serveUntilUp(t *testing.T, vars map[string]string, args ...string) string {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var stdout, stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve"}, args...), envOf(vars), strings.NewReader(""), &stdout, &stderr)
	}()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(stderr.String(), "Docs") {
		select {
		case err := <-done:
			t.Fatalf("serve ended before serving: %v\n%s", err, stderr.String())
		case <-deadline:
			t.Fatalf("serve did not come up:\n%s", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	// The banner is one write; the blank line after it ends it.
	for !strings.HasSuffix(stderr.String(), "\n\n") {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	return stderr.String()
}

func TestWithoutDevModeServeRefusesWhatOnlyDevelopmentMayDo(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	tests := []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"no DATABASE_URL: no private PostgreSQL", map[string]string{}, []string{"serve"},
			"DATABASE_URL is not set: point it at your PostgreSQL, or set DEV_MODE=true to run a private development PostgreSQL under DATA_DIR"},
		{"no DATABASE_URL: the management commands refuse too", map[string]string{}, []string{"users", "list"},
			"DATABASE_URL is not set: point it at your PostgreSQL, or set DEV_MODE=true to run a private development PostgreSQL under DATA_DIR"},
		{"the development treasury", map[string]string{"DATABASE_URL": db.URL, "TREASURY_ADDRESS": tron.DevTreasuryAddress}, []string{"serve"},
			"TREASURY_ADDRESS=" + tron.DevTreasuryAddress + " is the development treasury, whose key nobody holds: configure your own address (or DEV_MODE=true on a development machine)"},
		{"the demo data on serve", map[string]string{"DATABASE_URL": db.URL}, []string{"serve", "--seed"},
			"the demo data (users with the published password demo-password-1) is for development only: set DEV_MODE=true"},
		{"the demo data on seed", map[string]string{"DATABASE_URL": db.URL}, []string{"seed"},
			"the demo data (users with the published password demo-password-1) is for development only: set DEV_MODE=true"},
		{"the chain simulator", map[string]string{"DATABASE_URL": db.URL}, []string{"serve", "--devchain"},
			"--devchain watches a simulated chain and is for development only: set DEV_MODE=true"},
		{"DEV_MODE=false is the default", map[string]string{"DEV_MODE": "false"}, []string{"serve"},
			"DATABASE_URL is not set: point it at your PostgreSQL, or set DEV_MODE=true to run a private development PostgreSQL under DATA_DIR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, envOf(tt.vars), strings.NewReader(""), &stdout, &stderr)
			if err == nil {
				t.Fatal("the command ran")
			}
			msg := strings.TrimPrefix(err.Error(), "invalid configuration:\n  ")
			if msg != tt.want || strings.Contains(msg, "\n") {
				t.Fatalf("got %q, want the one line %q", err, tt.want)
			}
		})
	}
	var users int
	if err := db.Pool.QueryRow(context.Background(), "SELECT count(*) FROM users").Scan(&users); err != nil || users != 0 {
		t.Fatalf("%d users after the refusals (%v)", users, err)
	}
}

func TestDemoLoginsArePrintedOnlyWhenTheDemoDataWasSeeded(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	vars := map[string]string{"DEV_MODE": "true", "DATABASE_URL": db.URL, "ADDR": "127.0.0.1:0", "LOG_LEVEL": "error"}
	if out := serveUntilUp(t, vars); strings.Contains(out, "Demo logins") || strings.Contains(out, "demo-password-1") {
		t.Errorf("serve without --seed printed the demo logins:\n%s", out)
	}
	out := serveUntilUp(t, vars, "--seed")
	if !strings.Contains(out, "Demo logins (password demo-password-1): admin@acme.test, reviewer@acme.test, author@acme.test, viewer@acme.test, admin@globex.test") {
		t.Errorf("serve --seed did not print the demo logins:\n%s", out)
	}
}

func TestDevModeServesOnThePrivatePostgreSQL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Reachable by the unprivileged user the cluster runs as under root, so
	// the cluster stays in dir and goes with it.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"DEV_MODE": "true", "DATA_DIR": dir, "ADDR": "127.0.0.1:0", "LOG_LEVEL": "error",
		"TREASURY_ADDRESS": tron.DevTreasuryAddress}
	if out := serveUntilUp(t, vars, "--migrate"); !strings.Contains(out, "API") {
		t.Fatalf("serve:\n%s", out)
	}
}

// TestDevModeStartsThePrivateStore: with the store's executable built,
// DEV_MODE serves uploads from a versitygw of its own under DATA_DIR/s3.
func TestDevModeStartsThePrivateStore(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin, err := s3server.Binary(context.Background(), goBin, root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := testenv.NewDB(t)
	vars := map[string]string{"DEV_MODE": "true", "DATABASE_URL": db.URL, "DATA_DIR": dir, "ADDR": "127.0.0.1:0",
		"LOG_LEVEL": "error", "S3_SERVER_BIN": bin}
	out := serveUntilUp(t, vars)
	if !regexp.MustCompile(`Store http://127\.0\.0\.1:\d+ \(S3, bucket creatives, data `).MatchString(out) {
		t.Fatalf("serve did not start the private store:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "s3", "objects", "creatives")); err != nil {
		t.Fatalf("no bucket under DATA_DIR/s3: %v", err)
	}
}

// TestACleanShutdownWritesEveryRequestLine: the log is buffered (a write
// per batch, not per request), and a SIGTERM still leaves every request's
// line, and the shutdown's own lines, on stdout.
func TestACleanShutdownWritesEveryRequestLine(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	vars := map[string]string{"DEV_MODE": "true", "DATABASE_URL": db.URL, "ADDR": "127.0.0.1:0"}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var stdout, stderr lockedBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, envOf(vars), strings.NewReader(""), &stdout, &stderr) }()
	api := regexp.MustCompile(`API\s+(http://\S+)/api/v1`)
	deadline := time.After(30 * time.Second)
	var base string
	for base == "" {
		if m := api.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended before serving: %v\n%s", err, stderr.String())
		case <-deadline:
			t.Fatalf("serve did not come up:\n%s", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	const requests = 50
	for range requests {
		res, err := http.Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	out := stdout.String()
	if n := strings.Count(out, `"msg":"request"`); n != requests {
		t.Errorf("%d request lines, want %d", n, requests)
	}
	// What stops after the HTTP server (the event workers) logs after
	// "stopped": the log is written out last.
	if !strings.Contains(out, `"msg":"stopped"}`) || !strings.Contains(out, `"msg":"River client stopped"`) {
		t.Errorf("the shutdown's lines are missing:\n%s", out[max(0, len(out)-500):])
	}
}
