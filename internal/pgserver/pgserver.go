// Package pgserver runs a private PostgreSQL cluster as a child process: the
// development database of `make run` (DEV_MODE) and the throwaway database
// of the tests. PostgreSQL refuses to run as root, so as root the cluster
// runs as an unprivileged system user.
//
// The cluster opens no Unix socket and listens on loopback TCP only, where
// it asks for its superuser's password (SCRAM). The password is random per
// cluster and kept in the data directory, which only the cluster's owner
// (and root) can read: another local user cannot connect.
package pgserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"creativeapi/internal/childproc"
)

// InstallHint is the one command that installs the server binaries on Debian.
const InstallHint = "apt-get install -y postgresql (as root; or run `make deps`)"

// SuperUser is the cluster's superuser, the only role that may connect.
const SuperUser = "creativeapi"

// passwordFile holds SuperUser's password inside the data directory.
const passwordFile = "creativeapi.password"

// hbaConf is the cluster's whole pg_hba.conf, written at every start (so a
// cluster made before passwords were required is brought up to it).
const hbaConf = `# Written by creativeapi (internal/pgserver) at every start: only the
# superuser, with its password (SCRAM), over loopback TCP. No Unix socket
# is opened.
host all ` + SuperUser + ` 127.0.0.1/32 scram-sha-256
`

// Options configure a cluster.
type Options struct {
	// DataDir holds the cluster; it is created and initialised when empty.
	DataDir string
	// Throwaway trades durability for speed (fsync off): for tests only.
	Throwaway bool
	// Log receives PostgreSQL's own output; nil discards it.
	Log io.Writer
}

// Server is a running cluster.
type Server struct {
	DataDir  string
	Port     int
	password string
	proc     *childproc.Process
	pid      int // the postmaster's
}

// Start initialises the cluster if needed, starts it on a free loopback
// port and waits until it accepts connections.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin, err := findBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := runAs()
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, err
	}
	if cred != nil && !reachableByOthers(filepath.Dir(dir)) {
		// An unprivileged user cannot reach a data directory below a
		// root-only path such as /root; keep the cluster in /var/tmp instead.
		sum := sha256.Sum256([]byte(dir))
		dir = filepath.Join(os.TempDir(), "creativeapi-pg-"+hex.EncodeToString(sum[:6]))
	}
	if pid, ok := runningPostmaster(dir); ok {
		// Checked before anything is written: the running cluster's files
		// (pg_hba.conf, ownership) are not ours to touch.
		return nil, fmt.Errorf("%w: %s is served by postmaster pid %d", ErrInUse, dir, pid)
	}
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	if cred != nil {
		if err := chownTree(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		// initdb's trust lines never serve: pg_hba.conf is replaced below,
		// before the server first starts.
		args := []string{"-D", dir, "-U", SuperUser, "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"}
		if opts.Throwaway {
			args = append(args, "--no-sync")
		}
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("initdb %s: %w\n%s", dir, err, out)
		}
	}
	password, err := ensurePassword(ctx, bin, dir, cred)
	if err != nil {
		return nil, err
	}
	if err := writeOwned(filepath.Join(dir, "pg_hba.conf"), hbaConf, cred); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		s, err := start(ctx, bin, dir, password, cred, opts.Throwaway, logw)
		if errors.Is(err, errPortTaken) && attempt < 5 {
			// Another process took the port between freePort and the bind.
			continue
		}
		return s, err
	}
}

// ErrInUse: a postmaster already runs on the data directory (another
// process started the cluster and still runs it).
var ErrInUse = errors.New("the cluster is already running")

// runningPostmaster returns the pid in dir's postmaster.pid when that
// process runs. A crashed cluster leaves the file behind; its pid then
// names no process (or, rarely, a reused one: postgres itself makes the
// same check at start).
func runningPostmaster(dir string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return 0, false
	}
	err = syscall.Kill(pid, 0)
	return pid, err == nil || errors.Is(err, syscall.EPERM)
}

// errPortTaken: postgres exited because its port was taken.
var errPortTaken = errors.New("the port was taken before postgres bound it")

// start runs postgres on a free port and waits until it answers as this
// cluster. PostgreSQL cannot take a listening socket from us, so the port
// is chosen free and a lost race is reported as errPortTaken.
func start(ctx context.Context, bin, dir, password string, cred *syscall.Credential, throwaway bool, logw io.Writer) (*Server, error) {
	port, err := childproc.FreePort()
	if err != nil {
		return nil, err
	}
	args := []string{"-D", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "port=" + strconv.Itoa(port),
		"-c", "unix_socket_directories=", "-c", "max_connections=200",
	}
	if throwaway {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = logw, logw
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	proc, err := childproc.Start("postgres", cmd)
	if err != nil {
		return nil, err
	}
	s := &Server{DataDir: dir, Port: port, password: password, proc: proc, pid: proc.Pid()}
	// Whatever answers on the port must prove to be this cluster (isOurs).
	if err := proc.WaitReady(ctx, 60*time.Second, s.isOurs); err != nil {
		_ = s.Stop()
		// Postgres has exited: if its port is not free now, another
		// process took it.
		l, lerr := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if lerr != nil {
			return nil, fmt.Errorf("%w: %w", errPortTaken, err)
		}
		l.Close()
		return nil, err
	}
	return s, nil
}

// URL is the connection string of database name on this cluster, with
// the superuser's password.
func (s *Server) URL(name string) string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", SuperUser, s.password, s.Port, name)
}

// Password is SuperUser's password, for clients that take it apart from a
// URL (PGPASSWORD).
func (s *Server) Password() string { return s.password }

// ensurePassword returns SuperUser's password, kept in the data directory.
// A cluster without one (new, or made when the cluster trusted every
// loopback connection) gets a random one, set in single-user mode, where no
// connection is involved.
func ensurePassword(ctx context.Context, bin, dir string, cred *syscall.Credential) (string, error) {
	path := filepath.Join(dir, passwordFile)
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read the cluster's password: %w", err)
	}
	var b [24]byte
	_, _ = rand.Read(b[:])
	password := hex.EncodeToString(b[:])
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "postgres"), "--single", "-D", dir,
		"-c", "password_encryption=scram-sha-256", "postgres")
	cmd.Stdin = strings.NewReader("ALTER ROLE " + SuperUser + " PASSWORD '" + password + "'\n")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "ERROR:") {
		return "", fmt.Errorf("set the cluster's password (postgres --single): %v\n%s", err, out)
	}
	if err := writeOwned(path, password+"\n", cred); err != nil {
		return "", err
	}
	return password, nil
}

// writeOwned writes a file only the cluster's owner can read.
func writeOwned(path, content string, cred *syscall.Credential) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return err
	}
	if cred != nil {
		return os.Chown(path, int(cred.Uid), int(cred.Gid))
	}
	return nil
}

// Stop shuts the cluster down (fast shutdown: open sessions are ended).
// Stopping a stopped cluster does nothing.
func (s *Server) Stop() error {
	s.proc.Stop(syscall.SIGINT, 30*time.Second)
	return nil
}

// isOurs connects to the port and checks that it is this cluster.
func (s *Server) isOurs(ctx context.Context) error {
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	var dataDir string
	if err := c.QueryRow(ctx, "SHOW data_directory").Scan(&dataDir); err != nil {
		return err
	}
	if dataDir != s.DataDir {
		return fmt.Errorf("port %d answers for the cluster in %s, not %s", s.Port, dataDir, s.DataDir)
	}
	// postmaster.pid starts with the pid of the postmaster holding the data
	// directory, then the directory, start time and port.
	lock, err := os.ReadFile(filepath.Join(s.DataDir, "postmaster.pid"))
	if err != nil {
		return err
	}
	lines := strings.Split(string(lock), "\n")
	if len(lines) < 4 || lines[0] != strconv.Itoa(s.pid) || lines[3] != strconv.Itoa(s.Port) {
		return fmt.Errorf("%s/postmaster.pid names another postmaster than pid %d on port %d", s.DataDir, s.pid, s.Port)
	}
	return nil
}

// findBinDir finds the directory of initdb and postgres: beside pg_ctl on the
// PATH, or Debian's /usr/lib/postgresql/<version>/bin, newest first.
func findBinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(real), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("PostgreSQL server binaries (initdb, postgres) not found; install them with: %s", InstallHint)
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// runAs is nil for a normal user; as root it is the postgres (or nobody) user.
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root, but no unprivileged user (postgres or nobody) exists to run PostgreSQL")
}

// reachableByOthers reports whether every directory from / to dir can be
// traversed by a user that owns none of them.
func reachableByOthers(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			// Not created yet: judged by its existing parents.
		} else if fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}

func chownTree(dir string, uid, gid int) error {
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// IsMissingBinaries reports whether err is Start's "not installed" error.
func IsMissingBinaries(err error) bool {
	return err != nil && strings.Contains(err.Error(), "server binaries")
}
