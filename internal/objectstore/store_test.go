package objectstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"creativeapi/internal/objectstore"
	"creativeapi/internal/s3server"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
)

// newStore starts a versitygw of the test's own (S3_SERVER_BIN, or built
// once per machine) and returns a store on its bucket.
func newStore(tb testing.TB) (*objectstore.Store, *s3server.Server) {
	tb.Helper()
	ctx := context.Background()
	goBin, err := exec.LookPath("go")
	if err != nil {
		tb.Fatal(err)
	}
	out, err := exec.Command(goBin, "env", "GOMOD").Output()
	if err != nil {
		tb.Fatal(err)
	}
	bin, err := s3server.Binary(ctx, goBin, filepath.Dir(strings.TrimSpace(string(out))))
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := s3server.Start(ctx, s3server.Options{Bin: bin, DataDir: tb.TempDir(), Bucket: "creatives"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = srv.Stop() })
	s, err := objectstore.New(srv.Config)
	if err != nil {
		tb.Fatal(err)
	}
	return s, srv
}

// BenchmarkPresignUploadPart is the presigning of one part's URL (signed
// by the SDK's SigV4 signer directly, as the store does), beside the same
// URL from the SDK's presign client: it defends docs/performance.md's
// ablation row G. Presigning makes no request, so cpu-ns/op is all ours.
func BenchmarkPresignUploadPart(b *testing.B) {
	s, srv := newStore(b)
	cfg := srv.Config
	presigner := s3.NewPresignClient(s3.New(s3.Options{
		Region: cfg.Region, BaseEndpoint: &cfg.Endpoint, UsePathStyle: true,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		Credentials:                credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, ""),
	}))
	ctx := context.Background()
	for _, bc := range []struct {
		name    string
		presign func() error
	}{
		{"signer", func() error {
			_, err := s.PresignUploadPart(ctx, "uploads/a/b", "upload-id", 3, 8<<20, time.Hour)
			return err
		}},
		{"presign-client", func() error {
			_, err := presigner.PresignUploadPart(ctx, &s3.UploadPartInput{
				Bucket: &cfg.Bucket, Key: aws.String("uploads/a/b"), UploadId: aws.String("upload-id"),
				PartNumber: aws.Int32(3), ContentLength: aws.Int64(8 << 20),
			}, s3.WithPresignExpires(time.Hour))
			return err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			report := testenv.ReportCPU(b)
			for b.Loop() {
				if err := bc.presign(); err != nil {
					b.Fatal(err)
				}
			}
			report()
		})
	}
}

// TestCreateMultipartUploadStartsAnUploadTheStoreAssembles: the upload id
// the call made without the SDK's operation stack returns takes parts and
// completes, under a key that needs escaping, and the object keeps the
// content type given at creation.
func TestCreateMultipartUploadStartsAnUploadTheStoreAssembles(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	key := "uploads/a b/ü+1 (2).png"
	id, err := s.CreateMultipartUpload(ctx, key, "image/png")
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("png"), 1000)
	u, err := s.PresignUploadPart(ctx, key, id, 1, int64(len(body)), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPut, u, bytes.NewReader(body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("PUT part: %d", res.StatusCode)
	}
	parts, err := s.ListParts(ctx, key, id)
	if err != nil || len(parts) != 1 {
		t.Fatalf("parts %+v, %v", parts, err)
	}
	if err := s.CompleteMultipartUpload(ctx, key, id, parts); err != nil {
		t.Fatal(err)
	}
	downloadsAsPNG(t, s, key, body)
}

// downloadsAsPNG fails the test unless the presigned GET of key answers
// body, as an image/png attachment.
func downloadsAsPNG(t *testing.T, s *objectstore.Store, key string, body []byte) {
	t.Helper()
	u, err := s.PresignGet(context.Background(), key, "a.png", "image/png", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !bytes.Equal(got, body) || res.Header.Get("Content-Type") != "image/png" ||
		!strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("GET: %d, %d bytes, Content-Type %q, Content-Disposition %q",
			res.StatusCode, len(got), res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"))
	}
}

// TestCreateMultipartUploadRefusalsCarryTheStoresCodeAsTheSDKs: a store's
// refusal is an error with the code the SDK's client reports for the same
// request, so callers classify it as before (hasCode), and it is not a
// missing object.
func TestCreateMultipartUploadRefusalsCarryTheStoresCodeAsTheSDKs(t *testing.T) {
	_, srv := newStore(t)
	for _, tc := range []struct {
		name string
		edit func(*objectstore.Config)
	}{
		{"a missing bucket", func(c *objectstore.Config) { c.Bucket = "missing" }},
		{"a wrong secret", func(c *objectstore.Config) { c.SecretAccessKey = "wrong" }},
		{"an unknown access key", func(c *objectstore.Config) { c.AccessKeyID = "unknown" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := srv.Config
			tc.edit(&cfg)
			s, err := objectstore.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.CreateMultipartUpload(context.Background(), "uploads/k", "image/png")
			var got smithy.APIError
			if !errors.As(err, &got) || errors.Is(err, objectstore.ErrNotFound) {
				t.Fatalf("error %v is not the store's refusal", err)
			}
			sdk := s3.New(s3.Options{
				Region: cfg.Region, BaseEndpoint: &cfg.Endpoint, UsePathStyle: true,
				Credentials: credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, ""),
			})
			_, sdkErr := sdk.CreateMultipartUpload(context.Background(), &s3.CreateMultipartUploadInput{
				Bucket: &cfg.Bucket, Key: aws.String("uploads/k"), ContentType: aws.String("image/png"),
			})
			var want smithy.APIError
			if !errors.As(sdkErr, &want) {
				t.Fatalf("the SDK's error %v", sdkErr)
			}
			if got.ErrorCode() != want.ErrorCode() || got.ErrorCode() == "" {
				t.Fatalf("code %q, the SDK's %q (%v)", got.ErrorCode(), want.ErrorCode(), err)
			}
		})
	}
}

// TestCreateMultipartUploadUsesTheClientsConnections: the call made
// without the SDK's operation stack goes through the SDK client's own HTTP
// client, so it reuses the connection the SDK's calls keep alive.
func TestCreateMultipartUploadUsesTheClientsConnections(t *testing.T) {
	s, _ := newStore(t)
	var reused []bool
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(c httptrace.GotConnInfo) {
		reused = append(reused, c.Reused)
	}})
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateMultipartUpload(ctx, "uploads/k", "image/png"); err != nil {
		t.Fatal(err)
	}
	if len(reused) != 2 || !reused[1] {
		t.Fatalf("connections reused: %v", reused)
	}
}

// TestAnObjectPutWholeIsServedAsTheTypeAskedFor: a file of one part is PUT
// whole to its presigned URL, with whatever Content-Type the browser
// sends; Size then sees it, and its download is served as the type the
// server checked, never as the one the PUT declared.
func TestAnObjectPutWholeIsServedAsTheTypeAskedFor(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	key := "uploads/whole/a.png"
	if _, ok, err := s.Size(ctx, key); ok || err != nil {
		t.Fatalf("before the PUT: %v %v", ok, err)
	}
	body := []byte("\x89PNG\r\n\x1a\n<script>alert(1)</script>")
	u, header, err := s.PresignPut(ctx, key, int64(len(body)), "", time.Minute)
	if err != nil || len(header) != 1 || header.Get(objectstore.IfNoneMatchHeader) != "*" {
		t.Fatal(header, err)
	}
	req, _ := http.NewRequest(http.MethodPut, u, bytes.NewReader(body))
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "text/html")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %d", res.StatusCode)
	}
	if size, ok, err := s.Size(ctx, key); size != int64(len(body)) || !ok || err != nil {
		t.Fatalf("Size: %d %v %v", size, ok, err)
	}
	downloadsAsPNG(t, s, key, body)
}

// TestAPresignedPutWritesOnlyTheLengthAndBytesItWasSignedFor: a URL is a
// capability scoped to one write. The store refuses a body of another
// length than the signed Content-Length (a part's URL too), and, when the
// SHA-256 is signed, other bytes of that length and a PUT without the
// checksum header.
func TestAPresignedPutWritesOnlyTheLengthAndBytesItWasSignedFor(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	body := []byte("\x89PNG\r\n\x1a\n the announced bytes")
	sum := sha256.Sum256(body)
	send := func(u string, header http.Header, b []byte) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPut, u, bytes.NewReader(b))
		for k, v := range header {
			req.Header[k] = v
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			// The store may refuse a body before reading it and cut the
			// connection: a refusal too.
			return 0
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	u, header, err := s.PresignPut(ctx, "uploads/scoped", int64(len(body)), hex.EncodeToString(sum[:]), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	other := bytes.ToUpper(body)
	for _, tc := range []struct {
		name   string
		header http.Header
		body   []byte
	}{
		{"a longer body", header, append(append([]byte{}, body...), make([]byte, 3<<20)...)},
		{"a shorter body", header, body[:1]},
		{"other bytes of the same length", header, other},
		{"no checksum header", http.Header{}, body},
	} {
		if status := send(u, tc.header, tc.body); status/100 == 2 {
			t.Fatalf("%s: %d", tc.name, status)
		}
	}
	if _, ok, err := s.Size(ctx, "uploads/scoped"); ok || err != nil {
		t.Fatalf("a refused PUT stored something: %v %v", ok, err)
	}
	if status := send(u, header, body); status != http.StatusOK {
		t.Fatalf("the announced PUT: %d", status)
	}

	id, err := s.CreateMultipartUpload(ctx, "uploads/parts", "image/png")
	if err != nil {
		t.Fatal(err)
	}
	part, err := s.PresignUploadPart(ctx, "uploads/parts", id, 1, 100, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if status := send(part, nil, make([]byte, 101)); status/100 == 2 {
		t.Fatalf("a part of another length: %d", status)
	}
	if status := send(part, nil, make([]byte, 100)); status != http.StatusOK {
		t.Fatalf("the part: %d", status)
	}
}

// TestCopyCopiesInTheStore: Copy gives dst the bytes of src; a missing
// src is ErrNotFound.
func TestCopyCopiesInTheStore(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	body := []byte("\x89PNG\r\n\x1a\n copied")
	u, header, err := s.PresignPut(ctx, "staging/a b/1", int64(len(body)), "", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPut, u, bytes.NewReader(body))
	req.Header = header
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if err := s.Copy(ctx, "staging/a b/1", "uploads/a b/1"); err != nil {
		t.Fatal(err)
	}
	downloadsAsPNG(t, s, "uploads/a b/1", body)
	if err := s.Copy(ctx, "staging/none", "uploads/none"); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("copying a missing object: %v", err)
	}
}

// putWith PUTs body to u with header and answers the status (0 when the
// store cut the connection: a refusal too).
func putWith(t *testing.T, u string, header http.Header, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, u, bytes.NewReader(body))
	req.Header = header.Clone()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// TestASealedKeyRefusesThePresignedPutOfIt: a PresignPut URL only creates
// its object (If-None-Match: * is signed), so a seal written over the key
// makes the store refuse it, before and after the URL was used, while the
// URL itself still has time to run: a URL nothing can revoke is refused
// all the same.
func TestASealedKeyRefusesThePresignedPutOfIt(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	body := []byte("\x89PNG\r\n\x1a\n sealed")
	sum := sha256.Sum256(body)
	for _, used := range []bool{false, true} {
		key := fmt.Sprintf("staging/sealed/%v", used)
		u, header, err := s.PresignPut(ctx, key, int64(len(body)), hex.EncodeToString(sum[:]), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if used {
			if status := putWith(t, u, header, body); status != http.StatusOK {
				t.Fatalf("the first PUT: %d", status)
			}
		}
		if err := s.Seal(ctx, key); err != nil {
			t.Fatal(err)
		}
		if status := putWith(t, u, header, body); status/100 == 2 {
			t.Fatalf("used %v: the URL wrote over the seal: %d", used, status)
		}
		if o, ok, err := s.Stat(ctx, key); err != nil || !ok || o.Size != 0 {
			t.Fatalf("used %v: the key holds %+v %v %v, not the seal", used, o, ok, err)
		}
	}
}

// TestAStoreThatIsDownIsUnavailableNotADatabaseError: every call to a
// store that does not answer (stopped mid-test) is objectstore.ErrUnavailable,
// which the HTTP layer answers 503 storage_unavailable, and never the
// store's translation of a database outage; a refusal the store answers
// itself (another bucket's missing upload) is not unavailability.
func TestAStoreThatIsDownIsUnavailableNotADatabaseError(t *testing.T) {
	s, srv := newStore(t)
	ctx := context.Background()
	if _, err := s.ListParts(ctx, "uploads/none", "no-such-upload"); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("a missing upload: %v", err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	calls := map[string]func() error{
		"CreateMultipartUpload": func() error { _, err := s.CreateMultipartUpload(ctx, "uploads/k", "image/png"); return err },
		"ListParts":             func() error { _, err := s.ListParts(ctx, "uploads/k", "id"); return err },
		"Stat":                  func() error { _, _, err := s.Stat(ctx, "uploads/k"); return err },
		"Copy":                  func() error { return s.Copy(ctx, "uploads/k", "uploads/l") },
		"Delete":                func() error { return s.Delete(ctx, "uploads/k") },
		"Seal":                  func() error { return s.Seal(ctx, "uploads/k") },
		"AbortMultipartUpload":  func() error { return s.AbortMultipartUpload(ctx, "uploads/k", "id") },
		"Open":                  func() error { _, _, err := s.Open(ctx, "uploads/k"); return err },
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, objectstore.ErrUnavailable) {
			t.Errorf("%s: %v, not ErrUnavailable", name, err)
		}
		if errors.Is(store.Translate(err), store.ErrUnavailable) {
			t.Errorf("%s: store.Translate calls %v a database outage", name, err)
		}
	}
}
