package e2e_test

import (
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"creativeapi/internal/seed"
	"creativeapi/internal/testenv"
)

// TestTypeScriptClient runs clients/typescript/test under node's test runner
// with the real client wrapper against a real server on seeded demo data:
// once directly and once through Prism's validating proxy, where any
// sl-violations header fails it. Both runs go through a Go proxy that
// validates every answer against openapi.yaml as the Go tests do.
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	node, root := requireNode(t)
	tests := compileClientTests(t, node, root)

	t.Run("direct", func(t *testing.T) {
		t.Parallel()
		env := seededServer(t, nil)
		base := checkingProxy(t, env.Server.URL)
		out := runNodeTests(t, node, tests, base, testenv.StartChain(t, env), false)
		t.Log(summaryLine(out))
	})

	t.Run("through Prism", func(t *testing.T) {
		t.Parallel()
		// Production cookies: Prism checks the spec's __Host-session name.
		env := seededServer(t, map[string]string{"COOKIE_SECURE": "true"})
		base := startPrism(t, root, checkingProxy(t, env.Server.URL))
		out := runNodeTests(t, node, tests, base, testenv.StartChain(t, env), true)
		m := prismViolations.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("the client test printed no prism-violations line:\n%s", out)
		}
		t.Logf("prism-violations: %s (%s)", m[1], summaryLine(out))
	})
}

// prismViolations is the count the client test prints when PRISM=1.
var prismViolations = regexp.MustCompile(`prism-violations: (\d+) of \d+ exchanges`)

// seededServer starts the real server on a fresh database with the demo data
// (the accounts and creatives the client test signs in as and acts on);
// config overrides testenv.TestEnv. Deposits need three confirmations, so
// the chain of testenv.StartChain credits them quickly.
func seededServer(t *testing.T, config map[string]string) *testenv.Env {
	t.Helper()
	vars := map[string]string{"DEPOSIT_CONFIRMATIONS": "3"}
	maps.Copy(vars, config)
	// Events: the client test reads the live stream; Objects: the upload test.
	// Mail: a guest proves their email with a code the client's test reads
	// from Mailpit (MAILPIT_URL).
	env := testenv.New(t, testenv.Options{Env: vars, Events: true, Objects: true, Mail: true})
	if err := seed.Run(t.Context(), env.DB.Store, slog.New(slog.NewTextHandler(io.Discard, nil)), seed.Options{}); err != nil {
		t.Fatalf("seed the demo data: %v", err)
	}
	return env
}

// compileClientTests type-checks the client and its tests with
// clients/typescript/tsconfig.test.json and emits them as ES modules into a
// temporary directory that resolves packages from the repository's
// node_modules. It returns the compiled test files (client.test.js, the
// review loop, and any other *.test.js).
func compileClientTests(t *testing.T, node, root string) []string {
	t.Helper()
	out := t.TempDir()
	runTool(t, root, nil, node, filepath.Join(root, "node_modules", "typescript", "bin", "tsc"),
		"-p", filepath.Join("clients", "typescript", "tsconfig.test.json"), "--outDir", out)
	if err := os.WriteFile(filepath.Join(out, "package.json"), []byte(`{"type":"module"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "node_modules"), filepath.Join(out, "node_modules")); err != nil {
		t.Fatal(err)
	}
	tests, err := filepath.Glob(filepath.Join(out, "test", "*.test.js"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"client.test.js", "review-loop.test.js", "comment-thread.test.js", "guest-review.test.js"} {
		if !slices.Contains(tests, filepath.Join(out, "test", name)) {
			t.Fatalf("tsc did not emit %s: %v", name, tests)
		}
	}
	return tests
}

// runNodeTests runs the compiled client tests with node's test runner
// against base, paying deposits on the chain simulator at chain, and fails
// with node's output when any test fails.
func runNodeTests(t *testing.T, node string, tests []string, base, chain string, prism bool) string {
	t.Helper()
	env := []string{"API_BASE_URL=" + base, "DEVCHAIN_URL=" + chain, "PRISM=0", "NODE_OPTIONS=",
		"MAILPIT_URL=" + testenv.NewMailServer(t).WebURL}
	if prism {
		env[2] = "PRISM=1"
	}
	out := runTool(t, filepath.Dir(tests[0]), env, node, append([]string{"--test", "--test-reporter=spec"}, tests...)...)
	if testing.Verbose() {
		t.Logf("node --test:\n%s", out)
	}
	return out
}

// summaryLine is node's "ℹ pass N" line, for the log.
func summaryLine(out string) string {
	if m := regexp.MustCompile(`ℹ pass \d+`).FindString(out); m != "" {
		return m
	}
	return "no summary"
}
