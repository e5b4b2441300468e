package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFrontendInstallsThePackedClient packs @creativeapi/client as `make
// client-pack` does, installs the tarball into a frontend project outside
// the repository (testdata/consumer, copied to a temporary directory),
// type-checks the project against the installed package as a bundler and
// as node resolve it, and a Node-only project (no DOM library) under the
// strictest settings (src/strict-types.ts: the answers are the exported
// named types), then runs its program against a real seeded server:
// sign in, list creatives, an action sent twice with one Idempotency-Key, a
// deposit and a typed 422. A file, type or export missing from the package
// fails the type check or the run. npm takes from the registry only what
// its cache lacks (openapi-fetch's metadata, the first time).
func TestFrontendInstallsThePackedClient(t *testing.T) {
	t.Parallel()
	node, root := requireNode(t)
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal("npm is not installed (it comes with node: apt-get install -y npm)")
	}
	tsc := filepath.Join(root, "node_modules", "typescript", "bin", "tsc")

	out := runTool(t, root, nil, "sh", filepath.Join("scripts", "pack-client.sh"), t.TempDir())
	lines := strings.Split(strings.TrimSpace(out), "\n")
	tarball := lines[len(lines)-1]
	if !strings.HasSuffix(tarball, ".tgz") {
		t.Fatalf("pack-client printed no tarball:\n%s", out)
	}

	app := t.TempDir()
	if err := os.CopyFS(app, os.DirFS(filepath.Join(root, "internal", "e2e", "testdata", "consumer"))); err != nil {
		t.Fatal(err)
	}
	npmEnv := []string{"NODE_OPTIONS=", "npm_config_update_notifier=false"}
	runTool(t, app, npmEnv, npm, "install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", tarball)
	runTool(t, app, nil, node, tsc, "-p", "tsconfig.nodenext.json")
	runTool(t, app, nil, node, tsc, "-p", "tsconfig.node.json")
	runTool(t, app, nil, node, tsc, "-p", "tsconfig.json")

	t.Run("a package without its declarations fails the type check", func(t *testing.T) {
		// The check above is only worth something if it reads the package's
		// declarations: without them the same project must not compile.
		broken := t.TempDir()
		if err := os.CopyFS(broken, os.DirFS(app)); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(broken, "node_modules", "@creativeapi", "client", "dist", "client.d.ts")); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(t.Context(), node, tsc, "-p", "tsconfig.json", "--noEmit")
		cmd.Dir = broken
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "@creativeapi/client") {
			t.Fatalf("tsc accepted the project without the package's declarations (err %v):\n%s", err, out)
		}
	})

	t.Run("the program runs against the server", func(t *testing.T) {
		base := checkingProxy(t, seededServer(t, nil).Server.URL)
		out := runTool(t, app, []string{"API_BASE_URL=" + base, "NODE_OPTIONS="}, node, filepath.Join("out", "main.js"))
		if !strings.Contains(out, "consumer: ok") {
			t.Fatalf("the program did not finish:\n%s", out)
		}
		t.Log(strings.TrimSpace(out))
	})
}

// TestREADMEsShowTheCheckedExample: the client example of the repository's
// README and of the package's README is testdata/consumer's
// readme-example.ts, which the consumer test type-checks against the
// installed package.
func TestREADMEsShowTheCheckedExample(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "internal", "e2e", "testdata", "consumer", "src", "readme-example.ts"))
	if err != nil {
		t.Fatal(err)
	}
	example := string(b)
	example = example[strings.Index(example, "import "):]
	for _, readme := range []string{"README.md", filepath.Join("clients", "typescript", "README.md")} {
		text, err := os.ReadFile(filepath.Join(root, readme))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), "```ts\n"+example+"```\n") {
			t.Errorf("%s does not show readme-example.ts as its TypeScript example:\n%s", readme, example)
		}
	}
	// docs/frontend.md's upload example is upload-example.ts.
	b, err = os.ReadFile(filepath.Join(root, "internal", "e2e", "testdata", "consumer", "src", "upload-example.ts"))
	if err != nil {
		t.Fatal(err)
	}
	example = string(b)[strings.Index(string(b), "import "):]
	if text, err := os.ReadFile(filepath.Join(root, "docs", "frontend.md")); err != nil || !strings.Contains(string(text), "```ts\n"+example+"```\n") {
		t.Errorf("docs/frontend.md does not show upload-example.ts as its upload example (%v):\n%s", err, example)
	}
	// The package's live stream example is stream-example.ts.
	b, err = os.ReadFile(filepath.Join(root, "internal", "e2e", "testdata", "consumer", "src", "stream-example.ts"))
	if err != nil {
		t.Fatal(err)
	}
	example = string(b)[strings.Index(string(b), "import "):]
	text, err := os.ReadFile(filepath.Join(root, "clients", "typescript", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "```ts\n"+example+"```\n") {
		t.Errorf("the package README does not show stream-example.ts as its stream example:\n%s", example)
	}
}

// TestNpmPackInTheFreshPackageFolderMakesThePackage: in
// clients/typescript as a fresh clone has it (no dist/, no node_modules),
// `npm install && npm pack` makes the real package: prepack builds the
// ES modules and their declarations with the package's own dev
// dependencies, nothing from the repository's Node tools.
func TestNpmPackInTheFreshPackageFolderMakesThePackage(t *testing.T) {
	t.Parallel()
	_, root := requireNode(t)
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal("npm is not installed (it comes with node: apt-get install -y npm)")
	}
	fresh := filepath.Join(t.TempDir(), "clients", "typescript")
	src := filepath.Join(root, "clients", "typescript")
	for _, f := range []string{"package.json", "README.md", "tsconfig.json", "tsconfig.build.json", "src/client.ts", "src/schema.ts"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(fresh, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fresh, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	npmEnv := []string{"NODE_OPTIONS=", "npm_config_update_notifier=false"}
	runTool(t, fresh, npmEnv, npm, "install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error")
	out := runTool(t, fresh, npmEnv, npm, "pack", "--dry-run", "--json", "--loglevel=error")
	for _, want := range []string{`"dist/client.js"`, `"dist/client.d.ts"`, `"dist/schema.d.ts"`, `"package.json"`} {
		if !strings.Contains(out, want) {
			t.Errorf("npm pack in a fresh package folder lacks %s:\n%s", want, out)
		}
	}
}

// TestTheClientRunsInNode runs the package README's server-side recipe
// (testdata/node-ssr, under node --test) with the packed client against a
// real seeded server: Node's fetch keeps no cookies and Node has no
// EventSource, so a cookie jar (fetch-cookie) and an EventSource
// (eventsource) from npm are passed in; headers forward a session (SSR).
// npm takes those two packages from the registry the first time.
func TestTheClientRunsInNode(t *testing.T) {
	t.Parallel()
	node, root := requireNode(t)
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal("npm is not installed (it comes with node: apt-get install -y npm)")
	}
	out := runTool(t, root, nil, "sh", filepath.Join("scripts", "pack-client.sh"), t.TempDir())
	lines := strings.Split(strings.TrimSpace(out), "\n")
	tarball := lines[len(lines)-1]
	if !strings.HasSuffix(tarball, ".tgz") {
		t.Fatalf("pack-client printed no tarball:\n%s", out)
	}
	app := t.TempDir()
	if err := os.CopyFS(app, os.DirFS(filepath.Join(root, "internal", "e2e", "testdata", "node-ssr"))); err != nil {
		t.Fatal(err)
	}
	npmEnv := []string{"NODE_OPTIONS=", "npm_config_update_notifier=false"}
	runTool(t, app, npmEnv, npm, "install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", tarball)

	base := checkingProxy(t, seededServer(t, nil).Server.URL)
	out = runTool(t, app, []string{"API_BASE_URL=" + base, "NODE_OPTIONS="}, node, "--test", "--test-reporter=spec", "ssr.test.mjs")
	if !strings.Contains(out, "pass 4") || !strings.Contains(out, "fail 0") {
		t.Fatalf("node --test:\n%s", out)
	}
	t.Log(strings.TrimSpace(out))
}
