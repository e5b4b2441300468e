package review

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/auth"
)

func TestAGuestDecidesOnlyWithDecideAndOnlyWhereAReviewerWould(t *testing.T) {
	author := uuid.New()
	inReview := Creative{Status: StatusInReview, AuthorID: author, HasCurrentVersion: true, Version: 3, ReviewerID: uuid.New()}
	planned := inReview
	planned.HasPlan = true
	planned.Plan = Plan{Stages: []Stage{{Rule: RuleAll, Reviewers: []string{MemberKey(uuid.New())}},
		{Rule: RuleAny, Reviewers: []string{GuestKey("Legal@Brand.test")}}}}
	planned.Round = Round{Statuses: []StageStatus{StageApproved, StageActive}, Decisions: []map[string]bool{{}, {}}}
	notYet := planned
	notYet.Round = Round{Statuses: []StageStatus{StageActive, StagePending}, Decisions: []map[string]bool{{}, {}}}
	legal := func(permission string) Caller {
		who := GuestCaller(uuid.New(), "legal@brand.test", permission)
		who.GuestInvited = true
		return who
	}
	other := GuestCaller(uuid.New(), "cmo@brand.test", "decide")
	for _, tc := range []struct {
		name string
		c    Creative
		who  Caller
		want []Action
	}{
		// Without a plan a decide guest acts as the reviewer, whoever is
		// assigned.
		{"decide, no plan", inReview, legal("decide"), []Action{ActionRequestChanges, ActionApprove}},
		{"comment, no plan", inReview, legal("comment"), []Action{}},
		{"view, no plan", inReview, legal("view"), []Action{}},
		{"decide, a draft", Creative{Status: StatusDraft, AuthorID: author, HasCurrentVersion: true}, legal("decide"), []Action{}},
		{"decide, named in the active stage", planned, legal("decide"), []Action{ActionRequestChanges, ActionApprove}},
		{"decide, not named in the active stage", planned, other, []Action{}},
		{"decide, named in a stage not yet active", notYet, legal("decide"), []Action{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Available(tc.c, tc.who)
			if len(got) != len(tc.want) {
				t.Fatalf("available %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("available %v, want %v", got, tc.want)
				}
			}
			if p := Allowed(tc.c, tc.who); p != (Permissions{}) {
				t.Errorf("a guest may %+v", p)
			}
		})
	}
	t.Run("the stage records the guest by email", func(t *testing.T) {
		_, m, err := Step(planned, legal("decide"), nil, ActionApprove)
		if err != nil || m.Outcome != OutcomeApproved || !m.Round.Decisions[1][GuestKey("legal@brand.test")] {
			t.Fatalf("step: %+v %v", m, err)
		}
		_, _, err = Step(planned, other, nil, ActionApprove)
		var r *Refusal
		if !errors.As(err, &r) || r.Reason != Forbidden {
			t.Fatalf("another guest: %v", err)
		}
	})
}

func TestAGuestWritesCommentsWithCommentOrDecideAndChangesOnlyTheirOwn(t *testing.T) {
	c := Creative{Status: StatusInReview, AuthorID: uuid.New(), HasCurrentVersion: true}
	for _, tc := range []struct {
		permission string
		own        bool
		action     Action
		allowed    bool
	}{
		{"view", false, ActionComment, false},
		{"comment", false, ActionComment, true},
		{"decide", false, ActionComment, true},
		{"comment", true, ActionEditComment, true},
		{"comment", false, ActionEditComment, false},
		{"decide", true, ActionResolveComment, true},
		{"decide", false, ActionResolveComment, false},
		{"view", true, ActionEditComment, false},
		{"decide", true, ActionDeleteComment, false},
		{"decide", true, ActionAddressComment, false},
	} {
		who := GuestCaller(uuid.New(), "g@brand.test", tc.permission)
		author := uuid.New()
		if tc.own {
			author = who.UserID
		}
		err := CheckComment(c, who, author, nil, tc.action)
		if (err == nil) != tc.allowed {
			t.Errorf("%s guest, own %t, %s: %v, want allowed %t", tc.permission, tc.own, tc.action, err, tc.allowed)
		}
	}
}

// TestOnADecideShareOnlyInvitedOrStageListedGuestsDecide: anyone with
// the link may open a session with any email, so without a plan only an
// email the share invited decides, and with one only the active stage's
// guestEmails (invited or not); every other guest is refused and offered
// no decision.
func TestOnADecideShareOnlyInvitedOrStageListedGuestsDecide(t *testing.T) {
	inReview := Creative{Status: StatusInReview, AuthorID: uuid.New(), HasCurrentVersion: true, Version: 3}
	planned := inReview
	planned.HasPlan = true
	planned.Plan = Plan{Stages: []Stage{{Rule: RuleAny, Reviewers: []string{GuestKey("legal@brand.test")}}}}
	planned.Round = Round{Statuses: []StageStatus{StageActive}, Decisions: []map[string]bool{{}}}
	guest := func(email string, invited bool) Caller {
		who := GuestCaller(uuid.New(), email, "decide")
		who.GuestInvited = invited
		return who
	}
	for _, tc := range []struct {
		name    string
		c       Creative
		who     Caller
		decides bool
	}{
		{"no plan, invited", inReview, guest("legal@brand.test", true), true},
		{"no plan, not invited", inReview, guest("anyone@brand.test", false), false},
		{"plan, listed by the active stage, not invited", planned, guest("legal@brand.test", false), true},
		{"plan, listed, the email typed in capitals", planned, guest("LEGAL@brand.test", false), true},
		{"plan, invited but not listed", planned, guest("cmo@brand.test", true), false},
		{"plan, neither", planned, guest("anyone@brand.test", false), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, a := range []Action{ActionApprove, ActionRequestChanges} {
				_, err := Decide(tc.c, tc.who, a)
				var r *Refusal
				switch {
				case tc.decides && err != nil:
					t.Errorf("%s refused: %v", a, err)
				case !tc.decides && (!errors.As(err, &r) || r.Reason != Forbidden):
					t.Errorf("%s: %v, want action_forbidden", a, err)
				}
			}
			if got := Available(tc.c, tc.who); (len(got) > 0) != tc.decides {
				t.Errorf("available %v, decides %t", got, tc.decides)
			}
		})
	}
}

// TestGuestKeyComparesEmailsAsSignInDoes: a stage's guestEmails and a
// guest's email meet as sign-in compares emails (auth.NormalizeEmail),
// so a lookalike address (Unicode case) is another person.
func TestGuestKeyComparesEmailsAsSignInDoes(t *testing.T) {
	for _, e := range []string{"Legal@Brand.TEST", "legal@brand.test", "v\u0130ewer@acme.test", "vi\u0307ewer@acme.test", "\xffBad@x.test", ""} {
		if got, want := GuestKey(e), auth.NormalizeEmail(e); got != want {
			t.Errorf("GuestKey(%q) = %q, sign-in compares %q", e, got, want)
		}
	}
	if GuestKey("v\u0130ewer@acme.test") == GuestKey("vi\u0307ewer@acme.test") {
		t.Error("a lookalike address has the key of the one it imitates")
	}
}
