package reliability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// soak reports whether the long runs were asked for (SOAK=1, make soak).
func soak() bool { return os.Getenv("SOAK") == "1" }

// server is the binary running as a child process on a fixed address, so
// a restarted process serves the same URL. The test binds the address and
// hands the socket over (LISTEN_FDS), so no other process can take the
// port between choosing it and serving on it.
type server struct {
	t    *testing.T
	bin  string
	addr string
	env  []string
	logs *os.File

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	exit *os.ProcessState
	// up is closed while the process serves; restart replaces it first, so
	// a client that lost its connection waits for the next process.
	up chan struct{}
}

// startServer runs the binary on the test database dbURL (cloned from the
// migrated template: the binary migrates nothing) with vars added to the
// test configuration.
func startServer(t *testing.T, bin, dbURL string, vars map[string]string) *server {
	t.Helper()
	logs, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, bin: bin, addr: "127.0.0.1:0", logs: logs, up: make(chan struct{})}
	ln := s.listen()
	s.addr = ln.Addr().String()
	config := map[string]string{
		"DEV_MODE": "true", "LISTEN_FDS": "1", "DATABASE_URL": dbURL, "COOKIE_SECURE": "false", "PUBLIC_BASE_URL": "http://api.test",
		"TREASURY_ADDRESS": tron.DevTreasuryAddress, "LOG_LEVEL": "warn", "SHUTDOWN_TIMEOUT": "30s",
		// No chain to watch unless a test gives one: the watcher's polls are
		// refused at once instead of looking TronGrid up.
		"TRON_API_URL": "http://127.0.0.1:9",
		// Load from a few users, far over a person's budget: no limits.
		"RATE_LIMIT_READS_PER_MINUTE": "0", "RATE_LIMIT_COMMANDS_PER_MINUTE": "0",
	}
	for k, v := range vars {
		config[k] = v
	}
	s.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range config {
		s.env = append(s.env, k+"="+v)
	}
	t.Cleanup(func() {
		s.mu.Lock()
		running := s.cmd != nil && s.exit == nil
		s.mu.Unlock()
		if running {
			s.signal(syscall.SIGKILL)
			<-s.done
		}
		if t.Failed() {
			out, _ := os.ReadFile(logs.Name())
			t.Logf("server log (last 4 KiB):\n%s", tail(out, 4096))
		}
		logs.Close()
	})
	s.startOn(ln)
	return s
}

// readiness asks a starting process for /healthz: a connection accepted
// into the backlog of a process that stalls must not hang the test.
var readiness = &http.Client{Timeout: 5 * time.Second}

// listen binds the server's address.
func (s *server) listen() *net.TCPListener {
	s.t.Helper()
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		s.t.Fatalf("bind %s for the server: %v", s.addr, err)
	}
	return ln.(*net.TCPListener)
}

// start runs a new process on the server's address (bound again: a
// restart after the last process released it) and returns once it
// answers /healthz.
func (s *server) start() {
	s.t.Helper()
	s.startOn(s.listen())
}

// startOn runs a new process serving on ln, which it takes over.
func (s *server) startOn(ln *net.TCPListener) {
	s.t.Helper()
	socket, err := ln.File()
	ln.Close() // the copy in socket stays open
	if err != nil {
		s.t.Fatal(err)
	}
	cmd := exec.Command(s.bin, "serve")
	cmd.Env = s.env
	cmd.ExtraFiles = []*os.File{socket}
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	// The server dies with the test binary, whatever happens to it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	// Only the process holds the socket now: if it dies, connections are
	// refused instead of waiting in the backlog.
	socket.Close()
	if err != nil {
		s.t.Fatal(err)
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.cmd, s.done, s.exit = cmd, done, nil
	s.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		s.mu.Lock()
		s.exit = cmd.ProcessState
		s.mu.Unlock()
		close(done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := readiness.Get(s.url("/healthz"))
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-done:
			s.t.Fatalf("the server exited during start-up: %v", s.exit)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the server did not answer /healthz within 30s: %v", err)
		}
	}
	s.mu.Lock()
	close(s.up)
	s.mu.Unlock()
}

// kill ends the process with SIGKILL (no cleanup of any kind) and waits
// for it; clients block in waitUp until restart.
func (s *server) kill() {
	s.mu.Lock()
	s.up = make(chan struct{})
	s.mu.Unlock()
	s.signal(syscall.SIGKILL)
	<-s.done
}

func (s *server) signal(sig syscall.Signal) {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	_ = cmd.Process.Signal(sig)
}

// wait waits for the process to exit, at most limit, and returns its state.
func (s *server) wait(limit time.Duration) *os.ProcessState {
	s.t.Helper()
	select {
	case <-s.done:
	case <-time.After(limit):
		s.t.Fatalf("the server did not exit within %s", limit)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exit
}

// pid is the running process's id, 0 once it exited.
func (s *server) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exit != nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// waitUp blocks until a process serves.
func (s *server) waitUp() {
	s.mu.Lock()
	up := s.up
	s.mu.Unlock()
	<-up
}

func (s *server) url(path string) string { return "http://" + s.addr + path }

// session is a signed-in caller of the binary.
type session struct {
	user        uuid.UUID
	token, csrf string
}

// newSession inserts a live session of user.
func newSession(t *testing.T, d *testenv.DB, user uuid.UUID) session {
	t.Helper()
	s := session{user: user}
	s.token, s.csrf = d.Session(t, user)
	return s
}

// httpClient is shared by the process tests; its timeout only stops a hung
// test, it is never what a test measures.
var httpClient = &http.Client{
	Timeout:   60 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true},
}

// call is one request to the binary.
type call struct {
	method, path string
	body         any
	key          string
}

// do sends c as s; a transport error (the process is gone) is returned, an
// answer is validated against openapi.yaml.
func (srv *server) do(ctx context.Context, s *session, c call) (*testenv.Response, error) {
	var rd io.Reader
	if c.body != nil {
		b, err := json.Marshal(c.body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, srv.url(c.path), rd)
	if err != nil {
		return nil, err
	}
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s != nil {
		req.Header.Set("Cookie", "session="+s.token)
		req.Header.Set("X-CSRF-Token", s.csrf)
	}
	if c.key != "" {
		req.Header.Set("Idempotency-Key", c.key)
	}
	res, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	r := &testenv.Response{Status: res.StatusCode, Header: res.Header, Body: body}
	if err := testenv.CheckResponse(req, r); err != nil {
		return r, fmt.Errorf("%s %s → %d does not match openapi.yaml: %w\n%s", c.method, c.path, r.Status, err, body)
	}
	return r, nil
}

// problemCode is the code of a Problem answer, "" for any other.
func problemCode(r *testenv.Response) string {
	var p struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(r.Body, &p)
	return p.Code
}

// isSpecError tells a contract violation (a test failure) from a lost connection.
func isSpecError(err error) bool {
	return err != nil && strings.Contains(err.Error(), "does not match openapi.yaml")
}

// refused reports whether dialing addr is refused: nothing listens.
func refused(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// count runs a count query on the test's database.
func count(t *testing.T, d *testenv.DB, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := d.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func depositBody(minor string) map[string]any {
	return map[string]any{"amount": map[string]any{"amountMinor": minor, "currency": "USDT", "scale": 6}}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
