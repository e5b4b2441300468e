package testenv

import (
	osexec "os/exec"
	"path/filepath"
	"testing"
)

// BuildServer builds cmd/creativeapi into the test's temporary directory,
// for tests that run the binary as its own process.
func BuildServer(t testing.TB) string {
	t.Helper()
	// `go test` puts its own go command first on the PATH of test binaries.
	goBin, err := osexec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "creativeapi")
	cmd := osexec.Command(goBin, "build", "-o", bin, "creativeapi/cmd/creativeapi")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
