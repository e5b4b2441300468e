package review_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/review"
)

var commenterID = uuid.MustParse("00000000-0000-7000-8000-00000000000d")

// checkComment is CheckComment's answer as a reason ("" when allowed).
func checkComment(t *testing.T, c review.Creative, who review.Caller, commentAuthor uuid.UUID, check func() error, actions ...review.Action) review.Reason {
	t.Helper()
	err := review.CheckComment(c, who, commentAuthor, check, actions...)
	if err == nil {
		return ""
	}
	var r *review.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("CheckComment: %v (%T) is not a *review.Refusal", err, err)
	}
	return r.Reason
}

// TestCommentRights is the comments' rights table, row by row: for each
// change, every role as the creative's author, the comment's author, or
// neither.
func TestCommentRights(t *testing.T) {
	t.Parallel()
	const ok = review.Reason("")
	type who struct {
		role                          review.Role
		creativeAuthor, commentAuthor bool
	}
	for _, tt := range []struct {
		action review.Action
		who    who
		want   review.Reason
	}{
		{review.ActionComment, who{role: review.RoleAdmin}, ok},
		{review.ActionComment, who{role: review.RoleReviewer}, ok},
		{review.ActionComment, who{role: review.RoleAuthor}, ok},
		{review.ActionComment, who{role: review.RoleAuthor, creativeAuthor: true}, ok},
		{review.ActionComment, who{role: review.RoleViewer}, review.Forbidden},
		{review.ActionComment, who{role: "owner"}, review.Forbidden},

		{review.ActionEditComment, who{role: review.RoleAuthor, commentAuthor: true}, ok},
		{review.ActionEditComment, who{role: review.RoleReviewer, commentAuthor: true}, ok},
		{review.ActionEditComment, who{role: review.RoleAdmin}, review.Forbidden},
		{review.ActionEditComment, who{role: review.RoleAuthor, creativeAuthor: true}, review.Forbidden},
		{review.ActionEditComment, who{role: review.RoleViewer, commentAuthor: true}, review.Forbidden},

		{review.ActionResolveComment, who{role: review.RoleAdmin}, ok},
		{review.ActionResolveComment, who{role: review.RoleReviewer}, ok},
		{review.ActionResolveComment, who{role: review.RoleAuthor, creativeAuthor: true}, ok},
		{review.ActionResolveComment, who{role: review.RoleAuthor}, review.Forbidden},
		{review.ActionResolveComment, who{role: review.RoleAuthor, commentAuthor: true}, review.Forbidden},
		{review.ActionResolveComment, who{role: review.RoleViewer, creativeAuthor: true}, review.Forbidden},

		{review.ActionDeleteComment, who{role: review.RoleAuthor, commentAuthor: true}, ok},
		{review.ActionDeleteComment, who{role: review.RoleAdmin}, ok},
		{review.ActionDeleteComment, who{role: review.RoleReviewer}, review.Forbidden},
		{review.ActionDeleteComment, who{role: review.RoleAuthor, creativeAuthor: true}, review.Forbidden},
		{review.ActionDeleteComment, who{role: review.RoleViewer, commentAuthor: true}, review.Forbidden},

		{review.ActionAddressComment, who{role: review.RoleAuthor, creativeAuthor: true}, ok},
		{review.ActionAddressComment, who{role: review.RoleAdmin}, ok},
		{review.ActionAddressComment, who{role: review.RoleReviewer}, review.Forbidden},
		{review.ActionAddressComment, who{role: review.RoleAuthor, commentAuthor: true}, review.Forbidden},
		{review.ActionAddressComment, who{role: review.RoleViewer, creativeAuthor: true}, review.Forbidden},
	} {
		c := review.Creative{Status: review.StatusInReview, AuthorID: authorID, HasCurrentVersion: true, Version: 3}
		caller := review.Caller{UserID: otherID, Role: tt.who.role}
		if tt.who.creativeAuthor {
			caller.UserID = authorID
		}
		commentAuthor := commenterID
		if tt.who.commentAuthor {
			commentAuthor = caller.UserID
		}
		if got := checkComment(t, c, caller, commentAuthor, nil, tt.action); got != tt.want {
			t.Errorf("%s by %+v: %q, want %q", tt.action, tt.who, got, tt.want)
		}
	}
}

// TestCommentRefusalsComeInTheDocumentedOrder: 403 before the 422 of the
// check before 409; an archived creative and one without a version take
// no comment changes; every change is checked when a patch asks for two.
func TestCommentRefusalsComeInTheDocumentedOrder(t *testing.T) {
	t.Parallel()
	invalid := errors.New("422")
	failing := func() error { return invalid }
	archived := review.Creative{Status: review.StatusArchived, AuthorID: authorID, HasCurrentVersion: true}
	noVersion := review.Creative{Status: review.StatusDraft, AuthorID: authorID}
	admin := review.Caller{UserID: otherID, Role: review.RoleAdmin}
	viewer := review.Caller{UserID: otherID, Role: review.RoleViewer}

	if got := checkComment(t, archived, viewer, uuid.Nil, failing, review.ActionComment); got != review.Forbidden {
		t.Errorf("a viewer on an archived creative: %q, want 403 first", got)
	}
	if err := review.CheckComment(archived, admin, uuid.Nil, failing, review.ActionComment); !errors.Is(err, invalid) {
		t.Errorf("a failing check on an archived creative: %v, want the check's 422 before the 409", err)
	}
	for _, a := range review.CommentChanges {
		if got := checkComment(t, archived, admin, otherID, nil, a); got != review.InvalidTransition {
			t.Errorf("%s on an archived creative: %q, want invalid_transition", a, got)
		}
	}
	if got := checkComment(t, noVersion, admin, uuid.Nil, nil, review.ActionComment); got != review.InvalidTransition {
		t.Errorf("a comment on a creative without a version: %q, want invalid_transition", got)
	}
	if got := checkComment(t, review.Creative{Status: review.StatusInReview, AuthorID: authorID, HasCurrentVersion: true},
		review.Caller{UserID: otherID, Role: review.RoleReviewer}, commenterID, nil, review.ActionResolveComment, review.ActionEditComment); got != review.Forbidden {
		t.Errorf("a reviewer resolving and editing another's comment: %q, want 403 for the edit", got)
	}
	if got := checkComment(t, noVersion, admin, uuid.Nil, nil); got != review.Forbidden {
		t.Errorf("no change: %q, want 403", got)
	}
}
