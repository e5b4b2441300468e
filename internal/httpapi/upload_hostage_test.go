package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/testenv"
	"creativeapi/internal/upload"
)

// The rules of docs/uploads.md, "Storage cannot be held hostage": pending
// limits per uploader, an expiry an hour after the last part, deletion,
// and a failed or deleted upload's URLs refused by the store.

func (d *uploadDesk) deleteAs(c *testenv.Client, id uuid.UUID) *testenv.Response {
	return c.Do(http.MethodDelete, uploadsURL(d.org)+"/"+id.String(), nil)
}

// member adds a member of role to the desk's organization.
func (d *uploadDesk) member(t *testing.T, name, role string) *testenv.Client {
	t.Helper()
	id, _ := d.env.DB.User(t, name)
	d.env.DB.Member(t, d.org, id, role)
	return d.env.SessionFor(t, id)
}

// announce creates an upload of size bytes as c and returns the answer.
func (d *uploadDesk) announce(c *testenv.Client, size int64) *testenv.Response {
	return c.Do(http.MethodPost, uploadsURL(d.org), map[string]any{
		"fileName": "a.png", "mimeType": "image/png", "sizeBytes": size, "sha256": strings.Repeat("a", 64)})
}

// TestADeletedUploadsURLsAreRefusedByTheStore: DELETE of a pending upload
// answers 204, frees its reservation, and the real store refuses its URLs
// from then on: a multipart upload's part URLs (aborted, with the part
// already sent) and the URL of a file PUT whole (its staged bytes replaced
// by a seal its URL cannot write over); the upload is gone (404).
func TestADeletedUploadsURLsAreRefusedByTheStore(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t, testenv.Options{Env: map[string]string{"ORG_STORAGE_QUOTA_BYTES": "30000000"}})
	for name, size := range map[string]int{"one part, PUT whole": 4096, "two parts": upload.DefaultPartSize + 4096} {
		t.Run(name, func(t *testing.T) {
			file := pngFile(t, 10, 10, size)
			u := d.create(t, "gone.png", "image/png", file)
			put(t, u, file, 1)
			if r := d.deleteAs(d.author, u.Id); r.Status != http.StatusNoContent {
				t.Fatalf("delete: %d %s", r.Status, r.Body)
			}
			for i := range u.Parts {
				start := int64(i) * u.PartSize
				end := min(start+u.PartSize, int64(len(file)))
				if status, body := putTo(t, u.Parts[i].Url.MustGet(), u.Parts[i].Headers, file[start:end]); status/100 == 2 {
					t.Fatalf("part %d: the store took a PUT after the delete: %d %s", i+1, status, body)
				}
			}
			d.storeHoldsNothingOf(t, u.Id)
			for _, r := range []*testenv.Response{
				d.author.Do(http.MethodGet, uploadsURL(d.org)+"/"+u.Id.String(), nil),
				d.complete(u.Id),
				d.deleteAs(d.author, u.Id),
			} {
				if r.Status != http.StatusNotFound {
					t.Fatalf("a deleted upload: %d %s", r.Status, r.Body)
				}
			}
		})
	}
	// Each of the two held 8 MiB or more of a 30 MB quota: freed, a
	// 29 MB upload fits.
	if r := d.announce(d.author, 29_000_000); r.Status != http.StatusCreated {
		t.Fatalf("the deleted uploads still hold their reservation: %d %s", r.Status, r.Body)
	}
}

// TestOnlyTheCreatorOrAnAdminDeletesAPendingUpload: another author and a
// reviewer get 403, another organization's member 404, an admin may; a
// ready or failed upload is 409 invalid_transition; an id that is no
// UUID 422.
func TestOnlyTheCreatorOrAnAdminDeletesAPendingUpload(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	file := pngFile(t, 4, 4, 2048)
	u := d.create(t, "mine.png", "image/png", file)
	for _, who := range []struct {
		name string
		c    *testenv.Client
	}{
		{"another author", d.member(t, "Otto Other", "author")},
		{"a reviewer", d.member(t, "Rita Reviewer", "reviewer")},
	} {
		r := d.deleteAs(who.c, u.Id)
		if p := r.Problem(t); r.Status != http.StatusForbidden || p.Code != "action_forbidden" {
			t.Fatalf("%s: %d %s", who.name, r.Status, r.Body)
		}
	}
	if r := d.author.Do(http.MethodDelete, uploadsURL(d.org)+"/not-a-uuid", nil); r.Status != http.StatusUnprocessableEntity || r.Problem(t).Code != "invalid_request" {
		t.Fatalf("an id that is no UUID: %d %s", r.Status, r.Body)
	}
	strangerID, _ := d.env.DB.User(t, "Stan Stranger")
	d.env.DB.Member(t, d.env.DB.Org(t, "Elsewhere"), strangerID, "admin")
	if r := d.deleteAs(d.env.SessionFor(t, strangerID), u.Id); r.Status != http.StatusNotFound {
		t.Fatalf("another organization's admin: %d %s", r.Status, r.Body)
	}
	if r := d.deleteAs(d.member(t, "Ada Admin", "admin"), u.Id); r.Status != http.StatusNoContent {
		t.Fatalf("an admin: %d %s", r.Status, r.Body)
	}

	ready := d.readyUpload(t, file)
	failed := d.create(t, "not-a.gif", "image/gif", file)
	put(t, failed, file, 1)
	if r := d.complete(failed.Id); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	for name, id := range map[string]uuid.UUID{"ready": ready.Id, "failed": failed.Id} {
		r := d.deleteAs(d.author, id)
		if p := r.Problem(t); r.Status != http.StatusConflict || p.Code != "invalid_transition" {
			t.Fatalf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	if got := d.served(t, ready); !bytes.Equal(got, file) {
		t.Fatal("the refused delete touched the ready file")
	}
}

// TestAFailedUploadsStagingObjectIsGoneAndItsURLRefused: a file PUT whole
// that fails its check is deleted when it fails, and its URL, which still
// has most of its hour, cannot write it again (before the seal it could).
func TestAFailedUploadsStagingObjectIsGoneAndItsURLRefused(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	file := pngFile(t, 4, 4, 2048)
	u := d.create(t, "not-a.gif", "image/gif", file)
	put(t, u, file, 1)
	if r := d.complete(u.Id); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	d.storeHoldsNothingOf(t, u.Id)
	if status, _ := putTo(t, u.Parts[0].Url.MustGet(), u.Parts[0].Headers, file); status/100 == 2 {
		t.Fatalf("the failed upload's URL wrote its staging key again: %d", status)
	}
	d.storeHoldsNothingOf(t, u.Id)
}

// TestEachUploaderHoldsAtMost20PendingUploadsAnd2GiB: the 21st pending
// upload of one member, or a byte past 2 GiB of them, is 409
// too_many_pending_uploads; another member is not held back; a deleted or
// expired upload no longer counts (its reservation ends at expiresAt,
// whether or not the expiry job ran).
func TestEachUploaderHoldsAtMost20PendingUploadsAnd2GiB(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	var first api.Upload
	for i := range upload.MaxPending {
		r := d.announce(d.author, 1000)
		if r.Status != http.StatusCreated {
			t.Fatalf("upload %d: %d %s", i+1, r.Status, r.Body)
		}
		if i == 0 {
			r.JSON(t, &first)
		}
	}
	tooMany := func(r *testenv.Response) {
		t.Helper()
		if p := r.Problem(t); r.Status != http.StatusConflict || p.Code != "too_many_pending_uploads" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	}
	tooMany(d.announce(d.author, 1000))
	other := d.member(t, "Otto Other", "author")
	if r := d.announce(other, 1000); r.Status != http.StatusCreated {
		t.Fatalf("another author: %d %s", r.Status, r.Body)
	}
	if r := d.deleteAs(d.author, first.Id); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := d.announce(d.author, 1000); r.Status != http.StatusCreated {
		t.Fatalf("after a delete: %d %s", r.Status, r.Body)
	}
	tooMany(d.announce(d.author, 1000))
	if _, err := d.env.DB.Pool.Exec(context.Background(),
		"UPDATE uploads SET expires_at = now() - interval '1 second' WHERE created_by <> (SELECT created_by FROM uploads WHERE id <> $1 GROUP BY created_by HAVING count(*) = 1 LIMIT 1)", first.Id); err != nil {
		t.Fatal(err)
	}
	// Bytes: with nothing pending, 2 GiB fits, and a byte more does not.
	if r := d.announce(d.author, upload.MaxPendingBytes-1); r.Status != http.StatusCreated {
		t.Fatalf("2 GiB less a byte once the others expired: %d %s", r.Status, r.Body)
	}
	if r := d.announce(d.author, 1); r.Status != http.StatusCreated {
		t.Fatalf("the last byte of 2 GiB: %d %s", r.Status, r.Body)
	}
	tooMany(d.announce(d.author, 1))
}

// TestPendingLimitsHoldUnderConcurrentCreates: with 19 pending uploads,
// two creations at once (both waiting on the organization's row) give one
// 201 and one 409 too_many_pending_uploads, never a 21st.
func TestPendingLimitsHoldUnderConcurrentCreates(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	for i := range upload.MaxPending - 1 {
		if r := d.announce(d.author, 1000); r.Status != http.StatusCreated {
			t.Fatalf("upload %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	ctx := context.Background()
	tx, err := d.env.DB.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE", d.org); err != nil {
		t.Fatal(err)
	}
	answers := make(chan *testenv.Response, 2)
	for range 2 {
		go func() { answers <- d.announce(d.author, 1000) }()
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
	if min(a.Status, b.Status) != http.StatusCreated || max(a.Status, b.Status) != http.StatusConflict {
		t.Fatalf("answers %d and %d, want one 201 and one 409", a.Status, b.Status)
	}
	var pending int
	if err := d.env.DB.Pool.QueryRow(ctx, "SELECT count(*) FROM uploads WHERE status = 'pending'").Scan(&pending); err != nil || pending != upload.MaxPending {
		t.Fatalf("%d pending uploads: %v", pending, err)
	}
}

// TestAnUploadExpiresAnHourAfterItsLastPart: a new upload expires an hour
// (UPLOAD_URL_TTL) after its creation, not a day; a part received later
// moves expiresAt to an hour after it, which GET answers and the expiry
// job respects (it extends instead of failing); the job fails it once an
// hour has passed since the last part.
func TestAnUploadExpiresAnHourAfterItsLastPart(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	ctx := context.Background()
	file := pngFile(t, 4, 4, 2048)
	u := d.create(t, "slow.png", "image/png", file)
	if life := u.ExpiresAt.Sub(u.CreatedAt); life != d.env.Config.UploadURLTTL {
		t.Fatalf("a new upload lives %s", life)
	}
	if url := u.Parts[0].ExpiresAt.MustGet(); url.After(u.ExpiresAt) {
		t.Fatalf("its URL outlives it: %s > %s", url, u.ExpiresAt)
	}
	// The store's part times are whole seconds: the upload is made two
	// seconds older, so the part below comes over a second after it.
	if _, err := d.env.DB.Pool.Exec(ctx, `UPDATE uploads SET created_at = created_at - interval '2 seconds',
		expires_at = expires_at - interval '2 seconds' WHERE id = $1`, u.Id); err != nil {
		t.Fatal(err)
	}
	u.CreatedAt, u.ExpiresAt = u.CreatedAt.Add(-2*time.Second), u.ExpiresAt.Add(-2*time.Second)
	put(t, u, file, 1)
	got := d.get(t, u.Id)
	if !got.ExpiresAt.After(u.ExpiresAt) || got.ExpiresAt.Sub(got.CreatedAt) > d.env.Config.UploadTTL {
		t.Fatalf("after a part: expires at %s, created %s (was %s)", got.ExpiresAt, got.CreatedAt, u.ExpiresAt)
	}
	// The job, run past the first expiry, sees the part: extended, not failed.
	if _, err := d.env.DB.Pool.Exec(ctx, "UPDATE uploads SET expires_at = $2 WHERE id = $1", u.Id, u.ExpiresAt); err != nil {
		t.Fatal(err)
	}
	lim := limitsOf(d.env.Config)
	if _, err := upload.Expire(ctx, d.env.DB.Store, d.env.Objects, lim, u.ExpiresAt.Add(time.Second), 100); err != nil {
		t.Fatal(err)
	}
	var status string
	var expires time.Time
	if err := d.env.DB.Pool.QueryRow(ctx, "SELECT status, expires_at FROM uploads WHERE id = $1", u.Id).Scan(&status, &expires); err != nil {
		t.Fatal(err)
	}
	if status != "pending" || !expires.After(u.ExpiresAt) {
		t.Fatalf("after the job: %s, expires at %s", status, expires)
	}
	if _, err := upload.Expire(ctx, d.env.DB.Store, d.env.Objects, lim, expires.Add(time.Second), 100); err != nil {
		t.Fatal(err)
	}
	if got := d.get(t, u.Id); got.Status != api.UploadFailed {
		t.Fatalf("an hour after its last part: %s", got.Status)
	}
}

// TestAStoppedStoreIs503StorageUnavailableNotADatabaseOutage: with the
// server's S3 store stopped mid-test, every upload operation that needs it
// answers 503 storage_unavailable with Retry-After (never a 500), the log
// says the object store, not the database, and nothing changed: once the
// store is back, the same upload is deleted.
func TestAStoppedStoreIs503StorageUnavailableNotADatabaseOutage(t *testing.T) {
	t.Parallel()
	objects, srv := testenv.NewPrivateObjectStore(t)
	var logs logLines
	d := newUploadDesk(t, testenv.Options{ObjectStore: objects, Log: &logs})
	file := pngFile(t, 10, 10, upload.DefaultPartSize+4096)
	u := d.create(t, "outage.png", "image/png", file)
	srv.Stop()
	for name, r := range map[string]*testenv.Response{
		"getUpload":      d.author.Do(http.MethodGet, uploadsURL(d.org)+"/"+u.Id.String(), nil),
		"completeUpload": d.complete(u.Id),
		"deleteUpload":   d.deleteAs(d.author, u.Id),
		"createUpload":   d.author.Do(http.MethodPost, uploadsURL(d.org), map[string]any{"fileName": "b.png", "mimeType": "image/png", "sizeBytes": len(file), "sha256": sha(file)}),
	} {
		if p := r.Problem(t); r.Status != http.StatusServiceUnavailable || p.Code != "storage_unavailable" || r.Header.Get("Retry-After") == "" {
			t.Errorf("%s: %d %s (Retry-After %q)", name, r.Status, r.Body, r.Header.Get("Retry-After"))
		}
	}
	if log := logs.String(); !strings.Contains(log, `"msg":"object store unavailable"`) || strings.Contains(log, "database unavailable") ||
		strings.Contains(log, "unexpected error") {
		t.Errorf("the log:\n%s", log)
	}
	srv.Start(t)
	if got := d.get(t, u.Id); got.Status != api.UploadPending {
		t.Fatalf("after the outage: %s", got.Status)
	}
	if r := d.deleteAs(d.author, u.Id); r.Status != http.StatusNoContent {
		t.Fatalf("delete after the outage: %d %s", r.Status, r.Body)
	}
}
