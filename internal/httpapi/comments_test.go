package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
)

func commentsURL(org, id uuid.UUID) string { return creativeURL(org, id) + "/comments" }

func (d *reviewDesk) comment(who string, id uuid.UUID, body any, headers ...testenv.Header) *testenv.Response {
	return d.clients[who].Do(http.MethodPost, commentsURL(d.org, id), body, headers...)
}

// mustComment writes a comment as who and returns it.
func (d *reviewDesk) mustComment(t *testing.T, who string, id uuid.UUID, body any) api.Comment {
	t.Helper()
	r := d.comment(who, id, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("comment: %d %s", r.Status, r.Body)
	}
	var c api.Comment
	r.JSON(t, &c)
	return c
}

func (d *reviewDesk) comments(t *testing.T, who string, id uuid.UUID, query string) []api.Comment {
	t.Helper()
	var out []api.Comment
	url := commentsURL(d.org, id) + "?limit=2&" + query
	for {
		r := d.clients[who].Do(http.MethodGet, url, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("list %s: %d %s", url, r.Status, r.Body)
		}
		var page api.CommentList
		r.JSON(t, &page)
		out = append(out, page.Items...)
		next, err := page.NextCursor.Get()
		if err != nil {
			return out
		}
		url = commentsURL(d.org, id) + "?limit=2&" + query + "&cursor=" + next
	}
}

// commentCount is the number of comment rows of a creative, for "a refused
// request changes nothing".
func (d *reviewDesk) commentCount(t *testing.T, id uuid.UUID) int {
	t.Helper()
	var n int
	if err := d.env.DB.Pool.QueryRow(context.Background(), "SELECT count(*) FROM comments WHERE creative_id = $1", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// videoCreative is a video creative by "author" with one version: a 15 s
// video and a poster image; it returns the creative and the two asset ids.
func (d *reviewDesk) videoCreative(t *testing.T) (id, video, poster uuid.UUID) {
	t.Helper()
	body := newCreativeBody("Teaser")
	body["type"] = "video"
	c := d.create(t, "author", body)
	r := d.addVersion("author", c.Id, versionBody(videoAsset("teaser.mp4"), pngAsset("poster.png")))
	if r.Status != http.StatusCreated {
		t.Fatalf("version: %d %s", r.Status, r.Body)
	}
	var got api.CreativeDetail
	r.JSON(t, &got)
	v, _ := got.CurrentVersion.Get()
	return c.Id, v.Assets[0].Id, v.Assets[1].Id
}

func ids(cs []api.Comment) []uuid.UUID {
	out := make([]uuid.UUID, len(cs))
	for i, c := range cs {
		out[i] = c.Id
	}
	return out
}

func TestACommentThreadFromFirstRemarkToTombstone(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id, video, _ := d.videoCreative(t)
	if got := d.get(t, "reviewer", id).OpenCommentCount; got != 0 {
		t.Fatalf("openCommentCount before any comment: %d", got)
	}

	// A reviewer points at a region of the video at a span of time and
	// mentions the author; the key makes a retry the same comment.
	key := testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()}
	body := map[string]any{"body": "The logo is cut off here.", "mentionUserIds": []uuid.UUID{d.users["author"]},
		"anchor": map[string]any{"assetId": video, "region": map[string]any{"x": 0.7, "y": 0, "width": 0.3, "height": 0.25},
			"timeMs": map[string]any{"start": 1200, "end": 3400}}}
	r := d.comment("reviewer", id, body, key)
	if r.Status != http.StatusCreated {
		t.Fatalf("comment: %d %s", r.Status, r.Body)
	}
	var top api.Comment
	r.JSON(t, &top)
	if r.Header.Get("Location") != commentsURL(d.org, id)+"/"+top.Id.String() {
		t.Errorf("Location %q", r.Header.Get("Location"))
	}
	anchor, err := top.Anchor.Get()
	if err != nil || anchor.AssetId != video || top.VersionNumber != 1 || top.Author.Id != d.users["reviewer"] || top.Resolved ||
		len(top.Mentions) != 1 || top.Mentions[0].Id != d.users["author"] || top.Mentions[0].Name != "author" || top.Deleted || !top.ParentId.IsNull() {
		t.Errorf("comment as answered: %s", r.Body)
	}
	replay := d.comment("reviewer", id, body, key)
	if replay.Status != http.StatusCreated || string(replay.Body) != string(r.Body) || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %s (replayed %q)", replay.Status, replay.Body, replay.Header.Get("Idempotent-Replayed"))
	}

	// The author answers in the thread.
	reply := d.mustComment(t, "author", id, map[string]any{"body": "Moved it in v2.", "parentId": top.Id})
	if p, _ := reply.ParentId.Get(); p != top.Id || reply.VersionNumber != 1 || !reply.Anchor.IsNull() {
		t.Errorf("reply: %+v", reply)
	}
	if got := d.get(t, "viewer", id).OpenCommentCount; got != 1 {
		t.Errorf("openCommentCount with one open thread: %d, want 1 (replies do not count)", got)
	}

	// The list: oldest first, filtered, the same as answered.
	all := d.comments(t, "viewer", id, "")
	if fmt.Sprint(ids(all)) != fmt.Sprint([]uuid.UUID{top.Id, reply.Id}) {
		t.Fatalf("list: %v, want [%s %s]", ids(all), top.Id, reply.Id)
	}
	listed := d.clients["viewer"].Do(http.MethodGet, commentsURL(d.org, id)+"?limit=1", nil)
	if !strings.Contains(string(listed.Body), strings.TrimSpace(string(r.Body))) {
		t.Errorf("the listed comment differs from the answered one:\n%s\n%s", listed.Body, r.Body)
	}
	for query, want := range map[string][]uuid.UUID{
		"resolved=false": {top.Id}, "resolved=true": {}, "parentId=" + top.Id.String(): {reply.Id},
		"versionNumber=1": {top.Id, reply.Id}, "versionNumber=2": {}, "versionNumber=1&resolved=false": {top.Id},
	} {
		if got := ids(d.comments(t, "viewer", id, query)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("?%s: %v, want %v", query, got, want)
		}
	}

	// The creative's author resolves; a reviewer reopens.
	p := d.clients["author"].Do(http.MethodPatch, commentsURL(d.org, id)+"/"+top.Id.String(), map[string]any{"resolved": true})
	var resolved api.Comment
	p.JSON(t, &resolved)
	by, _ := resolved.ResolvedBy.Get()
	if p.Status != http.StatusOK || !resolved.Resolved || by.Id != d.users["author"] || resolved.ResolvedAt.IsNull() {
		t.Fatalf("resolve: %d %s", p.Status, p.Body)
	}
	if got := d.get(t, "viewer", id).OpenCommentCount; got != 0 {
		t.Errorf("openCommentCount after resolving: %d", got)
	}
	if got := ids(d.comments(t, "viewer", id, "resolved=true")); fmt.Sprint(got) != fmt.Sprint([]uuid.UUID{top.Id}) {
		t.Errorf("resolved=true: %v", got)
	}
	p = d.clients["other reviewer"].Do(http.MethodPatch, commentsURL(d.org, id)+"/"+top.Id.String(), map[string]any{"resolved": false})
	var reopened api.Comment
	p.JSON(t, &reopened)
	if p.Status != http.StatusOK || reopened.Resolved || !reopened.ResolvedBy.IsNull() || !reopened.ResolvedAt.IsNull() {
		t.Errorf("reopen: %d %s", p.Status, p.Body)
	}

	// Only its author edits a comment's body.
	if p := d.clients["author"].Do(http.MethodPatch, commentsURL(d.org, id)+"/"+top.Id.String(), map[string]any{"body": "mine now"}); p.Status != http.StatusForbidden {
		t.Errorf("the creative's author editing a reviewer's comment: %d %s", p.Status, p.Body)
	}
	p = d.clients["reviewer"].Do(http.MethodPatch, commentsURL(d.org, id)+"/"+top.Id.String(), map[string]any{"body": "The logo is cut off at 1.2 s."})
	var edited api.Comment
	p.JSON(t, &edited)
	if p.Status != http.StatusOK || edited.Body != "The logo is cut off at 1.2 s." || edited.EditedAt.IsNull() {
		t.Errorf("edit: %d %s", p.Status, p.Body)
	}

	// Deleting the top-level comment keeps the thread: a tombstone.
	if r := d.clients["reviewer"].Do(http.MethodDelete, commentsURL(d.org, id)+"/"+top.Id.String(), nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	all = d.comments(t, "viewer", id, "")
	if len(all) != 2 || !all[0].Deleted || all[0].Body != "" || !all[0].Anchor.IsNull() || len(all[0].Mentions) != 0 || all[1].Id != reply.Id {
		t.Fatalf("after deleting the thread's first comment: %+v", all)
	}
	if got := d.get(t, "viewer", id).OpenCommentCount; got != 0 {
		t.Errorf("openCommentCount counts a tombstone: %d", got)
	}
	for _, r := range []*testenv.Response{
		d.clients["reviewer"].Do(http.MethodPatch, commentsURL(d.org, id)+"/"+top.Id.String(), map[string]any{"body": "back"}),
		d.clients["reviewer"].Do(http.MethodDelete, commentsURL(d.org, id)+"/"+top.Id.String(), nil),
	} {
		if r.Status != http.StatusConflict || problemCode(t, r) != "invalid_transition" {
			t.Errorf("a change of a tombstone: %d %s", r.Status, r.Body)
		}
	}
	if r := d.comment("author", id, map[string]any{"body": "Late reply", "parentId": top.Id}); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a reply to a tombstone: %d %s", r.Status, r.Body)
	}
	// The last reply gone, the tombstone goes with it.
	if r := d.clients["author"].Do(http.MethodDelete, commentsURL(d.org, id)+"/"+reply.Id.String(), nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete reply: %d %s", r.Status, r.Body)
	}
	if n := d.commentCount(t, id); n != 0 {
		t.Errorf("%d comments left after the thread's last reply was deleted", n)
	}
	if r := d.clients["author"].Do(http.MethodDelete, commentsURL(d.org, id)+"/"+reply.Id.String(), nil); r.Status != http.StatusNotFound {
		t.Errorf("delete again: %d %s", r.Status, r.Body)
	}

	// Adding and resolving went through the outbox, with the comment as data.
	var types []string
	for _, ev := range outbox(t, d) {
		if strings.Contains(ev.Type, "comment") {
			types = append(types, ev.Type)
			data, _ := ev.Payload["data"].(map[string]any)
			if data["creativeId"] != id.String() || ev.Org == nil || *ev.Org != d.org {
				t.Errorf("%s: data %v of organization %v", ev.Type, data, ev.Org)
			}
		}
	}
	if got := strings.Join(types, " "); got != "creative.comment_added creative.comment_added creative.comment_resolved" {
		t.Errorf("comment events: %s", got)
	}
}

func TestCommentRefusalsComeInTheDocumentedOrderAndChangeNothing(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id, video, poster := d.videoCreative(t)
	noVersion := d.creative(t, creativeSpec{})
	archived := d.creative(t, creativeSpec{status: review.StatusArchived, versions: 1, assets: 1})
	stranger := d.users["outsider"]
	anon := d.env.Client(t)
	noCSRF := testenv.Header{Name: "X-CSRF-Token", Value: ""}
	bad := map[string]any{"body": "", "anchor": map[string]any{"assetId": video, "region": map[string]any{"x": 0.5, "y": 0.5, "width": 0.6, "height": 0.1}}}
	for _, tt := range []struct {
		name   string
		do     func() *testenv.Response
		status int
		code   string
		fields string
	}{
		{"not signed in", func() *testenv.Response { return anon.Do(http.MethodPost, commentsURL(d.org, id), bad) }, 401, "unauthenticated", ""},
		{"no CSRF token", func() *testenv.Response { return d.comment("viewer", id, bad, noCSRF) }, 403, "csrf_failed", ""},
		{"the shape and the geometry, at once", func() *testenv.Response { return d.comment("viewer", id, bad) }, 422, "invalid_request",
			"anchor.region.width out_of_range, body too_short"},
		{"another workspace's creative", func() *testenv.Response {
			return d.clients["outsider"].Do(http.MethodPost, commentsURL(d.org, id), map[string]any{"body": "hi"})
		}, 404, "not_found", ""},
		{"a viewer", func() *testenv.Response {
			return d.comment("viewer", id, map[string]any{"body": "hi", "versionNumber": 9})
		}, 403, "action_forbidden", ""},
		{"what it refers to, every field at once", func() *testenv.Response {
			return d.comment("reviewer", id, map[string]any{"body": "hi", "mentionUserIds": []uuid.UUID{d.users["author"], stranger},
				"anchor": map[string]any{"assetId": poster, "timeMs": map[string]any{"start": 0}}})
		}, 422, "invalid_request", "anchor.timeMs invalid_value, mentionUserIds[1] invalid_value"},
		{"a time past the video's end", func() *testenv.Response {
			return d.comment("reviewer", id, map[string]any{"body": "hi", "anchor": map[string]any{"assetId": video, "timeMs": map[string]any{"start": 16000}}})
		}, 422, "invalid_request", "anchor.timeMs.start out_of_range"},
		{"an asset of another creative (on an archived one: the 422 comes first)", func() *testenv.Response {
			return d.comment("admin", archived, map[string]any{"body": "hi", "anchor": map[string]any{"assetId": video}})
		}, 422, "invalid_request", "anchor.assetId invalid_value"},
		{"a creative without a version", func() *testenv.Response { return d.comment("reviewer", noVersion, map[string]any{"body": "hi"}) }, 409, "invalid_transition", ""},
		{"an archived creative", func() *testenv.Response { return d.comment("admin", archived, map[string]any{"body": "hi"}) }, 409, "invalid_transition", ""},
		{"a version that does not exist", func() *testenv.Response {
			return d.comment("author", id, map[string]any{"body": "hi", "versionNumber": 2})
		}, 422, "invalid_request",
			"versionNumber invalid_value"},
		{"malformed JSON", func() *testenv.Response { return d.comment("author", id, "{") }, 400, "malformed_json", ""},
	} {
		r := tt.do()
		var fields []string
		if r.Status == 422 {
			fields = fieldErrs(t, r)
		}
		if r.Status != tt.status || problemCode(t, r) != tt.code || strings.Join(fields, ", ") != tt.fields {
			t.Errorf("%s: %d %s, want %d %s %s", tt.name, r.Status, r.Body, tt.status, tt.code, tt.fields)
		}
	}
	for _, c := range []uuid.UUID{id, noVersion, archived} {
		if n := d.commentCount(t, c); n != 0 {
			t.Errorf("refused requests wrote %d comments", n)
		}
	}

	// The changes of a comment: 404, 403, 422, 409.
	author2, _ := d.env.DB.User(t, "other author")
	d.env.DB.Member(t, d.org, author2, "author")
	d.clients["other author"] = d.env.SessionFor(t, author2)
	top := d.mustComment(t, "reviewer", id, map[string]any{"body": "Top"})
	reply := d.mustComment(t, "author", id, map[string]any{"body": "Reply", "parentId": top.Id})
	url := func(c uuid.UUID) string { return commentsURL(d.org, id) + "/" + c.String() }
	for _, tt := range []struct {
		name   string
		do     func() *testenv.Response
		status int
		code   string
	}{
		{"a comment of another creative", func() *testenv.Response {
			return d.clients["admin"].Do(http.MethodPatch, commentsURL(d.org, archived)+"/"+top.Id.String(), map[string]any{"resolved": true})
		}, 404, "not_found"},
		{"another workspace", func() *testenv.Response { return d.clients["outsider"].Do(http.MethodDelete, url(top.Id), nil) }, 404, "not_found"},
		{"a viewer resolving", func() *testenv.Response {
			return d.clients["viewer"].Do(http.MethodPatch, url(top.Id), map[string]any{"resolved": true})
		}, 403, "action_forbidden"},
		{"an author who did not write the creative resolving", func() *testenv.Response {
			return d.clients["other author"].Do(http.MethodPatch, url(top.Id), map[string]any{"resolved": true})
		}, 403, "action_forbidden"},
		{"a reviewer deleting another's comment", func() *testenv.Response { return d.clients["other reviewer"].Do(http.MethodDelete, url(top.Id), nil) }, 403, "action_forbidden"},
		{"resolving a reply", func() *testenv.Response {
			return d.clients["admin"].Do(http.MethodPatch, url(reply.Id), map[string]any{"resolved": true})
		}, 422, "invalid_request"},
		{"an empty patch", func() *testenv.Response {
			return d.clients["admin"].Do(http.MethodPatch, url(top.Id), map[string]any{})
		}, 422, "invalid_request"},
		{"a malformed patch", func() *testenv.Response { return d.clients["admin"].Do(http.MethodPatch, url(top.Id), "{") }, 400, "malformed_json"},
		{"a comment id that is no uuid", func() *testenv.Response {
			return d.clients["admin"].Do(http.MethodDelete, commentsURL(d.org, id)+"/not-a-uuid", nil)
		}, 422, "invalid_request"},
	} {
		if r := tt.do(); r.Status != tt.status || problemCode(t, r) != tt.code {
			t.Errorf("%s: %d %s, want %d %s", tt.name, r.Status, r.Body, tt.status, tt.code)
		}
	}
	if got := d.comments(t, "viewer", id, ""); len(got) != 2 || got[0].Resolved || got[0].Body != "Top" {
		t.Errorf("refused changes changed the thread: %+v", got)
	}
	// Archiving freezes the threads.
	if r := d.act("admin", id, map[string]any{"action": "archive"}); r.Status != http.StatusOK {
		t.Fatalf("archive: %d %s", r.Status, r.Body)
	}
	for _, r := range []*testenv.Response{
		d.clients["admin"].Do(http.MethodPatch, url(top.Id), map[string]any{"resolved": true}),
		d.clients["reviewer"].Do(http.MethodDelete, url(top.Id), nil),
	} {
		if r.Status != http.StatusConflict || problemCode(t, r) != "invalid_transition" {
			t.Errorf("a change on an archived creative: %d %s", r.Status, r.Body)
		}
	}
	if r := d.clients["viewer"].Do(http.MethodGet, commentsURL(d.org, id)+"?resolved=true&parentId="+top.Id.String(), nil); r.Status != 422 {
		t.Errorf("resolved with parentId: %d %s", r.Status, r.Body)
	}
}

func TestTheCommentListNeverMixesCreativesOrOrganizations(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	a := d.creative(t, creativeSpec{versions: 1, assets: 1})
	b := d.creative(t, creativeSpec{versions: 1, assets: 1})
	// Another workspace, with a creative of its own, commented by its admin.
	org2 := d.env.DB.Org(t, "Initech Review")
	admin2, _ := d.env.DB.User(t, "initech admin")
	d.env.DB.Member(t, org2, admin2, "admin")
	d2 := &reviewDesk{env: d.env, org: org2, users: map[string]uuid.UUID{"author": admin2},
		clients: map[string]*testenv.Client{"author": d.env.SessionFor(t, admin2)}}
	c := d2.creative(t, creativeSpec{versions: 1, assets: 1})

	want := map[uuid.UUID][]uuid.UUID{}
	for i := range 5 { // interleaved, so a list by seq alone would mix them
		for _, x := range []struct {
			d  *reviewDesk
			id uuid.UUID
		}{{d, a}, {d, b}, {d2, c}} {
			cm := x.d.mustComment(t, "author", x.id, map[string]any{"body": fmt.Sprintf("remark %d", i)})
			want[x.id] = append(want[x.id], cm.Id)
		}
	}
	for _, x := range []struct {
		d  *reviewDesk
		id uuid.UUID
	}{{d, a}, {d, b}, {d2, c}} {
		got := x.d.comments(t, "author", x.id, "")
		if fmt.Sprint(ids(got)) != fmt.Sprint(want[x.id]) {
			t.Errorf("creative %s lists %v, want %v", x.id, ids(got), want[x.id])
		}
		for _, cm := range got {
			if cm.CreativeId != x.id {
				t.Errorf("creative %s lists a comment of %s", x.id, cm.CreativeId)
			}
		}
	}
	// Another workspace's creative under this workspace's path, and the
	// other way round: 404, as for an id that does not exist.
	for _, r := range []*testenv.Response{
		d.clients["admin"].Do(http.MethodGet, commentsURL(d.org, c), nil),
		d.clients["outsider"].Do(http.MethodGet, commentsURL(d.org, a), nil),
		d2.clients["author"].Do(http.MethodGet, commentsURL(org2, a), nil),
		d2.clients["author"].Do(http.MethodDelete, commentsURL(org2, c)+"/"+want[a][0].String(), nil),
	} {
		if r.Status != http.StatusNotFound {
			t.Errorf("a comment list or comment across workspaces or creatives: %d %s", r.Status, r.Body)
		}
	}
}

// TestAMentionReachesTheMentionedAndListsForThem: a comment that mentions
// members puts creative.mentioned on the live stream of each of them (not
// on its author's, even when the author mentions themselves, nor on an
// unmentioned member's), and `mentions=me` lists for each caller only the
// comments that mention them, combined with the other filters.
func TestAMentionReachesTheMentionedAndListsForThem(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t, testenv.Options{Events: true})
	id := d.creative(t, creativeSpec{status: review.StatusInReview, reviewer: "reviewer", versions: 1})
	streams := map[string]*testenv.Stream{}
	for _, who := range []string{"author", "reviewer", "viewer"} {
		streams[who] = d.clients[who].Stream(streamPath)
		if m, _ := streams[who].Next(); m.Retry == "" {
			t.Fatalf("%s's stream did not open: %+v", who, m)
		}
	}
	mentioning := d.mustComment(t, "reviewer", id, map[string]any{"body": "@Author @Reviewer look",
		"mentionUserIds": []uuid.UUID{d.users["author"], d.users["reviewer"]}})
	plain := d.mustComment(t, "reviewer", id, map[string]any{"body": "No one named."})
	reply := d.mustComment(t, "admin", id, map[string]any{"body": "@Author see above", "parentId": mentioning.Id,
		"mentionUserIds": []uuid.UUID{d.users["author"]}})

	// The author's stream: comment_added ×3 (organization events) and
	// creative.mentioned for the two comments that name them, in order.
	var mentioned []uuid.UUID
	for len(mentioned) < 2 {
		m, ok := streams["author"].NextEvent()
		if !ok {
			t.Fatalf("the author's stream ended after mentions %v", mentioned)
		}
		if m.Event == "creative.mentioned" {
			var p struct{ Data api.Comment }
			if err := json.Unmarshal([]byte(m.Data), &p); err != nil {
				t.Fatal(err)
			}
			mentioned = append(mentioned, p.Data.Id)
		}
	}
	if mentioned[0] != mentioning.Id || mentioned[1] != reply.Id {
		t.Fatalf("the author was told of %v; want %v then %v", mentioned, mentioning.Id, reply.Id)
	}
	// The reviewer mentioned themselves and the viewer was not mentioned:
	// neither stream carries creative.mentioned, only the three additions.
	for _, who := range []string{"reviewer", "viewer"} {
		for range 3 {
			m, ok := streams[who].NextEvent()
			if !ok || m.Event != "creative.comment_added" {
				t.Fatalf("%s's stream: %+v (ok %v); want creative.comment_added", who, m, ok)
			}
		}
	}
	d.mustComment(t, "author", id, map[string]any{"body": "Marker."})
	for _, who := range []string{"reviewer", "viewer"} {
		if m, ok := streams[who].NextEvent(); !ok || m.Event != "creative.comment_added" {
			t.Fatalf("%s's stream carried %+v before the marker comment", who, m)
		}
	}

	for _, tc := range []struct {
		rule, who, query string
		want             []uuid.UUID
	}{
		{"mentions=me lists the comments and replies naming the caller", "author", "mentions=me", []uuid.UUID{mentioning.Id, reply.Id}},
		{"a self-mention lists for its author", "reviewer", "mentions=me", []uuid.UUID{mentioning.Id}},
		{"nobody named the viewer", "viewer", "mentions=me", nil},
		{"mentions=me combines with parentId", "author", "mentions=me&parentId=" + mentioning.Id.String(), []uuid.UUID{reply.Id}},
		{"mentions=me combines with resolved", "author", "mentions=me&resolved=false", []uuid.UUID{mentioning.Id}},
		{"without the filter every comment lists", "viewer", "", []uuid.UUID{mentioning.Id, plain.Id, reply.Id}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got := ids(d.comments(t, tc.who, id, tc.query))
			if len(tc.want) == 0 && len(got) == 0 {
				return
			}
			if tc.query == "" {
				got = got[:3] // the marker comes last
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("%s lists %v; want %v", tc.query, got, tc.want)
			}
		})
	}
	t.Run("another value than me is 422", func(t *testing.T) {
		r := d.clients["author"].Do(http.MethodGet, commentsURL(d.org, id)+"?mentions=you", nil)
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("mentions=you: %d %s", r.Status, r.Body)
		}
	})
}

// TestAnAnchorsEveryFailingFieldIsNamedAtOnce: a region whose y is out of
// range and whose x + width leaves the frame is one 422 naming both (the
// sum of a pair is checked whatever the other pair holds).
func TestAnAnchorsEveryFailingFieldIsNamedAtOnce(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id, video, _ := d.videoCreative(t)
	r := d.comment("reviewer", id, map[string]any{"body": "Here.", "anchor": map[string]any{"assetId": video,
		"region": map[string]any{"x": 0.9, "y": -0.1, "width": 0.2, "height": 0}}})
	if r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	for _, field := range []string{`"field":"anchor.region.y"`, `"field":"anchor.region.width"`} {
		if !strings.Contains(string(r.Body), field) {
			t.Errorf("the 422 does not name %s: %s", field, r.Body)
		}
	}
}
