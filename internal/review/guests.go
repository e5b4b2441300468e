package review

import (
	"slices"

	"github.com/google/uuid"
)

// A guest's rights (docs/shares.md, "What a guest may do"): a person
// outside the organization who opened a share's link acts on the share's
// creatives with the share's permission, never more: view reads; comment
// also writes comments and replies, and edits and resolves their own;
// decide also approves or requests changes, as a reviewer of an
// in_review creative without a review plan when the share invited them,
// or as one of the active stage's guests (guestEmails) with one; never
// as the creative's or the version's author.

// The guest roles, one per share permission. They are no membership
// roles (Roles lists those): a guest is never a member.
const (
	RoleGuestView    Role = "guest_view"
	RoleGuestComment Role = "guest_comment"
	RoleGuestDecide  Role = "guest_decide"
)

// GuestRole is the role of a guest of a share with permission (view,
// comment or decide); "" for another value.
func GuestRole(permission string) Role {
	switch permission {
	case "view":
		return RoleGuestView
	case "comment":
		return RoleGuestComment
	case "decide":
		return RoleGuestDecide
	}
	return ""
}

// GuestCaller is a guest as the rules see them: their id (which no user
// id equals, so they are never a creative's author) and their email, the
// key a review plan's stages name them by.
func GuestCaller(id uuid.UUID, email, permission string) Caller {
	return Caller{UserID: id, Role: GuestRole(permission), GuestEmail: email}
}

// IsGuest reports whether r is a guest's role.
func (r Role) IsGuest() bool {
	return r == RoleGuestView || r == RoleGuestComment || r == RoleGuestDecide
}

// person is who's key in a review plan: a member's id, a guest's email.
func (who Caller) person() string {
	if who.Role.IsGuest() {
		return GuestKey(who.GuestEmail)
	}
	return MemberKey(who.UserID)
}

// authorizeGuest is the rights table's answer for a guest: a decide guest
// may approve and request changes (guestDecider); nothing else of a
// creative is a guest's to change.
func authorizeGuest(c Creative, who Caller, a Action) *Refusal {
	if who.Role != RoleGuestDecide || (a != ActionApprove && a != ActionRequestChanges) {
		return forbidden("A guest of this share may not %s the creative.", verb(a))
	}
	if r := guestDecider(c, who, a); r != nil {
		return r
	}
	if !c.HasPlan {
		return nil
	}
	switch person, active := who.person(), c.Round.Active(); {
	case active >= 0 && !slices.Contains(c.Plan.Stages[active].Reviewers, person):
		return forbidden("Only the reviewers of the active stage (%d) may %s this creative now.", active+1, verb(a))
	case active < 0 && !c.Plan.Names(person):
		return forbidden("Only the reviewers the review plan names may %s this creative.", verb(a))
	}
	return nil
}

// guestDecider is who of a decide share's guests decides: never the
// creative's or the version's author under a guest's name (their email
// is an author's account's), and without a review plan only an email the
// share invited; with one, the active stage's guestEmails (authorizeGuest
// goes on to the plan). Anyone with the link may open a session with any
// email, so a typed email alone never decides.
func guestDecider(c Creative, who Caller, a Action) *Refusal {
	if r := ownWork(c, who.GuestAccountID, a); r != nil {
		return r
	}
	if !c.HasPlan && !who.GuestInvited {
		return forbidden("Only the people this share invited may %s this creative.", verb(a))
	}
	return nil
}

// authorizeGuestComment is the comments' rights table for a guest: a
// comment or decide guest writes comments and replies, and edits and
// resolves or reopens the threads they wrote; a view guest only reads;
// no guest deletes or marks a thread addressed.
func authorizeGuestComment(who Caller, a Action, commentAuthor bool) *Refusal {
	if who.Role == RoleGuestView {
		return forbidden("This share lets its guests read comments, not write them.")
	}
	switch a {
	case ActionComment:
		return nil
	case ActionEditComment, ActionResolveComment:
		if commentAuthor {
			return nil
		}
		return forbidden("A guest may change only the comments they wrote.")
	}
	return forbidden("A guest may not delete comments or mark threads addressed.")
}
