// Package s3server runs a private S3-compatible object store as a child
// process: the store of `make run` (DEV_MODE) and of the tests, the way
// internal/pgserver runs PostgreSQL. The server is versitygw (Apache-2.0)
// serving a directory through its posix backend, pinned as a Go tool in
// tools/s3/go.mod and built from the module proxy.
//
// It listens on loopback only; its root credentials are random per data
// directory and kept in it.
package s3server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"creativeapi/internal/childproc"
	"creativeapi/internal/objectstore"
)

// Package is the server's Go package, pinned in tools/s3/go.mod.
const Package = "github.com/versity/versitygw/cmd/versitygw"

// credentialsFile holds the root access key id and secret, one a line.
const credentialsFile = "credentials"

// Options configure a server.
type Options struct {
	// Bin is the versitygw executable (see Binary).
	Bin string
	// DataDir holds the objects (DataDir/objects, one directory per
	// bucket) and the credentials; it is created when missing.
	DataDir string
	// Bucket is created at start when missing.
	Bucket string
	// Region is the region the server signs for; empty means us-east-1.
	Region string
	// AllowedOrigins may PUT parts and read ETag from a browser.
	AllowedOrigins []string
	// Log receives the server's own output; nil discards it.
	Log io.Writer
	// Addr, when set (host:port), is where the store listens instead of a
	// free loopback port, so a page's Content-Security-Policy can name it.
	Addr string
}

// Server is a running store.
type Server struct {
	Endpoint string
	Port     int
	Config   objectstore.Config
	proc     *childproc.Process
}

// Start starts the server on a free loopback port, waits until it answers
// and creates the bucket with its CORS rules.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Bin == "" {
		return nil, errors.New("s3server: no versitygw executable given")
	}
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	dir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, err
	}
	objects := filepath.Join(dir, "objects")
	if err := os.MkdirAll(objects, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", objects, err)
	}
	key, secret, err := ensureCredentials(dir)
	if err != nil {
		return nil, err
	}
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	for attempt := 1; ; attempt++ {
		s, err := start(ctx, opts, objects, key, secret, logw)
		if errors.Is(err, errPortTaken) && attempt < 5 && opts.Addr == "" {
			continue
		}
		return s, err
	}
}

var errPortTaken = errors.New("the port was taken before versitygw bound it")

func start(ctx context.Context, opts Options, objects, key, secret string, logw io.Writer) (*Server, error) {
	addr, port, err := listenAddr(opts.Addr)
	if err != nil {
		return nil, err
	}
	// --keep-alive: versitygw closes every connection after one answer
	// unless told otherwise, so each of the API's store calls paid a new
	// TCP connection (about a tenth of createUpload's CPU in a profile).
	cmd := exec.Command(opts.Bin, "--port", addr, "--region", opts.Region, "--quiet", "--keep-alive", "posix", objects)
	// The environment is ours alone: versitygw reads many VGW_* variables.
	cmd.Env = []string{"ROOT_ACCESS_KEY=" + key, "ROOT_SECRET_KEY=" + secret, "HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH")}
	cmd.Stdout, cmd.Stderr = logw, logw
	proc, err := childproc.Start("versitygw", cmd)
	if err != nil {
		return nil, err
	}
	s := &Server{
		Endpoint: "http://" + addr,
		Port:     port,
		Config: objectstore.Config{
			Endpoint: "http://" + addr, Bucket: opts.Bucket, Region: opts.Region,
			AccessKeyID: key, SecretAccessKey: secret,
		},
		proc: proc,
	}
	store, err := objectstore.New(s.Config)
	if err != nil {
		_ = s.Stop()
		return nil, err
	}
	// Ready when it answers a signed request with our credentials: an
	// answer from another process on the port would not.
	if err := proc.WaitReady(ctx, 60*time.Second, store.Ready); err != nil {
		_ = s.Stop()
		l, lerr := net.Listen("tcp", addr)
		if lerr != nil {
			return nil, fmt.Errorf("%w: %w", errPortTaken, err)
		}
		l.Close()
		return nil, err
	}
	if err := store.EnsureBucket(ctx, opts.AllowedOrigins); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// Stop shuts the server down; stopping a stopped server does nothing.
func (s *Server) Stop() error {
	s.proc.Stop(syscall.SIGTERM, 10*time.Second)
	return nil
}

// ensureCredentials returns the root key id and secret kept in dir, made
// at random the first time.
func ensureCredentials(dir string) (string, string, error) {
	path := filepath.Join(dir, credentialsFile)
	if b, err := os.ReadFile(path); err == nil {
		lines := strings.Fields(string(b))
		if len(lines) == 2 {
			return lines[0], lines[1], nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", "", fmt.Errorf("read the store's credentials: %w", err)
	}
	var k [10]byte
	var s [30]byte
	_, _ = rand.Read(k[:])
	_, _ = rand.Read(s[:])
	key, secret := "CA"+strings.ToUpper(hex.EncodeToString(k[:])), hex.EncodeToString(s[:])
	if err := os.WriteFile(path, []byte(key+"\n"+secret+"\n"), 0o600); err != nil {
		return "", "", err
	}
	return key, secret, nil
}

// Binary returns a versitygw executable for the tests: $S3_SERVER_BIN when
// set, else one built from tools/s3/go.mod (childproc.ToolBinary).
func Binary(ctx context.Context, goBin, moduleRoot string) (string, error) {
	return childproc.ToolBinary(ctx, goBin, moduleRoot, "S3_SERVER_BIN", "s3", "versitygw", Package)
}

// listenAddr is where the store listens: addr as given, or a free
// loopback port when addr is empty.
func listenAddr(addr string) (string, int, error) {
	if addr == "" {
		port, err := childproc.FreePort()
		return "127.0.0.1:" + strconv.Itoa(port), port, err
	}
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("s3server: address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("s3server: address %q: want host:port with a port from 1 to 65535", addr)
	}
	return addr, port, nil
}
