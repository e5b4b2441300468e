package testenv

import (
	"context"
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
	dir  string
	err  error
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
