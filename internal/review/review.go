// Package review holds the creative review state machine and the rights to
// run each action (PRODUCT.md §3). It is the one place where these rules
// live: HTTP handlers ask Available to answer availableActions and Decide to
// authorise an action, so the two can never disagree.
package review

import (
	"fmt"

	"github.com/google/uuid"
)

// Status is a creative's reviewStatus.
type Status string

// The review states. StatusArchived is final in v1.
const (
	StatusDraft            Status = "draft"
	StatusInReview         Status = "in_review"
	StatusChangesRequested Status = "changes_requested"
	StatusApproved         Status = "approved"
	StatusArchived         Status = "archived"
)

// Statuses lists every review state, in lifecycle order, so callers and tests
// can range over all of them.
var Statuses = []Status{StatusDraft, StatusInReview, StatusChangesRequested, StatusApproved, StatusArchived}

// Valid reports whether s is one of the review states, so a value read from
// storage can be checked before it is trusted.
func (s Status) Valid() bool {
	switch s {
	case StatusDraft, StatusInReview, StatusChangesRequested, StatusApproved, StatusArchived:
		return true
	}
	return false
}

// Action is a review command a caller asks to run on a creative.
type Action string

// The review actions of CreativeActionRequest.
const (
	ActionSubmit         Action = "submit"
	ActionRequestChanges Action = "request_changes"
	ActionApprove        Action = "approve"
	ActionArchive        Action = "archive"
)

// Actions lists every action in canonical order; Available answers in this
// order so availableActions is stable for clients.
var Actions = []Action{ActionSubmit, ActionRequestChanges, ActionApprove, ActionArchive}

// Valid reports whether a is one of the review actions.
func (a Action) Valid() bool {
	switch a {
	case ActionSubmit, ActionRequestChanges, ActionApprove, ActionArchive:
		return true
	}
	return false
}

// Role is a member's role in the creative's organization.
type Role string

// The membership roles of PRODUCT.md §1.
const (
	RoleAdmin    Role = "admin"
	RoleReviewer Role = "reviewer"
	RoleAuthor   Role = "author"
	RoleViewer   Role = "viewer"
)

// Roles lists every membership role, so callers and tests can range over them.
var Roles = []Role{RoleAdmin, RoleReviewer, RoleAuthor, RoleViewer}

// Valid reports whether r is one of the membership roles.
func (r Role) Valid() bool {
	switch r {
	case RoleAdmin, RoleReviewer, RoleAuthor, RoleViewer:
		return true
	}
	return false
}

// Creative is the part of a creative the rules depend on, so the package
// needs neither the database row nor the API type.
type Creative struct {
	Status   Status
	AuthorID uuid.UUID
	// ReviewerID is the assigned reviewer; uuid.Nil means none is assigned
	// and any reviewer who is not the author may decide.
	ReviewerID uuid.UUID
	// HasCurrentVersion is false until a version is uploaded; submit needs one.
	HasCurrentVersion bool
}

// Caller is the signed-in user acting on a creative, with their role in the
// creative's organization.
type Caller struct {
	UserID uuid.UUID
	Role   Role
}

// Reason tells the HTTP layer which answer a Refusal becomes. Its values are
// the Problem codes, so the mapping cannot drift.
type Reason string

// The two ways an action is refused, in the order they are checked.
const (
	// Forbidden means the caller's role can never run this action on this
	// creative: 403 action_forbidden.
	Forbidden Reason = "action_forbidden"
	// InvalidTransition means the caller may run the action, but not from the
	// creative's current state: 409 invalid_transition.
	InvalidTransition Reason = "invalid_transition"
)

// Refusal is the error Decide returns when an action may not run, so the
// caller can pick the status code from Reason and show Detail as is.
type Refusal struct {
	Reason Reason
	// Detail is a human sentence for the Problem's detail field.
	Detail string
}

// Error returns the detail prefixed with the reason, for logs.
func (r *Refusal) Error() string {
	return string(r.Reason) + ": " + r.Detail
}

func forbidden(format string, args ...any) *Refusal {
	return &Refusal{Reason: Forbidden, Detail: fmt.Sprintf(format, args...)}
}

func invalidTransition(format string, args ...any) *Refusal {
	return &Refusal{Reason: InvalidTransition, Detail: fmt.Sprintf(format, args...)}
}

// Decide says whether who may run a on c now and, if so, the status c moves
// to. Rights are checked before the state, because PRODUCT.md §3 answers 403
// action_forbidden before 409 invalid_transition. A refusal is a *Refusal.
func Decide(c Creative, who Caller, a Action) (Status, error) {
	if r := authorize(c, who, a); r != nil {
		return "", r
	}
	next, r := transition(c, a)
	if r != nil {
		return "", r
	}
	return next, nil
}

// Available lists, in canonical order, the actions Decide allows who to run
// on c now. It asks Decide for each action so that the answer and the
// authorisation share one rule. It never returns nil, so JSON says [].
func Available(c Creative, who Caller) []Action {
	out := make([]Action, 0, len(Actions))
	for _, a := range Actions {
		if _, err := Decide(c, who, a); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// authorize applies the rights, which do not depend on the state except for
// the author's archive right: that one exists only while the creative is a
// draft, because after submission the creative is no longer only theirs.
func authorize(c Creative, who Caller, a Action) *Refusal {
	if !a.Valid() {
		return forbidden("%q is not a review action.", a)
	}
	switch who.Role {
	case RoleAdmin, RoleReviewer, RoleAuthor:
	case RoleViewer:
		return forbidden("A viewer may not %s a creative.", verb(a))
	default:
		return forbidden("The role %q may not %s a creative.", who.Role, verb(a))
	}
	// A nil user id never counts as the author, so a zero Creative gives no
	// one the author's rights.
	isAuthor := who.UserID != uuid.Nil && who.UserID == c.AuthorID
	isAdmin := who.Role == RoleAdmin

	switch a {
	case ActionSubmit:
		if isAuthor || isAdmin {
			return nil
		}
		return forbidden("Only the creative's author or an admin may submit this creative.")
	case ActionRequestChanges, ActionApprove:
		if who.Role != RoleReviewer && !isAdmin {
			return forbidden("Only a reviewer or an admin who is not the author may %s this creative.", verb(a))
		}
		if isAuthor {
			return forbidden("The author of a creative may not %s it; another reviewer or admin must.", verb(a))
		}
		if !isAdmin && c.ReviewerID != uuid.Nil && c.ReviewerID != who.UserID {
			return forbidden("Only the assigned reviewer or an admin may %s this creative.", verb(a))
		}
		return nil
	case ActionArchive:
		if isAdmin || (isAuthor && c.Status == StatusDraft) {
			return nil
		}
		if isAuthor {
			return forbidden("The author may archive this creative only while it is a draft; ask an admin.")
		}
		return forbidden("Only an admin, or the author while the creative is a draft, may archive this creative.")
	}
	return forbidden("%q is not a review action.", a)
}

// transition applies the state machine to a caller already authorised. Each
// action lists its source states explicitly, so an unknown stored status is
// refused rather than treated as "any but archived".
func transition(c Creative, a Action) (Status, *Refusal) {
	var next Status
	var from []Status
	switch a {
	case ActionSubmit:
		next, from = StatusInReview, []Status{StatusDraft, StatusChangesRequested}
	case ActionRequestChanges:
		next, from = StatusChangesRequested, []Status{StatusInReview}
	case ActionApprove:
		next, from = StatusApproved, []Status{StatusInReview}
	case ActionArchive:
		next, from = StatusArchived, []Status{StatusDraft, StatusInReview, StatusChangesRequested, StatusApproved}
	default:
		return "", invalidTransition("%q is not a review action.", a)
	}
	allowed := false
	for _, s := range from {
		if s == c.Status {
			allowed = true
			break
		}
	}
	switch {
	case !allowed && c.Status == StatusArchived:
		return "", invalidTransition("%s is not allowed while the creative is archived; archiving is final.", a)
	case !allowed:
		return "", invalidTransition("%s is not allowed while the creative is %s.", a, c.Status)
	case a == ActionSubmit && !c.HasCurrentVersion:
		return "", invalidTransition("A version must be uploaded before the creative can be submitted.")
	}
	return next, nil
}

// verb spells an action for a sentence ("request changes on" reads better
// than "request_changes").
func verb(a Action) string {
	if a == ActionRequestChanges {
		return "request changes on"
	}
	return string(a)
}
