package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"creativeapi/internal/config"
	"creativeapi/internal/store"
	"creativeapi/internal/tron"
)

// server is the API running as its own process.
type server struct {
	cmd       *exec.Cmd
	baseURL   string
	pprofAddr string
	logPath   string
	// exited is closed when the process ends, with its error in exitErr.
	exited  chan struct{}
	exitErr error
}

// startServer starts `creativeapi serve` on free ports with the benchmark's
// settings: plain http, the development treasury, an open-deposit limit
// that never binds, and pprof on; extra are more KEY=VALUE settings.
func startServer(ctx context.Context, bin, dbURL string, logw *os.File, extra []string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	pprofAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "ADDR="+addr, "PPROF_ADDR="+pprofAddr)
	cmd.Env = append(cmd.Env, serverEnv(dbURL, extra)...)
	return startProcess(ctx, cmd, addr, pprofAddr, logw)
}

// startFloor starts the bare server of bench/floor on a free port, on the
// database the server uses, with the server pool's size and session
// settings (as pgbench gets them).
func startFloor(ctx context.Context, bin, dbURL string, pool poolSettings, logw *os.File) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "ADDR="+addr, "DATABASE_URL="+dbURL, "PGOPTIONS="+pool.pgOptions,
		"DB_MAX_CONNS="+strconv.Itoa(int(pool.size)), "TREASURY_ADDRESS="+tron.DevTreasuryAddress, "QUERIES_DIR=queries")
	return startProcess(ctx, cmd, addr, "", logw)
}

// startProcess starts cmd, an HTTP server on addr, and waits until its
// /readyz answers 200.
func startProcess(ctx context.Context, cmd *exec.Cmd, addr, pprofAddr string, logw *os.File) (*server, error) {
	cmd.Stdout, cmd.Stderr = logw, logw
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, baseURL: "http://" + addr, pprofAddr: pprofAddr, logPath: logw.Name(), exited: make(chan struct{})}
	go func() { s.exitErr = cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(s.baseURL + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("%s exited during start-up: %v\n%s", cmd.Path, s.exitErr, s.logTail())
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("%s did not become ready within 30s", cmd.Path)
		}
	}
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// stop drains the server with SIGTERM, as an orchestrator would.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// alive fails when the server process has ended, with its log's last lines.
func (s *server) alive() error {
	select {
	case <-s.exited:
		return fmt.Errorf("the server process ended: %v\n%s", s.exitErr, s.logTail())
	default:
		return nil
	}
}

// logTail is the end of the server's log (its JSON lines and stderr).
func (s *server) logTail() string {
	f, err := os.Open(s.logPath)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	// One request logs one line: read only the end.
	const tail = 8 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		_, _ = f.Seek(-tail, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

// cpuProfile saves a CPU profile of the server over d to path.
func (s *server) cpuProfile(ctx context.Context, d time.Duration, path string) error {
	return s.profile(ctx, "profile", d, path)
}

// profile saves the server's pprof profile kind (profile: CPU, mutex,
// block, trace) over d to path.
func (s *server) profile(ctx context.Context, kind string, d time.Duration, path string) error {
	return s.pprof(ctx, kind+"?seconds="+strconv.Itoa(int(d.Seconds())), path)
}

// pprof saves the server's answer to /debug/pprof/ + query to path.
func (s *server) pprof(ctx context.Context, query, path string) error {
	body, err := s.pprofGet(ctx, query)
	if err != nil {
		return err
	}
	defer body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (s *server) pprofGet(ctx context.Context, query string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.pprofAddr+"/debug/pprof/"+query, nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		return nil, fmt.Errorf("pprof %s: %s", query, res.Status)
	}
	return res.Body, nil
}

// gcCycles is how many garbage collections the server has run, from the
// runtime statistics its pprof heap profile ends with.
func (s *server) gcCycles(ctx context.Context) (int, error) {
	body, err := s.pprofGet(ctx, "heap?debug=1")
	if err != nil {
		return 0, err
	}
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "# NumGC = "); ok {
			return strconv.Atoi(n)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("pprof heap profile: no NumGC line")
}

// serverEnv is the server's configuration in the benchmark: plain http, the
// development treasury, an open-deposit limit that never binds, then extra.
func serverEnv(dbURL string, extra []string) []string {
	env := []string{
		"DEV_MODE=true", "DATABASE_URL=" + dbURL, "COOKIE_SECURE=false", "TREASURY_ADDRESS=" + tron.DevTreasuryAddress,
		"DEPOSIT_MAX_OPEN_PER_USER=1000000",
		// The limiter runs (its cost is measured with the rest) with a
		// budget a few users' load stays under.
		"RATE_LIMIT_READS_PER_MINUTE=1000000", "RATE_LIMIT_COMMANDS_PER_MINUTE=1000000",
	}
	return append(env, extra...)
}

// poolSettings is what the server's pool is made of, for the floor and
// pgbench to match: its size, and its sessions' settings (plan cache mode,
// timeouts) as PGOPTIONS.
type poolSettings struct {
	size      int32
	pgOptions string
}

// serverPool reads the server's pool settings from its environment, as the
// server does.
func serverPool(env []string) (poolSettings, error) {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		return poolSettings{}, err
	}
	settings := store.PoolConfig{StatementTimeout: cfg.DBStatementTimeout, LockTimeout: cfg.DBLockTimeout}.SessionSettings()
	var opts []string
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		opts = append(opts, "-c "+k+"="+settings[k])
	}
	return poolSettings{size: cfg.DBMaxConns, pgOptions: strings.Join(opts, " ")}, nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
