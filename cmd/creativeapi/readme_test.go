package main

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"creativeapi/internal/s3server"
	"creativeapi/internal/tron"
)

// readmeNotRun lists the README's command blocks this test does not run,
// each by its first line, with the reason. A block neither run nor listed
// here cannot be added: TestEveryREADMECommandBlockRuns runs every other.
var readmeNotRun = map[string]string{
	"make run    # development server (DEV_MODE): private PostgreSQL under .data/, migrations, demo data, API on http://localhost:8080; make stop (or Ctrl-C) stops it": "" +
		"make run is what this test stands in for (it runs the same serve --migrate --seed --devchain of a built binary, with " +
		"make run's switches), and make test is what runs this test",
}

// readmeChecks are what the blocks holding a string must leave behind
// beyond running without a failure; out is what the block printed.
var readmeChecks = []struct {
	holds string
	check func(t *testing.T, dir, out string)
}{
	{"back.png", func(t *testing.T, dir, out string) {
		if sent, got := readFile(t, dir, "banner.png"), readFile(t, dir, "back.png"); !bytes.Equal(sent, got) {
			t.Errorf("the file downloaded through /content is not the one uploaded (%d and %d bytes)", len(sent), len(got))
		}
	}},
	{"transfers settle", func(t *testing.T, dir, out string) {
		for _, want := range []string{"under_review", "settled: credit", "settled: refund"} {
			if !strings.Contains(out, want) {
				t.Errorf("the late, short and unmatched payments did not print %q:\n%s", want, out)
			}
		}
		if n := strings.Count(out, "settled: credit"); n != 2 {
			t.Errorf("%d credits, want 2 (late and short):\n%s", n, out)
		}
	}},
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// commandBlocks returns the fenced blocks of a Markdown text that hold
// commands (sh, bash, shell, console, or no language), in order.
func commandBlocks(text string) []string {
	var blocks []string
	for {
		_, rest, ok := strings.Cut(text, "```")
		if !ok {
			return blocks
		}
		info, rest, _ := strings.Cut(rest, "\n")
		body, after, ok := strings.Cut(rest, "```")
		if !ok {
			return blocks
		}
		switch strings.TrimSpace(info) {
		case "", "sh", "bash", "shell", "console":
			blocks = append(blocks, body)
		}
		text = after
	}
}

// freePort is a loopback port nothing listens on (now).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestEveryREADMECommandBlockRuns runs each command block of the README,
// as a newcomer would, in one directory beside a development server
// started as make run starts it (the built binary's serve --migrate
// --seed --devchain with DEV_MODE: its private PostgreSQL, S3 store and
// chain simulator under the directory's .data;
// the chain mines faster and deposits expire sooner so the walk-throughs
// take seconds). Each block runs under bash -e -o pipefail with curl set
// to fail on an error status, so a command that fails fails the test; the
// only change made to a block is the API's address. The README's
// ./bin/creativeapi commands find the server through .data/run.json, as
// its rule says (DEV_MODE=true, nothing else). Email is off: the email
// block's commands are API calls whose answers are checked like the rest.
func TestEveryREADMECommandBlockRuns(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "jq", "sha256sum", "od"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's blocks need %s: %v", tool, err)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := commandBlocks(string(text))
	firstLines := map[string]bool{}
	for _, b := range blocks {
		firstLines[strings.SplitN(b, "\n", 2)[0]] = true
	}
	for line := range readmeNotRun {
		if !firstLines[line] {
			t.Errorf("readmeNotRun lists a block the README no longer has: %q", line)
		}
	}

	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "bin", "creativeapi")
	build := exec.Command(goBin, "build", "-o", bin, "./cmd/creativeapi")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	s3Bin, err := s3server.Binary(context.Background(), goBin, root)
	if err != nil {
		t.Fatal(err)
	}
	// The upload block's banner.png, a PNG of the reader's.
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 300, 250))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "banner.png"), img.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// curl fails on an error status in every block (curl reads .curlrc
	// from CURL_HOME).
	if err := os.WriteFile(filepath.Join(dir, ".curlrc"), []byte("fail-with-body\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The API at the address make run prints (a loopback ADDR is named
	// localhost), on a port of the test's.
	port := strconv.Itoa(freePort(t))
	api := "http://localhost:" + port
	server := exec.Command(bin, "serve", "--migrate", "--seed", "--devchain")
	server.Dir = dir
	server.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"DEV_MODE=true", "COOKIE_SECURE=false", "TREASURY_ADDRESS=" + tron.DevTreasuryAddress,
		"ADDR=127.0.0.1:" + port, "DEVCHAIN_ADDR=127.0.0.1:0",
		"S3_SERVER_BIN=" + s3Bin, "MAIL_SERVER_BIN=" + filepath.Join(dir, "no-mailpit"), "LOG_LEVEL=error",
		"DEVCHAIN_BLOCK_INTERVAL=100ms", "CHAIN_POLL_INTERVAL=100ms", "DEPOSIT_TTL=15s"}
	var stderr lockedBuffer
	server.Stderr = &stderr
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- server.Wait() }()
	t.Cleanup(func() {
		_ = server.Process.Signal(syscall.SIGTERM)
		select {
		case <-stopped:
		case <-time.After(30 * time.Second):
			_ = server.Process.Kill()
			<-stopped
		}
	})
	deadline := time.After(2 * time.Minute)
	for !strings.HasSuffix(stderr.String(), "\n\n") {
		select {
		case err := <-stopped:
			t.Fatalf("serve ended before serving: %v\n%s", err, stderr.String())
		case <-deadline:
			t.Fatalf("serve did not come up:\n%s", stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}

	for i, block := range blocks {
		first := strings.SplitN(block, "\n", 2)[0]
		if _, listed := readmeNotRun[first]; listed {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		sh := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", strings.ReplaceAll(block, "http://localhost:8080", api))
		sh.Dir = dir
		sh.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "CURL_HOME=" + dir}
		sh.WaitDelay = 5 * time.Second
		var out bytes.Buffer
		sh.Stdout, sh.Stderr = &out, &out
		err := sh.Run()
		cancel()
		if err != nil {
			t.Errorf("README command block %d failed (%v); it printed:\n%s\nthe block:\n%s", i+1, err, out.String(), block)
			continue
		}
		for _, c := range readmeChecks {
			if strings.Contains(block, c.holds) {
				c.check(t, dir, out.String())
			}
		}
	}
}
