package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"creativeapi/internal/testenv"
)

// checkingProxy forwards to target and validates every answer against
// openapi.yaml with the harness's own check, so the node client's traffic is
// held to the same contract as the Go tests' and its (operation, status)
// pairs count for the contract coverage test.
func checkingProxy(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(res *http.Response) error {
		if res.Header.Get("Content-Type") == "text/event-stream" {
			// A live stream passes through as it comes (the proxy flushes
			// each event) and is checked when it ends.
			res.Body = &checkedStream{ReadCloser: res.Body, check: func(body []byte) {
				resp := &testenv.Response{Status: res.StatusCode, Header: res.Header, Body: body}
				if err := testenv.CheckResponse(res.Request, resp, t.Name()); err != nil {
					t.Errorf("%s %s → %d does not match openapi.yaml: %v\nbody: %s", res.Request.Method, res.Request.URL.Path, res.StatusCode, err, body)
				}
			}}
			return nil
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return err
		}
		res.Body = io.NopCloser(bytes.NewReader(body))
		resp := &testenv.Response{Status: res.StatusCode, Header: res.Header, Body: body}
		if err := testenv.CheckResponse(res.Request, resp, t.Name()); err != nil {
			t.Errorf("%s %s → %d does not match openapi.yaml: %v\nbody: %s", res.Request.Method, res.Request.URL.Path, res.StatusCode, err, body)
		}
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// checkedStream records a streamed body and checks it once closed.
type checkedStream struct {
	io.ReadCloser
	mu    sync.Mutex
	body  []byte
	check func([]byte)
	once  sync.Once
}

func (c *checkedStream) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.mu.Lock()
	c.body = append(c.body, p[:n]...)
	c.mu.Unlock()
	return n, err
}

func (c *checkedStream) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.check(c.body)
	})
	return err
}

// prismListening is the line Prism logs once its proxy accepts requests.
const prismListening = "Prism is listening on"

// startPrism runs Prism's validating proxy (`prism proxy --errors`) for
// openapi.yaml in front of upstream, stopped when the test ends, and
// returns its base URL.
func startPrism(t *testing.T, root, upstream string) string {
	t.Helper()
	return runPrism(t, root, "proxy", "openapi.yaml", upstream, "--errors")
}

// runPrism runs Prism with args (a mode, the spec, its options), stopped
// when the test ends, and returns its base URL. Prism binds port 0 and
// logs the port it got, so no other process can take the port between
// choosing and binding it.
func runPrism(t *testing.T, root string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	cmd := exec.CommandContext(ctx, filepath.Join(root, "node_modules", ".bin", "prism"),
		append(args, "--host", "127.0.0.1", "--port", "0")...)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prism: %v", err)
	}

	var (
		mu  sync.Mutex
		log strings.Builder
	)
	ready := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		signalled := false
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if _, url, ok := strings.Cut(sc.Text(), prismListening+" "); ok && !signalled {
				signalled = true
				ready <- strings.TrimSpace(url)
			}
		}
	}()
	output := func() string {
		mu.Lock()
		defer mu.Unlock()
		return log.String()
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		_ = cmd.Wait()
		cancel()
		if t.Failed() {
			t.Logf("prism output:\n%s", output())
		}
	})

	select {
	case url := <-ready:
		return url
	case <-done:
		t.Fatalf("prism exited before listening:\n%s", output())
	case <-ctx.Done():
		t.Fatalf("prism did not start within %s:\n%s", toolTimeout, output())
	}
	return ""
}
