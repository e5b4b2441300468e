package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// toolTimeout bounds every external tool (tsc, node, Prism) so a hung child
// fails the test instead of the whole binary's deadline.
const toolTimeout = 3 * time.Minute

// repoRoot is the module root, where package.json and node_modules live.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found from the package directory: %v", err)
	}
	return root
}

// requireNode returns node's path and the repository root, skipping the test
// when node is not installed (the only reason to skip: CI has it) and failing
// when the npm packages are missing, since `make deps` installs them.
func requireNode(t *testing.T) (node, root string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: this test needs Node 20.19+ (apt-get install -y nodejs npm), then `make deps`")
	}
	root = repoRoot(t)
	for _, bin := range []string{"tsc", "prism"} {
		if _, err := os.Stat(filepath.Join(root, "node_modules", ".bin", bin)); err != nil {
			t.Fatalf("node_modules/.bin/%s is missing: run `make deps` (or `sh scripts/npm-ci.sh`)", bin)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "playwright-core")); err != nil {
		t.Fatal("node_modules/playwright-core is missing: run `make deps` (or `sh scripts/npm-ci.sh`)")
	}
	return node, root
}

// runTool runs a command in dir with extra environment variables and fails
// the test with its combined output when it exits non-zero.
func runTool(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, out)
	}
	return string(out)
}
