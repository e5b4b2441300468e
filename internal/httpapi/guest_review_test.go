package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
)

const guestCreativesPath = "/api/v1/guest/creatives"

// guestOn opens a guest session as email on a share of the desk's
// creatives with permission, made by the admin and inviting email, on a
// new client; on a decide share by the invitation's own link, so the
// session is verified and decides.
func (d *reviewDesk) guestOn(t *testing.T, permission, email string, creatives ...uuid.UUID) (*testenv.Client, uuid.UUID) {
	t.Helper()
	share, token := d.env.DB.Share(t, d.org, d.users["admin"], permission, creatives...)
	c := d.env.Client(t)
	open := func() *testenv.Response { d.env.DB.Invite(t, share, email); return c.OpenShare(token, email) }
	if permission == "decide" {
		open = func() *testenv.Response { return d.env.OpenInvited(t, c, share, token, email) }
	}
	if r := open(); r.Status != http.StatusCreated {
		t.Fatalf("guest session: %d %s", r.Status, r.Body)
	}
	return c, share
}

func TestAGuestSessionOpensTheGuestPathsAndNothingElse(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1})
	guest, _ := d.guestOn(t, "decide", "legal@brand.test", id)
	for _, path := range []string{"/api/v1/me", creativesURL(d.org), creativesURL(d.org) + "/" + id.String()} {
		if r := guest.Do(http.MethodGet, path, nil); r.Status != http.StatusUnauthorized || r.Problem(t).Code != "unauthenticated" {
			t.Errorf("a guest session on %s: %d %s", path, r.Status, r.Body)
		}
	}
	if r := guest.Do(http.MethodGet, guestCreativesPath, nil); r.Status != http.StatusOK {
		t.Errorf("a guest session on the guest list: %d %s", r.Status, r.Body)
	}
	// A member's session, even with a guest cookie of another member's
	// making, opens no guest path by itself; nor does a token.
	r := d.clients["admin"].Do(http.MethodPost, "/api/v1/me/tokens", map[string]any{"name": "guest paths", "scopes": []string{"creatives:read"}})
	var token api.CreatedAccessToken
	r.JSON(t, &token)
	for name, call := range map[string]func() *testenv.Response{
		"a user session": func() *testenv.Response {
			return d.clients["admin"].Do(http.MethodGet, guestCreativesPath+"/"+id.String(), nil)
		},
		"a token": func() *testenv.Response {
			return d.env.Client(t).Do(http.MethodGet, guestCreativesPath+"/"+id.String(), nil, bearer(token.Token))
		},
		"nothing": func() *testenv.Response {
			return d.env.Client(t).Do(http.MethodGet, guestCreativesPath+"/"+id.String(), nil)
		},
	} {
		want := "unauthenticated"
		if name == "a token" {
			want = "invalid_token" // as on every operation that takes none
		}
		if r := call(); r.Status != http.StatusUnauthorized || r.Problem(t).Code != want {
			t.Errorf("%s on a guest path: %d %s", name, r.Status, r.Body)
		}
	}
	// A browser holding both sessions is each on its own paths.
	both := d.env.SessionFor(t, d.users["admin"])
	both.CopyCookies(guest)
	for _, path := range []string{"/api/v1/me", guestCreativesPath} {
		if r := both.Do(http.MethodGet, path, nil); r.Status != http.StatusOK {
			t.Errorf("both sessions on %s: %d %s", path, r.Status, r.Body)
		}
	}
}

func TestAGuestListsTheSharedCreativesInTheShareOrderWithTheirActions(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	inReview := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview})
	draft := d.creative(t, creativeSpec{versions: 1})
	notShared := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview})
	for _, tc := range []struct {
		permission string
		want       []api.CreativeAction
	}{
		{"view", []api.CreativeAction{}},
		{"comment", []api.CreativeAction{}},
		{"decide", []api.CreativeAction{api.CreativeActionRequestChanges, api.CreativeActionApprove}},
	} {
		guest, _ := d.guestOn(t, tc.permission, tc.permission+"@brand.test", inReview, draft)
		var got []api.CreativeDetail
		next := ""
		for {
			path := guestCreativesPath + "?limit=1"
			if next != "" {
				path += "&cursor=" + next
			}
			r := guest.Do(http.MethodGet, path, nil)
			var page api.CreativeList
			r.JSON(t, &page)
			if r.Status != http.StatusOK || len(page.Items) != 1 {
				t.Fatalf("%s: %d %s", tc.permission, r.Status, r.Body)
			}
			got = append(got, page.Items...)
			if page.NextCursor.IsNull() {
				break
			}
			next, _ = page.NextCursor.Get()
		}
		if len(got) != 2 || got[0].Id != inReview || got[1].Id != draft {
			t.Fatalf("%s: listed %v", tc.permission, got)
		}
		if !equalActions(got[0].AvailableActions, tc.want) || len(got[1].AvailableActions) != 0 ||
			got[0].Permissions != (api.CreativePermissions{}) {
			t.Errorf("%s: actions %v and %v, permissions %+v", tc.permission, got[0].AvailableActions, got[1].AvailableActions, got[0].Permissions)
		}
		var one api.CreativeDetail
		if r := guest.Do(http.MethodGet, guestCreativesPath+"/"+inReview.String(), nil); r.Status != http.StatusOK {
			t.Errorf("%s: get %d %s", tc.permission, r.Status, r.Body)
		} else if r.JSON(t, &one); !equalActions(one.AvailableActions, tc.want) {
			t.Errorf("%s: get's actions %v", tc.permission, one.AvailableActions)
		}
		for _, id := range []uuid.UUID{notShared, uuid.New()} {
			if r := guest.Do(http.MethodGet, guestCreativesPath+"/"+id.String(), nil); r.Status != http.StatusNotFound || r.Problem(t).Code != "not_found" {
				t.Errorf("%s: a creative not in the share: %d %s", tc.permission, r.Status, r.Body)
			}
		}
	}
}

func equalActions(a, b []api.CreativeAction) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestARevokedOrExpiredShareEndsItsGuestsAccessAtOnce(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1})
	revoked, revokedShare := d.guestOn(t, "decide", "a@brand.test", id)
	expired, expiredShare := d.guestOn(t, "decide", "b@brand.test", id)
	if r := d.clients["admin"].Do(http.MethodDelete, sharesURL(d.org)+"/"+revokedShare.String(), nil); r.Status != http.StatusNoContent {
		t.Fatal(r.Status)
	}
	if _, err := d.env.DB.Pool.Exec(context.Background(), "UPDATE shares SET expires_at = now() WHERE id = $1", expiredShare); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*testenv.Client{"revoked": revoked, "expired": expired} {
		if r := c.Do(http.MethodGet, guestCreativesPath, nil); r.Status != http.StatusUnauthorized || r.Problem(t).Code != "unauthenticated" {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
}

func TestGuestReadsRefuseAMalformedRequest(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	guest, _ := d.guestOn(t, "view", "v@brand.test", d.creative(t, creativeSpec{versions: 1}))
	for _, path := range []string{guestCreativesPath + "?limit=0", guestCreativesPath + "?cursor=garbage", guestCreativesPath + "/not-a-uuid"} {
		if r := guest.Do(http.MethodGet, path, nil); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s", path, r.Status, r.Body)
		}
	}
}

func guestCommentsURL(id uuid.UUID) string {
	return guestCreativesPath + "/" + id.String() + "/comments"
}

func TestAGuestCommentsOnARegionRepliesAndResolvesTheirOwnThread(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1, assets: 1, status: review.StatusInReview})
	var cd api.CreativeDetail
	d.clients["admin"].Do(http.MethodGet, creativeURL(d.org, id), nil).JSON(t, &cd)
	current, _ := cd.CurrentVersion.Get()
	asset := current.Assets[0].Id
	guest, _ := d.guestOn(t, "comment", "legal@brand.test", id)
	var memberComment api.Comment
	d.clients["reviewer"].Do(http.MethodPost, commentsURL(d.org, id), map[string]any{"body": "Tighter crop."}).JSON(t, &memberComment)

	body := map[string]any{"body": "The claim needs a footnote here.", "anchor": map[string]any{
		"assetId": asset, "region": map[string]float64{"x": 0.1, "y": 0.2, "width": 0.3, "height": 0.1}}}
	r := guest.Do(http.MethodPost, guestCommentsURL(id), body, testenv.Header{Name: "Idempotency-Key", Value: "guest-comment-1"})
	var mine api.Comment
	r.JSON(t, &mine)
	if r.Status != http.StatusCreated || mine.Author.Kind != api.UserRefKindGuest ||
		mine.Author.Name != "Guest legal@brand.test" || mine.Visibility != api.Everyone || mine.Anchor.IsNull() ||
		r.Header.Get("Location") != guestCommentsURL(id)+"/"+mine.Id.String() {
		t.Fatalf("a guest's comment: %d %s (Location %q)", r.Status, r.Body, r.Header.Get("Location"))
	}
	// The same key again is the same comment.
	again := guest.Do(http.MethodPost, guestCommentsURL(id), body, testenv.Header{Name: "Idempotency-Key", Value: "guest-comment-1"})
	if again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(r.Body) {
		t.Errorf("the replay: %d %s", again.Status, again.Body)
	}
	reply := guest.Do(http.MethodPost, guestCommentsURL(id), map[string]any{"body": "Agreed.", "parentId": memberComment.Id})
	if reply.Status != http.StatusCreated {
		t.Errorf("a reply to a member's comment: %d %s", reply.Status, reply.Body)
	}
	// The member sees the guest as its author, kind guest.
	var list api.CommentList
	d.clients["author"].Do(http.MethodGet, commentsURL(d.org, id), nil).JSON(t, &list)
	if len(list.Items) != 3 || list.Items[1].Id != mine.Id || list.Items[1].Author.Kind != api.UserRefKindGuest {
		t.Fatalf("the member's list: %+v", list.Items)
	}
	// Their own thread: edit and resolve; anyone else's: 403.
	r = guest.Do(http.MethodPatch, guestCommentsURL(id)+"/"+mine.Id.String(), map[string]any{"resolved": true, "body": "The claim needs a footnote."})
	var resolved api.Comment
	r.JSON(t, &resolved)
	by, _ := resolved.ResolvedBy.Get()
	if r.Status != http.StatusOK || !resolved.Resolved || resolved.EditedAt.IsNull() || by.Kind != api.UserRefKindGuest || by.Id != mine.Author.Id {
		t.Errorf("resolving their own thread: %d %s", r.Status, r.Body)
	}
	r = guest.Do(http.MethodPatch, guestCommentsURL(id)+"/"+memberComment.Id.String(), map[string]any{"resolved": true})
	if r.Status != http.StatusForbidden || r.Problem(t).Code != "action_forbidden" {
		t.Errorf("resolving a member's thread: %d %s", r.Status, r.Body)
	}
	// A view guest reads but does not write.
	viewer, _ := d.guestOn(t, "view", "cmo@brand.test", id)
	if r := viewer.Do(http.MethodPost, guestCommentsURL(id), map[string]any{"body": "Looks fine."}); r.Status != http.StatusForbidden || r.Problem(t).Code != "action_forbidden" {
		t.Errorf("a view guest's comment: %d %s", r.Status, r.Body)
	}
	if r := viewer.Do(http.MethodGet, guestCommentsURL(id), nil); r.Status != http.StatusOK {
		t.Errorf("a view guest's read: %d %s", r.Status, r.Body)
	}
}

func TestAGuestNeverSeesAnInternalComment(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview})
	guest, _ := d.guestOn(t, "decide", "legal@brand.test", id)
	var internal, open api.Comment
	r := d.clients["reviewer"].Do(http.MethodPost, commentsURL(d.org, id), map[string]any{"body": "Between us: the client will hate this.", "visibility": "internal"})
	r.JSON(t, &internal)
	if r.Status != http.StatusCreated || internal.Visibility != api.Internal {
		t.Fatalf("an internal comment: %d %s", r.Status, r.Body)
	}
	d.clients["reviewer"].Do(http.MethodPost, commentsURL(d.org, id), map[string]any{"body": "Please check the logo."}).JSON(t, &open)
	// A member's reply in an internal thread stays internal.
	var reply api.Comment
	d.clients["author"].Do(http.MethodPost, commentsURL(d.org, id), map[string]any{"body": "Agreed.", "parentId": internal.Id}).JSON(t, &reply)
	if reply.Visibility != api.Internal {
		t.Errorf("a reply in an internal thread is %s", reply.Visibility)
	}
	for _, path := range []string{guestCommentsURL(id), guestCommentsURL(id) + "?parentId=" + internal.Id.String(), guestCommentsURL(id) + "?versionNumber=1"} {
		var list api.CommentList
		guest.Do(http.MethodGet, path, nil).JSON(t, &list)
		for _, c := range list.Items {
			if c.Visibility != api.Everyone {
				t.Errorf("%s lists %+v", path, c)
			}
		}
	}
	var seen, member api.CreativeDetail
	guest.Do(http.MethodGet, guestCreativesPath+"/"+id.String(), nil).JSON(t, &seen)
	d.clients["admin"].Do(http.MethodGet, creativeURL(d.org, id), nil).JSON(t, &member)
	if seen.OpenCommentCount != 1 || seen.OpenThreadCount != 1 || member.OpenCommentCount != 2 {
		t.Errorf("counts: the guest's %d and %d, the member's %d", seen.OpenCommentCount, seen.OpenThreadCount, member.OpenCommentCount)
	}
	// An internal comment is no comment for a guest: not to reply to, not
	// to change.
	r = guest.Do(http.MethodPost, guestCommentsURL(id), map[string]any{"body": "What?", "parentId": internal.Id})
	if p := r.Problem(t); r.Status != http.StatusUnprocessableEntity || len(p.FieldErrors) != 1 || p.FieldErrors[0].Field != "parentId" {
		t.Errorf("a reply to an internal comment: %d %s", r.Status, r.Body)
	}
	if r := guest.Do(http.MethodPatch, guestCommentsURL(id)+"/"+internal.Id.String(), map[string]any{"resolved": true}); r.Status != http.StatusNotFound {
		t.Errorf("an internal comment's change: %d %s", r.Status, r.Body)
	}
	// A guest's request sends no visibility.
	if r := guest.Do(http.MethodPost, guestCommentsURL(id), map[string]any{"body": "x", "visibility": "internal"}); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a guest's internal comment: %d %s", r.Status, r.Body)
	}
}

func TestAGuestCommandNeedsTheGuestSessionsCSRFToken(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview})
	guest, _ := d.guestOn(t, "decide", "legal@brand.test", id)
	for _, csrf := range []string{"", "not-the-token"} {
		h := testenv.Header{Name: "X-CSRF-Token", Value: csrf}
		if csrf == "" {
			h.Value = "" // removed
		}
		r := guest.Do(http.MethodPost, guestCommentsURL(id), map[string]any{"body": "Hello"}, h)
		if r.Status != http.StatusForbidden || r.Problem(t).Code != "csrf_failed" {
			t.Errorf("X-CSRF-Token %q: %d %s", csrf, r.Status, r.Body)
		}
	}
}

func TestAGuestCommentRefusesWhatTheMembersPathRefuses(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	archived := d.creative(t, creativeSpec{versions: 1, status: review.StatusArchived})
	live := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview})
	guest, _ := d.guestOn(t, "comment", "legal@brand.test", archived, live)
	for _, tc := range []struct {
		name   string
		method string
		path   string
		body   any
		status int
	}{
		{"an archived creative", http.MethodPost, guestCommentsURL(archived), map[string]any{"body": "Late."}, http.StatusConflict},
		{"no body", http.MethodPost, guestCommentsURL(live), map[string]any{}, http.StatusUnprocessableEntity},
		{"broken JSON", http.MethodPost, guestCommentsURL(live), `{"body":`, http.StatusBadRequest},
		{"not in the share", http.MethodPost, guestCommentsURL(uuid.New()), map[string]any{"body": "Hi."}, http.StatusNotFound},
		{"a list of no shared creative", http.MethodGet, guestCommentsURL(uuid.New()), nil, http.StatusNotFound},
		{"a list's bad cursor", http.MethodGet, guestCommentsURL(live) + "?cursor=garbage", nil, http.StatusUnprocessableEntity},
		{"an unknown comment", http.MethodPatch, guestCommentsURL(live) + "/" + uuid.NewString(), map[string]any{"body": "x"}, http.StatusNotFound},
		{"an empty patch", http.MethodPatch, guestCommentsURL(live) + "/" + uuid.NewString(), map[string]any{}, http.StatusUnprocessableEntity},
		{"a broken patch", http.MethodPatch, guestCommentsURL(live) + "/" + uuid.NewString(), `{"body":`, http.StatusBadRequest},
		{"a decision on no shared creative", http.MethodPost, guestActionURL(uuid.New()), map[string]any{"action": "approve"}, http.StatusNotFound},
		{"a broken decision", http.MethodPost, guestActionURL(live), `{"action":`, http.StatusBadRequest},
	} {
		if r := guest.Do(tc.method, tc.path, tc.body); r.Status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, r.Status, r.Body, tc.status)
		}
	}
	// Their own comment on a creative archived since: 409.
	var mine api.Comment
	guest.Do(http.MethodPost, guestCommentsURL(live), map[string]any{"body": "Mine."}).JSON(t, &mine)
	if _, err := d.env.DB.Pool.Exec(context.Background(), "UPDATE creatives SET review_status = 'archived' WHERE id = $1", live); err != nil {
		t.Fatal(err)
	}
	if r := guest.Do(http.MethodPatch, guestCommentsURL(live)+"/"+mine.Id.String(), map[string]any{"resolved": true}); r.Status != http.StatusConflict || r.Problem(t).Code != "invalid_transition" {
		t.Errorf("a change on an archived creative: %d %s", r.Status, r.Body)
	}
}

func guestActionURL(id uuid.UUID) string { return guestCreativesPath + "/" + id.String() + "/actions" }

func TestADecideGuestActsAsTheReviewerOfACreativeWithoutAPlan(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview, reviewer: "reviewer"})
	guest, _ := d.guestOn(t, "decide", "legal@brand.test", id)
	commenter, _ := d.guestOn(t, "comment", "cmo@brand.test", id)
	if r := commenter.Do(http.MethodPost, guestActionURL(id), map[string]any{"action": "approve"}); r.Status != http.StatusForbidden || r.Problem(t).Code != "action_forbidden" {
		t.Errorf("a comment guest's decision: %d %s", r.Status, r.Body)
	}
	if r := guest.Do(http.MethodPost, guestActionURL(id), map[string]any{"action": "request_changes"}); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("request_changes without a comment: %d %s", r.Status, r.Body)
	}
	if r := guest.Do(http.MethodPost, guestActionURL(id), map[string]any{"action": "submit"}); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a submit: %d %s", r.Status, r.Body)
	}
	if r := guest.Do(http.MethodPost, guestActionURL(id), map[string]any{"action": "approve", "expectedVersion": 99}); r.Status != http.StatusConflict || r.Problem(t).Code != "version_conflict" {
		t.Errorf("a stale version: %d %s", r.Status, r.Body)
	}
	key := testenv.Header{Name: "Idempotency-Key", Value: "guest-decision-1"}
	r := guest.Do(http.MethodPost, guestActionURL(id), map[string]any{"action": "request_changes", "comment": "The footnote is missing."}, key)
	var c api.CreativeDetail
	r.JSON(t, &c)
	if r.Status != http.StatusOK || c.ReviewStatus != api.ChangesRequested || len(c.AvailableActions) != 0 {
		t.Fatalf("the guest's request for changes: %d %s", r.Status, r.Body)
	}
	if again := guest.Do(http.MethodPost, guestActionURL(id), map[string]any{"action": "request_changes", "comment": "The footnote is missing."}, key); again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the replay: %d %s", again.Status, again.Body)
	}
	if r := guest.Do(http.MethodPost, guestActionURL(id), map[string]any{"action": "approve"}); r.Status != http.StatusConflict || r.Problem(t).Code != "invalid_transition" {
		t.Errorf("a decision out of review: %d %s", r.Status, r.Body)
	}
	// The history names the guest.
	var history struct {
		Items []api.CreativeEvent `json:"items"`
	}
	d.clients["author"].Do(http.MethodGet, creativeURL(d.org, id)+"/events", nil).JSON(t, &history)
	last := history.Items[0]
	if last.Type != "request_changes" || last.Actor.Kind != api.UserRefKindGuest || last.Actor.Name != "Guest legal@brand.test" {
		t.Errorf("the history's entry: %+v", last)
	}
}

func TestAGuestDecidesAStageThatListsTheirEmailAndNoOther(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	brand := d.stageOf("Brand", "all", 0, "reviewer")
	legal := map[string]any{"name": "Legal", "rule": "any", "reviewerIds": []uuid.UUID{}, "guestEmails": []string{"Legal@Brand.test"}}
	id := d.staged(t, brand, legal)
	guest, _ := d.guestOn(t, "decide", "legal@brand.test", id)
	other, _ := d.guestOn(t, "decide", "cmo@brand.test", id)
	// Stage 1 is the reviewer's: the guest waits.
	if r := guest.Do(http.MethodPost, guestActionURL(id), map[string]any{"action": "approve"}); r.Status != http.StatusForbidden {
		t.Errorf("before their stage: %d %s", r.Status, r.Body)
	}
	d.decide(t, "reviewer", id, "approve")
	if r := other.Do(http.MethodPost, guestActionURL(id), map[string]any{"action": "approve"}); r.Status != http.StatusForbidden || r.Problem(t).Code != "action_forbidden" {
		t.Errorf("a guest the stage does not list: %d %s", r.Status, r.Body)
	}
	var before api.CreativeDetail
	guest.Do(http.MethodGet, guestCreativesPath+"/"+id.String(), nil).JSON(t, &before)
	if !equalActions(before.AvailableActions, []api.CreativeAction{api.CreativeActionRequestChanges, api.CreativeActionApprove}) {
		t.Errorf("the listed guest's actions: %v", before.AvailableActions)
	}
	r := guest.Do(http.MethodPost, guestActionURL(id), map[string]any{"action": "approve"})
	var c api.CreativeDetail
	r.JSON(t, &c)
	if r.Status != http.StatusOK || c.ReviewStatus != api.Approved {
		t.Fatalf("the guest's approval: %d %s", r.Status, r.Body)
	}
	plan, _ := c.ReviewPlan.Get()
	decisions := plan.Stages[1].Decisions
	if len(decisions) != 1 || decisions[0].Reviewer.Kind != api.UserRefKindGuest ||
		decisions[0].Reviewer.Name != "Guest legal@brand.test" {
		t.Errorf("the stage's decisions: %+v", decisions)
	}
	var signed struct {
		Record api.ApprovalRecord `json:"record"`
	}
	d.clients["author"].Do(http.MethodGet, approvalURL(d.org, id), nil).JSON(t, &signed)
	if n := len(signed.Record.Decisions); n != 2 || signed.Record.Decisions[1].Reviewer.Kind != api.ApprovalPersonKindGuest {
		t.Errorf("the approval record's decisions: %+v", signed.Record.Decisions)
	}
}

func TestAGuestDownloadsTheFilesOfTheSharedCreativesOnly(t *testing.T) {
	t.Parallel()
	d := newMatrixDesk(t)
	_, token := d.env.DB.Share(t, d.org, d.users[acmeAuthor], "view", d.assetCreative)
	guest := d.env.Client(t)
	if r := guest.OpenShare(token, "legal@brand.test"); r.Status != http.StatusCreated {
		t.Fatal(r.Status)
	}
	var c api.CreativeDetail
	guest.Do(http.MethodGet, guestCreativesPath+"/"+d.assetCreative.String(), nil).JSON(t, &c)
	current, _ := c.CurrentVersion.Get()
	want := "/api/v1/guest/assets/" + d.asset + "/content"
	if len(current.Assets) != 1 || !strings.HasSuffix(current.Assets[0].Url, want) {
		t.Fatalf("the guest's asset url: %+v, want …%s", current.Assets, want)
	}
	r := guest.Do(http.MethodGet, want, nil)
	if r.Status != http.StatusFound || r.Header.Get("Location") == "" || r.Header.Get("Cache-Control") != "private, no-store" {
		t.Errorf("the download: %d %v", r.Status, r.Header)
	}
	// The same file through another creative the share does not hold, or
	// an asset of none: 404; a malformed id 422.
	_, otherToken := d.env.DB.Share(t, d.org, d.users[acmeAuthor], "decide", d.env.DB.DraftCreative(t, d.org, d.users[acmeAuthor]))
	outsider := d.env.Client(t)
	outsider.OpenShare(otherToken, "cmo@brand.test")
	for name, tc := range map[string]struct {
		c      *testenv.Client
		path   string
		status int
	}{
		"another share's guest": {outsider, want, http.StatusNotFound},
		"an unknown asset":      {guest, "/api/v1/guest/assets/" + uuid.NewString() + "/content", http.StatusNotFound},
		"a malformed id":        {guest, "/api/v1/guest/assets/not-a-uuid/content", http.StatusUnprocessableEntity},
	} {
		if r := tc.c.Do(http.MethodGet, tc.path, nil); r.Status != tc.status {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
}
