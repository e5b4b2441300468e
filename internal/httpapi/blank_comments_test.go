package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
)

// TestACommentOfOnlyUnicodeSpacesOrFormatCharactersIsTooShort: a body of
// ideographic spaces, zero-width spaces, word joiners or byte order marks
// says nothing a reader can see, and is the 422 too_short of an empty one
// (thread.Blank, docs/review.md), for a member and a guest, writing and
// editing, and nothing is written.
func TestACommentOfOnlyUnicodeSpacesOrFormatCharactersIsTooShort(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	mine := d.mustComment(t, "reviewer", id, map[string]any{"body": "Fine."})
	guest, _ := d.guestOn(t, "comment", "legal@brand.test", id)
	var theirs api.Comment
	if r := guest.Do(http.MethodPost, guestCommentsURL(id), map[string]any{"body": "Ok."}, key(uuid.NewString())); r.Status != http.StatusCreated {
		t.Fatalf("a guest's comment: %d %s", r.Status, r.Body)
	} else {
		r.JSON(t, &theirs)
	}
	writes := []struct {
		name   string
		client *testenv.Client
		method string
		path   string
	}{
		{"a member's comment", d.clients["reviewer"], http.MethodPost, commentsURL(d.org, id)},
		{"a member's edit", d.clients["reviewer"], http.MethodPatch, commentsURL(d.org, id) + "/" + mine.Id.String()},
		{"a guest's comment", guest, http.MethodPost, guestCommentsURL(id)},
		{"a guest's edit", guest, http.MethodPatch, guestCommentsURL(id) + "/" + theirs.Id.String()},
	}
	for _, body := range []string{"\u3000", "\u200b", "\u2060\u2060", "\ufeff", " \u3000\u200b\n\u2060\ufeff\t", "   "} {
		for _, w := range writes {
			var headers []testenv.Header
			if w.method == http.MethodPost {
				headers = append(headers, key(uuid.NewString()))
			}
			r := w.client.Do(w.method, w.path, map[string]any{"body": body}, headers...)
			p := r.Problem(t)
			if r.Status != http.StatusUnprocessableEntity || len(p.FieldErrors) != 1 || p.FieldErrors[0].Field != "body" || p.FieldErrors[0].Code != "too_short" {
				t.Errorf("%s of %+q: %d %s", w.name, body, r.Status, r.Body)
			}
		}
	}
	var list api.CommentList
	d.clients["reviewer"].Do(http.MethodGet, commentsURL(d.org, id), nil).JSON(t, &list)
	if len(list.Items) != 2 {
		t.Errorf("%d comments after the refusals, want the 2 written before", len(list.Items))
	}
	// Words among such characters are a comment.
	if r := d.comment("reviewer", id, map[string]any{"body": "\u200bOk\u3000"}); r.Status != http.StatusCreated {
		t.Errorf("a word among invisible characters: %d %s", r.Status, r.Body)
	}
}
