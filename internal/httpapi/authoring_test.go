package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
)

// The authoring loop (openapi.yaml: createCreative, addCreativeVersion,
// updateCreative, listCreativeEvents): each test is named after the rule it
// proves, through the real server, every answer checked against the spec.

func newCreativeBody(title string) map[string]any {
	return map[string]any{"title": title, "type": "static", "aspectRatio": "9:16", "geo": "DE", "language": "de-DE"}
}

func videoAsset(name string) map[string]any {
	return map[string]any{"fileName": name, "mimeType": "video/mp4", "sizeBytes": 8_000_000, "width": 1920, "height": 1080,
		"durationMs": 15_000, "url": "https://cdn.example.test/" + name, "sha256": strings.Repeat("cd", 32)}
}

func versionBody(assets ...map[string]any) map[string]any {
	list := make([]any, len(assets))
	for i, a := range assets {
		list[i] = a
	}
	return map[string]any{"assets": list}
}

// create creates a creative as who and returns it.
func (d *reviewDesk) create(t *testing.T, who string, body any) api.CreativeDetail {
	t.Helper()
	r := d.clients[who].Do(http.MethodPost, creativesURL(d.org), body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var c api.CreativeDetail
	r.JSON(t, &c)
	return c
}

func (d *reviewDesk) addVersion(who string, id uuid.UUID, body any, headers ...testenv.Header) *testenv.Response {
	return d.clients[who].Do(http.MethodPost, creativeURL(d.org, id)+"/versions", body, headers...)
}

func (d *reviewDesk) patch(who string, id uuid.UUID, body any) *testenv.Response {
	return d.clients[who].Do(http.MethodPatch, creativeURL(d.org, id), body)
}

// historyEvent is one item of listCreativeEvents as decoded loosely, so a
// test sees which keys are present and null.
type historyEvent struct {
	ID         uuid.UUID     `json:"id"`
	Type       string        `json:"type"`
	Actor      api.UserRef   `json:"actor"`
	FromStatus *string       `json:"fromStatus"`
	ToStatus   string        `json:"toStatus"`
	Version    int           `json:"version"`
	Comment    *string       `json:"comment"`
	Changes    []changeEntry `json:"changes"`
	Stage      *string       `json:"stage"`
	Override   bool          `json:"override"`
}

type changeEntry struct {
	Field string  `json:"field"`
	From  *string `json:"from"`
	To    *string `json:"to"`
}

// history reads a creative's whole history as who, page by page.
func (d *reviewDesk) history(t *testing.T, who string, id uuid.UUID, limit int) []historyEvent {
	t.Helper()
	var out []historyEvent
	url := fmt.Sprintf("%s/events?limit=%d", creativeURL(d.org, id), limit)
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("the history never ends")
		}
		r := d.clients[who].Do(http.MethodGet, url, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("events: %d %s", r.Status, r.Body)
		}
		var page struct {
			Items      []historyEvent `json:"items"`
			NextCursor *string        `json:"nextCursor"`
		}
		r.JSON(t, &page)
		out = append(out, page.Items...)
		if page.NextCursor == nil {
			return out
		}
		url = fmt.Sprintf("%s/events?limit=%d&cursor=%s", creativeURL(d.org, id), limit, *page.NextCursor)
	}
}

func fieldErrs(t *testing.T, r *testenv.Response) []string {
	t.Helper()
	var out []string
	for _, f := range r.Problem(t).FieldErrors {
		out = append(out, f.Field+" "+f.Code)
	}
	sort.Strings(out)
	return out
}

func TestCreateCreativeAnswersADraftAtVersionOneWithTheNextNumber(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	before := d.creative(t, creativeSpec{})
	clientID, err := dbClient(t, d, "Acme Shoes")
	if err != nil {
		t.Fatal(err)
	}
	body := newCreativeBody("Summer sale story")
	body["clientId"] = clientID
	body["directionId"] = uuid.NewString()
	r := d.clients["author"].Do(http.MethodPost, creativesURL(d.org), body)
	if r.Status != http.StatusCreated {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
	var c api.CreativeDetail
	r.JSON(t, &c)
	if loc := r.Header.Get("Location"); loc != creativeURL(d.org, c.Id) {
		t.Errorf("Location %q, want %q", loc, creativeURL(d.org, c.Id))
	}
	prev := d.get(t, "author", before)
	if c.ReviewStatus != api.Draft || c.Version != 1 || !c.CurrentVersion.IsNull() || !c.ApprovedVersion.IsNull() ||
		c.Author.Id != d.users["author"] || c.Title != "Summer sale story" || c.Number != nextNumber(t, prev.Number) {
		t.Fatalf("created %s", r.Body)
	}
	if cl, err := c.Client.Get(); err != nil || cl.Name != "Acme Shoes" {
		t.Errorf("client %v", c.Client)
	}
	// A draft without a version: its author may archive it, edit it and upload a version.
	if !slices.Equal(c.AvailableActions, []api.CreativeAction{api.CreativeActionArchive}) ||
		c.Permissions != (api.CreativePermissions{AddVersion: true, Edit: true}) {
		t.Errorf("actions %v, permissions %+v", c.AvailableActions, c.Permissions)
	}
	if got := d.get(t, "author", c.Id); !bytes.Equal(mustJSON(t, got), mustJSON(t, c)) {
		t.Errorf("get answers\n%s\nthe create answered\n%s", mustJSON(t, got), mustJSON(t, c))
	}
	h := d.history(t, "viewer", c.Id, 20)
	if len(h) != 1 || h[0].Type != "created" || h[0].FromStatus != nil || h[0].ToStatus != "draft" || h[0].Version != 1 ||
		h[0].Actor.Id != d.users["author"] || h[0].Comment != nil || h[0].Changes != nil {
		t.Fatalf("history %+v", h)
	}
}

func TestOnlyAuthorsAndAdminsCreateCreatives(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	for who, want := range map[string]int{"admin": 201, "author": 201, "reviewer": 403, "viewer": 403, "outsider": 404} {
		r := d.clients[who].Do(http.MethodPost, creativesURL(d.org), newCreativeBody("By "+who))
		if r.Status != want {
			t.Errorf("%s: %d %s", who, r.Status, r.Body)
		}
		if want == 403 && problemCode(t, r) != "action_forbidden" || want == 404 && problemCode(t, r) != "not_found" {
			t.Errorf("%s: %s", who, r.Body)
		}
	}
}

func TestCreateCreativeRefusesInTheDocumentedOrder(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	other := d.env.DB.Org(t, "Elsewhere")
	foreignClient, err := dbClientOf(t, d, other, "Not ours")
	if err != nil {
		t.Fatal(err)
	}
	withClient := newCreativeBody("With a foreign client")
	withClient["clientId"] = foreignClient
	withClient["taskId"] = uuid.NewString()
	bad := map[string]any{"title": "  ", "type": "banner", "aspectRatio": "0:1", "geo": "de", "language": "not a tag", "extra": 1}
	tests := []struct {
		name   string
		who    string
		path   string
		body   any
		status int
		fields []string
	}{
		{"not signed in is 401 whatever the body", "", creativesURL(d.org), `{"title":`, 401, nil},
		{"every invalid field at once, before a foreign organization's 404", "outsider", creativesURL(d.org), bad, 422,
			[]string{"aspectRatio invalid_format", "extra unknown_field", "geo invalid_format", "language invalid_format", "title invalid_format", "type invalid_value"}},
		{"a missing title and type are required", "author", creativesURL(d.org), map[string]any{"aspectRatio": "1:1", "geo": "DE", "language": "de"}, 422,
			[]string{"title required", "type required"}},
		{"a control character in the title is refused", "author", creativesURL(d.org), newCreativeBodyWith("title", "Sale\u0000"), 422, []string{"title invalid_format"}},
		{"a foreign organization is 404", "outsider", creativesURL(d.org), newCreativeBody("x"), 404, nil},
		{"an unknown organization is 404", "author", creativesURL(uuid.New()), newCreativeBody("x"), 404, nil},
		{"a viewer is 403 before the client is checked", "viewer", creativesURL(d.org), withClient, 403, nil},
		{"a client and task not of this organization are 422", "author", creativesURL(d.org), withClient, 422, []string{"clientId invalid_value", "taskId invalid_value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := d.env.Client(t)
			if tt.who != "" {
				c = d.clients[tt.who]
			}
			r := c.Do(http.MethodPost, tt.path, tt.body)
			if r.Status != tt.status {
				t.Fatalf("got %d %s, want %d", r.Status, r.Body, tt.status)
			}
			if tt.fields != nil && !slices.Equal(fieldErrs(t, r), tt.fields) {
				t.Fatalf("field errors %v, want %v", fieldErrs(t, r), tt.fields)
			}
		})
	}
	if n := count(t, d.env, "SELECT count(*) FROM creatives WHERE organization_id = $1", d.org); n != 0 {
		t.Fatalf("refusals created %d creatives", n)
	}
}

func newCreativeBodyWith(field string, value any) map[string]any {
	b := newCreativeBody("Sale")
	b[field] = value
	return b
}

func TestConcurrentCreatesTakeConsecutiveNumbers(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t, testenv.Options{MaxConns: 30})
	first := d.create(t, "author", newCreativeBody("First"))
	const n = 50
	numbers := make([]string, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := d.clients["author"].Do(http.MethodPost, creativesURL(d.org), newCreativeBody(fmt.Sprintf("Concurrent %d", i)))
			if r.Status != http.StatusCreated {
				t.Errorf("create %d: %d %s", i, r.Status, r.Body)
				return
			}
			var c api.CreativeDetail
			_ = json.Unmarshal(r.Body, &c)
			numbers[i] = c.Number
		}()
	}
	close(start)
	wg.Wait()
	sort.Strings(numbers)
	want := first.Number
	for _, got := range numbers {
		want = nextNumber(t, want)
		if got != want {
			t.Fatalf("numbers %v: want %s next (after %s, no gaps, no repeats)", numbers, want, first.Number)
		}
	}
}

// nextNumber is the CR- number after n.
func nextNumber(t *testing.T, n string) string {
	t.Helper()
	var i int
	if _, err := fmt.Sscanf(n, "CR-%d", &i); err != nil {
		t.Fatalf("number %q: %v", n, err)
	}
	return fmt.Sprintf("CR-%06d", i+1)
}

func TestAddVersionMakesItCurrentAndMovesTheStateAsTheTableSays(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	tests := []struct {
		name   string
		spec   creativeSpec
		who    string
		status int
		code   string
		to     review.Status
	}{
		{"a draft stays a draft", creativeSpec{status: review.StatusDraft, versions: 1, assets: 1}, "author", 201, "", review.StatusDraft},
		{"a first version of a draft", creativeSpec{status: review.StatusDraft}, "author", 201, "", review.StatusDraft},
		{"changes requested stays changes requested", creativeSpec{status: review.StatusChangesRequested, versions: 1, assets: 1}, "author", 201, "", review.StatusChangesRequested},
		{"an approved creative goes back to draft", creativeSpec{status: review.StatusApproved, versions: 1, assets: 1, approved: true}, "author", 201, "", review.StatusDraft},
		{"an admin adds a version to another's creative", creativeSpec{status: review.StatusDraft, versions: 1}, "admin", 201, "", review.StatusDraft},
		{"in review is 409 invalid_transition", creativeSpec{status: review.StatusInReview, versions: 1}, "author", 409, "invalid_transition", ""},
		{"archived is 409 invalid_transition", creativeSpec{status: review.StatusArchived, versions: 1}, "author", 409, "invalid_transition", ""},
		{"a reviewer may not", creativeSpec{status: review.StatusDraft, versions: 1}, "reviewer", 403, "action_forbidden", ""},
		{"a viewer may not", creativeSpec{status: review.StatusDraft, versions: 1}, "viewer", 403, "action_forbidden", ""},
		{"another author may not", creativeSpec{status: review.StatusDraft, versions: 1, author: "admin"}, "author", 403, "action_forbidden", ""},
		{"a member of another workspace gets 404", creativeSpec{status: review.StatusDraft, versions: 1}, "outsider", 404, "not_found", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			id := d.creative(t, tt.spec)
			before := d.get(t, "admin", id)
			r := d.addVersion(tt.who, id, map[string]any{"expectedVersion": 1, "assets": []any{pngAsset("a.png"), pngAsset("b.png")}})
			if r.Status != tt.status || problemCode(t, r) != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
			status, version, events := d.state(t, id)
			if tt.status != 201 {
				if status != string(tt.spec.status) || version != 1 || events != 0 {
					t.Fatalf("a refusal changed the creative: %s v%d, %d events", status, version, events)
				}
				return
			}
			var c api.CreativeDetail
			r.JSON(t, &c)
			cur, err := c.CurrentVersion.Get()
			if err != nil || cur.Number != tt.spec.versions+1 || len(cur.Assets) != 2 || cur.Assets[0].FileName != "a.png" ||
				cur.Assets[1].FileName != "b.png" || cur.Author.Id != d.users[tt.who] {
				t.Fatalf("current version %s", r.Body)
			}
			if c.ReviewStatus != api.ReviewStatus(tt.to) || c.Version != 2 || status != string(tt.to) || version != 2 || events != 1 {
				t.Fatalf("answer %s v%d, stored %s v%d with %d events, want %s v2 with 1", c.ReviewStatus, c.Version, status, version, events, tt.to)
			}
			if r.Header.Get("Location") != creativeURL(d.org, id) {
				t.Errorf("Location %q", r.Header.Get("Location"))
			}
			// The approved version stays the one that was approved.
			wasApproved, _ := before.ApprovedVersion.Get()
			nowApproved, _ := c.ApprovedVersion.Get()
			if before.ApprovedVersion.IsNull() != c.ApprovedVersion.IsNull() || wasApproved.Id != nowApproved.Id {
				t.Fatalf("approvedVersion %v became %v", before.ApprovedVersion, c.ApprovedVersion)
			}
			e := d.lastEvent(t, id)
			if e.action != "version_added" || e.from != string(tt.spec.status) || e.to != string(tt.to) || e.version != 2 || e.actor != d.users[tt.who] {
				t.Fatalf("event %+v", e)
			}
		})
	}
}

func TestVersionNumbersCountPerCreative(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.create(t, "author", newCreativeBody("Counted")).Id
	for n := 1; n <= 3; n++ {
		r := d.addVersion("author", id, versionBody(pngAsset(fmt.Sprintf("v%d.png", n))))
		var c api.CreativeDetail
		r.JSON(t, &c)
		if v, err := c.CurrentVersion.Get(); err != nil || v.Number != n || c.Version != n+1 {
			t.Fatalf("upload %d: %s", n, r.Body)
		}
	}
	other := d.create(t, "author", newCreativeBody("Other"))
	var c api.CreativeDetail
	d.addVersion("author", other.Id, versionBody(pngAsset("x.png"))).JSON(t, &c)
	if v, _ := c.CurrentVersion.Get(); v.Number != 1 {
		t.Fatalf("another creative's first version is %d", v.Number)
	}
}

func TestAddVersionReportsEveryBrokenAssetAtOnce(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	static := d.creative(t, creativeSpec{status: review.StatusDraft})
	video := d.create(t, "author", newCreativeBodyWith("type", "video")).Id
	html := d.create(t, "author", newCreativeBodyWith("type", "html5")).Id
	broken := []any{
		pngAsset("ok.png"),
		map[string]any{"fileName": "a/b.png", "mimeType": "image/png", "sizeBytes": 0, "width": 10, "height": 10,
			"url": "http://cdn.example.test/a.png", "sha256": "ABC"},
		map[string]any{"fileName": "c.png", "mimeType": "image/tiff", "sizeBytes": 6_000_000_000, "width": 0, "height": 10,
			"url": "https://cdn.example.test/c.png", "sha256": strings.Repeat("ab", 32), "colour": "red"},
		map[string]any{"fileName": "d.png", "mimeType": "image/png", "sizeBytes": 10, "durationMs": 5,
			"url": "https://cdn.example.test/d.png", "sha256": strings.Repeat("ab", 32)},
		map[string]any{"fileName": "e.mp4", "mimeType": "video/mp4", "sizeBytes": 10, "width": 10, "height": 10,
			"url": "https://cdn.example.test/e.mp4", "sha256": strings.Repeat("ab", 32)},
	}
	many := make([]any, 21)
	for i := range many {
		many[i] = pngAsset(fmt.Sprintf("%d.png", i))
	}
	tests := []struct {
		name   string
		id     uuid.UUID
		body   any
		fields []string
	}{
		{"each broken item is named by its index", static, map[string]any{"assets": broken}, []string{
			"assets[1].fileName invalid_format", "assets[1].sha256 invalid_format", "assets[1].sizeBytes out_of_range", "assets[1].url invalid_format",
			"assets[2].colour unknown_field", "assets[2].mimeType invalid_value", "assets[2].sizeBytes out_of_range", "assets[2].width out_of_range",
			"assets[3].durationMs invalid_value", "assets[3].height required", "assets[3].width required",
			"assets[4].durationMs required",
		}},
		{"no assets is too short", static, map[string]any{"assets": []any{}}, []string{"assets too_short"}},
		{"21 assets is too long", static, map[string]any{"assets": many}, []string{"assets too_long"}},
		{"a missing required field", static, map[string]any{"assets": []any{map[string]any{"fileName": "x.png"}}}, []string{
			"assets[0].mimeType required", "assets[0].sha256 required", "assets[0].sizeBytes required", "assets[0].url required"}},
		{"a static creative takes images only", static, versionBody(pngAsset("a.png"), videoAsset("b.mp4")), []string{"assets[1].mimeType invalid_value"}},
		{"a video creative needs a video", video, versionBody(pngAsset("poster.png")), []string{"assets invalid_value"}},
		{"an html5 creative takes no video and needs one bundle", html, versionBody(videoAsset("b.mp4")), []string{"assets invalid_value", "assets[0].mimeType invalid_value"}},
		{"an expectedVersion below 1", static, map[string]any{"expectedVersion": 0, "assets": []any{pngAsset("a.png")}}, []string{"expectedVersion out_of_range"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := d.addVersion("author", tt.id, tt.body)
			if r.Status != http.StatusUnprocessableEntity || problemCode(t, r) != "invalid_request" {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
			if got := fieldErrs(t, r); !slices.Equal(got, tt.fields) {
				t.Fatalf("field errors\n  %v\nwant\n  %v", got, tt.fields)
			}
		})
	}
	t.Run("a video with a poster and an html5 bundle with a backup image fit", func(t *testing.T) {
		bundle := map[string]any{"fileName": "b.zip", "mimeType": "application/zip", "sizeBytes": 1000,
			"url": "https://cdn.example.test/b.zip", "sha256": strings.Repeat("ef", 32)}
		for id, body := range map[uuid.UUID]any{video: versionBody(videoAsset("v.mp4"), pngAsset("poster.png")), html: versionBody(bundle, pngAsset("backup.png"))} {
			if r := d.addVersion("author", id, body); r.Status != http.StatusCreated {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
		}
	})
	t.Run("the type is checked only for a caller who may add a version", func(t *testing.T) {
		r := d.addVersion("viewer", video, versionBody(pngAsset("a.png")))
		if r.Status != http.StatusForbidden {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
}

func TestAddVersionRefusesInTheDocumentedOrder(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	inReview := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	video := d.create(t, "author", newCreativeBodyWith("type", "video")).Id
	tests := []struct {
		name   string
		who    string
		id     uuid.UUID
		body   any
		status int
		code   string
	}{
		{"a foreign member's stale wrong-type upload is 404", "outsider", video, map[string]any{"expectedVersion": 9, "assets": []any{pngAsset("a.png")}}, 404, "not_found"},
		{"a viewer's stale wrong-type upload is 403", "viewer", video, map[string]any{"expectedVersion": 9, "assets": []any{pngAsset("a.png")}}, 403, "action_forbidden"},
		{"a stale wrong-type upload is 422", "author", video, map[string]any{"expectedVersion": 9, "assets": []any{pngAsset("a.png")}}, 422, "invalid_request"},
		{"a stale upload while in review is version_conflict", "author", inReview, map[string]any{"expectedVersion": 9, "assets": []any{pngAsset("a.png")}}, 409, "version_conflict"},
		{"an upload while in review is invalid_transition", "author", inReview, map[string]any{"expectedVersion": 1, "assets": []any{pngAsset("a.png")}}, 409, "invalid_transition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := d.addVersion(tt.who, tt.id, tt.body)
			if r.Status != tt.status || problemCode(t, r) != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
		})
	}
}

func TestConcurrentVersionUploadsFromOneVersionSucceedOnce(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t, testenv.Options{MaxConns: 25})
	id := d.creative(t, creativeSpec{status: review.StatusChangesRequested, versions: 1, assets: 1})
	const n = 20
	statuses := make([]int, n)
	codes := make([]string, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := d.addVersion("author", id, map[string]any{"expectedVersion": 1, "assets": []any{pngAsset(fmt.Sprintf("race-%d.png", i))}})
			statuses[i] = r.Status
			if r.Status != http.StatusCreated {
				var p testenv.Problem
				_ = json.Unmarshal(r.Body, &p)
				codes[i] = p.Code
			}
		}()
	}
	close(start)
	wg.Wait()
	created := 0
	for i, s := range statuses {
		switch {
		case s == http.StatusCreated:
			created++
		case s != http.StatusConflict || codes[i] != "version_conflict":
			t.Errorf("request %d: %d %s", i, s, codes[i])
		}
	}
	versions := count(t, d.env, "SELECT count(*) FROM creative_versions WHERE creative_id = $1", id)
	if _, version, events := d.state(t, id); created != 1 || version != 2 || events != 1 || versions != 2 {
		t.Fatalf("%d created; stored v%d with %d events and %d versions, want 1 created, v2, 1 event, 2 versions", created, version, events, versions)
	}
}

func TestUpdateCreativeChangesOnlyWhatIsSentAndRecordsEachChange(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	task, err := dbTask(t, d, "Summer 2026")
	if err != nil {
		t.Fatal(err)
	}
	clientID, err := dbClient(t, d, "Acme Shoes")
	if err != nil {
		t.Fatal(err)
	}
	body := newCreativeBody("Summr sale")
	body["taskId"], body["clientId"] = task, clientID
	c := d.create(t, "author", body)

	r := d.patch("author", c.Id, map[string]any{"expectedVersion": 1, "title": "Summer sale", "clientId": nil, "geo": "DE"})
	if r.Status != http.StatusOK {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
	var after api.CreativeDetail
	r.JSON(t, &after)
	if after.Title != "Summer sale" || !after.Client.IsNull() || after.Version != 2 || after.Geo != "DE" || after.AspectRatio != "9:16" {
		t.Fatalf("after %s", r.Body)
	}
	if tk, err := after.Task.Get(); err != nil || tk.Id != task {
		t.Fatalf("the task was not sent and must stay: %v", after.Task)
	}
	if !after.UpdatedAt.After(c.UpdatedAt) && !after.UpdatedAt.Equal(c.UpdatedAt) {
		t.Fatalf("updatedAt %s before %s", after.UpdatedAt, c.UpdatedAt)
	}
	if got := d.get(t, "author", c.Id); !bytes.Equal(mustJSON(t, got), mustJSON(t, after)) {
		t.Fatalf("get answers\n%s\nthe edit answered\n%s", mustJSON(t, got), mustJSON(t, after))
	}
	h := d.history(t, "author", c.Id, 20)
	if len(h) != 2 || h[0].Type != "updated" || h[0].Version != 2 || *h[0].FromStatus != "draft" || h[0].ToStatus != "draft" {
		t.Fatalf("history %+v", h)
	}
	cid := clientID.String()
	before, after2 := "Summr sale", "Summer sale"
	want := []changeEntry{{"title", &before, &after2}, {"clientId", &cid, nil}}
	if !bytes.Equal(mustJSON(t, h[0].Changes), mustJSON(t, want)) {
		t.Fatalf("changes %s, want %s (geo was sent with its current value: no change)", mustJSON(t, h[0].Changes), mustJSON(t, want))
	}

	t.Run("a patch that changes nothing answers the creative as it is", func(t *testing.T) {
		for _, body := range []any{map[string]any{}, map[string]any{"title": "Summer sale", "clientId": nil}, map[string]any{"expectedVersion": 2}} {
			r := d.patch("author", c.Id, body)
			if r.Status != http.StatusOK || !bytes.Equal(r.Body, d.clients["author"].Do(http.MethodGet, creativeURL(d.org, c.Id), nil).Body) {
				t.Fatalf("%v: %d %s", body, r.Status, r.Body)
			}
		}
		if _, version, events := d.state(t, c.Id); version != 2 || events != 2 {
			t.Fatalf("no-op edits made v%d with %d events", version, events)
		}
	})
	t.Run("a stale expectedVersion is version_conflict", func(t *testing.T) {
		r := d.patch("author", c.Id, map[string]any{"expectedVersion": 1, "title": "Late"})
		if r.Status != http.StatusConflict || problemCode(t, r) != "version_conflict" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
	t.Run("null on a field that may not be null is invalid_type", func(t *testing.T) {
		r := d.patch("author", c.Id, map[string]any{"title": nil, "geo": nil})
		if got := fieldErrs(t, r); r.Status != 422 || !slices.Equal(got, []string{"geo invalid_type", "title invalid_type"}) {
			t.Fatalf("got %d %v", r.Status, got)
		}
	})
}

func TestOnlyAdminsAssignAReviewerWhoMayReview(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	tests := []struct {
		name     string
		who      string
		reviewer any
		status   int
		want     string
	}{
		{"the author may not assign", "author", d.users["reviewer"], 403, "action_forbidden"},
		{"a reviewer may not assign themselves", "reviewer", d.users["reviewer"], 403, "action_forbidden"},
		{"the author may not send even the current value", "author", nil, 403, "action_forbidden"},
		{"not a member is 422", "admin", d.users["outsider"], 422, "reviewerId invalid_value"},
		{"an unknown user is 422", "admin", uuid.New(), 422, "reviewerId invalid_value"},
		{"a viewer may not review", "admin", d.users["viewer"], 422, "reviewerId invalid_value"},
		{"an author-role member may not review", "admin", d.users["author"], 422, "reviewerId invalid_value"},
		{"an admin assigns a reviewer", "admin", d.users["reviewer"], 200, ""},
		{"an admin assigns an admin", "admin", d.users["admin"], 200, ""},
		{"an admin unassigns", "admin", nil, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := d.patch(tt.who, id, map[string]any{"reviewerId": tt.reviewer})
			if r.Status != tt.status {
				t.Fatalf("got %d %s, want %d", r.Status, r.Body, tt.status)
			}
			switch {
			case tt.status == 403 && problemCode(t, r) != tt.want:
				t.Fatalf("got %s", r.Body)
			case tt.status == 422 && !slices.Equal(fieldErrs(t, r), []string{tt.want}):
				t.Fatalf("got %v", fieldErrs(t, r))
			case tt.status == 200:
				var c api.CreativeDetail
				r.JSON(t, &c)
				got, err := c.Reviewer.Get()
				if tt.reviewer == nil && !c.Reviewer.IsNull() || tt.reviewer != nil && (err != nil || got.Id != tt.reviewer) {
					t.Fatalf("reviewer %v, want %v", c.Reviewer, tt.reviewer)
				}
			}
		})
	}
	t.Run("the creative's author, even an admin, may not review it", func(t *testing.T) {
		own := d.creative(t, creativeSpec{status: review.StatusDraft, author: "admin"})
		r := d.patch("admin", own, map[string]any{"reviewerId": d.users["admin"]})
		if !slices.Equal(fieldErrs(t, r), []string{"reviewerId invalid_value"}) {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
	t.Run("the assigned reviewer alone decides among reviewers", func(t *testing.T) {
		d.patch("admin", id, map[string]any{"reviewerId": d.users["reviewer"]})
		if r := d.act("other reviewer", id, map[string]any{"action": "approve"}); r.Status != http.StatusForbidden {
			t.Fatalf("another reviewer: %d %s", r.Status, r.Body)
		}
		if r := d.act("reviewer", id, map[string]any{"action": "approve"}); r.Status != http.StatusOK {
			t.Fatalf("the assigned reviewer: %d %s", r.Status, r.Body)
		}
	})
}

func TestUpdateCreativeRefusesInTheDocumentedOrder(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	archived := d.creative(t, creativeSpec{status: review.StatusArchived, versions: 1})
	withVersion := d.creative(t, creativeSpec{status: review.StatusDraft, versions: 1})
	bare := d.creative(t, creativeSpec{status: review.StatusDraft})
	other := d.env.DB.Org(t, "Elsewhere")
	foreignClient, err := dbClientOf(t, d, other, "Not ours")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		who    string
		id     uuid.UUID
		body   any
		status int
		code   string
	}{
		{"not signed in is 401", "", archived, `{"title":`, 401, "unauthenticated"},
		{"an unknown field is 422 before 404", "outsider", archived, map[string]any{"name": "x"}, 422, "invalid_request"},
		{"a foreign member is 404", "outsider", archived, map[string]any{"title": "x"}, 404, "not_found"},
		{"a viewer is 403 before the client is checked", "viewer", archived, map[string]any{"clientId": foreignClient, "expectedVersion": 9}, 403, "action_forbidden"},
		{"a client of another organization is 422 before a stale version", "admin", archived, map[string]any{"clientId": foreignClient, "expectedVersion": 9}, 422, "invalid_request"},
		{"a stale version is 409 before archived", "admin", archived, map[string]any{"title": "x", "expectedVersion": 9}, 409, "version_conflict"},
		{"an archived creative is invalid_transition", "admin", archived, map[string]any{"title": "x"}, 409, "invalid_transition"},
		{"an archived creative refuses even an empty patch", "admin", archived, map[string]any{}, 409, "invalid_transition"},
		{"the type may not change once a version is uploaded", "author", withVersion, map[string]any{"type": "video"}, 422, "invalid_request"},
		{"the type may change before the first version", "author", bare, map[string]any{"type": "video"}, 200, ""},
		{"the same type is no change", "author", withVersion, map[string]any{"type": "static"}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := d.env.Client(t)
			if tt.who != "" {
				c = d.clients[tt.who]
			}
			r := c.Do(http.MethodPatch, creativeURL(d.org, tt.id), tt.body)
			if r.Status != tt.status || problemCode(t, r) != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
		})
	}
	if _, version, events := d.state(t, archived); version != 1 || events != 0 {
		t.Fatalf("refusals changed the archived creative: v%d, %d events", version, events)
	}
}

func TestPermissionsAreExactlyTheChangesThatSucceed(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	for _, status := range review.Statuses {
		for _, who := range []string{"admin", "reviewer", "author", "viewer"} {
			t.Run(string(status)+" as "+who, func(t *testing.T) {
				t.Parallel()
				spec := creativeSpec{status: status, versions: 1, assets: 1}
				p := d.get(t, who, d.creative(t, spec)).Permissions
				for name, try := range map[string]struct {
					offered bool
					send    func(id uuid.UUID) *testenv.Response
				}{
					"addVersion": {p.AddVersion, func(id uuid.UUID) *testenv.Response { return d.addVersion(who, id, versionBody(pngAsset("p.png"))) }},
					"edit":       {p.Edit, func(id uuid.UUID) *testenv.Response { return d.patch(who, id, map[string]any{"title": "Edited"}) }},
					"assignReviewer": {p.AssignReviewer, func(id uuid.UUID) *testenv.Response {
						return d.patch(who, id, map[string]any{"reviewerId": d.users["reviewer"]})
					}},
				} {
					r := try.send(d.creative(t, spec))
					if ok := r.Status < 300; ok != try.offered {
						t.Errorf("%s: %d %s, offered %v", name, r.Status, r.Body, try.offered)
					}
				}
			})
		}
	}
}

func TestHistoryTellsTheAuthorWhyChangesWereRequested(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	c := d.create(t, "author", newCreativeBody("Loop"))
	steps := []struct {
		who  string
		send func() *testenv.Response
	}{
		{"author", func() *testenv.Response { return d.addVersion("author", c.Id, versionBody(pngAsset("v1.png"))) }},
		{"admin", func() *testenv.Response {
			return d.patch("admin", c.Id, map[string]any{"reviewerId": d.users["reviewer"]})
		}},
		{"author", func() *testenv.Response { return d.act("author", c.Id, map[string]any{"action": "submit"}) }},
		{"reviewer", func() *testenv.Response {
			return d.act("reviewer", c.Id, map[string]any{"action": "request_changes", "comment": "The logo is cut off."})
		}},
		{"author", func() *testenv.Response { return d.addVersion("author", c.Id, versionBody(pngAsset("v2.png"))) }},
		{"author", func() *testenv.Response { return d.act("author", c.Id, map[string]any{"action": "submit"}) }},
		{"reviewer", func() *testenv.Response { return d.act("reviewer", c.Id, map[string]any{"action": "approve"}) }},
	}
	for i, s := range steps {
		if r := s.send(); r.Status >= 300 {
			t.Fatalf("step %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	h := d.history(t, "author", c.Id, 3) // three pages and a bit
	type brief struct {
		typ, from, to string
		version       int
		actor         string
	}
	var got []brief
	for _, e := range h {
		from := "null"
		if e.FromStatus != nil {
			from = *e.FromStatus
		}
		actor := ""
		for name, id := range d.users {
			if id == e.Actor.Id {
				actor = name
			}
		}
		got = append(got, brief{e.Type, from, e.ToStatus, e.Version, actor})
	}
	want := []brief{
		{"approve", "in_review", "approved", 8, "reviewer"},
		{"submit", "changes_requested", "in_review", 7, "author"},
		{"version_added", "changes_requested", "changes_requested", 6, "author"},
		{"request_changes", "in_review", "changes_requested", 5, "reviewer"},
		{"submit", "draft", "in_review", 4, "author"},
		{"updated", "draft", "draft", 3, "admin"},
		{"version_added", "draft", "draft", 2, "author"},
		{"created", "null", "draft", 1, "author"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("history\n  %v\nwant\n  %v", got, want)
	}
	if h[3].Comment == nil || *h[3].Comment != "The logo is cut off." || h[0].Comment != nil {
		t.Fatalf("comments: %v, %v", h[3].Comment, h[0].Comment)
	}
	if len(h[5].Changes) != 1 || h[5].Changes[0].Field != "reviewerId" || h[5].Changes[0].From != nil || *h[5].Changes[0].To != d.users["reviewer"].String() {
		t.Fatalf("assignment changes %+v", h[5].Changes)
	}
	ids := map[uuid.UUID]bool{}
	for _, e := range h {
		ids[e.ID] = true
		if e.Type != "updated" && e.Changes != nil {
			t.Errorf("%s has changes %v", e.Type, e.Changes)
		}
	}
	if len(ids) != len(want) {
		t.Fatalf("%d distinct event ids for %d events", len(ids), len(want))
	}
	// Every key is present, null or not.
	r := d.clients["viewer"].Do(http.MethodGet, creativeURL(d.org, c.Id)+"/events?limit=100", nil)
	var raw struct{ Items []map[string]json.RawMessage }
	r.JSON(t, &raw)
	for _, item := range raw.Items {
		for _, k := range []string{"id", "type", "actor", "fromStatus", "toStatus", "version", "comment", "changes", "createdAt"} {
			if _, ok := item[k]; !ok {
				t.Fatalf("an event without %q: %v", k, item)
			}
		}
	}
}

func TestListCreativeEventsAnswersEveryDeclaredStatus(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{})
	events := func(id uuid.UUID) string { return creativeURL(d.org, id) + "/events" }
	tests := []struct {
		name   string
		who    string
		path   string
		status int
		field  string
	}{
		{"a member reads an empty history", "viewer", events(id), 200, ""},
		{"not signed in is 401", "", events(id), 401, ""},
		{"a member of another workspace gets 404", "outsider", events(id), 404, ""},
		{"a random creative is 404", "viewer", events(uuid.New()), 404, ""},
		{"a creative under another organization's id is 404", "viewer", fmt.Sprintf("/api/v1/organizations/%s/creatives/%s/events", uuid.New(), id), 404, ""},
		{"a cursor of another kind is 422", "viewer", events(id) + "?cursor=bm9wZQ", 422, "cursor invalid_format"},
		{"a limit of 0 is 422", "viewer", events(id) + "?limit=0", 422, "limit out_of_range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := d.env.Client(t)
			if tt.who != "" {
				c = d.clients[tt.who]
			}
			r := c.Do(http.MethodGet, tt.path, nil)
			if r.Status != tt.status {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
			if tt.status == 200 && string(r.Body) != `{"items":[],"nextCursor":null}`+"\n" {
				t.Fatalf("got %s", r.Body)
			}
			if tt.field != "" && !slices.Equal(fieldErrs(t, r), []string{tt.field}) {
				t.Fatalf("got %v", fieldErrs(t, r))
			}
		})
	}
}

func TestListCreativesFilters(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	titled := func(title string, spec creativeSpec) uuid.UUID {
		id := d.creative(t, spec)
		if _, err := d.env.DB.Pool.Exec(context.Background(), "UPDATE creatives SET title = $2 WHERE id = $1", id, title); err != nil {
			t.Fatal(err)
		}
		return id
	}
	sale := titled("Summer SALE story", creativeSpec{status: review.StatusDraft})
	sale2 := titled("Winter sale", creativeSpec{status: review.StatusInReview, versions: 1, reviewer: "reviewer"})
	pct := titled("100% cotton", creativeSpec{status: review.StatusApproved, versions: 1, reviewer: "other reviewer"})
	under := titled("snake_case banner", creativeSpec{status: review.StatusDraft, author: "admin"})
	plain := titled("Plain banner", creativeSpec{status: review.StatusChangesRequested, versions: 1, author: "admin", reviewer: "reviewer"})
	list := func(query string) []uuid.UUID {
		t.Helper()
		r := d.clients["viewer"].Do(http.MethodGet, creativesURL(d.org)+"?"+query, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		var l api.CreativeList
		r.JSON(t, &l)
		var ids []uuid.UUID
		for _, c := range l.Items {
			ids = append(ids, c.Id)
		}
		return ids
	}
	tests := []struct {
		query string
		want  []uuid.UUID
	}{
		{"q=sale", []uuid.UUID{sale2, sale}},
		{"q=SALE+STORY", []uuid.UUID{sale}},
		{"q=ale", []uuid.UUID{sale2, sale}},
		{"q=%25", []uuid.UUID{pct}},
		{"q=_", []uuid.UUID{under}},
		{"q=e_c", []uuid.UUID{under}},
		{"q=banner", []uuid.UUID{plain, under}},
		{"q=nothing+like+it", nil},
		{"authorId=" + d.users["admin"].String(), []uuid.UUID{plain, under}},
		{"reviewerId=" + d.users["reviewer"].String(), []uuid.UUID{plain, sale2}},
		{"reviewStatuses=draft&reviewStatuses=approved", []uuid.UUID{under, pct, sale}},
		{"reviewStatuses=in_review&reviewStatuses=changes_requested&reviewerId=" + d.users["reviewer"].String(), []uuid.UUID{plain, sale2}},
		{"reviewStatus=approved&reviewStatuses=draft&reviewStatuses=approved", []uuid.UUID{pct}},
		{"reviewStatus=in_review&reviewStatuses=draft", nil},
		{"reviewStatus=draft&q=banner", []uuid.UUID{under}},
		{"q=banner&authorId=" + d.users["admin"].String() + "&reviewStatus=draft", []uuid.UUID{under}},
		{"q=sale&reviewerId=" + d.users["reviewer"].String(), []uuid.UUID{sale2}},
		{"q=ba&authorId=" + d.users["admin"].String(), []uuid.UUID{plain, under}},
		{"authorId=" + d.users["viewer"].String(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			if got := list(tt.query); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("bad filters are 422", func(t *testing.T) {
		for query, want := range map[string]string{
			"q=":                                    "q too_short",
			"q=" + strings.Repeat("a", 101):         "q too_long",
			"q=a%00b":                               "q invalid_format",
			"authorId=nope":                         "authorId invalid_format",
			"reviewerId=nope":                       "reviewerId invalid_format",
			"reviewStatuses=draft&reviewStatuses=x": "reviewStatuses[1] invalid_value",
		} {
			r := d.clients["viewer"].Do(http.MethodGet, creativesURL(d.org)+"?"+query, nil)
			if got := fieldErrs(t, r); r.Status != 422 || !slices.Equal(got, []string{want}) {
				t.Errorf("%s: %d %v, want %s", query, r.Status, got, want)
			}
		}
	})
}

// TestTitleSearchPagesThroughEveryMatchOnce searches an organization larger
// than the search's window of recent creatives: the pages come from the
// window first, then from the trigram index, newest first, each match once.
func TestTitleSearchPagesThroughEveryMatchOnce(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	const total = 3000
	if _, err := d.env.DB.Pool.Exec(context.Background(), `
		WITH n AS (UPDATE organizations SET next_creative_number = next_creative_number + $2 WHERE id = $1 RETURNING next_creative_number - $2 AS first)
		INSERT INTO creatives (organization_id, number, title, type, aspect_ratio, geo, language, author_id)
		SELECT $1, n.first + g, 'Creative ' || g, 'static', '1:1', 'US', 'en-US', $3 FROM n, generate_series(0, $2 - 1) AS g`,
		d.org, total, d.users["author"]); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		q     string
		limit int
	}{{"creative 17", 7}, {"CREATIVE 2", 50}, {"ive 29", 100}, {"creative", 100}, {"e 3", 40}} {
		t.Run(tt.q, func(t *testing.T) {
			want := count(t, d.env, "SELECT count(*) FROM creatives WHERE organization_id = $1 AND title ILIKE '%' || $2 || '%'", d.org, tt.q)
			if want == 0 {
				t.Fatal("the search matches nothing")
			}
			seen := map[uuid.UUID]bool{}
			last := ""
			url := creativesURL(d.org) + fmt.Sprintf("?limit=%d&q=%s", tt.limit, strings.ReplaceAll(tt.q, " ", "+"))
			for pages := 0; ; pages++ {
				if pages > want {
					t.Fatal("the pages never end")
				}
				var l api.CreativeList
				d.clients["viewer"].Do(http.MethodGet, url, nil).JSON(t, &l)
				for _, c := range l.Items {
					if seen[c.Id] || last != "" && c.Number >= last || !strings.Contains(strings.ToLower(c.Title), strings.ToLower(tt.q)) {
						t.Fatalf("%s %q after %s (seen %v)", c.Number, c.Title, last, seen[c.Id])
					}
					seen[c.Id], last = true, c.Number
				}
				next, err := l.NextCursor.Get()
				if err != nil {
					break
				}
				url = creativesURL(d.org) + fmt.Sprintf("?limit=%d&q=%s&cursor=%s", tt.limit, strings.ReplaceAll(tt.q, " ", "+"), next)
			}
			if len(seen) != want {
				t.Fatalf("saw %d matches, want %d", len(seen), want)
			}
		})
	}
}

func TestListOrganizationMembersNamesTheReviewerCandidates(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	read := func(who, query string) ([]api.Member, *string) {
		t.Helper()
		r := d.clients[who].Do(http.MethodGet, "/api/v1/organizations/"+d.org.String()+"/members?"+query, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		var l api.MemberList
		r.JSON(t, &l)
		next, err := l.NextCursor.Get()
		if err != nil {
			return l.Items, nil
		}
		return l.Items, &next
	}
	all, _ := read("viewer", "")
	var names []string
	for _, m := range all {
		names = append(names, m.User.Name+" "+string(m.Role))
	}
	if want := []string{"admin admin", "author author", "other reviewer reviewer", "reviewer reviewer", "viewer viewer"}; !slices.Equal(names, want) {
		t.Fatalf("members %v, want %v", names, want)
	}
	candidates, _ := read("author", "role=reviewer&role=admin")
	if len(candidates) != 3 {
		t.Fatalf("candidates %+v", candidates)
	}
	var paged []string
	query := "limit=2"
	for range 5 {
		items, next := read("viewer", query)
		for _, m := range items {
			paged = append(paged, m.User.Name+" "+string(m.Role))
		}
		if next == nil {
			break
		}
		query = "limit=2&cursor=" + *next
	}
	if !slices.Equal(paged, names) {
		t.Fatalf("paged %v, want %v", paged, names)
	}
	for _, tt := range []struct {
		who, query string
		status     int
	}{
		{"outsider", "", 404}, {"", "", 401}, {"viewer", "role=owner", 422}, {"viewer", "cursor=bm9wZQ", 422},
	} {
		c := d.env.Client(t)
		if tt.who != "" {
			c = d.clients[tt.who]
		}
		if r := c.Do(http.MethodGet, "/api/v1/organizations/"+d.org.String()+"/members?"+tt.query, nil); r.Status != tt.status {
			t.Errorf("%s %s: %d %s", tt.who, tt.query, r.Status, r.Body)
		}
	}
}

func TestAuthoringCommandsTakeAFixedNumberOfRoundTrips(t *testing.T) {
	t.Parallel()
	tracer := &testenv.RoundTrips{}
	d := newReviewDesk(t, testenv.Options{Tracer: tracer})
	c := d.clients["author"]
	measure := func(method, path string, body any, status int, headers ...testenv.Header) []string {
		var r *testenv.Response
		sql := tracer.Record(func() { r = c.Do(method, path, body, headers...) })
		if r.Status != status {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		return sql
	}
	k := func() testenv.Header { return testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()} }
	created := measure(http.MethodPost, creativesURL(d.org), newCreativeBody("Counted"), 201, k())
	id := d.create(t, "author", newCreativeBody("Versioned")).Id
	versioned := measure(http.MethodPost, creativeURL(d.org, id)+"/versions", versionBody(pngAsset("a.png"), pngAsset("b.png")), 201, k())
	many := make([]map[string]any, 20)
	for i := range many {
		many[i] = pngAsset(fmt.Sprintf("%d.png", i))
	}
	versionedMany := measure(http.MethodPost, creativeURL(d.org, id)+"/versions", versionBody(many...), 201, k())
	edited := measure(http.MethodPatch, creativeURL(d.org, id), map[string]any{"title": "Renamed"}, 200)
	for name, tt := range map[string]struct {
		got  []string
		want string
	}{
		// The outbox event travels with the stored answer or COMMIT.
		"keyed create": {created, "SessionGetBatch, begin+IdempotencyKeyInsert+CreativeCreateCheck, CreativeCreate, " +
			"OutboxEventsInsert+IdempotencyKeySetResponse+commit"},
		"keyed version": {versioned, "SessionGetBatch, begin+IdempotencyKeyInsert+CreativeLockForAction, " +
			"CreativeVersionAdd+CreativeVersionsWithAssets, OutboxEventsInsert+IdempotencyKeySetResponse+commit"},
		"keyed version of 20 assets": {versionedMany, "SessionGetBatch, begin+IdempotencyKeyInsert+CreativeLockForAction, " +
			"CreativeVersionAdd+CreativeVersionsWithAssets, OutboxEventsInsert+IdempotencyKeySetResponse+commit"},
		"edit": {edited, "SessionGetBatch, begin+CreativeLockForAction, CreativeUpdate+CreativeVersionsWithAssets, OutboxEventsInsert+commit"},
	} {
		if got := strings.Join(tt.got, ", "); got != tt.want {
			t.Errorf("%s: %d round trips\n  %s\nwant\n  %s", name, len(tt.got), got, tt.want)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func dbClient(t *testing.T, d *reviewDesk, name string) (uuid.UUID, error) {
	return dbClientOf(t, d, d.org, name)
}

func dbClientOf(t *testing.T, d *reviewDesk, org uuid.UUID, name string) (uuid.UUID, error) {
	t.Helper()
	var id uuid.UUID
	err := d.env.DB.Pool.QueryRow(context.Background(), "INSERT INTO clients (organization_id, name) VALUES ($1, $2) RETURNING id", org, name).Scan(&id)
	return id, err
}

func dbTask(t *testing.T, d *reviewDesk, name string) (uuid.UUID, error) {
	t.Helper()
	var id uuid.UUID
	err := d.env.DB.Pool.QueryRow(context.Background(), "INSERT INTO tasks (organization_id, name) VALUES ($1, $2) RETURNING id", d.org, name).Scan(&id)
	return id, err
}
