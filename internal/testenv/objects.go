package testenv

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"creativeapi/internal/objectstore"
	"creativeapi/internal/s3server"
)

// objects is the test binary's S3-compatible store, started by the first
// test that asks for one (Options.Objects), so packages that never upload
// never start it.
var objects struct {
	once sync.Once
	srv  *s3server.Server
	bin  string
	dir  string
	err  error
}

// PrivateObjectStore is an S3-compatible store of one test's own, which
// the test may stop and start again (an outage) without touching the
// store the other tests share.
type PrivateObjectStore struct {
	srv  *s3server.Server
	dir  string
	port int
}

// NewPrivateObjectStore starts a PrivateObjectStore, stopped when the
// test ends, and returns a bucket on it.
func NewPrivateObjectStore(t testing.TB, origins ...string) (*objectstore.Store, *PrivateObjectStore) {
	t.Helper()
	objects.once.Do(startObjects) // builds versitygw once, if need be
	if objects.err != nil {
		t.Fatalf("the test S3 store: %v", objects.err)
	}
	p := &PrivateObjectStore{dir: t.TempDir()}
	p.Start(t)
	p.port = p.srv.Port
	t.Cleanup(p.Stop)
	s, err := objectstore.New(p.srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureBucket(context.Background(), origins); err != nil {
		t.Fatal(err)
	}
	return s, p
}

// Stop stops the store; its objects stay on disk.
func (p *PrivateObjectStore) Stop() {
	if p.srv != nil {
		_ = p.srv.Stop()
	}
}

// Start starts the store (again: on its first port, with its objects and
// credentials, so the clients made for it work again).
func (p *PrivateObjectStore) Start(t testing.TB) {
	t.Helper()
	opts := s3server.Options{Bin: objects.bin, DataDir: p.dir, Bucket: "private"}
	if p.port != 0 {
		opts.Addr = fmt.Sprintf("127.0.0.1:%d", p.port)
	}
	srv, err := s3server.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	p.srv = srv
}

// startObjects starts the shared store (building versitygw the first time
// on a machine, about a minute).
func startObjects() {
	ctx := context.Background()
	goBin, err := osexec.LookPath("go")
	if err != nil {
		objects.err = err
		return
	}
	out, err := osexec.Command(goBin, "env", "GOMOD").Output()
	if err != nil {
		objects.err = err
		return
	}
	bin, err := s3server.Binary(ctx, goBin, filepath.Dir(strings.TrimSpace(string(out))))
	if err != nil {
		objects.err = err
		return
	}
	objects.bin = bin
	if objects.dir, err = os.MkdirTemp("", "creativeapi-test-s3-"); err != nil {
		objects.err = err
		return
	}
	objects.srv, objects.err = s3server.Start(ctx, s3server.Options{Bin: bin, DataDir: objects.dir, Bucket: "shared"})
}

// stopObjects stops the shared store, if started, and removes its data.
func stopObjects() {
	if objects.srv != nil {
		_ = objects.srv.Stop()
	}
	if objects.dir != "" {
		_ = os.RemoveAll(objects.dir)
	}
}

// NewObjectStore returns a bucket of the test's own on the test binary's
// store; browsers from origins may PUT parts to it.
func NewObjectStore(t testing.TB, origins ...string) *objectstore.Store {
	t.Helper()
	objects.once.Do(startObjects)
	if objects.err != nil {
		t.Fatalf("the test S3 store: %v", objects.err)
	}
	cfg := objects.srv.Config
	cfg.Bucket = "t-" + strings.ReplaceAll(randomName(), "_", "-")
	s, err := objectstore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureBucket(context.Background(), origins); err != nil {
		t.Fatal(err)
	}
	return s
}
