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

	"creativeapi/internal/config"
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
	if !strings.Contains(out, "Demo logins (password demo-password-1): admin@acme.test, reviewer@acme.test, author@acme.test, viewer@acme.test, admin@globex.test, operator@creativeapi.test") {
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

func TestWithoutDevModeEveryCommandRefusesADevelopmentDatabase(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"seed"}, envOf(map[string]string{"DEV_MODE": "true", "DATABASE_URL": db.URL, "LOG_LEVEL": "error"}),
		strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("seed: %v\n%s", err, stderr.String())
	}
	production := envOf(map[string]string{"DATABASE_URL": db.URL, "LOG_LEVEL": "error", "ADDR": "127.0.0.1:0"})
	for _, args := range [][]string{{"serve"}, {"serve", "--migrate"}, {"migrate"}, {"users", "list"}} {
		err := run(context.Background(), args, production, strings.NewReader(""), &stdout, &stderr)
		if err == nil || err.Error() != errDevelopmentDatabase.Error() || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v without DEV_MODE: %v, want the one line %q", args, err, errDevelopmentDatabase)
		}
	}
	if !strings.Contains(errDevelopmentDatabase.Error(), "start over on a new empty database") {
		t.Errorf("the refusal does not say how to start over: %q", errDevelopmentDatabase)
	}
	development := envOf(map[string]string{"DEV_MODE": "true", "DATABASE_URL": db.URL, "LOG_LEVEL": "error"})
	if err := run(context.Background(), []string{"users", "list"}, development, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("users list with DEV_MODE: %v", err)
	}
}

func TestADatabaseSeededBeforeTheMarkIsMarkedByItsMigration(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := context.Background()
	var stdout, stderr bytes.Buffer
	if err := run(ctx, []string{"seed"}, envOf(map[string]string{"DEV_MODE": "true", "DATABASE_URL": db.URL, "LOG_LEVEL": "error"}),
		strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("seed: %v", err)
	}
	body, err := os.ReadFile("../../migrations/0013_development_database.sql")
	if err != nil {
		t.Fatal(err)
	}
	// As the database was before migration 0013: seeded, without a mark.
	if _, err := db.Pool.Exec(ctx, "DROP TABLE development_database"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, string(body)); err != nil {
		t.Fatal(err)
	}
	var marked bool
	if err := db.Pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM development_database)").Scan(&marked); err != nil || !marked {
		t.Fatalf("marked %v (%v), want the seeded database marked", marked, err)
	}
}

func TestASecureCookieBehindPlainHTTPIsWarnedAbout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		secure bool
		base   string
		warn   bool
	}{
		{true, "http://api.example.com", true},
		{true, "HTTP://api.example.com:8080", true},
		{true, "https://api.example.com", false},
		{false, "http://api.example.com", false},
		{true, "http://127.0.0.1:8080", false}, // browsers count loopback as secure
		{true, "http://localhost:8080", false},
		{true, "http://[::1]:8080", false},
	} {
		cfg := config.Config{CookieSecure: tc.secure, PublicBaseURL: tc.base}
		if got := cookieNeverComesBack(cfg); got != tc.warn {
			t.Errorf("COOKIE_SECURE=%v PUBLIC_BASE_URL=%s: warn %v, want %v", tc.secure, tc.base, got, tc.warn)
		}
	}
}

// TestCommandsUseTheRunningDevelopmentServer: while a development server
// runs, the operator commands use its private PostgreSQL and its chain
// simulator (no second cluster, no file of the running one touched), and
// `dev status` says what runs where.
func TestCommandsUseTheRunningDevelopmentServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"DEV_MODE": "true", "DATA_DIR": dir, "ADDR": "127.0.0.1:0", "LOG_LEVEL": "error",
		"TREASURY_ADDRESS": tron.DevTreasuryAddress, "DEVCHAIN_ADDR": "127.0.0.1:0"}
	command := func(args ...string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, envOf(vars), strings.NewReader(""), &stdout, &stderr)
		return stdout.String(), stderr.String(), err
	}
	if _, _, err := command("dev", "status"); err == nil || !strings.Contains(err.Error(), "no development server runs") {
		t.Fatalf("dev status before serve: %v", err)
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--migrate", "--devchain"}, envOf(vars), strings.NewReader(""), io.Discard, &stderr)
	}()
	deadline := time.After(60 * time.Second)
	for !strings.HasSuffix(stderr.String(), "\n\n") {
		select {
		case err := <-done:
			t.Fatalf("serve ended before serving: %v\n%s", err, stderr.String())
		case <-deadline:
			t.Fatalf("serve did not come up:\n%s", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	banner := stderr.String()
	hba := filepath.Join(dir, "postgres", "pg_hba.conf")
	before, err := os.Stat(hba)
	if err != nil {
		t.Fatal(err)
	}

	status, _, err := command("dev", "status")
	if err != nil {
		t.Fatalf("dev status: %v", err)
	}
	api := regexp.MustCompile(`API\s+(http://\S+)`).FindStringSubmatch(banner)
	chain := regexp.MustCompile(`Chain (http://\S+)`).FindStringSubmatch(banner)
	if api == nil || chain == nil || !strings.Contains(status, api[1]) || !strings.Contains(status, chain[1]) ||
		!regexp.MustCompile(`Database\s+postgres://creativeapi:\S+@127\.0\.0\.1:\d+/creativeapi`).MatchString(status) {
		t.Errorf("dev status:\n%s\nbanner:\n%s", status, banner)
	}
	if out, _, err := command("users", "list"); err != nil || !strings.HasPrefix(out, "ID") {
		t.Errorf("users list while serve runs: %v\n%s", err, out)
	}
	// DEVCHAIN_ADDR ends in :0: only the running server's simulator answers.
	if out, _, err := command("devchain", "pay", "--amount-minor", "10000001"); err != nil || !strings.Contains(out, "paid 10.000001 USDT") {
		t.Errorf("devchain pay while serve runs: %v\n%s", err, out)
	}
	// A second server on the same DATA_DIR refuses before touching the cluster.
	if err := run(ctx, []string{"serve"}, envOf(vars), strings.NewReader(""), io.Discard, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "already running") {
		t.Errorf("a second serve on the same DATA_DIR: %v", err)
	}
	after, err := os.Stat(hba)
	if err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("pg_hba.conf of the running cluster was rewritten (%v, %v)", before.ModTime(), after.ModTime())
	}

	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, runStateFile)); !os.IsNotExist(err) {
		t.Errorf("%s outlived the server: %v", runStateFile, err)
	}
}
