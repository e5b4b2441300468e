package review_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/review"
)

var (
	authorID   = uuid.MustParse("00000000-0000-7000-8000-00000000000a")
	otherID    = uuid.MustParse("00000000-0000-7000-8000-00000000000b")
	assignedID = uuid.MustParse("00000000-0000-7000-8000-00000000000c")
)

// outcome is what a row expects from Decide: a next status, or a refusal reason.
type outcome struct {
	next   review.Status
	reason review.Reason
}

func to(s review.Status) outcome { return outcome{next: s} }

var (
	forbidden = outcome{reason: review.Forbidden}
	invalid   = outcome{reason: review.InvalidTransition}
)

func (o outcome) String() string {
	if o.reason != "" {
		return string(o.reason)
	}
	return "-> " + string(o.next)
}

func decide(t *testing.T, c review.Creative, who review.Caller, a review.Action) outcome {
	t.Helper()
	next, err := review.Decide(c, who, a)
	if err == nil {
		if next == "" {
			t.Fatalf("Decide(%s) succeeded with an empty next status", a)
		}
		return to(next)
	}
	var r *review.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("Decide(%s) error %v (%T) is not a *review.Refusal", a, err, err)
	}
	if next != "" {
		t.Errorf("Decide(%s) refused but returned next status %q", a, next)
	}
	return outcome{reason: r.Reason}
}

func creative(s review.Status) review.Creative {
	return review.Creative{Status: s, AuthorID: authorID, HasCurrentVersion: true}
}

// TestDecideMatrix covers every (caller × state × action) cell of docs/review.md
// for a creative with a current version and no assigned reviewer. Columns are
// in canonical order: submit, request_changes, approve, archive.
func TestDecideMatrix(t *testing.T) {
	t.Parallel()

	var (
		admin    = review.Caller{UserID: otherID, Role: review.RoleAdmin}
		reviewer = review.Caller{UserID: otherID, Role: review.RoleReviewer}
		author   = review.Caller{UserID: otherID, Role: review.RoleAuthor}
		viewer   = review.Caller{UserID: otherID, Role: review.RoleViewer}
		owner    = review.Caller{UserID: authorID, Role: review.RoleAuthor}

		inReview  = to(review.StatusInReview)
		changes   = to(review.StatusChangesRequested)
		approved  = to(review.StatusApproved)
		archived  = to(review.StatusArchived)
		forbidAll = [4]outcome{forbidden, forbidden, forbidden, forbidden}
	)

	tests := []struct {
		name   string
		who    review.Caller
		status review.Status
		want   [4]outcome
	}{
		// An admin who is not the author may run every action its state allows.
		{"admin may submit or archive a draft", admin, review.StatusDraft, [4]outcome{inReview, invalid, invalid, archived}},
		{"admin may decide or archive in review", admin, review.StatusInReview, [4]outcome{invalid, changes, approved, archived}},
		{"admin may resubmit or archive after changes requested", admin, review.StatusChangesRequested, [4]outcome{inReview, invalid, invalid, archived}},
		{"admin may only archive an approved creative", admin, review.StatusApproved, [4]outcome{invalid, invalid, invalid, archived}},
		{"admin may do nothing to an archived creative", admin, review.StatusArchived, [4]outcome{invalid, invalid, invalid, invalid}},

		// A reviewer may only decide, and only in review; submit and archive are never theirs.
		{"reviewer may not submit or archive a draft", reviewer, review.StatusDraft, [4]outcome{forbidden, invalid, invalid, forbidden}},
		{"reviewer may decide in review", reviewer, review.StatusInReview, [4]outcome{forbidden, changes, approved, forbidden}},
		{"reviewer may not decide after changes requested", reviewer, review.StatusChangesRequested, [4]outcome{forbidden, invalid, invalid, forbidden}},
		{"reviewer may not decide an approved creative", reviewer, review.StatusApproved, [4]outcome{forbidden, invalid, invalid, forbidden}},
		{"reviewer may not decide an archived creative", reviewer, review.StatusArchived, [4]outcome{forbidden, invalid, invalid, forbidden}},

		// An author-role member has no rights on someone else's creative.
		{"other author may not touch a draft", author, review.StatusDraft, forbidAll},
		{"other author may not touch a creative in review", author, review.StatusInReview, forbidAll},
		{"other author may not touch a creative with changes requested", author, review.StatusChangesRequested, forbidAll},
		{"other author may not touch an approved creative", author, review.StatusApproved, forbidAll},
		{"other author may not touch an archived creative", author, review.StatusArchived, forbidAll},

		// A viewer can never do anything.
		{"viewer may not touch a draft", viewer, review.StatusDraft, forbidAll},
		{"viewer may not touch a creative in review", viewer, review.StatusInReview, forbidAll},
		{"viewer may not touch a creative with changes requested", viewer, review.StatusChangesRequested, forbidAll},
		{"viewer may not touch an approved creative", viewer, review.StatusApproved, forbidAll},
		{"viewer may not touch an archived creative", viewer, review.StatusArchived, forbidAll},

		// The author may submit, and archive only while it is a draft; never decide.
		{"owner may submit or archive a draft", owner, review.StatusDraft, [4]outcome{inReview, forbidden, forbidden, archived}},
		{"owner may not resubmit or archive in review", owner, review.StatusInReview, [4]outcome{invalid, forbidden, forbidden, forbidden}},
		{"owner may resubmit but not archive after changes requested", owner, review.StatusChangesRequested, [4]outcome{inReview, forbidden, forbidden, forbidden}},
		{"owner may not resubmit or archive an approved creative", owner, review.StatusApproved, [4]outcome{invalid, forbidden, forbidden, forbidden}},
		{"owner may not submit or archive an archived creative", owner, review.StatusArchived, [4]outcome{invalid, forbidden, forbidden, forbidden}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for i, a := range review.Actions {
				if got := decide(t, creative(tt.status), tt.who, a); got != tt.want[i] {
					t.Errorf("Decide(%s) = %v, want %v", a, got, tt.want[i])
				}
			}
		})
	}
}

// TestDecideSpecialCases proves the rules that the matrix does not reach:
// assignment, authorship of deciders, the draft-only archive right, finality,
// the current-version requirement and defensive refusals.
func TestDecideSpecialCases(t *testing.T) {
	t.Parallel()

	assigned := func(s review.Status) review.Creative {
		c := creative(s)
		c.ReviewerID = assignedID
		return c
	}
	noVersion := func(s review.Status) review.Creative {
		c := creative(s)
		c.HasCurrentVersion = false
		return c
	}

	tests := []struct {
		name   string
		c      review.Creative
		who    review.Caller
		action review.Action
		want   outcome
	}{
		// The assigned reviewer, and only they among reviewers, may decide; admins are not bound.
		{"assigned reviewer may approve", assigned(review.StatusInReview), review.Caller{UserID: assignedID, Role: review.RoleReviewer}, review.ActionApprove, to(review.StatusApproved)},
		{"assigned reviewer may request changes", assigned(review.StatusInReview), review.Caller{UserID: assignedID, Role: review.RoleReviewer}, review.ActionRequestChanges, to(review.StatusChangesRequested)},
		{"other reviewer may not approve when one is assigned", assigned(review.StatusInReview), review.Caller{UserID: otherID, Role: review.RoleReviewer}, review.ActionApprove, forbidden},
		{"other reviewer may not request changes when one is assigned", assigned(review.StatusInReview), review.Caller{UserID: otherID, Role: review.RoleReviewer}, review.ActionRequestChanges, forbidden},
		{"other reviewer is forbidden before the state is checked", assigned(review.StatusDraft), review.Caller{UserID: otherID, Role: review.RoleReviewer}, review.ActionApprove, forbidden},
		{"admin may approve when a reviewer is assigned", assigned(review.StatusInReview), review.Caller{UserID: otherID, Role: review.RoleAdmin}, review.ActionApprove, to(review.StatusApproved)},
		{"admin may request changes when a reviewer is assigned", assigned(review.StatusInReview), review.Caller{UserID: otherID, Role: review.RoleAdmin}, review.ActionRequestChanges, to(review.StatusChangesRequested)},
		{"assigned reviewer still needs the creative in review", assigned(review.StatusApproved), review.Caller{UserID: assignedID, Role: review.RoleReviewer}, review.ActionApprove, invalid},

		// Nobody decides on their own creative, whatever their role or assignment.
		{"reviewer-author may not approve own creative", creative(review.StatusInReview), review.Caller{UserID: authorID, Role: review.RoleReviewer}, review.ActionApprove, forbidden},
		{"reviewer-author may not request changes on own creative", creative(review.StatusInReview), review.Caller{UserID: authorID, Role: review.RoleReviewer}, review.ActionRequestChanges, forbidden},
		{"assigned reviewer-author may not approve own creative", review.Creative{Status: review.StatusInReview, AuthorID: authorID, ReviewerID: authorID, HasCurrentVersion: true}, review.Caller{UserID: authorID, Role: review.RoleReviewer}, review.ActionApprove, forbidden},
		{"author may not approve own creative", creative(review.StatusInReview), review.Caller{UserID: authorID, Role: review.RoleAuthor}, review.ActionApprove, forbidden},
		{"author may not request changes on own creative", creative(review.StatusInReview), review.Caller{UserID: authorID, Role: review.RoleAuthor}, review.ActionRequestChanges, forbidden},
		{"admin-author may not approve own creative", creative(review.StatusInReview), review.Caller{UserID: authorID, Role: review.RoleAdmin}, review.ActionApprove, forbidden},
		{"admin-author may not request changes on own creative", creative(review.StatusInReview), review.Caller{UserID: authorID, Role: review.RoleAdmin}, review.ActionRequestChanges, forbidden},
		{"admin-author may submit own creative", creative(review.StatusDraft), review.Caller{UserID: authorID, Role: review.RoleAdmin}, review.ActionSubmit, to(review.StatusInReview)},
		{"admin-author may archive own creative in review", creative(review.StatusInReview), review.Caller{UserID: authorID, Role: review.RoleAdmin}, review.ActionArchive, to(review.StatusArchived)},
		{"reviewer-author may submit own creative", creative(review.StatusDraft), review.Caller{UserID: authorID, Role: review.RoleReviewer}, review.ActionSubmit, to(review.StatusInReview)},

		// The author's archive right exists only while the creative is a draft.
		{"author may archive a draft", creative(review.StatusDraft), review.Caller{UserID: authorID, Role: review.RoleAuthor}, review.ActionArchive, to(review.StatusArchived)},
		{"author may not archive in review", creative(review.StatusInReview), review.Caller{UserID: authorID, Role: review.RoleAuthor}, review.ActionArchive, forbidden},
		{"author may not archive after changes requested", creative(review.StatusChangesRequested), review.Caller{UserID: authorID, Role: review.RoleAuthor}, review.ActionArchive, forbidden},
		{"author may not archive an approved creative", creative(review.StatusApproved), review.Caller{UserID: authorID, Role: review.RoleAuthor}, review.ActionArchive, forbidden},
		{"author archiving an archived creative is forbidden not invalid", creative(review.StatusArchived), review.Caller{UserID: authorID, Role: review.RoleAuthor}, review.ActionArchive, forbidden},
		{"reviewer-author may archive own draft", creative(review.StatusDraft), review.Caller{UserID: authorID, Role: review.RoleReviewer}, review.ActionArchive, to(review.StatusArchived)},

		// Archived is final: every action a caller has the right to run is an invalid transition.
		{"archived is final for admin submit", creative(review.StatusArchived), review.Caller{UserID: otherID, Role: review.RoleAdmin}, review.ActionSubmit, invalid},
		{"archived is final for admin request changes", creative(review.StatusArchived), review.Caller{UserID: otherID, Role: review.RoleAdmin}, review.ActionRequestChanges, invalid},
		{"archived is final for admin approve", creative(review.StatusArchived), review.Caller{UserID: otherID, Role: review.RoleAdmin}, review.ActionApprove, invalid},
		{"archived is final for admin archive", creative(review.StatusArchived), review.Caller{UserID: otherID, Role: review.RoleAdmin}, review.ActionArchive, invalid},
		{"archived is final for the assigned reviewer", assigned(review.StatusArchived), review.Caller{UserID: assignedID, Role: review.RoleReviewer}, review.ActionApprove, invalid},
		{"archived is final for the author's submit", creative(review.StatusArchived), review.Caller{UserID: authorID, Role: review.RoleAuthor}, review.ActionSubmit, invalid},

		// Submit needs a current version; rights and state are still checked first.
		{"author may not submit a draft without a version", noVersion(review.StatusDraft), review.Caller{UserID: authorID, Role: review.RoleAuthor}, review.ActionSubmit, invalid},
		{"admin may not resubmit without a version", noVersion(review.StatusChangesRequested), review.Caller{UserID: otherID, Role: review.RoleAdmin}, review.ActionSubmit, invalid},
		{"reviewer submitting without a version is forbidden first", noVersion(review.StatusDraft), review.Caller{UserID: otherID, Role: review.RoleReviewer}, review.ActionSubmit, forbidden},
		{"archive does not need a version", noVersion(review.StatusDraft), review.Caller{UserID: authorID, Role: review.RoleAuthor}, review.ActionArchive, to(review.StatusArchived)},

		// A viewer who authored the creative still may do nothing.
		{"viewer-author may not submit", creative(review.StatusDraft), review.Caller{UserID: authorID, Role: review.RoleViewer}, review.ActionSubmit, forbidden},
		{"viewer-author may not archive a draft", creative(review.StatusDraft), review.Caller{UserID: authorID, Role: review.RoleViewer}, review.ActionArchive, forbidden},

		// Defensive refusals: unknown input never grants a right.
		{"unknown action is forbidden", creative(review.StatusDraft), review.Caller{UserID: otherID, Role: review.RoleAdmin}, review.Action("publish"), forbidden},
		{"empty action is forbidden", creative(review.StatusDraft), review.Caller{UserID: otherID, Role: review.RoleAdmin}, review.Action(""), forbidden},
		{"unknown role is forbidden", creative(review.StatusInReview), review.Caller{UserID: otherID, Role: review.Role("owner")}, review.ActionApprove, forbidden},
		{"unknown role of the author is forbidden", creative(review.StatusDraft), review.Caller{UserID: authorID, Role: review.Role("")}, review.ActionSubmit, forbidden},
		{"nil user is never the author", review.Creative{Status: review.StatusDraft, HasCurrentVersion: true}, review.Caller{Role: review.RoleAuthor}, review.ActionSubmit, forbidden},
		{"unknown status is not archivable", creative(review.Status("deleted")), review.Caller{UserID: otherID, Role: review.RoleAdmin}, review.ActionArchive, invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := decide(t, tt.c, tt.who, tt.action); got != tt.want {
				t.Errorf("Decide(%s) = %v, want %v", tt.action, got, tt.want)
			}
		})
	}
}

// cell is one combination of creative and caller.
type cell struct {
	c   review.Creative
	who review.Caller
}

func (c cell) String() string {
	author := "non-author"
	if c.who.UserID == c.c.AuthorID {
		author = "author"
	}
	return fmt.Sprintf("%s %s/%s/reviewer=%v/version=%v", c.who.Role, author, c.c.Status, c.c.ReviewerID != uuid.Nil, c.c.HasCurrentVersion)
}

// cells enumerates every role × authorship × assignment × state × version
// combination, plus unknown roles and statuses.
func cells() []cell {
	roles := append(slices.Clone(review.Roles), review.Role("owner"))
	statuses := append(slices.Clone(review.Statuses), review.Status("deleted"))
	var out []cell
	for _, role := range roles {
		for _, userID := range []uuid.UUID{authorID, otherID, assignedID} {
			for _, reviewerID := range []uuid.UUID{uuid.Nil, assignedID, authorID} {
				for _, s := range statuses {
					for _, hasVersion := range []bool{true, false} {
						out = append(out, cell{
							c:   review.Creative{Status: s, AuthorID: authorID, ReviewerID: reviewerID, HasCurrentVersion: hasVersion},
							who: review.Caller{UserID: userID, Role: role},
						})
					}
				}
			}
		}
	}
	return out
}

// TestAvailableActionsFollowTheStatedRules checks availableActions, for
// every combination of caller and creative, against the table of
// docs/review.md, restated here: submit (draft or changes_requested, with a
// version) by its author or an admin; request_changes and approve (in
// review) by a reviewer or admin who is not the author, only the assigned
// reviewer when one is (admins always); archive (any state but archived)
// by an admin, or by the author of a draft. A viewer, or an unknown role,
// does nothing; the order is that of review.Actions.
func TestAvailableActionsFollowTheStatedRules(t *testing.T) {
	t.Parallel()
	for _, cl := range cells() {
		c, who := cl.c, cl.who
		member := who.Role == review.RoleAdmin || who.Role == review.RoleReviewer || who.Role == review.RoleAuthor
		admin := who.Role == review.RoleAdmin
		author := member && who.UserID == c.AuthorID
		decider := (admin || who.Role == review.RoleReviewer && (c.ReviewerID == uuid.Nil || c.ReviewerID == who.UserID)) &&
			who.UserID != c.AuthorID
		known := slices.Contains(review.Statuses, c.Status)
		want := []review.Action{}
		if (author || admin) && (c.Status == review.StatusDraft || c.Status == review.StatusChangesRequested) && c.HasCurrentVersion {
			want = append(want, review.ActionSubmit)
		}
		if decider && c.Status == review.StatusInReview {
			want = append(want, review.ActionRequestChanges, review.ActionApprove)
		}
		if (admin || author && c.Status == review.StatusDraft) && known && c.Status != review.StatusArchived {
			want = append(want, review.ActionArchive)
		}
		got := review.Available(c, who)
		if got == nil {
			t.Errorf("%v: Available returned nil, want an empty slice", cl)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v: Available = %v, want %v", cl, got, want)
		}
	}
}

// TestAvailableExamples pins the answers a frontend sees for typical callers.
func TestAvailableExamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    review.Creative
		who  review.Caller
		want []review.Action
	}{
		{"admin sees decisions and archive in review", creative(review.StatusInReview), review.Caller{UserID: otherID, Role: review.RoleAdmin}, []review.Action{review.ActionRequestChanges, review.ActionApprove, review.ActionArchive}},
		{"author sees submit and archive on a draft", creative(review.StatusDraft), review.Caller{UserID: authorID, Role: review.RoleAuthor}, []review.Action{review.ActionSubmit, review.ActionArchive}},
		{"author sees only archive on a draft without a version", review.Creative{Status: review.StatusDraft, AuthorID: authorID}, review.Caller{UserID: authorID, Role: review.RoleAuthor}, []review.Action{review.ActionArchive}},
		{"viewer sees nothing", creative(review.StatusDraft), review.Caller{UserID: otherID, Role: review.RoleViewer}, []review.Action{}},
		{"archived offers nothing to an admin", creative(review.StatusArchived), review.Caller{UserID: otherID, Role: review.RoleAdmin}, []review.Action{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := review.Available(tt.c, tt.who)
			if got == nil || !slices.Equal(got, tt.want) {
				t.Errorf("Available = %#v, want %#v", got, tt.want)
			}
		})
	}
}

// TestRefusalDetail proves every refusal can be shown to a user: it is a
// *Refusal through wrapping, has a known reason and a non-empty sentence.
func TestRefusalDetail(t *testing.T) {
	t.Parallel()
	actions := append(append(slices.Clone(review.Actions), review.Changes...), review.Action("publish"))
	refusals := 0
	for _, cl := range cells() {
		for _, a := range actions {
			_, err := review.Decide(cl.c, cl.who, a)
			if err == nil {
				continue
			}
			refusals++
			var r *review.Refusal
			if !errors.As(fmt.Errorf("wrapped: %w", err), &r) {
				t.Fatalf("%v %s: %v is not a *review.Refusal", cl, a, err)
			}
			if r.Reason != review.Forbidden && r.Reason != review.InvalidTransition {
				t.Errorf("%v %s: unknown reason %q", cl, a, r.Reason)
			}
			if strings.TrimSpace(r.Detail) == "" || !strings.HasSuffix(r.Detail, ".") {
				t.Errorf("%v %s: detail %q is not a sentence", cl, a, r.Detail)
			}
			if !strings.Contains(err.Error(), r.Detail) {
				t.Errorf("%v %s: Error() %q does not carry the detail", cl, a, err.Error())
			}
		}
	}
	if refusals == 0 {
		t.Fatal("no refusal was produced")
	}
}

// TestRefusalDetailWording pins the sentences the API documents as examples.
func TestRefusalDetailWording(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		c      review.Creative
		who    review.Caller
		action review.Action
		want   string
	}{
		{"forbidden approve names who may", creative(review.StatusInReview), review.Caller{UserID: otherID, Role: review.RoleAuthor}, review.ActionApprove, "Only a reviewer or an admin who is not the author may approve this creative."},
		{"invalid transition names action and state", creative(review.StatusDraft), review.Caller{UserID: otherID, Role: review.RoleAdmin}, review.ActionApprove, "approve is not allowed while the creative is draft."},
		{"submit without a version says to upload one", review.Creative{Status: review.StatusDraft, AuthorID: authorID}, review.Caller{UserID: authorID, Role: review.RoleAuthor}, review.ActionSubmit, "A version must be uploaded before the creative can be submitted."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := review.Decide(tt.c, tt.who, tt.action)
			var r *review.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("Decide(%s) = %v, want a *review.Refusal", tt.action, err)
			}
			if r.Detail != tt.want {
				t.Errorf("Detail = %q, want %q", r.Detail, tt.want)
			}
		})
	}
}

// TestAuthoringChangesMatrix covers every (caller × state) cell of the
// authoring rows of the rights table, for a creative with a version and no
// assigned reviewer. Columns: add_version, edit, assign_reviewer.
func TestAuthoringChangesMatrix(t *testing.T) {
	t.Parallel()
	var (
		admin       = review.Caller{UserID: otherID, Role: review.RoleAdmin}
		adminAuthor = review.Caller{UserID: authorID, Role: review.RoleAdmin}
		reviewer    = review.Caller{UserID: otherID, Role: review.RoleReviewer}
		author      = review.Caller{UserID: otherID, Role: review.RoleAuthor}
		viewer      = review.Caller{UserID: authorID, Role: review.RoleViewer}
		owner       = review.Caller{UserID: authorID, Role: review.RoleAuthor}

		draft     = to(review.StatusDraft)
		inReview  = to(review.StatusInReview)
		changes   = to(review.StatusChangesRequested)
		approved  = to(review.StatusApproved)
		forbidAll = [3]outcome{forbidden, forbidden, forbidden}
	)
	tests := []struct {
		name   string
		who    review.Caller
		status review.Status
		want   [3]outcome
	}{
		{"the author adds a version to and edits a draft", owner, review.StatusDraft, [3]outcome{draft, draft, forbidden}},
		{"the author edits but adds no version in review", owner, review.StatusInReview, [3]outcome{invalid, inReview, forbidden}},
		{"the author answers requested changes with a version", owner, review.StatusChangesRequested, [3]outcome{changes, changes, forbidden}},
		{"a version of an approved creative goes back to draft", owner, review.StatusApproved, [3]outcome{draft, approved, forbidden}},
		{"the author changes nothing once archived", owner, review.StatusArchived, [3]outcome{invalid, invalid, forbidden}},

		{"an admin does everything to a draft", admin, review.StatusDraft, [3]outcome{draft, draft, draft}},
		{"an admin edits and assigns in review", admin, review.StatusInReview, [3]outcome{invalid, inReview, inReview}},
		{"an admin's version of an approved creative goes back to draft", admin, review.StatusApproved, [3]outcome{draft, approved, approved}},
		{"an admin changes nothing once archived", admin, review.StatusArchived, [3]outcome{invalid, invalid, invalid}},
		{"an admin who wrote the creative may assign its reviewer", adminAuthor, review.StatusChangesRequested, [3]outcome{changes, changes, changes}},

		{"a reviewer changes no draft", reviewer, review.StatusDraft, forbidAll},
		{"a reviewer changes nothing in review", reviewer, review.StatusInReview, forbidAll},
		{"another author changes no draft", author, review.StatusDraft, forbidAll},
		{"another author changes nothing approved", author, review.StatusApproved, forbidAll},
		{"a viewer who wrote the creative changes nothing", viewer, review.StatusDraft, forbidAll},
		{"a viewer changes nothing archived", viewer, review.StatusArchived, forbidAll},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for i, a := range review.Changes {
				if got := decide(t, creative(tt.status), tt.who, a); got != tt.want[i] {
					t.Errorf("Decide(%s) = %v, want %v", a, got, tt.want[i])
				}
			}
		})
	}
}

// TestAllowedNamesTheChangesTheCallerMayMake checks permissions against
// the rules as docs/review.md states them: the author or an admin adds
// versions (not in review, not archived) and edits (not archived); only an
// admin assigns a reviewer.
func TestAllowedNamesTheChangesTheCallerMayMake(t *testing.T) {
	t.Parallel()
	at := func(s review.Status) review.Creative {
		return review.Creative{Status: s, AuthorID: authorID, HasCurrentVersion: true, Version: 2}
	}
	author := review.Caller{UserID: authorID, Role: review.RoleAuthor}
	admin := review.Caller{UserID: otherID, Role: review.RoleAdmin}
	reviewer := review.Caller{UserID: otherID, Role: review.RoleReviewer}
	viewer := review.Caller{UserID: otherID, Role: review.RoleViewer}
	otherAuthor := review.Caller{UserID: otherID, Role: review.RoleAuthor}
	all := review.Permissions{AddVersion: true, Edit: true, AssignReviewer: true}
	tests := []struct {
		name string
		c    review.Creative
		who  review.Caller
		want review.Permissions
	}{
		{"the author of a draft adds versions and edits", at(review.StatusDraft), author, review.Permissions{AddVersion: true, Edit: true}},
		{"the author of an approved creative adds versions and edits", at(review.StatusApproved), author, review.Permissions{AddVersion: true, Edit: true}},
		{"the author edits while in review but adds no version", at(review.StatusInReview), author, review.Permissions{Edit: true}},
		{"an admin may make every change to a draft", at(review.StatusDraft), admin, all},
		{"nobody changes an archived creative", at(review.StatusArchived), admin, review.Permissions{}},
		{"a reviewer changes no creative", at(review.StatusDraft), reviewer, review.Permissions{}},
		{"another author changes no one else's creative", at(review.StatusDraft), otherAuthor, review.Permissions{}},
		{"a viewer changes nothing", at(review.StatusChangesRequested), viewer, review.Permissions{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := review.Allowed(tt.c, tt.who); got != tt.want {
				t.Fatalf("Allowed = %+v; want %+v", got, tt.want)
			}
		})
	}
}

// TestCheckAnswersInTheDocumentedOrder proves the refusal order of every
// change: rights, then the request against the creative, then the version
// the caller saw, then the state.
func TestCheckAnswersInTheDocumentedOrder(t *testing.T) {
	t.Parallel()
	errInvalid := errors.New("422: the request does not fit the creative")
	fails := func() error { return errInvalid }
	stale, current := int64(9), int64(3)
	huge := int64(1)<<32 + 3 // 3 once narrowed to 32 bits
	archived := review.Creative{Status: review.StatusArchived, AuthorID: authorID, HasCurrentVersion: true, Version: 3}
	owner := review.Caller{UserID: authorID, Role: review.RoleAuthor}
	admin := review.Caller{UserID: otherID, Role: review.RoleAdmin}
	viewer := review.Caller{UserID: otherID, Role: review.RoleViewer}
	tests := []struct {
		name     string
		who      review.Caller
		expected *int64
		check    func() error
		actions  []review.Action
		want     string
	}{
		{"rights come first", viewer, &stale, fails, []review.Action{review.ActionEdit}, string(review.Forbidden)},
		{"every change asked for needs its right", owner, &stale, fails, []review.Action{review.ActionEdit, review.ActionAssignReviewer}, string(review.Forbidden)},
		{"then the request against the creative", admin, &stale, fails, []review.Action{review.ActionEdit}, errInvalid.Error()},
		{"then the version the caller saw", admin, &stale, nil, []review.Action{review.ActionEdit}, string(review.VersionConflict)},
		{"a version is compared without narrowing", admin, &huge, nil, []review.Action{review.ActionEdit}, string(review.VersionConflict)},
		{"then the state", admin, &current, nil, []review.Action{review.ActionEdit, review.ActionAssignReviewer}, string(review.InvalidTransition)},
		{"no change asked for is refused", admin, nil, nil, nil, string(review.Forbidden)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			next, err := review.Check(archived, tt.who, tt.expected, tt.check, tt.actions...)
			got := ""
			var r *review.Refusal
			switch {
			case errors.As(err, &r):
				got = string(r.Reason)
			case err != nil:
				got = err.Error()
			}
			if got != tt.want || next != "" {
				t.Fatalf("Check = %q, %v; want %s", next, err, tt.want)
			}
		})
	}
	t.Run("a check runs only for a caller with the right", func(t *testing.T) {
		ran := false
		_, _ = review.Check(archived, viewer, nil, func() error { ran = true; return nil }, review.ActionEdit)
		if ran {
			t.Fatal("the check ran for a caller without the right: its 422 would tell them about other records")
		}
	})
	t.Run("an allowed change answers the state after it", func(t *testing.T) {
		approved := review.Creative{Status: review.StatusApproved, AuthorID: authorID, HasCurrentVersion: true, Version: 3}
		next, err := review.Check(approved, owner, &current, func() error { return nil }, review.ActionAddVersion)
		if err != nil || next != review.StatusDraft {
			t.Fatalf("Check = %q, %v", next, err)
		}
	})
}

func TestOnlyAuthorsAndAdminsCreate(t *testing.T) {
	t.Parallel()
	for _, role := range append(slices.Clone(review.Roles), review.Role("owner")) {
		err := review.AuthorizeCreate(role)
		if allowed := err == nil; allowed != (role == review.RoleAuthor || role == review.RoleAdmin) {
			t.Errorf("%s: %v", role, err)
		}
		var r *review.Refusal
		if err != nil && (!errors.As(err, &r) || r.Reason != review.Forbidden) {
			t.Errorf("%s: %v is not a Forbidden refusal", role, err)
		}
	}
}

func TestReviewPlanChangesOnlyByTheAuthorOrAnAdminBeforeADecidingRound(t *testing.T) {
	author, other := uuid.New(), uuid.New()
	for _, tt := range []struct {
		name   string
		status review.Status
		who    review.Caller
		want   review.Reason
	}{
		{"author in draft", review.StatusDraft, review.Caller{UserID: author, Role: review.RoleAuthor}, ""},
		{"admin after changes requested", review.StatusChangesRequested, review.Caller{UserID: other, Role: review.RoleAdmin}, ""},
		{"reviewer", review.StatusDraft, review.Caller{UserID: other, Role: review.RoleReviewer}, review.Forbidden},
		{"other author", review.StatusDraft, review.Caller{UserID: other, Role: review.RoleAuthor}, review.Forbidden},
		{"author in review", review.StatusInReview, review.Caller{UserID: author, Role: review.RoleAuthor}, review.InvalidTransition},
		{"admin when approved", review.StatusApproved, review.Caller{UserID: other, Role: review.RoleAdmin}, review.InvalidTransition},
		{"author when archived", review.StatusArchived, review.Caller{UserID: author, Role: review.RoleAuthor}, review.InvalidTransition},
	} {
		t.Run(tt.name, func(t *testing.T) {
			next, err := review.Decide(review.Creative{Status: tt.status, AuthorID: author}, tt.who, review.ActionSetReviewPlan)
			var r *review.Refusal
			switch {
			case tt.want == "" && (err != nil || next != tt.status):
				t.Fatalf("got %s, %v; want %s", next, err, tt.status)
			case tt.want != "" && (!errors.As(err, &r) || r.Reason != tt.want):
				t.Fatalf("got %v, want %s", err, tt.want)
			}
		})
	}
}

func TestAReviewPlanNamesTheReviewersSoAssigningOneIsRefused(t *testing.T) {
	admin := review.Caller{UserID: uuid.New(), Role: review.RoleAdmin}
	c := review.Creative{Status: review.StatusDraft, AuthorID: uuid.New(), HasPlan: true}
	_, err := review.Check(c, admin, nil, nil, review.ActionEdit, review.ActionAssignReviewer)
	var r *review.Refusal
	if !errors.As(err, &r) || r.Reason != review.ReviewPlanSet {
		t.Fatalf("got %v, want review_plan_set", err)
	}
	if review.Allowed(c, admin).AssignReviewer {
		t.Fatal("permissions offer assignReviewer on a creative with a plan")
	}
	if _, err := review.Check(c, admin, nil, nil, review.ActionEdit); err != nil {
		t.Fatalf("an edit without reviewerId: %v", err)
	}
	c.HasPlan = false
	if _, err := review.Check(c, admin, nil, nil, review.ActionEdit, review.ActionAssignReviewer); err != nil {
		t.Fatalf("without a plan: %v", err)
	}
}
