package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/testenv"
	"creativeapi/internal/upload"
)

// A presigned URL is a capability to write: these tests hold it to the one
// write it is for (docs/uploads.md, "What a URL can write").

// readyUpload is a file of one part, sent and completed.
func (d *uploadDesk) readyUpload(t *testing.T, file []byte) api.Upload {
	t.Helper()
	u := d.create(t, "checked.png", "image/png", file)
	put(t, u, file, 1)
	r := d.complete(u.Id)
	if r.Status != http.StatusOK {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	var done api.Upload
	r.JSON(t, &done)
	done.Parts = u.Parts // the URLs as first given
	return done
}

// served is what /content of u's asset serves.
func (d *uploadDesk) served(t *testing.T, u api.Upload) []byte {
	t.Helper()
	asset := u.Asset.MustGet()
	r := d.author.Do(http.MethodGet, strings.TrimPrefix(asset.Url, d.env.Config.PublicBaseURL), nil)
	if r.Status != http.StatusFound {
		t.Fatalf("content: %d %s", r.Status, r.Body)
	}
	res, err := http.Get(r.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return b
}

// TestUploadURLCannotReplaceCheckedObject: once an upload is ready, its
// URL writes nothing /content serves: a page of HTML, other bytes of the
// same length, or no checksum header are refused by the store, and the
// announced bytes, which it still takes, land on the staging key, which
// only a completion's copy reads.
func TestUploadURLCannotReplaceCheckedObject(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	file := pngFile(t, 4, 4, 2048)
	u := d.readyUpload(t, file)
	part := u.Parts[0]
	html := append([]byte("<!doctype html><script>alert(document.domain)</script>"), bytes.Repeat([]byte(" "), 3<<20)...)
	sameLength := append([]byte("<html>"), make([]byte, len(file)-6)...)
	for _, tc := range []struct {
		name   string
		header map[string]string
		body   []byte
	}{
		{"3 MB of HTML", part.Headers, html},
		{"HTML of the announced length", part.Headers, sameLength},
		{"HTML without the checksum header", nil, sameLength},
	} {
		if status, body := putTo(t, part.Url.MustGet(), tc.header, tc.body); status/100 == 2 {
			t.Errorf("%s: the store took it (%d %s)", tc.name, status, body)
		}
	}
	if status, body := putTo(t, part.Url.MustGet(), part.Headers, file); status != http.StatusOK {
		t.Fatalf("the announced bytes: %d %s", status, body)
	}
	if ok, err := d.env.Objects.Exists(context.Background(), upload.StagingKey(upload.ObjectKey(d.org, u.Id))); err != nil || !ok {
		t.Fatalf("the URL did not write the staging key: %v %v", ok, err)
	}
	if got := d.served(t, u); !bytes.Equal(got, file) {
		t.Fatalf("/content serves %d bytes (%.20q), not the checked file", len(got), got)
	}
}

// TestOnePartPutRefusesOtherLength: the store refuses a body whose length
// is not the part's (Content-Length is signed), for a file PUT whole and
// for a part, so the quota, which counts sizeBytes, counts what the URLs
// can write.
func TestOnePartPutRefusesOtherLength(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	small := pngFile(t, 4, 4, 100)
	big := pngFile(t, 4, 4, upload.DefaultPartSize+100)
	for _, tc := range []struct {
		name string
		file []byte
		part int32
	}{{"a file PUT whole", small, 1}, {"the first of two parts", big, 1}, {"the last of two parts", big, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			u := d.create(t, "sized.png", "image/png", tc.file)
			p := u.Parts[tc.part-1]
			length := upload.PartLength(int64(len(tc.file)), u.PartSize, tc.part)
			for _, n := range []int64{length + 1, 3 << 20, length - 1} {
				if status, _ := putTo(t, p.Url.MustGet(), p.Headers, make([]byte, n)); status/100 == 2 {
					t.Fatalf("a body of %d bytes for a part of %d: %d", n, length, status)
				}
			}
			if got := d.get(t, u.Id); got.Parts[tc.part-1].Received {
				t.Fatalf("a refused PUT counts as received: %+v", got.Parts)
			}
		})
	}
}

// TestFailedUploadURLWritesNothingKept: after a failed completion, what
// the upload's URL still takes lands on the staging key, which nothing
// serves and the sweep empties once the upload is past its expiry (no URL
// works then); a sweep also empties a ready upload's staging key and
// leaves its checked file.
func TestFailedUploadURLWritesNothingKept(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	ctx := context.Background()
	file := pngFile(t, 4, 4, 2048)
	u := d.create(t, "not-a.gif", "image/gif", file)
	put(t, u, file, 1)
	if r := d.complete(u.Id); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	d.storeHoldsNothingOf(t, u.Id)
	// The URL still lives, but the store refuses it (the failed upload's
	// staging key is sealed).
	if status, _ := putTo(t, u.Parts[0].Url.MustGet(), u.Parts[0].Headers, file); status/100 == 2 {
		t.Fatalf("the failed upload's URL wrote again: %d", status)
	}
	ready := d.readyUpload(t, file)
	put(t, ready, file, 1)

	if n, err := upload.Sweep(ctx, d.env.DB.Store, d.env.Objects, time.Now(), 100); err != nil || n != 0 {
		t.Fatalf("swept %d before the expiry: %v", n, err)
	}
	later := u.ExpiresAt.Add(time.Minute)
	if n, err := upload.Sweep(ctx, d.env.DB.Store, d.env.Objects, later, 100); err != nil || n != 2 {
		t.Fatalf("swept %d: %v", n, err)
	}
	if n, err := upload.Sweep(ctx, d.env.DB.Store, d.env.Objects, later, 100); err != nil || n != 0 {
		t.Fatalf("a second sweep swept %d: %v", n, err)
	}
	d.storeHoldsNothingOf(t, u.Id)
	if ok, err := d.env.Objects.Exists(ctx, upload.StagingKey(upload.ObjectKey(d.org, ready.Id))); err != nil || ok {
		t.Fatalf("the ready upload's staging key still holds a file: %v %v", ok, err)
	}
	if got := d.served(t, ready); !bytes.Equal(got, file) {
		t.Fatalf("the sweep touched the ready upload's checked file: %d bytes", len(got))
	}
}

// TestOnlyTheUploaderReadsPartURLs: a part URL goes to the member who
// created the upload; an admin or another author reading it sees the
// upload without URLs.
func TestOnlyTheUploaderReadsPartURLs(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	file := pngFile(t, 4, 4, 2048)
	u := d.create(t, "mine.png", "image/png", file)
	for _, role := range []string{"admin", "author"} {
		id, _ := d.env.DB.User(t, "Other "+role)
		d.env.DB.Member(t, d.org, id, role)
		r := d.env.SessionFor(t, id).Do(http.MethodGet, uploadsURL(d.org)+"/"+u.Id.String(), nil)
		var seen api.Upload
		r.JSON(t, &seen)
		p := seen.Parts[0]
		if r.Status != http.StatusOK || seen.Status != api.UploadPending || !p.Url.IsNull() || !p.ExpiresAt.IsNull() || len(p.Headers) != 0 || p.Received {
			t.Fatalf("%s reading the upload: %d %s", role, r.Status, r.Body)
		}
	}
	if got := d.get(t, u.Id); got.Parts[0].Url.IsNull() {
		t.Fatalf("the uploader got no URL: %+v", got.Parts[0])
	}
}

// TestPartURLsLiveAnHourAndGetRenewsThem: a URL works for
// UPLOAD_URL_TTL, never past the upload's expiry (an upload nobody sent
// a part to expires an hour after its creation, so a URL signed later
// ends with it), and a GET signs fresh ones.
func TestPartURLsLiveAnHourAndGetRenewsThem(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	file := pngFile(t, 4, 4, 2048)
	u := d.create(t, "hour.png", "image/png", file)
	check := func(u api.Upload) string {
		t.Helper()
		raw := u.Parts[0].Url.MustGet()
		parsed, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		expires, lifetime := u.Parts[0].ExpiresAt.MustGet(), time.Until(u.Parts[0].ExpiresAt.MustGet())
		signed, _ := strconv.Atoi(parsed.Query().Get("X-Amz-Expires"))
		if signed > 3600 || signed < 3540 || lifetime > d.env.Config.UploadURLTTL || lifetime < d.env.Config.UploadURLTTL-time.Minute || expires.After(u.ExpiresAt) {
			t.Fatalf("URL %s expires at %s (in %s), the upload at %s", raw, expires, lifetime, u.ExpiresAt)
		}
		return parsed.Query().Get("X-Amz-Date")
	}
	first := check(u)
	time.Sleep(1100 * time.Millisecond) // X-Amz-Date counts seconds
	if again := check(d.get(t, u.Id)); again == first {
		t.Fatalf("GET gave the same URL (signed at %s)", first)
	}
	// An upload near its expiry gets URLs ending with it.
	if _, err := d.env.DB.Pool.Exec(context.Background(), "UPDATE uploads SET created_at = now() - interval '50 minutes', expires_at = now() + interval '10 minutes' WHERE id = $1", u.Id); err != nil {
		t.Fatal(err)
	}
	near := d.get(t, u.Id)
	if got := near.Parts[0].ExpiresAt.MustGet(); got.After(near.ExpiresAt) || time.Until(got) > 11*time.Minute {
		t.Fatalf("URL expires at %s, the upload at %s", got, near.ExpiresAt)
	}
}

// TestUploadReplayRequiresCurrentRights: a stored answer of createUpload
// (with working URLs) or completeUpload goes back only to a caller who
// may still upload: demoted to viewer, 403; removed, 404.
func TestUploadReplayRequiresCurrentRights(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		send func(d *uploadDesk, u api.Upload, k testenv.Header) *testenv.Response
	}{
		{"createUpload", func(d *uploadDesk, u api.Upload, k testenv.Header) *testenv.Response {
			return d.author.Do(http.MethodPost, uploadsURL(d.org), map[string]any{
				"fileName": "replayed.png", "mimeType": "image/png", "sizeBytes": 2048, "sha256": u.Sha256}, k)
		}},
		{"completeUpload", func(d *uploadDesk, u api.Upload, k testenv.Header) *testenv.Response {
			return d.complete(u.Id, k)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newUploadDesk(t)
			file := pngFile(t, 4, 4, 2048)
			u := d.create(t, "replayed.png", "image/png", file)
			put(t, u, file, 1)
			k := testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()}
			first := tc.send(d, u, k)
			if first.Status/100 != 2 {
				t.Fatalf("first: %d %s", first.Status, first.Body)
			}
			if again := tc.send(d, u, k); again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.Body, first.Body) {
				t.Fatalf("replay while allowed: %d %s", again.Status, again.Body)
			}
			var user uuid.UUID
			if err := d.env.DB.Pool.QueryRow(context.Background(), "SELECT created_by FROM uploads WHERE id = $1", u.Id).Scan(&user); err != nil {
				t.Fatal(err)
			}
			for _, step := range []struct {
				sql    string
				status int
				code   string
			}{
				{"UPDATE memberships SET role = 'viewer' WHERE organization_id = $1 AND user_id = $2", http.StatusForbidden, "action_forbidden"},
				{"DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2", http.StatusNotFound, "not_found"},
			} {
				if _, err := d.env.DB.Pool.Exec(context.Background(), step.sql, d.org, user); err != nil {
					t.Fatal(err)
				}
				r := tc.send(d, u, k)
				if r.Status != step.status || r.Header.Get("Idempotent-Replayed") != "" || r.Problem(t).Code != step.code {
					t.Fatalf("after %q: %d %s", step.sql, r.Status, r.Body)
				}
			}
		})
	}
}
