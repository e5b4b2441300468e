package review

import "github.com/google/uuid"

// The comment changes: writing a comment or a reply, editing a comment's
// body, resolving or reopening a thread, deleting a comment. They are not
// review actions (they leave the creative's state and version alone) but
// their rights live here with every other right over a creative.
const (
	ActionComment        Action = "comment"
	ActionEditComment    Action = "edit_comment"
	ActionResolveComment Action = "resolve_comment"
	ActionDeleteComment  Action = "delete_comment"
	// ActionAddressComment marks a thread addressed in a later version
	// (docs/review.md, "Threads that follow the work").
	ActionAddressComment Action = "address_comment"
)

// CommentChanges lists the comment changes, in the order of commentTable.
var CommentChanges = []Action{ActionComment, ActionEditComment, ActionResolveComment, ActionDeleteComment, ActionAddressComment}

// commentRule is one row of the comments' rights table.
type commentRule struct {
	// rights refuses a caller whose role can never make the change. It
	// sees whether the caller wrote the creative and the comment.
	rights func(who Caller, creativeAuthor, commentAuthor bool) *Refusal
	// needsVersion: the creative must have a version to comment on.
	needsVersion bool
}

// commentTable is the rights table of comments. Every change is refused
// on an archived creative (archiving is final: its threads are frozen).
//
//	change           who
//	comment          admins, reviewers, authors (any member but a viewer); needs a version
//	edit_comment     the comment's author, unless now a viewer
//	resolve_comment  admins, reviewers, the creative's author
//	delete_comment   the comment's author (unless now a viewer), or an admin
//	address_comment  the creative's author, or an admin
var commentTable = map[Action]commentRule{
	ActionComment: {
		rights: func(who Caller, _, _ bool) *Refusal {
			switch who.Role {
			case RoleAdmin, RoleReviewer, RoleAuthor:
				return nil
			}
			return forbidden("A %s may read comments but not write them.", who.Role)
		},
		needsVersion: true,
	},
	ActionEditComment: {rights: func(who Caller, _, commentAuthor bool) *Refusal {
		if commentAuthor && who.Role != RoleViewer {
			return nil
		}
		if commentAuthor {
			return forbidden("A viewer may read comments but not change them, their own included.")
		}
		return forbidden("Only the comment's author may edit it.")
	}},
	ActionResolveComment: {rights: func(who Caller, creativeAuthor, _ bool) *Refusal {
		if Reviews(who.Role) || (creativeAuthor && who.Role != RoleViewer) {
			return nil
		}
		return forbidden("Only an admin, a reviewer or the creative's author may resolve or reopen a thread.")
	}},
	ActionAddressComment: {rights: func(who Caller, creativeAuthor, _ bool) *Refusal {
		if who.Role == RoleAdmin || (creativeAuthor && who.Role != RoleViewer) {
			return nil
		}
		return forbidden("Only the creative's author or an admin may mark a thread addressed.")
	}},
	ActionDeleteComment: {rights: func(who Caller, _, commentAuthor bool) *Refusal {
		if commentAuthor && who.Role != RoleViewer || who.Role == RoleAdmin {
			return nil
		}
		if commentAuthor {
			return forbidden("A viewer may read comments but not change them, their own included.")
		}
		return forbidden("Only the comment's author or an admin may delete it.")
	}},
}

// AuthorizeComment is CheckComment's first step alone: whether who's role
// and authorship allow the comment changes actions at all (403
// action_forbidden), whatever the creative's state. A stored answer is
// replayed only to a caller it still allows.
func AuthorizeComment(c Creative, who Caller, commentAuthor uuid.UUID, actions ...Action) error {
	if len(actions) == 0 {
		return forbidden("No change was asked for.")
	}
	// A nil user id is nobody's: it never counts as an author.
	creativeAuthor := who.UserID != uuid.Nil && who.UserID == c.AuthorID
	isCommentAuthor := who.UserID != uuid.Nil && who.UserID == commentAuthor
	for _, a := range actions {
		r, ok := commentTable[a]
		if !ok {
			return forbidden("%q is not a change of a comment.", a)
		}
		if who.Role.IsGuest() {
			if refusal := authorizeGuestComment(who, a, isCommentAuthor); refusal != nil {
				return refusal
			}
			continue
		}
		if !who.Role.Valid() {
			return forbidden("The role %q may not change comments.", who.Role)
		}
		if refusal := r.rights(who, creativeAuthor, isCommentAuthor); refusal != nil {
			return refusal
		}
	}
	return nil
}

// CheckComment says whether who may make the comment changes actions (a
// patch may both edit and resolve) on creative c, for a comment written by
// commentAuthor (uuid.Nil for a new comment), in the order a refusal is
// answered: every change's rights (403 action_forbidden), then check,
// which judges the request against the creative (422; nil to skip), then
// the state (409 invalid_transition: archived, or no version to comment
// on). A refusal is a *Refusal; check's error is returned as is.
func CheckComment(c Creative, who Caller, commentAuthor uuid.UUID, check func() error, actions ...Action) error {
	if err := AuthorizeComment(c, who, commentAuthor, actions...); err != nil {
		return err
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	for _, a := range actions {
		switch {
		case c.Status == StatusArchived && a == ActionComment:
			return invalidTransition("An archived creative takes no comments; archiving is final.")
		case c.Status == StatusArchived:
			return invalidTransition("An archived creative's comments cannot change; archiving is final.")
		case !c.Status.Valid():
			return invalidTransition("The creative's state %q takes no comments.", c.Status)
		case commentTable[a].needsVersion && !c.HasCurrentVersion:
			return invalidTransition("The creative has no version to comment on yet.")
		}
	}
	return nil
}
