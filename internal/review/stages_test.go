package review_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/review"
)

func plan(stages ...review.Stage) review.Plan { return review.Plan{Stages: stages} }

func stage(rule review.StageRule, people ...string) review.Stage {
	return review.Stage{Rule: rule, Reviewers: people}
}

// TestStageRulesDecideAStage: each rule, as a table of decisions in order
// and what the last one did.
func TestStageRulesDecideAStage(t *testing.T) {
	t.Parallel()
	type decision struct {
		who     string
		approve bool
	}
	yes := func(who string) decision { return decision{who, true} }
	no := func(who string) decision { return decision{who, false} }
	for _, tc := range []struct {
		rule      string
		plan      review.Plan
		decisions []decision
		want      review.Outcome
		active    int
	}{
		{"all: one approval of two is not enough", plan(stage(review.RuleAll, "a", "b")), []decision{yes("a")}, review.OutcomeRecorded, 0},
		{"all: every reviewer approving approves the stage", plan(stage(review.RuleAll, "a", "b")), []decision{yes("a"), yes("b")}, review.OutcomeApproved, -1},
		{"any: one approval approves the stage", plan(stage(review.RuleAny, "a", "b", "c")), []decision{yes("b")}, review.OutcomeApproved, -1},
		{"majority: half is not more than half", plan(stage(review.RuleMajority, "a", "b", "c", "d")), []decision{yes("a"), yes("b")}, review.OutcomeRecorded, 0},
		{"majority: more than half approves", plan(stage(review.RuleMajority, "a", "b", "c")), []decision{yes("a"), yes("c")}, review.OutcomeApproved, -1},
		{"a request for changes wins at once", plan(stage(review.RuleAny, "a", "b")), []decision{no("a")}, review.OutcomeChangesRequested, -1},
		{"a request for changes wins over earlier approvals", plan(stage(review.RuleAll, "a", "b", "c")), []decision{yes("a"), yes("b"), no("c")}, review.OutcomeChangesRequested, -1},
		{"an approved stage activates the next", plan(stage(review.RuleAny, "a"), stage(review.RuleAll, "b", "c")), []decision{yes("a")}, review.OutcomeStageApproved, 1},
		{"the last stage approves the creative", plan(stage(review.RuleAny, "a"), stage(review.RuleAll, "b", "c")), []decision{yes("a"), yes("b"), yes("c")}, review.OutcomeApproved, -1},
		{"deciding twice counts the latest once", plan(stage(review.RuleAll, "a", "b")), []decision{yes("a"), yes("a")}, review.OutcomeRecorded, 0},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if err := tc.plan.Validate(); err != nil {
				t.Fatal(err)
			}
			r := tc.plan.Start()
			var got review.Outcome
			for _, d := range tc.decisions {
				var err error
				if r, got, err = tc.plan.Record(r, d.who, d.approve); err != nil {
					t.Fatalf("%s decides: %v", d.who, err)
				}
			}
			if got != tc.want || r.Active() != tc.active {
				t.Fatalf("outcome %s, active stage %d; want %s, %d", got, r.Active(), tc.want, tc.active)
			}
		})
	}
}

// TestStageRefusals: only the active stage's reviewers decide, and only
// while a stage is active; a plan the rules cannot decide is refused.
func TestStageRefusals(t *testing.T) {
	t.Parallel()
	p := plan(stage(review.RuleAny, "legal"), stage(review.RuleAny, "brand"))
	r := p.Start()
	var refusal *review.Refusal
	if _, _, err := p.Record(r, "brand", true); !errors.As(err, &refusal) || refusal.Reason != review.Forbidden {
		t.Errorf("a reviewer of a later stage decides now: %v, want 403", err)
	}
	if p.CanDecide(r, "brand") || !p.CanDecide(r, "legal") {
		t.Error("CanDecide disagrees with Record")
	}
	ended, _, _ := p.Record(r, "legal", false)
	if _, _, err := p.Record(ended, "legal", true); !errors.As(err, &refusal) || refusal.Reason != review.InvalidTransition {
		t.Errorf("a decision after the round ended: %v, want 409 invalid_transition", err)
	}
	for name, bad := range map[string]review.Plan{
		"no stage":          plan(),
		"six stages":        plan(stage(review.RuleAny, "a"), stage(review.RuleAny, "a"), stage(review.RuleAny, "a"), stage(review.RuleAny, "a"), stage(review.RuleAny, "a"), stage(review.RuleAny, "a")),
		"a stage of nobody": plan(stage(review.RuleAny)),
		"a person twice":    plan(stage(review.RuleAll, "a", "a")),
		"an unknown rule":   plan(stage("most", "a")),
	} {
		if bad.Validate() == nil {
			t.Errorf("%s: valid", name)
		}
	}
}

// TestAPlanApprovesExactlyWhenEveryStageHeldInOrderWithinOneRound: for
// random plans and random sequences of decisions, submits and admins'
// overrides, the creative is approved exactly when, within the current
// round, every stage's rule held over its reviewers' latest decisions, in
// order, with no request for changes, or an admin's override approved. The oracle replays the round's accepted
// decisions its own way (a log, not the Round).
func TestAPlanApprovesExactlyWhenEveryStageHeldInOrderWithinOneRound(t *testing.T) {
	t.Parallel()
	people := []string{"p0", "p1", "p2", "p3", "p4", "p5"}
	for seed := uint64(1); seed <= 3000; seed++ {
		rng := rand.New(rand.NewPCG(seed, 49))
		p := review.Plan{}
		for range 1 + rng.IntN(review.MaxStages) {
			perm := rng.Perm(len(people))[:1+rng.IntN(4)]
			s := review.Stage{Rule: review.StageRules[rng.IntN(len(review.StageRules))]}
			for _, i := range perm {
				s.Reviewers = append(s.Reviewers, people[i])
			}
			p.Stages = append(p.Stages, s)
		}
		var r review.Round
		var log []entry // the round's accepted decisions
		started, approved := false, false
		for step := range 60 {
			if !started || rng.IntN(12) == 0 {
				r, log, started, approved = p.Start(), nil, true, false
				continue
			}
			who, approve := people[rng.IntN(len(people))], rng.IntN(6) != 0
			active := r.Active()
			if rng.IntN(40) == 0 {
				// An admin's override decides the round at once, whatever
				// the rules say, and only while a stage is active.
				next, outcome, err := p.Override(r, "admin", approve)
				if (err == nil) != (active >= 0 && !approved) || err == nil && (outcome == review.OutcomeApproved) != approve || err == nil && next.Active() >= 0 {
					t.Fatalf("seed %d step %d: override while stage %d is active: %s, %v", seed, step, active, outcome, err)
				}
				if err == nil {
					r, approved = next, approve
				}
				continue
			}
			next, outcome, err := p.Record(r, who, approve)
			if err != nil {
				continue
			}
			if approved {
				t.Fatalf("seed %d step %d: a decision was accepted after the approval", seed, step)
			}
			log = append(log, entry{active, who, approve})
			r = next
			want := oracle(p, log)
			if got := outcome == review.OutcomeApproved; got != want {
				t.Fatalf("seed %d step %d: plan %+v, log %+v: approved %v, the oracle says %v", seed, step, p, log, got, want)
			}
			approved = approved || outcome == review.OutcomeApproved
		}
	}
}

// entry is one accepted decision of a round: the stage it was made in.
type entry struct {
	stage   int
	who     string
	approve bool
}

// oracle says whether a round's decisions approve the plan: no request
// for changes, and the stages' rules held one after the other, each over
// the latest decisions its reviewers made while it was the one deciding.
func oracle(p review.Plan, log []entry) bool {
	latest := make([]map[string]bool, len(p.Stages))
	for i := range latest {
		latest[i] = map[string]bool{}
	}
	changes := false
	for _, e := range log {
		latest[e.stage][e.who] = e.approve
		changes = changes || !e.approve
	}
	if changes {
		return false
	}
	for i, s := range p.Stages {
		n := 0
		for _, rv := range s.Reviewers {
			if latest[i][rv] {
				n++
			}
		}
		var held bool
		switch s.Rule {
		case review.RuleAll:
			held = n == len(s.Reviewers)
		case review.RuleAny:
			held = n > 0
		case review.RuleMajority:
			held = n > len(s.Reviewers)/2
		}
		if !held {
			return false
		}
	}
	return true
}

func ExamplePlan_Record() {
	p := plan(stage(review.RuleAny, "legal"), stage(review.RuleAll, "brand", "cmo"))
	r := p.Start()
	for _, who := range []string{"legal", "brand", "cmo"} {
		var outcome review.Outcome
		r, outcome, _ = p.Record(r, who, true)
		fmt.Println(who, outcome)
	}
	// Output:
	// legal stage_approved
	// brand recorded
	// cmo approved
}

// TestStepDecidesReviewActionsWithAPlan: with a plan its stages say who
// decides and what a decision does; the table still says from where.
func TestStepDecidesReviewActionsWithAPlan(t *testing.T) {
	t.Parallel()
	author, brand, legal, admin, outsider := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	p := plan(stage(review.RuleAll, review.MemberKey(brand)), stage(review.RuleAny, review.MemberKey(legal), review.MemberKey(admin)))
	inReview := review.Creative{Status: review.StatusInReview, AuthorID: author, HasCurrentVersion: true, Version: 3, HasPlan: true, Plan: p, Round: p.Start()}
	second, _, _ := p.Record(p.Start(), review.MemberKey(brand), true)
	atLegal := inReview
	atLegal.Round = second
	draft := inReview
	draft.Status, draft.Round = review.StatusDraft, review.Round{}
	for _, tc := range []struct {
		rule     string
		c        review.Creative
		who      review.Caller
		a        review.Action
		status   review.Status
		outcome  review.Outcome
		override bool
		refusal  review.Reason
	}{
		{"submit starts a round at stage 1", draft, review.Caller{UserID: author, Role: review.RoleAuthor}, review.ActionSubmit, review.StatusInReview, "", false, ""},
		{"a reviewer of the active stage decides", inReview, review.Caller{UserID: brand, Role: review.RoleReviewer}, review.ActionApprove, review.StatusInReview, review.OutcomeStageApproved, false, ""},
		{"the last stage's rule approves the creative", atLegal, review.Caller{UserID: legal, Role: review.RoleReviewer}, review.ActionApprove, review.StatusApproved, review.OutcomeApproved, false, ""},
		{"a request for changes ends the round", inReview, review.Caller{UserID: brand, Role: review.RoleReviewer}, review.ActionRequestChanges, review.StatusChangesRequested, review.OutcomeChangesRequested, false, ""},
		{"a reviewer of a later stage may not decide now", inReview, review.Caller{UserID: legal, Role: review.RoleReviewer}, review.ActionApprove, "", "", false, review.Forbidden},
		{"a reviewer the plan does not name may not decide", inReview, review.Caller{UserID: outsider, Role: review.RoleReviewer}, review.ActionApprove, "", "", false, review.Forbidden},
		{"no round: a named reviewer waits for a submit", draft, review.Caller{UserID: legal, Role: review.RoleReviewer}, review.ActionApprove, "", "", false, review.InvalidTransition},
		{"no round: an unnamed reviewer never decides", draft, review.Caller{UserID: outsider, Role: review.RoleReviewer}, review.ActionApprove, "", "", false, review.Forbidden},
		{"an admin outside the active stage overrides it", inReview, review.Caller{UserID: admin, Role: review.RoleAdmin}, review.ActionApprove, review.StatusApproved, review.OutcomeApproved, true, ""},
		{"an admin of the active stage decides as its reviewer", atLegal, review.Caller{UserID: admin, Role: review.RoleAdmin}, review.ActionApprove, review.StatusApproved, review.OutcomeApproved, false, ""},
		{"an admin's request for changes overrides too", atLegal, review.Caller{UserID: uuid.New(), Role: review.RoleAdmin}, review.ActionRequestChanges, review.StatusChangesRequested, review.OutcomeChangesRequested, true, ""},
		{"the author never decides", inReview, review.Caller{UserID: author, Role: review.RoleAdmin}, review.ActionApprove, "", "", false, review.Forbidden},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			status, move, err := review.Step(tc.c, tc.who, nil, tc.a)
			var refusal *review.Refusal
			switch {
			case tc.refusal != "":
				if !errors.As(err, &refusal) || refusal.Reason != tc.refusal {
					t.Fatalf("%v; want %s", err, tc.refusal)
				}
				if slices.Contains(review.Available(tc.c, tc.who), tc.a) && tc.refusal == review.Forbidden {
					t.Fatal("availableActions offers what Step refuses")
				}
			case err != nil:
				t.Fatal(err)
			case status != tc.status || move.Outcome != tc.outcome || move.Override != tc.override:
				t.Fatalf("%s, %s, override %v; want %s, %s, %v", status, move.Outcome, move.Override, tc.status, tc.outcome, tc.override)
			case !slices.Contains(review.Available(tc.c, tc.who), tc.a):
				t.Fatal("availableActions does not offer what Step allows")
			}
		})
	}
}
