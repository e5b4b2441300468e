package s3server_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"creativeapi/internal/objectstore"
	"creativeapi/internal/s3server"
)

const origin = "http://app.example.test"

func startServer(t *testing.T, dataDir string) *s3server.Server {
	t.Helper()
	return startServerAt(t, dataDir, "")
}

// startServerAt starts the store on addr (empty: a free port).
func startServerAt(t *testing.T, dataDir, addr string) *s3server.Server {
	t.Helper()
	ctx := context.Background()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goBin, "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := s3server.Binary(ctx, goBin, filepath.Dir(strings.TrimSpace(string(out))))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := s3server.Start(ctx, s3server.Options{Bin: bin, DataDir: dataDir, Bucket: "creatives", AllowedOrigins: []string{origin}, Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return srv
}

// TestABrowserUploadsPartsThroughPresignedURLs: a multipart upload made
// the way a browser makes it (plain PUTs of presigned URLs from another
// origin, ETag read back) assembles into the object, and the credentials
// and objects outlive a restart on the same directory.
func TestABrowserUploadsPartsThroughPresignedURLs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	srv := startServer(t, dir)
	store, err := objectstore.New(srv.Config)
	if err != nil {
		t.Fatal(err)
	}

	key := "uploads/test"
	id, err := store.CreateMultipartUpload(ctx, key, "application/octet-stream")
	if err != nil {
		t.Fatal(err)
	}
	part1 := bytes.Repeat([]byte("a"), 5<<20)
	part2 := []byte("tail")
	for i, body := range [][]byte{part1, part2} {
		u, err := store.PresignUploadPart(ctx, key, id, int32(i+1), int64(len(body)), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		pre, _ := http.NewRequest(http.MethodOptions, u, nil)
		pre.Header.Set("Origin", origin)
		pre.Header.Set("Access-Control-Request-Method", "PUT")
		res, err := http.DefaultClient.Do(pre)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if got := res.Header.Get("Access-Control-Allow-Origin"); got != origin {
			t.Fatalf("preflight: Access-Control-Allow-Origin %q, want %q (status %d)", got, origin, res.StatusCode)
		}
		req, _ := http.NewRequest(http.MethodPut, u, bytes.NewReader(body))
		req.Header.Set("Origin", origin)
		res, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("PUT part %d: %d %s", i+1, res.StatusCode, msg)
		}
		if res.Header.Get("ETag") == "" || !strings.Contains(strings.ToLower(res.Header.Get("Access-Control-Expose-Headers")), "etag") {
			t.Fatalf("PUT part %d: ETag %q, exposed %q", i+1, res.Header.Get("ETag"), res.Header.Get("Access-Control-Expose-Headers"))
		}
	}
	parts, err := store.ListParts(ctx, key, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || parts[0].Size != int64(len(part1)) || parts[1].Size != int64(len(part2)) {
		t.Fatalf("parts %+v", parts)
	}
	if err := store.CompleteMultipartUpload(ctx, key, id, parts); err != nil {
		t.Fatal(err)
	}
	srv.Stop()

	srv = startServer(t, dir)
	if store, err = objectstore.New(srv.Config); err != nil {
		t.Fatal(err)
	}
	r, size, err := store.Open(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if size != int64(len(part1)+len(part2)) || !bytes.Equal(got, append(part1, part2...)) {
		t.Fatalf("object of %d bytes differs from its parts", size)
	}
	u, err := store.PresignGet(ctx, key, "a b.png", "image/png", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || n != size {
		t.Fatalf("presigned GET: %d, %d bytes", res.StatusCode, n)
	}
	if _, err := os.Stat(filepath.Join(dir, "objects", "creatives")); err != nil {
		t.Fatalf("the bucket is not a directory under objects/: %v", err)
	}
}

// TestTheStoreKeepsConnectionsAlive: the API's calls to the store reuse
// their connections (versitygw closes each after one answer unless started
// with --keep-alive, and a new TCP connection per call cost about a tenth
// of creating an upload).
func TestTheStoreKeepsConnectionsAlive(t *testing.T) {
	srv := startServer(t, t.TempDir())
	store, err := objectstore.New(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	fresh := 0
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(c httptrace.GotConnInfo) {
		if !c.Reused {
			fresh++
		}
	}})
	for range 5 {
		if _, err := store.CreateMultipartUpload(ctx, "uploads/k", "image/png"); err != nil {
			t.Fatal(err)
		}
	}
	if fresh != 1 {
		t.Fatalf("5 calls opened %d connections", fresh)
	}
}

// TestAPinnedAddressIsWhereTheStoreListens: S3_DEV_ADDR (Options.Addr)
// puts the store on that address at every start, so a page's
// Content-Security-Policy can name it.
func TestAPinnedAddressIsWhereTheStoreListens(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv := startServerAt(t, t.TempDir(), addr)
	if srv.Endpoint != "http://"+addr {
		t.Fatalf("endpoint %s, want http://%s", srv.Endpoint, addr)
	}
	res, err := http.Get(srv.Endpoint)
	if err != nil {
		t.Fatalf("nothing answers on the pinned address: %v", err)
	}
	res.Body.Close()
}
