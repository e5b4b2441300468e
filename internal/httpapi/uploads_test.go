package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/config"
	"creativeapi/internal/objectstore"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/upload"
	"creativeapi/internal/webhooks"
)

func uploadsURL(org uuid.UUID) string { return "/api/v1/organizations/" + org.String() + "/uploads" }

// pngFile is a w×h PNG padded with random bytes to size (a PNG decoder
// reads the header only).
func pngFile(t testing.TB, w, h, size int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	pad := make([]byte, size-b.Len())
	_, _ = rand.Read(pad)
	return append(b.Bytes(), pad...)
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// uploadDesk is an organization with an author, on a server with a store.
type uploadDesk struct {
	env    *testenv.Env
	org    uuid.UUID
	author *testenv.Client
}

func newUploadDesk(t *testing.T, opts ...testenv.Options) *uploadDesk {
	t.Helper()
	o := testenv.Options{}
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Objects = true
	env := testenv.New(t, o)
	d := &uploadDesk{env: env, org: env.DB.Org(t, "Acme Uploads")}
	id, _ := env.DB.User(t, "Ulla Uploader")
	env.DB.Member(t, d.org, id, "author")
	d.author = env.SessionFor(t, id)
	return d
}

// create announces file as the author.
func (d *uploadDesk) create(t *testing.T, name, mime string, file []byte) api.Upload {
	t.Helper()
	r := d.author.Do(http.MethodPost, uploadsURL(d.org), map[string]any{
		"fileName": name, "mimeType": mime, "sizeBytes": len(file), "sha256": sha(file)})
	if r.Status != http.StatusCreated {
		t.Fatalf("create upload: %d %s", r.Status, r.Body)
	}
	var u api.Upload
	r.JSON(t, &u)
	if r.Header.Get("Location") != uploadsURL(d.org)+"/"+u.Id.String() {
		t.Fatalf("Location %q", r.Header.Get("Location"))
	}
	return u
}

// put sends part number of file to its presigned URL, as a browser does.
func put(t *testing.T, u api.Upload, file []byte, number int32) {
	t.Helper()
	url, err := u.Parts[number-1].Url.Get()
	if err != nil {
		t.Fatalf("part %d has no URL", number)
	}
	start := int64(number-1) * u.PartSize
	end := min(start+u.PartSize, int64(len(file)))
	if status, body := putTo(t, url, u.Parts[number-1].Headers, file[start:end]); status != http.StatusOK {
		t.Fatalf("PUT part %d: %d %s", number, status, body)
	}
}

// putTo PUTs body to url with header, as a browser does, and returns the
// store's answer; status 0 when the store cut the connection (as it may
// while refusing a large body before reading it).
func putTo(t *testing.T, url string, header map[string]string, body []byte) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
	for name, value := range header {
		req.Header.Set(name, value)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res.StatusCode, got
}

func (d *uploadDesk) get(t *testing.T, id uuid.UUID) api.Upload {
	t.Helper()
	r := d.author.Do(http.MethodGet, uploadsURL(d.org)+"/"+id.String(), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("get upload: %d %s", r.Status, r.Body)
	}
	var u api.Upload
	r.JSON(t, &u)
	return u
}

func (d *uploadDesk) complete(id uuid.UUID, headers ...testenv.Header) *testenv.Response {
	return d.author.Do(http.MethodPost, uploadsURL(d.org)+"/"+id.String()+"/complete", map[string]any{}, headers...)
}

func received(u api.Upload) []bool {
	out := make([]bool, len(u.Parts))
	for i, p := range u.Parts {
		out[i] = p.Received
	}
	return out
}

// TestAnUploadGoesToTheStoreResumesAndComesBackThroughContent walks the
// whole life of an upload: two parts, one sent, the upload read back
// (resume), completion refused while a part is missing, completed,
// checked, probed, and served to members only.
func TestAnUploadGoesToTheStoreResumesAndComesBackThroughContent(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	file := pngFile(t, 300, 200, upload.DefaultPartSize+4096)
	u := d.create(t, "banner.png", "image/png", file)
	if u.Status != api.UploadPending || len(u.Parts) != 2 || u.PartSize != upload.DefaultPartSize || u.Asset.IsSpecified() && !u.Asset.IsNull() {
		t.Fatalf("new upload: %+v", u)
	}
	put(t, u, file, 1)
	u = d.get(t, u.Id)
	if got := received(u); !got[0] || got[1] || u.Parts[0].Url.IsSpecified() && !u.Parts[0].Url.IsNull() {
		t.Fatalf("after part 1: received %v, part 1 url %+v", got, u.Parts[0].Url)
	}
	r := d.complete(u.Id)
	if p := r.Problem(t); r.Status != http.StatusConflict || p.Code != "upload_incomplete" || !strings.Contains(p.Detail, "[2]") {
		t.Fatalf("complete with part 2 missing: %d %s", r.Status, r.Body)
	}
	put(t, u, file, 2) // the fresh URL of the resumed upload
	key := testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()}
	r = d.complete(u.Id, key)
	if r.Status != http.StatusOK {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &u)
	asset, err := u.Asset.Get()
	if u.Status != api.UploadReady || err != nil || asset.Width.MustGet() != 300 || asset.Height.MustGet() != 200 ||
		asset.Url != d.env.Config.PublicBaseURL+"/api/v1/organizations/"+d.org.String()+"/assets/"+asset.Id.String()+"/content" {
		t.Fatalf("completed: %+v (asset %+v)", u, asset)
	}
	if again := d.complete(u.Id, key); again.Status != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.Body, r.Body) {
		t.Fatalf("the same complete again: %d %s", again.Status, again.Body)
	}
	if again := d.complete(u.Id); again.Status != http.StatusOK || !bytes.Contains(again.Body, []byte(asset.Id.String())) {
		t.Fatalf("completing a ready upload: %d %s", again.Status, again.Body)
	}

	content := strings.TrimPrefix(asset.Url, d.env.Config.PublicBaseURL)
	viewerID, _ := d.env.DB.User(t, "Vera Viewer")
	d.env.DB.Member(t, d.org, viewerID, "viewer")
	r = d.env.SessionFor(t, viewerID).Do(http.MethodGet, content, nil)
	if r.Status != http.StatusFound || r.Header.Get("Cache-Control") != "private, no-store" {
		t.Fatalf("content for a viewer: %d %v", r.Status, r.Header)
	}
	res, err := http.Get(r.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !bytes.Equal(got, file) {
		t.Fatalf("download: %d, %d bytes, equal %v", res.StatusCode, len(got), bytes.Equal(got, file))
	}
	other, _ := d.env.SignedIn(t, "Otto Outsider")
	if r := other.Do(http.MethodGet, content, nil); r.Status != http.StatusNotFound || r.Problem(t).Code != "not_found" {
		t.Fatalf("content for a non-member: %d %s", r.Status, r.Body)
	}
	if r := d.env.Client(t).Do(http.MethodGet, content, nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("content for nobody: %d %s", r.Status, r.Body)
	}
	if r := d.author.Do(http.MethodGet, "/api/v1/organizations/"+d.org.String()+"/assets/"+uuid.NewString()+"/content", nil); r.Status != http.StatusNotFound {
		t.Fatalf("content of an unknown asset: %d %s", r.Status, r.Body)
	}
}

// TestAFileOfOnePartIsPutWhole: a file no larger than a part is PUT whole
// to its staging object (no multipart upload), with the headers its part
// names; GET then shows it received, and completing copies and checks it.
func TestAFileOfOnePartIsPutWhole(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	file := pngFile(t, 12, 8, 4096)
	u := d.create(t, "small.png", "image/png", file)
	url, err := u.Parts[0].Url.Get()
	if len(u.Parts) != 1 || err != nil || strings.Contains(url, "uploadId=") || !strings.Contains(url, "/staging/") {
		t.Fatalf("parts %+v: want one URL of the staging object itself", u.Parts)
	}
	if got := u.Parts[0].Headers["x-amz-checksum-sha256"]; got == "" {
		t.Fatalf("headers %v: want the SHA-256 the store checks", u.Parts[0].Headers)
	}
	put(t, u, file, 1)
	if got := d.get(t, u.Id); !got.Parts[0].Received || got.Parts[0].Url.IsSpecified() && !got.Parts[0].Url.IsNull() || len(got.Parts[0].Headers) != 0 {
		t.Fatalf("after the PUT: %+v", got.Parts[0])
	}
	r := d.complete(u.Id)
	if r.Status != http.StatusOK {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &u)
	if asset, err := u.Asset.Get(); u.Status != api.UploadReady || err != nil || asset.Width.MustGet() != 12 {
		t.Fatalf("completed: %+v", u)
	}
}

// TestAStoredFileThatIsNotTheAnnouncedOneFailsAndIsDeleted: the server
// checks the bytes in the store, never the client's word.
func TestAStoredFileThatIsNotTheAnnouncedOneFailsAndIsDeleted(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	// The URL of a file of one part writes only the announced bytes (its
	// SHA-256 is signed), so other bytes come in parts.
	file := pngFile(t, 10, 10, upload.DefaultPartSize+2048)
	for _, tc := range []struct {
		name, mime string
		stored     []byte
		want       string
	}{
		{"other bytes than announced", "image/png", append(append([]byte{}, file[:len(file)-1024]...), make([]byte, 1024)...), "SHA-256"},
		{"a PNG announced as a GIF", "image/gif", file, "does not start as a image/gif file does"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := d.create(t, "x.bin", tc.mime, file)
			if len(u.Parts) != 2 {
				t.Fatalf("%d parts", len(u.Parts))
			}
			put(t, u, tc.stored, 1)
			put(t, u, tc.stored, 2)
			r := d.complete(u.Id)
			if p := r.Problem(t); r.Status != http.StatusUnprocessableEntity || p.Code != "upload_mismatch" || !strings.Contains(p.Detail, tc.want) {
				t.Fatalf("complete: %d %s", r.Status, r.Body)
			}
			if got := d.get(t, u.Id); got.Status != api.UploadFailed {
				t.Fatalf("status %s", got.Status)
			}
			d.storeHoldsNothingOf(t, u.Id)
			if r := d.complete(u.Id); r.Status != http.StatusConflict || r.Problem(t).Code != "upload_incomplete" {
				t.Fatalf("completing a failed upload: %d %s", r.Status, r.Body)
			}
		})
	}
}

// TestUploadRefusals: bad input and the quota are refused before the store
// is asked for anything.
func TestUploadRefusals(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t, testenv.Options{Env: map[string]string{"UPLOAD_MAX_BYTES": "20000000", "ORG_STORAGE_QUOTA_BYTES": "29999999"}})
	ok := map[string]any{"fileName": "a.png", "mimeType": "image/png", "sizeBytes": 15000000, "sha256": strings.Repeat("a", 64)}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for key, val := range ok {
			m[key] = val
		}
		m[k] = v
		return m
	}
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"a size over UPLOAD_MAX_BYTES", with("sizeBytes", 20000001), "sizeBytes"},
		{"an empty file", with("sizeBytes", 0), "sizeBytes"},
		{"a path as file name", with("fileName", "../a.png"), "fileName"},
		{"a type not taken", with("mimeType", "text/html"), "mimeType"},
		{"an uppercase digest", with("sha256", strings.Repeat("A", 64)), "sha256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := d.author.Do(http.MethodPost, uploadsURL(d.org), tc.body)
			p := r.Problem(t)
			if r.Status != http.StatusUnprocessableEntity || len(p.FieldErrors) != 1 || p.FieldErrors[0].Field != tc.field {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
		})
	}
	t.Run("the quota counts pending uploads", func(t *testing.T) {
		if r := d.author.Do(http.MethodPost, uploadsURL(d.org), ok); r.Status != http.StatusCreated {
			t.Fatalf("first: %d %s", r.Status, r.Body)
		}
		r := d.author.Do(http.MethodPost, uploadsURL(d.org), ok)
		if p := r.Problem(t); r.Status != http.StatusConflict || p.Code != "storage_quota_exceeded" {
			t.Fatalf("second: %d %s", r.Status, r.Body)
		}
	})
	t.Run("ids that are no UUIDs", func(t *testing.T) {
		for _, path := range []string{uploadsURL(d.org) + "/not-a-uuid", "/api/v1/organizations/" + d.org.String() + "/assets/not-a-uuid/content"} {
			r := d.author.Do(http.MethodGet, path, nil)
			if p := r.Problem(t); r.Status != http.StatusUnprocessableEntity || p.Code != "invalid_request" {
				t.Fatalf("%s: %d %s", path, r.Status, r.Body)
			}
		}
	})
	t.Run("an unknown upload", func(t *testing.T) {
		if r := d.author.Do(http.MethodGet, uploadsURL(d.org)+"/"+uuid.NewString(), nil); r.Status != http.StatusNotFound {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
}

// TestUploadsWithoutAStoreAre503: a server without S3 configured.
func TestUploadsWithoutAStoreAre503(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	org := env.DB.Org(t, "No Store")
	id, _ := env.DB.User(t, "Nina Nostore")
	env.DB.Member(t, org, id, "admin")
	r := env.SessionFor(t, id).Do(http.MethodPost, uploadsURL(org), map[string]any{
		"fileName": "a.png", "mimeType": "image/png", "sizeBytes": 10, "sha256": strings.Repeat("a", 64)})
	if p := r.Problem(t); r.Status != http.StatusServiceUnavailable || p.Code != "uploads_unavailable" {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
}

// TestExpiredUploadsAreAbortedAndTheirPartsDeleted: the periodic job's
// work, against the real store, for a file PUT whole and for one sent in
// parts (a multipart upload, aborted).
func TestExpiredUploadsAreAbortedAndTheirPartsDeleted(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	for name, size := range map[string]int{"one part, PUT whole": 4096, "two parts": upload.DefaultPartSize + 4096} {
		t.Run(name, func(t *testing.T) {
			file := pngFile(t, 10, 10, size)
			u := d.create(t, "late.png", "image/png", file)
			put(t, u, file, 1)
			fresh := d.create(t, "fresh.png", "image/png", file)
			// Past the hour a part sent at the last moment could add.
			now := u.ExpiresAt.Add(d.env.Config.UploadURLTTL + time.Second)
			if n, err := upload.Expire(context.Background(), d.env.DB.Store, d.env.Objects, limitsOf(d.env.Config), now, 100); err != nil || n != 2 {
				t.Fatalf("expired %d: %v", n, err)
			}
			if n, err := upload.Expire(context.Background(), d.env.DB.Store, d.env.Objects, limitsOf(d.env.Config), now, 100); err != nil || n != 0 {
				t.Fatalf("a second run expired %d: %v", n, err)
			}
			d.storeHoldsNothingOf(t, u.Id)
			got := d.get(t, u.Id)
			if got.Status != api.UploadFailed || got.Parts[0].Received {
				t.Fatalf("expired upload: %+v", got)
			}
			if r := d.complete(fresh.Id); r.Status != http.StatusConflict || r.Problem(t).Code != "upload_incomplete" {
				t.Fatalf("completing an expired upload: %d %s", r.Status, r.Body)
			}
		})
	}
}

// storeHoldsNothingOf fails the test when the store still holds upload
// id's multipart upload, its staged object or its object.
func (d *uploadDesk) storeHoldsNothingOf(t *testing.T, id uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	var key string
	var storeID *string
	if err := d.env.DB.Pool.QueryRow(ctx, "SELECT object_key, store_upload_id FROM uploads WHERE id = $1", id).Scan(&key, &storeID); err != nil {
		t.Fatal(err)
	}
	if storeID != nil {
		if parts, err := d.env.Objects.ListParts(ctx, upload.StagingKey(key), *storeID); !errors.Is(err, objectstore.ErrNotFound) {
			t.Fatalf("the store still has the multipart upload: %v %v", parts, err)
		}
	}
	if ok, err := d.env.Objects.Exists(ctx, key); ok || err != nil {
		t.Fatalf("the store still has the object %s: %v %v", key, ok, err)
	}
	// The staging key may hold the empty seal that refuses a live URL
	// of a file PUT whole (objectstore.Seal), never a byte of the file.
	if o, ok, err := d.env.Objects.Stat(ctx, upload.StagingKey(key)); err != nil || ok && (storeID != nil || o.Size != 0) {
		t.Fatalf("the store still has the object %s: %+v %v %v", upload.StagingKey(key), o, ok, err)
	}
}

// TestACompletionCutShortAfterTheStoreAssembledTheFile: the store
// assembles and the server reads the file outside the transaction that
// records the outcome. When that transaction never commits (a crash after
// the assembly; a request cut at its deadline is the same), the upload
// stays pending with its file assembled: a retry completes it, and if none
// comes the expiry job deletes the file, not only the multipart upload,
// once the completion's claim is older than CompletionGrace.
func TestACompletionCutShortAfterTheStoreAssembledTheFile(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	ctx := context.Background()
	file := pngFile(t, 10, 10, upload.DefaultPartSize+4096) // two parts: a multipart upload the store assembles
	cutShort := func(t *testing.T) api.Upload {
		t.Helper()
		u := d.create(t, "cut.png", "image/png", file)
		put(t, u, file, 1)
		put(t, u, file, 2)
		d.env.Idempotency.SetAfterCommand(func(context.Context) error { return errors.New("simulated crash after the assembly") })
		r := d.complete(u.Id)
		d.env.Idempotency.SetAfterCommand(nil)
		if r.Status < 500 {
			t.Fatalf("the cut completion answered %d %s", r.Status, r.Body)
		}
		if got := d.get(t, u.Id); got.Status != api.UploadPending {
			t.Fatalf("status %s", got.Status)
		}
		if ok, err := d.env.Objects.Exists(ctx, upload.ObjectKey(d.org, u.Id)); err != nil || !ok {
			t.Fatalf("the store did not assemble the file: %v %v", ok, err)
		}
		return u
	}

	t.Run("a retry completes it", func(t *testing.T) {
		u := cutShort(t)
		for _, p := range d.get(t, u.Id).Parts {
			if url, err := p.Url.Get(); !p.Received || err == nil {
				t.Fatalf("before the retry, part %d shows received %v with URL %q: every part is in the assembled file, and the multipart upload a URL would go to is gone", p.Number, p.Received, url)
			}
		}
		r := d.complete(u.Id)
		if r.Status != http.StatusOK {
			t.Fatalf("retry: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &u)
		if asset, err := u.Asset.Get(); u.Status != api.UploadReady || err != nil || asset.Width.MustGet() != 10 {
			t.Fatalf("retried: %+v", u)
		}
	})

	t.Run("the expiry deletes the assembled file", func(t *testing.T) {
		u := cutShort(t)
		if _, err := d.env.DB.Pool.Exec(ctx, "UPDATE uploads SET expires_at = now() - interval '1 second' WHERE id = $1", u.Id); err != nil {
			t.Fatal(err)
		}
		if n, err := upload.Expire(ctx, d.env.DB.Store, d.env.Objects, limitsOf(d.env.Config), time.Now(), 100); err != nil || n != 0 {
			t.Fatalf("an upload claimed by a completion a moment ago expired: %d %v", n, err)
		}
		if n, err := upload.Expire(ctx, d.env.DB.Store, d.env.Objects, limitsOf(d.env.Config), time.Now().Add(upload.CompletionGrace+time.Minute), 100); err != nil || n != 1 {
			t.Fatalf("expired %d: %v", n, err)
		}
		if ok, err := d.env.Objects.Exists(ctx, upload.ObjectKey(d.org, u.Id)); err != nil || ok {
			t.Fatalf("the assembled file is still stored: %v %v", ok, err)
		}
		if got := d.get(t, u.Id); got.Status != api.UploadFailed {
			t.Fatalf("status %s", got.Status)
		}
	})
}

// TestTheRiverJobAbortsExpiredUploads: serve's River client runs the
// expiry; an upload past its expiry is failed and its parts are gone from
// the store soon after the client starts.
func TestTheRiverJobAbortsExpiredUploads(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	file := pngFile(t, 10, 10, 4096)
	u := d.create(t, "late.png", "image/png", file)
	put(t, u, file, 1)
	ctx := context.Background()
	// A day and more after its creation: however lately its part arrived.
	if _, err := d.env.DB.Pool.Exec(ctx, "UPDATE uploads SET created_at = now() - interval '25 hours', expires_at = now() - interval '1 second' WHERE id = $1", u.Id); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, err := webhooks.New(d.env.DB.Store, webhooks.Config{FetchPollInterval: 20 * time.Millisecond, MoreJobs: upload.Jobs(d.env.DB.Store, d.env.Objects, limitsOf(d.env.Config), log)}, log)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	if err := svc.Start(runCtx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, stop := context.WithTimeout(ctx, 5*time.Second)
		defer stop()
		_ = svc.Stop(stopCtx)
		cancel()
	})
	deadline := time.Now().Add(20 * time.Second)
	for d.get(t, u.Id).Status != api.UploadFailed {
		if time.Now().After(deadline) {
			t.Fatal("the expired upload is still pending")
		}
		time.Sleep(50 * time.Millisecond)
	}
	d.storeHoldsNothingOf(t, u.Id)
}

// TestUploadsCreatedAtOnceCannotTogetherPassTheQuota: creations of an
// organization's uploads wait for one another on its row, and each reads
// the bytes used once it holds the row (a read before the lock, or in the
// locking statement's snapshot, lets both through): of two that each fit
// but not together, one is created and the other refused.
func TestUploadsCreatedAtOnceCannotTogetherPassTheQuota(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t, testenv.Options{Env: map[string]string{"ORG_STORAGE_QUOTA_BYTES": "29999999"}})
	ctx := context.Background()
	tx, err := d.env.DB.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE", d.org); err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"fileName": "a.png", "mimeType": "image/png", "sizeBytes": 15000000, "sha256": strings.Repeat("a", 64)}
	answers := make(chan int, 2)
	for range 2 {
		go func() { answers <- d.author.Do(http.MethodPost, uploadsURL(d.org), body).Status }()
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for waiting := 0; waiting < 2; {
		if err := d.env.DB.Pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%d creations wait for the organization's row, not 2", waiting)
		}
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	a, b := <-answers, <-answers
	if min(a, b) != http.StatusCreated || max(a, b) != http.StatusConflict {
		t.Fatalf("answers %d and %d, want one 201 and one 409", a, b)
	}
}

// TestCreatingAnUploadTakesThreeRoundTrips: creating an upload sends its
// statements in three round trips after the session's (docs/uploads.md):
// the role with BEGIN and the key's claim, the lock with the bytes used,
// the insert with the stored answer and COMMIT. The store's call is one
// more, to the store.
func TestCreatingAnUploadTakesThreeRoundTrips(t *testing.T) {
	t.Parallel()
	tracer := &testenv.RoundTrips{}
	d := newUploadDesk(t, testenv.Options{Tracer: tracer})
	var r *testenv.Response
	trips := tracer.Record(func() {
		r = d.author.Do(http.MethodPost, uploadsURL(d.org), map[string]any{
			"fileName": "a.png", "mimeType": "image/png", "sizeBytes": 1000, "sha256": strings.Repeat("a", 64)},
			testenv.Header{Name: "Idempotency-Key", Value: "three-trips"})
	})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	want := []string{"SessionGetBatch", "begin+IdempotencyKeyInsert+MembershipRoleGet",
		"OrganizationLockForUploads+UploadReservations", "UploadInsert+IdempotencyKeySetResponse+commit"}
	if !slices.Equal(trips, want) {
		t.Fatalf("round trips\n%q\nwant\n%q", trips, want)
	}
	// Nothing is read back from the insert: the answer's times are the ones
	// stored, written the same.
	var created, read map[string]any
	r.JSON(t, &created)
	d.author.Do(http.MethodGet, uploadsURL(d.org)+"/"+created["id"].(string), nil).JSON(t, &read)
	for _, k := range []string{"createdAt", "expiresAt", "status", "partSize"} {
		if created[k] != read[k] {
			t.Errorf("%s: created %v, read %v", k, created[k], read[k])
		}
	}
}

// TestAnUploadWhoseInsertFailsIsAbortedInTheStore: the insert of a new
// upload travels with COMMIT, after the store's upload was started; when
// it fails there, the store's upload is aborted, since no row names it for
// the expiry job. (The insert is made to fail by a trigger; the file has
// two parts, since a file of one part starts nothing in the store.)
func TestAnUploadWhoseInsertFailsIsAbortedInTheStore(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	ctx := context.Background()
	if _, err := d.env.DB.Pool.Exec(ctx, `
		CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;
		CREATE TRIGGER refuse BEFORE INSERT ON uploads FOR EACH ROW EXECUTE FUNCTION refuse()`); err != nil {
		t.Fatal(err)
	}
	author, _ := d.env.DB.User(t, "Ada Author")
	d.env.DB.Member(t, d.org, author, "author")
	var v upload.View
	err := d.env.DB.Store.InTx(ctx, func(q store.Tx) error {
		var err error
		v, err = upload.Create(ctx, q, d.env.Objects, d.org, author,
			upload.NewUpload{FileName: "a.png", MimeType: "image/png", SizeBytes: upload.DefaultPartSize + 1, SHA256: strings.Repeat("a", 64)},
			upload.NewLimits(1<<30, 1<<30, time.Hour, time.Hour), time.Now())
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("the transaction: %v", err)
	}
	if v.StoreUploadID == nil {
		t.Fatal("Create failed before the store's upload was started")
	}
	if parts, err := d.env.Objects.ListParts(ctx, v.ObjectKey, *v.StoreUploadID); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("the store still has the upload: %v %v", parts, err)
	}
}

// limitsOf are the upload limits of a server of cfg, as serve builds them.
func limitsOf(cfg config.Config) upload.Limits {
	return upload.NewLimits(cfg.OrgStorageQuotaBytes, cfg.UploadMaxBytes, cfg.UploadTTL, cfg.UploadURLTTL)
}
