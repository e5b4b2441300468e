package review

import (
	"errors"
	"testing"

	"github.com/google/uuid"
)

// TestNobodyDecidesOnTheirOwnWork: neither the creative's author nor the
// author of the version under review approves or requests changes, on any
// path: a member's decision with or without a plan, a stage member's, an
// admin's override, and a guest whose email is an author's.
func TestNobodyDecidesOnTheirOwnWork(t *testing.T) {
	author, versionAuthor, other := uuid.New(), uuid.New(), uuid.New()
	plain := Creative{Status: StatusInReview, AuthorID: author, VersionAuthorID: versionAuthor, HasCurrentVersion: true, Version: 4}
	planned := plain
	planned.HasPlan = true
	planned.Plan = Plan{Stages: []Stage{{Rule: RuleAny, Reviewers: []string{
		MemberKey(versionAuthor), MemberKey(other), GuestKey("author@agency.test"), GuestKey("legal@brand.test")}}}}
	planned.Round = Round{Statuses: []StageStatus{StageActive}, Decisions: []map[string]bool{{}}}
	member := func(id uuid.UUID, role Role) Caller { return Caller{UserID: id, Role: role} }
	guest := func(email string, account uuid.UUID) Caller {
		who := GuestCaller(uuid.New(), email, "decide")
		who.GuestInvited, who.GuestAccountID = true, account
		return who
	}
	for _, tc := range []struct {
		name    string
		c       Creative
		who     Caller
		decides bool
	}{
		{"member: a reviewer", plain, member(other, RoleReviewer), true},
		{"member: an admin who wrote the creative", plain, member(author, RoleAdmin), false},
		{"member: an admin who wrote the version", plain, member(versionAuthor, RoleAdmin), false},
		{"member: a reviewer who wrote the version", plain, member(versionAuthor, RoleReviewer), false},
		{"stage: a member of the active stage", planned, member(other, RoleReviewer), true},
		{"stage: a member of the active stage who wrote the version", planned, member(versionAuthor, RoleAdmin), false},
		{"override: an admin of no stage", planned, member(uuid.New(), RoleAdmin), true},
		{"override: an admin of no stage who wrote the creative", planned, member(author, RoleAdmin), false},
		{"guest: an invited email of nobody's account", plain, guest("legal@brand.test", uuid.Nil), true},
		{"guest: an invited email of another member", plain, guest("legal@brand.test", other), true},
		{"guest: the creative's author's email", plain, guest("author@agency.test", author), false},
		{"guest: the version author's email", plain, guest("version@agency.test", versionAuthor), false},
		{"guest: a stage's guest with the author's email", planned, guest("author@agency.test", author), false},
		{"guest: a stage's guest", planned, guest("legal@brand.test", uuid.Nil), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, a := range []Action{ActionApprove, ActionRequestChanges} {
				_, _, err := Step(tc.c, tc.who, nil, a)
				var r *Refusal
				switch {
				case tc.decides && err != nil:
					t.Errorf("%s refused: %v", a, err)
				case !tc.decides && (!errors.As(err, &r) || r.Reason != Forbidden):
					t.Errorf("%s: %v, want action_forbidden", a, err)
				}
			}
			if got := decisions(Available(tc.c, tc.who)); (len(got) > 0) != tc.decides {
				t.Errorf("available decisions %v, decides %t", got, tc.decides)
			}
		})
	}
}

// TestOnlyAdminsMakeDecideShares: an author shares view or comment; a
// decide share, which lets its guests approve, is an admin's.
func TestOnlyAdminsMakeDecideShares(t *testing.T) {
	for _, tc := range []struct {
		role       Role
		permission string
		allowed    bool
	}{
		{RoleAdmin, "decide", true},
		{RoleAdmin, "comment", true},
		{RoleAuthor, "decide", false},
		{RoleAuthor, "comment", true},
		{RoleAuthor, "view", true},
	} {
		err := AuthorizeSharePermission(tc.role, tc.permission)
		var r *Refusal
		if tc.allowed != (err == nil) || (err != nil && (!errors.As(err, &r) || r.Reason != Forbidden)) {
			t.Errorf("%s, %s: %v, want allowed %t", tc.role, tc.permission, err, tc.allowed)
		}
	}
}

// TestOnlyAdminsChangeAPlanThatNamesGuests: setting a plan with guests,
// replacing one, and removing one are an admin's; an author changes a plan
// of members only.
func TestOnlyAdminsChangeAPlanThatNamesGuests(t *testing.T) {
	for _, tc := range []struct {
		name          string
		role          Role
		before, after bool
		allowed       bool
	}{
		{"author sets a plan of members", RoleAuthor, false, false, true},
		{"author sets a plan with guests", RoleAuthor, false, true, false},
		{"author replaces a plan with guests", RoleAuthor, true, false, false},
		{"author removes a plan with guests", RoleAuthor, true, false, false},
		{"admin sets a plan with guests", RoleAdmin, false, true, true},
		{"admin replaces a plan with guests", RoleAdmin, true, true, true},
	} {
		err := AuthorizePlanGuests(tc.role, tc.before, tc.after)
		var r *Refusal
		if tc.allowed != (err == nil) || (err != nil && (!errors.As(err, &r) || r.Reason != Forbidden)) {
			t.Errorf("%s: %v, want allowed %t", tc.name, err, tc.allowed)
		}
	}
}

// decisions is the decisions among actions.
func decisions(actions []Action) []Action {
	var out []Action
	for _, a := range actions {
		if a == ActionApprove || a == ActionRequestChanges {
			out = append(out, a)
		}
	}
	return out
}
