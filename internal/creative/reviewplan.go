package creative

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/events"
	"creativeapi/internal/problem"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
	"creativeapi/internal/userref"
)

// A creative's review plan (docs/review.md, "Review stages"): the stages
// are stored as asked; the rules that decide them live in
// internal/review (Plan, Round, Record).

// NewStage is one stage of a plan to set.
type NewStage struct {
	Name        string
	ReviewerIDs []uuid.UUID
	// GuestEmails are people outside the workspace who decide through a
	// decide share (issue 47 builds their sessions); stored as given,
	// compared in lower case.
	GuestEmails []string
	Rule        review.StageRule
	DueInHours  *int32
}

// NewPlan is a review plan to set.
type NewPlan struct {
	ExpectedVersion *int64
	Stages          []NewStage
}

// ReviewPlanDetail is the ReviewPlan schema (see Detail).
type ReviewPlanDetail struct {
	ActiveStage *int                `json:"activeStage"`
	Stages      []ReviewStageDetail `json:"stages"`
}

// ReviewStageDetail is the ReviewStage schema (see Detail).
type ReviewStageDetail struct {
	Decisions   []ReviewDecisionDetail `json:"decisions"`
	DueAt       *time.Time             `json:"dueAt"`
	GuestEmails []string               `json:"guestEmails"`
	Name        string                 `json:"name"`
	Reviewers   []api.UserRef          `json:"reviewers"`
	Rule        api.ReviewStageRule    `json:"rule"`
	Status      api.ReviewStageStatus  `json:"status"`
}

// ReviewDecisionDetail is the ReviewStageDecision schema (see Detail).
type ReviewDecisionDetail struct {
	At            time.Time                       `json:"at"`
	Comment       *string                         `json:"comment"`
	Decision      api.ReviewStageDecisionDecision `json:"decision"`
	Reviewer      api.UserRef                     `json:"reviewer"`
	VersionNumber int                             `json:"versionNumber"`
}

// SetReviewPlan replaces the review plan of a creative (the author or an
// admin, while draft or changes_requested: review.ActionSetReviewPlan;
// an admin alone when the plan before or after names guests:
// review.AuthorizePlanGuests).
// Its event is creative.updated, with the plan as the changed field.
func SetReviewPlan(ctx context.Context, q store.Tx, org, id, user uuid.UUID, in NewPlan) (Creative, error) {
	locked, who, err := lock(ctx, q.Queries, org, id, user)
	if err != nil {
		return Creative{}, err
	}
	c := locked.Creative
	if _, err := review.Check(reviewCreative(c), who, in.ExpectedVersion, func() error {
		if err := review.AuthorizePlanGuests(who.Role, locked.PlanNamesGuests, namesGuests(in.Stages)); err != nil {
			return err
		}
		return checkPlanReviewers(ctx, q.Queries, org, c.AuthorID, in.Stages)
	}, review.ActionSetReviewPlan); err != nil {
		return Creative{}, err
	}
	type stage struct {
		Position    int              `json:"position"`
		Name        string           `json:"name"`
		Rule        review.StageRule `json:"rule"`
		DueInHours  *int32           `json:"due_in_hours"`
		ReviewerIDs []uuid.UUID      `json:"reviewer_ids"`
		GuestEmails []string         `json:"guest_emails"`
	}
	stages := make([]stage, len(in.Stages))
	summary := make([]string, len(in.Stages))
	for i, s := range in.Stages {
		stages[i] = stage{i, s.Name, s.Rule, s.DueInHours, nonNil(s.ReviewerIDs), nonNil(s.GuestEmails)}
		summary[i] = fmt.Sprintf("%s (%s)", s.Name, s.Rule)
	}
	encoded, err := json.Marshal(stages)
	if err != nil {
		return Creative{}, err
	}
	c.ReviewPlan = true
	c.Version++
	c.UpdatedAt = locked.Now
	// The write goes with the read of the versions the answer shows.
	if err := q.Next().ReviewPlanSet(ctx, db.ReviewPlanSetParams{
		ID: id, ActorID: user, Stages: encoded, FromRound: c.ReviewRound + 1, Summary: strings.Join(summary, ", "),
		Version: c.Version, UpdatedAt: c.UpdatedAt,
	}); err != nil {
		return Creative{}, err
	}
	return answerWithEvent(ctx, q, lockedRow(locked, c), who, events.CreativeUpdated)
}

// DeleteReviewPlan removes the review plan of a creative (the rights and
// states of SetReviewPlan). Without a plan it changes nothing.
func DeleteReviewPlan(ctx context.Context, q store.Tx, org, id, user uuid.UUID) (Creative, error) {
	locked, who, err := lock(ctx, q.Queries, org, id, user)
	if err != nil {
		return Creative{}, err
	}
	c := locked.Creative
	if _, err := review.Check(reviewCreative(c), who, nil, func() error {
		return review.AuthorizePlanGuests(who.Role, locked.PlanNamesGuests, false)
	}, review.ActionSetReviewPlan); err != nil {
		return Creative{}, err
	}
	if !c.ReviewPlan {
		return one(ctx, q.Queries, lockedRow(locked, c), who)
	}
	c.ReviewPlan = false
	c.Version++
	c.UpdatedAt = locked.Now
	if err := q.Next().ReviewPlanDelete(ctx, db.ReviewPlanDeleteParams{
		ID: id, ActorID: user, Version: c.Version, UpdatedAt: c.UpdatedAt,
	}); err != nil {
		return Creative{}, err
	}
	return answerWithEvent(ctx, q, lockedRow(locked, c), who, events.CreativeUpdated)
}

// namesGuests reports whether any of stages lists a guest email.
func namesGuests(stages []NewStage) bool {
	for _, s := range stages {
		if len(s.GuestEmails) > 0 {
			return true
		}
	}
	return false
}

// checkPlanReviewers refuses, as 422s on each item, a stage reviewer who
// is not a member of org, whose role does not review, or who is the
// creative's author (the rule of reviewerRefusal).
func checkPlanReviewers(ctx context.Context, q *db.Queries, org, author uuid.UUID, stages []NewStage) error {
	var ids []uuid.UUID
	for _, s := range stages {
		ids = append(ids, s.ReviewerIDs...)
	}
	if len(ids) == 0 {
		return nil
	}
	members, err := q.ReviewPlanMembers(ctx, db.ReviewPlanMembersParams{OrganizationID: org, UserIds: ids})
	if err != nil {
		return err
	}
	roles := make(map[uuid.UUID]*string, len(members))
	for _, m := range members {
		roles[m.UserID] = &m.Role
	}
	var fields []problem.FieldError
	for i, s := range stages {
		for j, r := range s.ReviewerIDs {
			if f, ok := reviewerRefusal(r, author, roles[r]); !ok {
				f.Field = fmt.Sprintf("stages[%d].reviewerIds[%d]", i, j)
				fields = append(fields, f)
			}
		}
	}
	if fields != nil {
		return &Invalid{Fields: fields}
	}
	return nil
}

// plan is a creative's review plan as read: what its detail shows, and
// what the rules decide with (review.Plan and the current Round).
type plan struct {
	detail *ReviewPlanDetail
	rules  review.Plan
	round  review.Round
	// dueIn is each stage's dueInHours (nil: no due date).
	dueIn []*int32
}

// readPlans reads the review plans of the rows that have one, in one
// query (none when no row has a plan).
func readPlans(ctx context.Context, q *db.Queries, rows []row) (map[uuid.UUID]*plan, error) {
	var ids []uuid.UUID
	for _, r := range rows {
		if r.c.ReviewPlan {
			ids = append(ids, r.c.ID)
		}
	}
	if ids == nil {
		return nil, nil
	}
	stages, err := q.ReviewPlansRead(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]*plan, len(ids))
	for _, s := range stages {
		p, ok := out[s.CreativeID]
		if !ok {
			p = &plan{detail: &ReviewPlanDetail{Stages: []ReviewStageDetail{}}}
			out[s.CreativeID] = p
		}
		st, latest, err := stageDetail(s)
		if err != nil {
			return nil, err
		}
		if st.Status == api.StageActive {
			active := len(p.detail.Stages)
			p.detail.ActiveStage = &active
		}
		p.detail.Stages = append(p.detail.Stages, st)
		people := make([]string, 0, len(s.ReviewerIds)+len(s.GuestEmails))
		for _, id := range s.ReviewerIds {
			people = append(people, review.MemberKey(id))
		}
		for _, e := range s.GuestEmails {
			people = append(people, review.GuestKey(e))
		}
		p.rules.Stages = append(p.rules.Stages, review.Stage{Rule: review.StageRule(s.Rule), Reviewers: people})
		p.round.Statuses = append(p.round.Statuses, review.StageStatus(st.Status))
		p.round.Decisions = append(p.round.Decisions, latest)
		p.dueIn = append(p.dueIn, s.DueInHours)
	}
	return out, nil
}

// stageDetail is one stage as the API shows it (pending until the
// current round reached it), and each person's latest decision in the
// current round as the rules count it (true: approve).
func stageDetail(s db.ReviewPlansReadRow) (ReviewStageDetail, map[string]bool, error) {
	st := ReviewStageDetail{
		Name: s.Name, Rule: api.ReviewStageRule(s.Rule), GuestEmails: s.GuestEmails, DueAt: s.DueAt,
		Status: api.StagePending, Reviewers: make([]api.UserRef, 0, len(s.ReviewerIds)),
		Decisions: []ReviewDecisionDetail{},
	}
	if s.Status != nil {
		st.Status = api.ReviewStageStatus(*s.Status)
	}
	if st.DueAt != nil {
		utc := st.DueAt.UTC()
		st.DueAt = &utc
	}
	for i, id := range s.ReviewerIds {
		if i < len(s.ReviewerNames) {
			st.Reviewers = append(st.Reviewers, userref.Member(id, s.ReviewerNames[i]))
		}
	}
	var decisions []struct {
		ReviewerID    *uuid.UUID `json:"reviewerId"`
		Name          *string    `json:"name"`
		GuestEmail    *string    `json:"guestEmail"`
		GuestID       *uuid.UUID `json:"guestId"`
		GuestVerified *bool      `json:"guestVerified"`
		Decision      string     `json:"decision"`
		Comment       *string    `json:"comment"`
		VersionNumber int        `json:"versionNumber"`
		At            time.Time  `json:"at"`
	}
	if err := json.Unmarshal(s.Decisions, &decisions); err != nil {
		return st, nil, fmt.Errorf("review plan decisions: %w", err)
	}
	latest := make(map[string]bool, len(decisions))
	for _, d := range decisions {
		approve := d.Decision == string(review.ActionApprove)
		var who api.UserRef
		switch {
		case d.GuestEmail != nil && d.GuestID != nil && d.Name != nil:
			latest[review.GuestKey(*d.GuestEmail)] = approve
			who = person{Guest: d.GuestID, Verified: verifiedOrFalse(d.GuestVerified)}.ref(*d.Name)
		case d.GuestEmail != nil:
			latest[review.GuestKey(*d.GuestEmail)] = approve
			continue // the guest is gone with their share: their decision still counts
		case d.ReviewerID == nil || d.Name == nil:
			continue
		default:
			latest[review.MemberKey(*d.ReviewerID)] = approve
			who = userref.Member(*d.ReviewerID, *d.Name)
		}
		st.Decisions = append(st.Decisions, ReviewDecisionDetail{
			At: d.At.UTC(), Comment: d.Comment, Decision: api.ReviewStageDecisionDecision(d.Decision),
			Reviewer: who, VersionNumber: d.VersionNumber,
		})
	}
	return st, latest, nil
}

// withPlan is c as the rules see it, with its plan p (nil: none read).
func withPlan(c review.Creative, p *plan) review.Creative {
	if p != nil {
		c.Plan, c.Round = p.rules, p.round
	}
	return c
}

// roundWrite is the JSON array of stages ReviewPlanTransition writes: the
// stages of after whose status differs from before's (every stage when
// before is another round), a stage made active due p.dueIn hours after
// now.
func roundWrite(p *plan, before, after review.Round, now time.Time) ([]byte, error) {
	type stage struct {
		Position int                `json:"position"`
		Status   review.StageStatus `json:"status"`
		DueAt    *time.Time         `json:"due_at"`
	}
	out := []stage{}
	for i, s := range after.Statuses {
		if i < len(before.Statuses) && before.Statuses[i] == s {
			continue
		}
		st := stage{Position: i, Status: s}
		if s == review.StageActive && p.dueIn[i] != nil {
			due := now.Add(time.Duration(*p.dueIn[i]) * time.Hour)
			st.DueAt = &due
		}
		out = append(out, st)
	}
	return json.Marshal(out)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
