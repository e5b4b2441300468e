// Package childproc runs the development servers of `make run` and the
// tests (PostgreSQL, the S3 store, Mailpit) as child processes: started in
// their own process group and stopped with us even when we are killed,
// waited for until they prove ready, stopped with a grace period; and the
// pinned Go tools among them built once into the user's cache.
package childproc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Process is a started child process.
type Process struct {
	name string
	cmd  *exec.Cmd
	done chan error
	stop sync.Once
}

// Start starts cmd, called name in errors. Its SysProcAttr, if any, is
// kept (a credential, say); the child runs in its own process group and
// gets SIGTERM when this process dies.
func Start(name string, cmd *exec.Cmd) (*Process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig, cmd.SysProcAttr.Setpgid = syscall.SIGTERM, true
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{name: name, cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

// WaitReady calls ready every 50 ms until it succeeds, and fails when the
// process exits first, when ctx ends, or after limit.
func (p *Process) WaitReady(ctx context.Context, limit time.Duration, ready func(context.Context) error) error {
	deadline := time.Now().Add(limit)
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case werr := <-p.done:
			p.done <- werr // for Stop
			return fmt.Errorf("%s exited during start-up: %v (last check: %v)", p.name, werr, err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s was not ready within %s: %w", p.name, limit, err)
		}
	}
}

// Stop sends sig and waits for the process to end, killing it after
// grace. Stopping a stopped process does nothing.
func (p *Process) Stop(sig os.Signal, grace time.Duration) {
	p.stop.Do(func() {
		_ = p.cmd.Process.Signal(sig)
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
}

// ToolBinary returns the executable of pkg as pinned by tools/<tool>/go.mod
// of the module at moduleRoot: $envVar when set (make test-go builds the
// tools into bin/ once), else one built with goBin and kept in the user's
// cache directory under a name derived from that modfile and its go.sum,
// so a new pin builds a new one. The first build takes about a minute.
func ToolBinary(ctx context.Context, goBin, moduleRoot, envVar, tool, name, pkg string) (string, error) {
	if bin := os.Getenv(envVar); bin != "" {
		return bin, nil
	}
	modfile := filepath.Join(moduleRoot, "tools", tool, "go.mod")
	mod, err := os.ReadFile(modfile)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	sum, err := os.ReadFile(filepath.Join(moduleRoot, "tools", tool, "go.sum"))
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	h := sha256.Sum256(append(mod, sum...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "creativeapi", name+"-"+hex.EncodeToString(h[:8]))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	// Built under a temporary name and renamed: test binaries of several
	// packages may build it at once.
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	cmd := exec.CommandContext(ctx, goBin, "build", "-modfile="+modfile, "-o", tmp, pkg)
	cmd.Dir = moduleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v\n%s", name, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	return bin, nil
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// FreePort is a loopback TCP port free a moment ago, for a child to bind.
// Another process may take it before the child does: the servers check
// that what answers there is theirs.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
