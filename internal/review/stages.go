package review

import (
	"fmt"
	"slices"

	"github.com/google/uuid"
)

// A review plan's rules (docs/review.md, "Review stages"): a creative with
// a plan is decided by its stages in order, each by its own reviewers
// under its own rule, and any request for changes ends the round at once.
// This file is the one place those rules live; the creative service
// stores a Round and asks Record what a decision does to it. No HTTP, no
// SQL: a person is a key (a member's id, a guest's email) the service
// chooses.

// StageRule is how a stage's reviewers decide it.
type StageRule string

// The stage rules.
const (
	// RuleAll: every reviewer of the stage approved.
	RuleAll StageRule = "all"
	// RuleAny: one reviewer approved.
	RuleAny StageRule = "any"
	// RuleMajority: more than half of the reviewers approved.
	RuleMajority StageRule = "majority"
)

// StageRules lists the rules, for the spec's enum and tests.
var StageRules = []StageRule{RuleAll, RuleAny, RuleMajority}

// Valid reports whether r is one of the stage rules.
func (r StageRule) Valid() bool { return slices.Contains(StageRules, r) }

// holds reports whether approvals of the reviewers satisfy r.
func (r StageRule) holds(reviewers int, approvals int) bool {
	switch r {
	case RuleAll:
		return approvals == reviewers
	case RuleAny:
		return approvals >= 1
	case RuleMajority:
		return 2*approvals > reviewers
	}
	return false
}

// StageStatus is a stage's place in the current round.
type StageStatus string

// The stage statuses.
const (
	StagePending          StageStatus = "pending"
	StageActive           StageStatus = "active"
	StageApproved         StageStatus = "approved"
	StageChangesRequested StageStatus = "changes_requested"
)

// Stage is one step of a plan: who decides it and how.
type Stage struct {
	Rule StageRule
	// Reviewers are the people who decide the stage (at least one).
	Reviewers []string
}

// Plan is a creative's review stages, in order (one to MaxStages).
type Plan struct {
	Stages []Stage
}

// MaxStages bounds a plan; MaxStageReviewers bounds a stage's people.
const (
	MaxStages         = 5
	MaxStageReviewers = 40
)

// Validate refuses a plan the rules cannot decide: no stage or too many,
// a stage without reviewers or with one twice, an unknown rule.
func (p Plan) Validate() error {
	if len(p.Stages) == 0 || len(p.Stages) > MaxStages {
		return fmt.Errorf("a plan has 1 to %d stages, not %d", MaxStages, len(p.Stages))
	}
	for i, s := range p.Stages {
		switch {
		case !s.Rule.Valid():
			return fmt.Errorf("stage %d: rule %q is none of all, any, majority", i+1, s.Rule)
		case len(s.Reviewers) == 0 || len(s.Reviewers) > MaxStageReviewers:
			return fmt.Errorf("stage %d: 1 to %d reviewers, not %d", i+1, MaxStageReviewers, len(s.Reviewers))
		}
		seen := map[string]bool{}
		for _, r := range s.Reviewers {
			if seen[r] {
				return fmt.Errorf("stage %d: %s is listed twice", i+1, r)
			}
			seen[r] = true
		}
	}
	return nil
}

// Round is where a plan stands in the creative's current review round:
// each stage's status and, for stages that have been active, every
// person's latest decision (true: approve).
type Round struct {
	Statuses  []StageStatus
	Decisions []map[string]bool
}

// Active is the index of the active stage, or -1 when none is.
func (r Round) Active() int { return slices.Index(r.Statuses, StageActive) }

// Start is the round a submit begins: stage 1 active, the others
// pending, no decisions (earlier rounds stay in history, not here).
func (p Plan) Start() Round {
	r := Round{Statuses: make([]StageStatus, len(p.Stages)), Decisions: make([]map[string]bool, len(p.Stages))}
	for i := range r.Statuses {
		r.Statuses[i] = StagePending
		r.Decisions[i] = map[string]bool{}
	}
	r.Statuses[0] = StageActive
	return r
}

// Outcome is what a recorded decision did to the creative.
type Outcome string

// The outcomes of Record, from least to most.
const (
	// OutcomeRecorded: the decision counts; the stage is still deciding.
	OutcomeRecorded Outcome = "recorded"
	// OutcomeStageApproved: the stage's rule holds; the next one is active.
	OutcomeStageApproved Outcome = "stage_approved"
	// OutcomeApproved: the last stage's rule holds: the creative is approved.
	OutcomeApproved Outcome = "approved"
	// OutcomeChangesRequested: a request for changes ended the round.
	OutcomeChangesRequested Outcome = "changes_requested"
)

// MemberKey is the person key of a member: their user id.
func MemberKey(id uuid.UUID) string { return id.String() }

// GuestKey is the person key of a guest: their email as sign-in compares
// emails (auth.NormalizeEmail: ASCII letters in lower case, every other
// character as sent; Unicode lower case would let a lookalike address
// decide for the one a stage lists), which no member key can equal. A
// test holds it equal to auth.NormalizeEmail.
func GuestKey(email string) string {
	b := []byte(email)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Names reports whether any stage of p lists person.
func (p Plan) Names(person string) bool {
	for _, s := range p.Stages {
		if slices.Contains(s.Reviewers, person) {
			return true
		}
	}
	return false
}

// CanDecide reports whether person decides the active stage of r now.
func (p Plan) CanDecide(r Round, person string) bool {
	a := r.Active()
	return a >= 0 && slices.Contains(p.Stages[a].Reviewers, person)
}

// Record applies person's decision (approve, else request changes) to the
// active stage of r and returns the round after it and what it did. A
// request for changes wins at once: the stage and the round end there. A
// person may change their decision while the stage is active; the latest
// counts. When the stage's rule holds it is approved and the next stage
// becomes active, or, after the last, the creative is approved. Someone
// who is not a reviewer of the active stage is refused (403), as is any
// decision with no stage active (409).
func (p Plan) Record(r Round, person string, approve bool) (Round, Outcome, error) {
	a := r.Active()
	if a < 0 {
		return r, "", invalidTransition("No stage of the review plan is deciding: submit the creative first.")
	}
	if !slices.Contains(p.Stages[a].Reviewers, person) {
		return r, "", forbidden("Only the reviewers of the active stage (%d) may decide now.", a+1)
	}
	next := r.clone()
	next.Decisions[a][person] = approve
	if !approve {
		next.Statuses[a] = StageChangesRequested
		return next, OutcomeChangesRequested, nil
	}
	approvals := 0
	for _, rv := range p.Stages[a].Reviewers {
		if next.Decisions[a][rv] {
			approvals++
		}
	}
	if !p.Stages[a].Rule.holds(len(p.Stages[a].Reviewers), approvals) {
		return next, OutcomeRecorded, nil
	}
	next.Statuses[a] = StageApproved
	if a == len(p.Stages)-1 {
		return next, OutcomeApproved, nil
	}
	next.Statuses[a+1] = StageActive
	return next, OutcomeStageApproved, nil
}

func (r Round) clone() Round {
	c := Round{Statuses: slices.Clone(r.Statuses), Decisions: make([]map[string]bool, len(r.Decisions))}
	for i, d := range r.Decisions {
		c.Decisions[i] = make(map[string]bool, len(d))
		for k, v := range d {
			c.Decisions[i][k] = v
		}
	}
	return c
}

// Override applies an admin's decision for the whole creative (the admin
// is no reviewer of the active stage): it ends the round at once, the
// active stage approved or changes_requested and the creative with it,
// whatever the stage's rule says; later stages stay pending. The decision
// is kept with the stage's under person.
func (p Plan) Override(r Round, person string, approve bool) (Round, Outcome, error) {
	a := r.Active()
	if a < 0 {
		return r, "", invalidTransition("No stage of the review plan is deciding: submit the creative first.")
	}
	next := r.clone()
	next.Decisions[a][person] = approve
	if !approve {
		next.Statuses[a] = StageChangesRequested
		return next, OutcomeChangesRequested, nil
	}
	next.Statuses[a] = StageApproved
	return next, OutcomeApproved, nil
}

// Status is the creative's review status after a decision with outcome o.
func (o Outcome) Status() Status {
	switch o {
	case OutcomeApproved:
		return StatusApproved
	case OutcomeChangesRequested:
		return StatusChangesRequested
	}
	return StatusInReview
}

// Move is what a review action does to a creative with a review plan.
type Move struct {
	// Round is the plan's round after the action: a submit starts one.
	Round Round
	// Stage is the stage a decision was recorded in; -1 for other actions.
	Stage int
	// Outcome is what the decision did; empty for other actions.
	Outcome Outcome
	// Override: an admin who is no reviewer of the active stage decided
	// for the whole creative (Plan.Override).
	Override bool
}

// Step is Check (every refusal, in its order) for review action a on c,
// and the status after it. With a review plan the plan decides it: a
// submit starts a round at stage 1, an approve or request_changes is
// recorded in the active stage (Plan.Record), or, by an admin who is no
// reviewer of that stage, overrides it (Plan.Override); the Move says
// what happened to the round. Without a plan the Move is empty and the
// table alone decides.
func Step(c Creative, who Caller, expectedVersion *int64, a Action) (Status, Move, error) {
	none := Move{Stage: -1}
	next, err := Check(c, who, expectedVersion, nil, a)
	if err != nil {
		return "", none, err
	}
	if !c.HasPlan {
		return next, none, nil
	}
	if len(c.Plan.Stages) == 0 {
		return "", none, fmt.Errorf("review: the creative's review plan has no stages")
	}
	switch a {
	case ActionSubmit:
		return next, Move{Round: c.Plan.Start(), Stage: -1}, nil
	case ActionApprove, ActionRequestChanges:
	default:
		return next, none, nil
	}
	person, approve := who.person(), a == ActionApprove
	m := Move{Stage: c.Round.Active()}
	if who.Role == RoleAdmin && !c.Plan.CanDecide(c.Round, person) {
		m.Override = true
		m.Round, m.Outcome, err = c.Plan.Override(c.Round, person, approve)
	} else {
		m.Round, m.Outcome, err = c.Plan.Record(c.Round, person, approve)
	}
	if err != nil {
		return "", none, err
	}
	return m.Outcome.Status(), m, nil
}
