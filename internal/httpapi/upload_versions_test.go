package httpapi_test

import (
	"bytes"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/testenv"
	"creativeapi/internal/upload/mp4test"
)

// uploaded sends file to org as one part through the author's session and
// completes it; the answer is the upload as complete gave it (ready, or
// failed when the stored bytes are not file's).
func (d *uploadDesk) uploaded(t *testing.T, org uuid.UUID, name, mimeType string, file []byte) api.Upload {
	t.Helper()
	r := d.author.Do(http.MethodPost, uploadsURL(org), map[string]any{
		"fileName": name, "mimeType": mimeType, "sizeBytes": len(file), "sha256": sha(file)})
	if r.Status != http.StatusCreated {
		t.Fatalf("create upload: %d %s", r.Status, r.Body)
	}
	var u api.Upload
	r.JSON(t, &u)
	put(t, u, file, 1)
	r = d.author.Do(http.MethodPost, uploadsURL(org)+"/"+u.Id.String()+"/complete", map[string]any{})
	if r.Status != http.StatusOK && r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	if r = d.author.Do(http.MethodGet, uploadsURL(org)+"/"+u.Id.String(), nil); r.Status != http.StatusOK {
		t.Fatalf("get upload: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &u)
	return u
}

func fieldsOf(t *testing.T, r *testenv.Response) []string {
	t.Helper()
	p := r.Problem(t)
	var out []string
	for _, f := range p.FieldErrors {
		out = append(out, f.Field+" "+f.Code)
	}
	slices.Sort(out)
	return out
}

// TestAVersionTakesReadyUploadsOfItsOrganization: an asset written
// {uploadId} is the upload's Asset (name, type, size, SHA-256, the
// dimensions its bytes said, its content URL), beside a URL asset; the
// file comes back through the version asset's content URL byte for byte.
func TestAVersionTakesReadyUploadsOfItsOrganization(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	authorID, _ := d.env.DB.User(t, "Anna Author")
	d.env.DB.Member(t, d.org, authorID, "author")
	author := d.env.SessionFor(t, authorID)
	d.author = author
	creativeID := d.env.DB.DraftCreative(t, d.org, authorID)
	versions := "/api/v1/organizations/" + d.org.String() + "/creatives/" + creativeID.String() + "/versions"

	file := pngFile(t, 320, 480, 9000)
	u := d.uploaded(t, d.org, "poster.png", "image/png", file)
	want, err := u.Asset.Get()
	if u.Status != api.UploadReady || err != nil {
		t.Fatalf("upload: %+v", u)
	}
	r := author.Do(http.MethodPost, versions, map[string]any{"assets": []any{
		map[string]any{"uploadId": u.Id},
		map[string]any{"fileName": "backup.png", "mimeType": "image/png", "sizeBytes": 10, "sha256": strings.Repeat("a", 64),
			"url": "https://cdn.acme.test/backup.png", "width": 1, "height": 1},
	}})
	if r.Status != http.StatusCreated {
		t.Fatalf("add version: %d %s", r.Status, r.Body)
	}
	var c api.CreativeDetail
	r.JSON(t, &c)
	v, err := c.CurrentVersion.Get()
	if err != nil || len(v.Assets) != 2 {
		t.Fatalf("current version: %+v", c.CurrentVersion)
	}
	got := v.Assets[0]
	if got.FileName != "poster.png" || got.MimeType != "image/png" || got.SizeBytes != int64(len(file)) || got.Sha256 != sha(file) ||
		got.Width.MustGet() != 320 || got.Height.MustGet() != 480 || !got.DurationMs.IsNull() || got.Url != want.Url ||
		v.Assets[1].Url != "https://cdn.acme.test/backup.png" {
		t.Fatalf("assets: %+v", v.Assets)
	}
	// The version's asset is the upload's: the same id serves the file.
	if got.Id != want.Id || got.UploadId.MustGet() != u.Id || !v.Assets[1].UploadId.IsNull() {
		t.Fatalf("asset ids: version %v (upload %v), upload's %v; URL asset's uploadId %+v", got.Id, got.UploadId, want.Id, v.Assets[1].UploadId)
	}
	content := "/api/v1/organizations/" + d.org.String() + "/assets/" + got.Id.String() + "/content"
	r = author.Do(http.MethodGet, content, nil)
	if r.Status != http.StatusFound {
		t.Fatalf("content: %d %s", r.Status, r.Body)
	}
	res, err := http.Get(r.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !bytes.Equal(body, file) {
		t.Fatalf("download: %d, %d bytes", res.StatusCode, len(body))
	}
	// A URL asset's id is no upload's.
	if r := author.Do(http.MethodGet, "/api/v1/organizations/"+d.org.String()+"/assets/"+v.Assets[1].Id.String()+"/content", nil); r.Status != http.StatusNotFound {
		t.Fatalf("content of a URL asset: %d %s", r.Status, r.Body)
	}
}

// TestAnUploadedFileHasOneIDEverywhere: the id complete answers for an
// uploaded file is its Asset's id in every version made from the upload
// (of one creative and of another), its url is /assets/{that id}/content
// and downloads the file, uploadId names the upload, and a comment
// anchored with that id is accepted on each version that has the file.
// One version may name an upload once.
func TestAnUploadedFileHasOneIDEverywhere(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	authorID, _ := d.env.DB.User(t, "Anna Author")
	d.env.DB.Member(t, d.org, authorID, "author")
	d.author = d.env.SessionFor(t, authorID)
	creatives := "/api/v1/organizations/" + d.org.String() + "/creatives/"
	first, second := d.env.DB.DraftCreative(t, d.org, authorID), d.env.DB.DraftCreative(t, d.org, authorID)

	file := pngFile(t, 64, 64, 5000)
	u := d.uploaded(t, d.org, "logo.png", "image/png", file)
	asset, err := u.Asset.Get()
	if err != nil {
		t.Fatalf("upload: %+v", u)
	}
	wantURL := d.env.Config.PublicBaseURL + "/api/v1/organizations/" + d.org.String() + "/assets/" + asset.Id.String() + "/content"
	if asset.Url != wantURL || asset.UploadId.MustGet() != u.Id {
		t.Fatalf("the upload's asset: %+v", asset)
	}
	addVersion := func(creativeID uuid.UUID, assets ...any) api.Asset {
		t.Helper()
		r := d.author.Do(http.MethodPost, creatives+creativeID.String()+"/versions", map[string]any{"assets": assets})
		if r.Status != http.StatusCreated {
			t.Fatalf("add version: %d %s", r.Status, r.Body)
		}
		var c api.CreativeDetail
		r.JSON(t, &c)
		return c.CurrentVersion.MustGet().Assets[0]
	}
	byUpload := map[string]any{"uploadId": u.Id}
	for i, got := range []api.Asset{addVersion(first, byUpload), addVersion(first, byUpload), addVersion(second, byUpload)} {
		if !reflect.DeepEqual(got, asset) {
			t.Errorf("version %d's asset %+v, the upload's %+v", i+1, got, asset)
		}
	}
	r := d.author.Do(http.MethodGet, creatives+first.String(), nil)
	var c api.CreativeDetail
	r.JSON(t, &c)
	if got := c.CurrentVersion.MustGet().Assets[0]; !reflect.DeepEqual(got, asset) {
		t.Errorf("the creative read back: %+v", got)
	}

	// A comment anchored with the id the upload returned, on each version
	// that has the file (the draft's first version has a URL asset).
	last := c.CurrentVersion.MustGet().Number
	for _, number := range []int{last - 1, last} {
		r := d.author.Do(http.MethodPost, creatives+first.String()+"/comments", map[string]any{
			"body": "The logo", "versionNumber": number, "anchor": map[string]any{"assetId": asset.Id}})
		if r.Status != http.StatusCreated {
			t.Fatalf("comment on version %d anchored to the upload's asset id: %d %s", number, r.Status, r.Body)
		}
		var cm api.Comment
		r.JSON(t, &cm)
		if cm.VersionNumber != number || cm.Anchor.MustGet().AssetId != asset.Id {
			t.Errorf("comment: %+v", cm)
		}
	}

	r = d.author.Do(http.MethodGet, strings.TrimPrefix(asset.Url, d.env.Config.PublicBaseURL), nil)
	if r.Status != http.StatusFound {
		t.Fatalf("content: %d %s", r.Status, r.Body)
	}
	res, err := http.Get(r.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !bytes.Equal(body, file) {
		t.Fatalf("download: %d, %d bytes", res.StatusCode, len(body))
	}

	r = d.author.Do(http.MethodPost, creatives+second.String()+"/versions", map[string]any{"assets": []any{byUpload, byUpload}})
	if got := fieldsOf(t, r); r.Status != http.StatusUnprocessableEntity || !slices.Equal(got, []string{"assets[1].uploadId invalid_value"}) {
		t.Fatalf("one upload twice in a version: %d %v", r.Status, got)
	}
}

// TestAnUploadIdMustNameAReadyUploadOfTheOrganization: unknown, pending,
// failed and another organization's uploads are each refused at their
// index, all at once, once the creative is found and the caller may
// change it; the two shapes of an asset do not mix.
func TestAnUploadIdMustNameAReadyUploadOfTheOrganization(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	authorID, _ := d.env.DB.User(t, "Anna Author")
	d.env.DB.Member(t, d.org, authorID, "author")
	d.author = d.env.SessionFor(t, authorID)
	creativeID := d.env.DB.DraftCreative(t, d.org, authorID)
	versions := "/api/v1/organizations/" + d.org.String() + "/creatives/" + creativeID.String() + "/versions"

	file := pngFile(t, 10, 10, 3000)
	pending := d.create(t, "pending.png", "image/png", file)
	failed := d.uploaded(t, d.org, "failed.gif", "image/gif", file)
	if failed.Status != api.UploadFailed {
		t.Fatalf("the upload of a PNG announced as a GIF: %+v", failed)
	}
	otherOrg := d.env.DB.Org(t, "Other Org")
	d.env.DB.Member(t, otherOrg, authorID, "author")
	elsewhere := d.uploaded(t, otherOrg, "elsewhere.png", "image/png", file)
	ready := d.uploaded(t, d.org, "ready.png", "image/png", file)
	if elsewhere.Status != api.UploadReady || ready.Status != api.UploadReady {
		t.Fatalf("uploads: %+v %+v", elsewhere, ready)
	}

	r := d.author.Do(http.MethodPost, versions, map[string]any{"assets": []any{
		map[string]any{"uploadId": uuid.New()},
		map[string]any{"uploadId": pending.Id},
		map[string]any{"uploadId": ready.Id},
		map[string]any{"uploadId": failed.Id},
		map[string]any{"uploadId": elsewhere.Id},
	}})
	want := []string{"assets[0].uploadId invalid_value", "assets[1].uploadId invalid_value", "assets[3].uploadId invalid_value", "assets[4].uploadId invalid_value"}
	if got := fieldsOf(t, r); r.Status != http.StatusUnprocessableEntity || !slices.Equal(got, want) {
		t.Fatalf("bad uploadIds: %d %v", r.Status, got)
	}

	t.Run("the two shapes do not mix", func(t *testing.T) {
		r := d.author.Do(http.MethodPost, versions, map[string]any{"assets": []any{
			map[string]any{"uploadId": ready.Id, "fileName": "x.png", "width": 3},
			map[string]any{"fileName": "x.png", "url": "https://cdn.acme.test/x.png"},
			map[string]any{"uploadId": "not-a-uuid"},
		}})
		want := []string{"assets[0].fileName invalid_value", "assets[0].width invalid_value",
			"assets[1].mimeType required", "assets[1].sha256 required", "assets[1].sizeBytes required", "assets[2].uploadId invalid_format"}
		if got := fieldsOf(t, r); r.Status != http.StatusUnprocessableEntity || !slices.Equal(got, want) {
			t.Fatalf("mixed shapes: %d %v", r.Status, got)
		}
	})
	t.Run("404 before the uploads are looked at", func(t *testing.T) {
		outsider, _ := d.env.SignedIn(t, "Otto Outsider")
		r := outsider.Do(http.MethodPost, versions, map[string]any{"assets": []any{map[string]any{"uploadId": ready.Id}}})
		if r.Status != http.StatusNotFound {
			t.Fatalf("a non-member: %d %s", r.Status, r.Body)
		}
	})
	t.Run("403 before the uploads are looked at", func(t *testing.T) {
		viewerID, _ := d.env.DB.User(t, "Vera Viewer")
		d.env.DB.Member(t, d.org, viewerID, "viewer")
		r := d.env.SessionFor(t, viewerID).Do(http.MethodPost, versions, map[string]any{"assets": []any{map[string]any{"uploadId": uuid.New()}}})
		if r.Status != http.StatusForbidden {
			t.Fatalf("a viewer: %d %s", r.Status, r.Body)
		}
	})
}

// TestAnUploadedMP4IsProbedAndMakesAVideoVersion: complete reads the
// MP4's size and duration (its moov after 2 MB of media data), and a
// video creative takes it by uploadId with those facts.
func TestAnUploadedMP4IsProbedAndMakesAVideoVersion(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	authorID, _ := d.env.DB.User(t, "Anna Author")
	d.env.DB.Member(t, d.org, authorID, "author")
	d.author = d.env.SessionFor(t, authorID)
	file := mp4test.File(t, 1280, 720, 100, 20_000)
	u := d.create(t, "clip.mp4", "video/mp4", file)
	put(t, u, file, 1)
	r := d.complete(u.Id)
	if r.Status != http.StatusOK {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &u)
	a, err := u.Asset.Get()
	if err != nil || a.Width.MustGet() != 1280 || a.Height.MustGet() != 720 || a.DurationMs.MustGet() < 3900 || a.DurationMs.MustGet() >= 4000 {
		t.Fatalf("asset: %+v", a)
	}

	var creativeID uuid.UUID
	if err := d.env.DB.Pool.QueryRow(t.Context(), `UPDATE creatives SET type = 'video' WHERE id = $1 RETURNING id`,
		d.env.DB.DraftCreative(t, d.org, authorID)).Scan(&creativeID); err != nil {
		t.Fatal(err)
	}
	r = d.author.Do(http.MethodPost, "/api/v1/organizations/"+d.org.String()+"/creatives/"+creativeID.String()+"/versions",
		map[string]any{"assets": []any{map[string]any{"uploadId": u.Id}}})
	if r.Status != http.StatusCreated {
		t.Fatalf("add version: %d %s", r.Status, r.Body)
	}
	var c api.CreativeDetail
	r.JSON(t, &c)
	got := c.CurrentVersion.MustGet().Assets[0]
	if got.MimeType != "video/mp4" || got.Width.MustGet() != 1280 || got.Height.MustGet() != 720 || got.DurationMs.MustGet() != a.DurationMs.MustGet() {
		t.Fatalf("version asset: %+v", got)
	}
}
