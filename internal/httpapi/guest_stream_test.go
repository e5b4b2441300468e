package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
)

// The guest's live stream (openapi.yaml streamGuestEvents; docs/shares.md,
// "The guest stream"), through the real server with its publisher and hub.

const guestStreamPath = "/api/v1/guest/events"

// guestEvent is an event of a guest's stream, its data read as either a
// creative or a comment.
type guestEvent struct {
	testenv.Message
	Data struct {
		ID               uuid.UUID             `json:"id"`
		CreativeID       uuid.UUID             `json:"creativeId"`
		Body             string                `json:"body"`
		Visibility       api.CommentVisibility `json:"visibility"`
		Author           api.UserRef           `json:"author"`
		OpenCommentCount int                   `json:"openCommentCount"`
		OpenThreadCount  int                   `json:"openThreadCount"`
		ReviewStatus     api.ReviewStatus      `json:"reviewStatus"`
	} `json:"data"`
}

// nextGuestEvent reads the stream's next event.
func nextGuestEvent(t *testing.T, s *testenv.Stream) guestEvent {
	t.Helper()
	m, ok := s.NextEvent()
	if !ok {
		t.Fatal("the stream ended; want an event")
	}
	e := guestEvent{Message: m}
	if err := json.Unmarshal([]byte(m.Data), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// wantComment reads the next event and checks it is the addition of the
// comment whose body is body.
func wantComment(t *testing.T, s *testenv.Stream, body string) guestEvent {
	t.Helper()
	e := nextGuestEvent(t, s)
	if e.Event != "creative.comment_added" || e.Data.Body != body {
		t.Fatalf("event %s %s %q; want the comment %q", e.ID, e.Event, e.Data.Body, body)
	}
	return e
}

// openGuestStream opens a guest's stream and reads its retry line.
func openGuestStream(t *testing.T, guest *testenv.Client, headers ...testenv.Header) *testenv.Stream {
	t.Helper()
	s := guest.Stream(guestStreamPath, headers...)
	if m, _ := s.Next(); m.Retry != "2000" {
		t.Fatalf("first message %+v; want the retry line", m)
	}
	return s
}

func TestTheGuestStreamCarriesItsSharesCreativesAndNothingElse(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t, testenv.Options{Events: true})
	shared := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview, reviewer: "reviewer"})
	other := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview})
	guest, _ := d.guestOn(t, "decide", "legal@brand.test", shared)
	s := openGuestStream(t, guest)
	author := openMemberStream(t, d.clients["author"])

	// Not the guest's: a comment on a creative the share does not hold, a
	// share made and revoked (its notice ends no live guest's stream).
	if r := d.comment("reviewer", other, map[string]any{"body": "Not on the share."}); r.Status != http.StatusCreated {
		t.Fatalf("comment: %d %s", r.Status, r.Body)
	}
	sh := d.newShare(t, map[string]any{"creativeIds": []uuid.UUID{other}, "permission": "view"})
	if r := d.clients["admin"].Do(http.MethodDelete, sharesURL(d.org)+"/"+sh.Id.String(), nil); r.Status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	// The guest's: a member's comment on the shared creative, the guest's
	// own comment and decision.
	d.comment("reviewer", shared, map[string]any{"body": "Logo too small."})
	first := wantComment(t, s, "Logo too small.")
	if first.Data.CreativeID != shared {
		t.Errorf("the comment's creative %s, want %s", first.Data.CreativeID, shared)
	}
	if r := guest.Do(http.MethodPost, guestCommentsURL(shared), map[string]any{"body": "Agreed, twice as big."}); r.Status != http.StatusCreated {
		t.Fatalf("the guest's comment: %d %s", r.Status, r.Body)
	}
	own := wantComment(t, s, "Agreed, twice as big.")
	if own.Data.Author.Kind != api.UserRefKindGuest {
		t.Errorf("the guest's comment's author: %+v", own.Data.Author)
	}
	if r := guest.Do(http.MethodPost, guestActionURL(shared), map[string]any{"action": "request_changes", "comment": "Bigger logo."}); r.Status != http.StatusOK {
		t.Fatalf("the guest's decision: %d %s", r.Status, r.Body)
	}
	decided := nextGuestEvent(t, s)
	if decided.Event != "creative.changes_requested" || decided.Data.ID != shared || decided.Data.ReviewStatus != api.ChangesRequested {
		t.Errorf("event %s %s of %s; want the changes requested of %s", decided.ID, decided.Event, decided.Data.ID, shared)
	}

	// The author's stream saw the guest's comment and decision live, the
	// comment with the guest as its author.
	for {
		e := nextGuestEvent(t, author)
		if e.Event == "creative.comment_added" && e.Data.Body == "Agreed, twice as big." {
			if e.Data.Author.Kind != api.UserRefKindGuest {
				t.Errorf("the author's stream: the guest's comment by %+v", e.Data.Author)
			}
		}
		if e.Event == "creative.changes_requested" && e.Data.ID == shared {
			break
		}
	}

	// A resume sends the same events from the outbox, nothing more.
	resumed := openGuestStream(t, guest, testenv.Header{Name: "Last-Event-ID", Value: "0"})
	for _, want := range []guestEvent{first, own, decided} {
		if got := nextGuestEvent(t, resumed); got.ID != want.ID || got.Event != want.Event {
			t.Fatalf("resumed: event %s %s, want %s %s", got.ID, got.Event, want.ID, want.Event)
		}
	}
}

// openMemberStream opens a member's stream and reads its retry line.
func openMemberStream(t *testing.T, c *testenv.Client) *testenv.Stream {
	t.Helper()
	s := c.Stream(streamPath)
	if m, _ := s.Next(); m.Retry != "2000" {
		t.Fatalf("first message %+v; want the retry line", m)
	}
	return s
}

func TestTheGuestStreamNeverCarriesAnInternalComment(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t, testenv.Options{Events: true})
	id := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview, reviewer: "reviewer"})
	guest, _ := d.guestOn(t, "decide", "legal@brand.test", id)
	s := openGuestStream(t, guest)

	// An internal thread: its comment, a reply in it, its resolution.
	var internal api.Comment
	r := d.comment("reviewer", id, map[string]any{"body": "Between us: the client will hate this.", "visibility": "internal"})
	r.JSON(t, &internal)
	if r.Status != http.StatusCreated {
		t.Fatalf("an internal comment: %d %s", r.Status, r.Body)
	}
	d.comment("author", id, map[string]any{"body": "Agreed.", "parentId": internal.Id})
	if r := d.clients["reviewer"].Do(http.MethodPatch, commentsURL(d.org, id)+"/"+internal.Id.String(), map[string]any{"resolved": true}); r.Status != http.StatusOK {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
	// A second internal thread, left open: the creative's counts hold it
	// for members, never for the guest.
	d.comment("reviewer", id, map[string]any{"body": "Also between us.", "visibility": "internal"})
	d.comment("reviewer", id, map[string]any{"body": "Please check the logo."})
	wantComment(t, s, "Please check the logo.")
	// The creative's own events carry the guest's counts: one open
	// comment, where members count two.
	if r := d.clients["reviewer"].Do(http.MethodPost, creativeURL(d.org, id)+"/actions", map[string]any{"action": "request_changes", "comment": "See the comments."}); r.Status != http.StatusOK {
		t.Fatalf("request changes: %d %s", r.Status, r.Body)
	}
	e := nextGuestEvent(t, s)
	if e.Event != "creative.changes_requested" || e.Data.OpenCommentCount != 1 || e.Data.OpenThreadCount != 1 {
		t.Errorf("event %s with counts %d and %d; want creative.changes_requested with 1 and 1", e.Event, e.Data.OpenCommentCount, e.Data.OpenThreadCount)
	}
	var member api.CreativeDetail
	d.clients["admin"].Do(http.MethodGet, creativeURL(d.org, id), nil).JSON(t, &member)
	if member.OpenCommentCount != 2 {
		t.Errorf("the members' count: %d, want 2", member.OpenCommentCount)
	}

	// Nor in a resume's backlog.
	resumed := openGuestStream(t, guest, testenv.Header{Name: "Last-Event-ID", Value: "0"})
	wantComment(t, resumed, "Please check the logo.")
	if e := nextGuestEvent(t, resumed); e.Event != "creative.changes_requested" {
		t.Errorf("resumed: %s after the comment", e.Event)
	}
}

func TestTheGuestStreamEndsWhenItsShareIsRevokedOrExpires(t *testing.T) {
	t.Parallel()
	// A short heartbeat: expiry is noticed by the periodic check.
	d := newReviewDesk(t, testenv.Options{Events: true, Env: map[string]string{"STREAM_HEARTBEAT": "200ms"}})
	id := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview})

	t.Run("revoked: at once", func(t *testing.T) {
		guest, share := d.guestOn(t, "view", "legal@brand.test", id)
		s := openGuestStream(t, guest)
		if r := d.clients["admin"].Do(http.MethodDelete, sharesURL(d.org)+"/"+share.String(), nil); r.Status != http.StatusNoContent {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		s.Ended()
		if r := guest.Do(http.MethodGet, guestStreamPath, nil); r.Status != http.StatusUnauthorized || r.Problem(t).Code != "unauthenticated" {
			t.Fatalf("reconnect after the revocation: %d %s", r.Status, r.Body)
		}
	})
	t.Run("expired: within a heartbeat", func(t *testing.T) {
		guest, share := d.guestOn(t, "view", "cmo@brand.test", id)
		s := openGuestStream(t, guest)
		if _, err := d.env.DB.Pool.Exec(context.Background(), "UPDATE shares SET expires_at = now() WHERE id = $1", share); err != nil {
			t.Fatal(err)
		}
		s.Ended()
		if r := guest.Do(http.MethodGet, guestStreamPath, nil); r.Status != http.StatusUnauthorized {
			t.Fatalf("reconnect after the expiry: %d %s", r.Status, r.Body)
		}
	})
}

func TestTheGuestStreamIsAGuestsOnly(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t, testenv.Options{Env: map[string]string{"STREAM_MAX_PER_USER": "1"}})
	id := d.creative(t, creativeSpec{versions: 1})
	guest, _ := d.guestOn(t, "view", "legal@brand.test", id)

	if r := d.clients["admin"].Do(http.MethodGet, guestStreamPath, nil); r.Status != http.StatusUnauthorized {
		t.Errorf("a member's session: %d %s", r.Status, r.Body)
	}
	if r := guest.Do(http.MethodGet, streamPath, nil); r.Status != http.StatusUnauthorized {
		t.Errorf("a guest on the members' stream: %d %s", r.Status, r.Body)
	}
	if r := guest.Do(http.MethodGet, guestStreamPath, nil, testenv.Header{Name: "Last-Event-ID", Value: "abc"}); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a malformed Last-Event-ID: %d %s", r.Status, r.Body)
	}
	openGuestStream(t, guest)
	r := guest.Do(http.MethodGet, guestStreamPath, nil)
	if p := r.Problem(t); r.Status != http.StatusTooManyRequests || p.Code != "too_many_streams" {
		t.Errorf("a second stream over the limit of one: %d %s", r.Status, r.Body)
	}
}

func TestAGuestsDecisionReachesMembersAsMembersSeeTheCreative(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t, testenv.Options{Events: true})
	id := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview})
	guest, _ := d.guestOn(t, "decide", "legal@brand.test", id)
	s := d.clients["author"].Stream(streamPath)
	if m, _ := s.Next(); m.Retry != "2000" {
		t.Fatalf("first message %+v; want the retry line", m)
	}
	d.comment("reviewer", id, map[string]any{"body": "Between us.", "visibility": "internal"})
	if r := guest.Do(http.MethodPost, guestActionURL(id), map[string]any{"action": "request_changes", "comment": "The logo is too small."}); r.Status != http.StatusOK {
		t.Fatalf("the guest's request for changes: %d %s", r.Status, r.Body)
	}
	// The stored event is the members' view (it counts the internal
	// comment), not the guest's answer.
	for {
		e := nextGuestEvent(t, s)
		if e.Event != "creative.changes_requested" {
			continue
		}
		var member api.CreativeDetail
		d.clients["admin"].Do(http.MethodGet, creativeURL(d.org, id), nil).JSON(t, &member)
		if e.Data.OpenCommentCount != member.OpenCommentCount || member.OpenCommentCount == 0 {
			t.Errorf("the members' event counts %d open comments, members %d", e.Data.OpenCommentCount, member.OpenCommentCount)
		}
		return
	}
}
