package review_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

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
// random plans and random sequences of decisions and submits, the
// creative is approved exactly when, within the current round, every
// stage's rule held over its reviewers' latest decisions, in order, with
// no request for changes. The oracle replays the round's accepted
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
