package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/creative"
	"creativeapi/internal/events"
	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
)

// The review actions on a creative with a review plan (docs/review.md,
// "Review stages"): each test is named after the rule it proves.

// staged is a creative with a version and the plan stages (set by its
// author, or by an admin when they name guests), submitted by its author:
// stage 1 is active.
func (d *reviewDesk) staged(t *testing.T, stages ...map[string]any) uuid.UUID {
	t.Helper()
	id := d.creative(t, creativeSpec{versions: 1})
	// A plan naming guests is an admin's to set (§21); the author sets the rest.
	setter := "author"
	for _, s := range stages {
		if emails, _ := s["guestEmails"].([]string); len(emails) > 0 {
			setter = "admin"
		}
	}
	if r := d.putPlan(setter, id, map[string]any{"stages": stages}); r.Status != http.StatusOK {
		t.Fatalf("put plan: %d %s", r.Status, r.Body)
	}
	if r := d.act("author", id, map[string]any{"action": "submit"}); r.Status != http.StatusOK {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	return id
}

// stageOf is a stage of a plan to PUT: the named members under rule.
func (d *reviewDesk) stageOf(name, rule string, dueInHours int, members ...string) map[string]any {
	ids := make([]uuid.UUID, len(members))
	for i, m := range members {
		ids[i] = d.users[m]
	}
	s := map[string]any{"name": name, "rule": rule, "reviewerIds": ids}
	if dueInHours > 0 {
		s["dueInHours"] = dueInHours
	}
	return s
}

// decide runs a decision as who and fails unless it answers 200.
func (d *reviewDesk) decide(t *testing.T, who string, id uuid.UUID, action string) api.CreativeDetail {
	t.Helper()
	body := map[string]any{"action": action}
	if action == "request_changes" {
		body["comment"] = "Not like this."
	}
	r := d.act(who, id, body)
	if r.Status != http.StatusOK {
		t.Fatalf("%s as %s: %d %s", action, who, r.Status, r.Body)
	}
	var c api.CreativeDetail
	r.JSON(t, &c)
	return c
}

func planOf(t *testing.T, c api.CreativeDetail) (plan api.ReviewPlan, active int) {
	t.Helper()
	plan, err := c.ReviewPlan.Get()
	if err != nil {
		t.Fatalf("no review plan: %v", err)
	}
	active = -1
	if a, err := plan.ActiveStage.Get(); err == nil {
		active = a
	}
	return plan, active
}

func stageStatuses(p api.ReviewPlan) []api.ReviewStageStatus {
	out := make([]api.ReviewStageStatus, len(p.Stages))
	for i, s := range p.Stages {
		out[i] = s.Status
	}
	return out
}

// outboxTypes are the types of the outbox events written after the first
// skip ones.
func outboxTypes(t *testing.T, d *reviewDesk, skip int) []string {
	t.Helper()
	var out []string
	for _, e := range outbox(t, d)[skip:] {
		out = append(out, e.Type)
	}
	return out
}

func TestSubmitActivatesTheFirstStageWithItsDueDate(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.staged(t, d.stageOf("Brand", "all", 24, "reviewer"), d.stageOf("Legal", "any", 48, "other reviewer"))
	c := d.get(t, "author", id)
	plan, active := planOf(t, c)
	if c.ReviewStatus != api.InReview || active != 0 || !slices.Equal(stageStatuses(plan), []api.ReviewStageStatus{api.StageActive, api.StagePending}) {
		t.Fatalf("%s, active %d, stages %v", c.ReviewStatus, active, stageStatuses(plan))
	}
	due, err := plan.Stages[0].DueAt.Get()
	if err != nil || !due.Equal(c.UpdatedAt.Add(24*time.Hour)) || !plan.Stages[1].DueAt.IsNull() {
		t.Fatalf("stage 1 due %v (%v), stage 2 %v; want 24 h after the submit at %v", due, err, plan.Stages[1].DueAt, c.UpdatedAt)
	}
	// With a plan the reviewer shown is the active stage's first.
	if r, err := c.Reviewer.Get(); err != nil || r.Id != d.users["reviewer"] {
		t.Fatalf("reviewer %v", c.Reviewer)
	}
}

func TestOnlyTheActiveStagesReviewersAndAdminsDecide(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.staged(t, d.stageOf("Brand", "all", 0, "reviewer"), d.stageOf("Legal", "any", 0, "other reviewer"))
	decides := []api.CreativeAction{api.CreativeActionRequestChanges, api.CreativeActionApprove}
	for who, want := range map[string][]api.CreativeAction{
		"reviewer": decides, "admin": append(decides, api.CreativeActionArchive), "other reviewer": {}, "author": {}, "viewer": {},
	} {
		if got := d.get(t, who, id).AvailableActions; !slices.Equal(got, want) {
			t.Errorf("%s may %v; want %v", who, got, want)
		}
	}
	if r := d.act("other reviewer", id, map[string]any{"action": "approve"}); r.Status != http.StatusForbidden || problemCode(t, r) != "action_forbidden" {
		t.Fatalf("a reviewer of a later stage approves: %d %s", r.Status, r.Body)
	}
	if _, version, _ := d.state(t, id); version != 3 {
		t.Fatalf("v%d after a refusal", version)
	}
	// A reviewer whom the plan does not name may not decide either.
	one := d.staged(t, d.stageOf("Brand", "all", 0, "other reviewer"))
	if r := d.act("reviewer", one, map[string]any{"action": "approve"}); r.Status != http.StatusForbidden {
		t.Fatalf("a reviewer outside the plan approves: %d %s", r.Status, r.Body)
	}
}

func TestAStageWhoseRuleHoldsIsApprovedAndTheNextBecomesActive(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.staged(t, d.stageOf("Brand", "all", 0, "reviewer"), d.stageOf("Legal", "any", 48, "other reviewer", "admin"))
	seen := len(outbox(t, d))
	c := d.decide(t, "reviewer", id, "approve")
	plan, active := planOf(t, c)
	if c.ReviewStatus != api.InReview || active != 1 || !slices.Equal(stageStatuses(plan), []api.ReviewStageStatus{api.StageApproved, api.StageActive}) {
		t.Fatalf("%s, active %d, stages %v", c.ReviewStatus, active, stageStatuses(plan))
	}
	if due, err := plan.Stages[1].DueAt.Get(); err != nil || !due.Equal(c.UpdatedAt.Add(48*time.Hour)) {
		t.Fatalf("stage 2 due %v; want 48 h after it became active at %v", due, c.UpdatedAt)
	}
	if ds := plan.Stages[0].Decisions; len(ds) != 1 || ds[0].Reviewer.Id != d.users["reviewer"] || ds[0].Decision != "approve" || ds[0].VersionNumber != 1 {
		t.Fatalf("stage 1 decisions %+v", ds)
	}
	if r, err := c.Reviewer.Get(); err != nil || r.Id != d.users["other reviewer"] {
		t.Fatalf("reviewer %v; want the second stage's first", c.Reviewer)
	}
	if got := outboxTypes(t, d, seen); !slices.Equal(got, []string{string(events.CreativeDecisionRecorded), string(events.CreativeStageApproved)}) {
		t.Fatalf("events %v", got)
	}
	// The last stage approves the creative.
	seen = len(outbox(t, d))
	c = d.decide(t, "other reviewer", id, "approve")
	plan, active = planOf(t, c)
	if c.ReviewStatus != api.Approved || active != -1 || c.ApprovedVersion.IsNull() ||
		!slices.Equal(stageStatuses(plan), []api.ReviewStageStatus{api.StageApproved, api.StageApproved}) {
		t.Fatalf("%s, active %d, stages %v, approved %v", c.ReviewStatus, active, stageStatuses(plan), c.ApprovedVersion)
	}
	if got := outboxTypes(t, d, seen); !slices.Equal(got, []string{
		string(events.CreativeDecisionRecorded), string(events.CreativeStageApproved), string(events.CreativeApproved),
	}) {
		t.Fatalf("events %v", got)
	}
	// The history has every decision, each the action its person ran in
	// its stage, and each stage whose rule held after the decision.
	h := d.history(t, "viewer", id, 10)
	named := func(e historyEvent, typ, stage, to string) bool {
		return e.Type == typ && e.Stage != nil && *e.Stage == stage && e.ToStatus == to && !e.Override &&
			e.FromStatus != nil && *e.FromStatus == "in_review"
	}
	if !named(h[0], "stage_approved", "Legal", "approved") || !named(h[1], "approve", "Legal", "approved") ||
		h[1].Actor.Id != d.users["other reviewer"] || h[0].Version != h[1].Version ||
		!named(h[2], "stage_approved", "Brand", "in_review") || !named(h[3], "approve", "Brand", "in_review") || h[4].Type != "submit" || h[4].Stage != nil {
		t.Fatalf("history %+v", h[:5])
	}
}

func TestARuleOfAllWaitsForEveryReviewerAndMajorityForMoreThanHalf(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	all := d.staged(t, d.stageOf("Brand", "all", 0, "reviewer", "other reviewer"))
	if c := d.decide(t, "reviewer", all, "approve"); c.ReviewStatus != api.InReview {
		t.Fatalf("all: one of two approved: %s", c.ReviewStatus)
	}
	if c := d.decide(t, "other reviewer", all, "approve"); c.ReviewStatus != api.Approved {
		t.Fatalf("all: both approved: %s", c.ReviewStatus)
	}
	// Two reviewers: a majority is both.
	majority := d.staged(t, d.stageOf("Brand", "majority", 0, "reviewer", "other reviewer"))
	if c := d.decide(t, "other reviewer", majority, "approve"); c.ReviewStatus != api.InReview {
		t.Fatalf("majority: half approved: %s", c.ReviewStatus)
	}
	anyOne := d.staged(t, d.stageOf("Brand", "any", 0, "reviewer", "other reviewer"))
	if c := d.decide(t, "other reviewer", anyOne, "approve"); c.ReviewStatus != api.Approved {
		t.Fatalf("any: one approved: %s", c.ReviewStatus)
	}
}

func TestADecisionMayBeChangedWhileTheStageIsActiveAndTheLatestCounts(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.staged(t, d.stageOf("Brand", "all", 0, "reviewer", "other reviewer"))
	d.decide(t, "reviewer", id, "approve")
	c := d.decide(t, "reviewer", id, "approve")
	plan, _ := planOf(t, c)
	if c.ReviewStatus != api.InReview || len(plan.Stages[0].Decisions) != 1 {
		t.Fatalf("approving twice: %s, decisions %+v", c.ReviewStatus, plan.Stages[0].Decisions)
	}
	// Changing an approval to a request for changes ends the round.
	c = d.decide(t, "reviewer", id, "request_changes")
	plan, _ = planOf(t, c)
	if c.ReviewStatus != api.ChangesRequested || len(plan.Stages[0].Decisions) != 1 || plan.Stages[0].Decisions[0].Decision != "request_changes" {
		t.Fatalf("changed decision: %s, decisions %+v", c.ReviewStatus, plan.Stages[0].Decisions)
	}
}

func TestARequestForChangesEndsTheRoundAndTheNextSubmitStartsAgain(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.staged(t, d.stageOf("Brand", "any", 0, "reviewer"), d.stageOf("Legal", "all", 0, "other reviewer", "admin"))
	d.decide(t, "reviewer", id, "approve")
	d.decide(t, "admin", id, "approve") // a reviewer of the stage: no override
	seen := len(outbox(t, d))
	c := d.decide(t, "other reviewer", id, "request_changes")
	plan, active := planOf(t, c)
	if c.ReviewStatus != api.ChangesRequested || active != -1 || !c.ApprovedVersion.IsNull() ||
		!slices.Equal(stageStatuses(plan), []api.ReviewStageStatus{api.StageApproved, api.StageChangesRequested}) {
		t.Fatalf("%s, active %d, stages %v", c.ReviewStatus, active, stageStatuses(plan))
	}
	if got := outboxTypes(t, d, seen); !slices.Equal(got, []string{string(events.CreativeDecisionRecorded), string(events.CreativeChangesRequested)}) {
		t.Fatalf("events %v", got)
	}
	if r := d.act("reviewer", id, map[string]any{"action": "approve"}); r.Status != http.StatusConflict || problemCode(t, r) != "invalid_transition" {
		t.Fatalf("a decision after the round ended: %d %s", r.Status, r.Body)
	}
	c = d.decide(t, "author", id, "submit")
	plan, active = planOf(t, c)
	if active != 0 || !slices.Equal(stageStatuses(plan), []api.ReviewStageStatus{api.StageActive, api.StagePending}) ||
		len(plan.Stages[0].Decisions) != 0 || len(plan.Stages[1].Decisions) != 0 {
		t.Fatalf("the next round: active %d, stages %+v", active, plan.Stages)
	}
	// The earlier round stays in history and in storage.
	var rounds, decisions int
	if err := d.env.DB.Pool.QueryRow(context.Background(), `SELECT (SELECT count(DISTINCT round) FROM review_stage_rounds WHERE creative_id = $1),
		(SELECT count(*) FROM review_decisions WHERE creative_id = $1 AND round = 1)`, id).Scan(&rounds, &decisions); err != nil {
		t.Fatal(err)
	}
	if rounds != 2 || decisions != 3 {
		t.Fatalf("%d rounds stored, %d decisions of the first; want 2 and 3", rounds, decisions)
	}
	if h := d.history(t, "viewer", id, 20); len(h) != 7 || h[1].Type != "request_changes" || h[2].Type != "approve" ||
		h[3].Type != "stage_approved" || h[4].Type != "approve" || h[1].Comment == nil || *h[1].Stage != "Legal" {
		t.Fatalf("history %+v", h)
	}
}

func TestAnAdminOutsideTheActiveStageDecidesForTheWholeCreativeAsAnOverride(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.staged(t, d.stageOf("Brand", "all", 0, "reviewer", "other reviewer"), d.stageOf("Legal", "all", 0, "other reviewer"))
	seen := len(outbox(t, d))
	c := d.decide(t, "admin", id, "approve")
	plan, active := planOf(t, c)
	if c.ReviewStatus != api.Approved || active != -1 || c.ApprovedVersion.IsNull() ||
		!slices.Equal(stageStatuses(plan), []api.ReviewStageStatus{api.StageApproved, api.StagePending}) {
		t.Fatalf("%s, active %d, stages %v", c.ReviewStatus, active, stageStatuses(plan))
	}
	if got := outboxTypes(t, d, seen); !slices.Equal(got, []string{string(events.CreativeDecisionRecorded), string(events.CreativeApproved)}) {
		t.Fatalf("events %v", got)
	}
	var override bool
	if err := d.env.DB.Pool.QueryRow(context.Background(),
		`SELECT override FROM review_decisions WHERE creative_id = $1 AND reviewer_id = $2`, id, d.users["admin"]).Scan(&override); err != nil || !override {
		t.Fatalf("the admin's decision stored as an override: %v, %v", override, err)
	}
	if ds := plan.Stages[0].Decisions; len(ds) != 1 || ds[0].Reviewer.Id != d.users["admin"] {
		t.Fatalf("stage 1 decisions %+v", ds)
	}
	if h := d.history(t, "viewer", id, 2); h[0].Type != "approve" || !h[0].Override || h[0].Stage == nil || *h[0].Stage != "Brand" || h[1].Type != "submit" {
		t.Fatalf("history %+v: want the admin's approve as an override, and no stage_approved", h)
	}
}

func TestAReplayedDecisionGoesToTheReviewerAfterTheirStageIsDone(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.staged(t, d.stageOf("Brand", "any", 0, "reviewer"), d.stageOf("Legal", "any", 0, "other reviewer"))
	key := testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()}
	first := d.act("reviewer", id, map[string]any{"action": "approve"}, key)
	again := d.act("reviewer", id, map[string]any{"action": "approve"}, key)
	if first.Status != http.StatusOK || again.Status != http.StatusOK || string(first.Body) != string(again.Body) {
		t.Fatalf("first %d, replay %d %s", first.Status, again.Status, again.Body)
	}
}

// TestWithoutAPlanTheAssignedReviewerRuleHolds: a creative without a plan
// keeps the single-reviewer workflow (the table tests cover the rest).
func TestWithoutAPlanTheAssignedReviewerRuleHolds(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1, reviewer: "reviewer"})
	if r := d.act("other reviewer", id, map[string]any{"action": "approve"}); r.Status != http.StatusForbidden {
		t.Fatalf("another reviewer approves: %d", r.Status)
	}
	if c := d.decide(t, "reviewer", id, "approve"); c.ReviewStatus != api.Approved || !c.ReviewPlan.IsNull() {
		t.Fatalf("%s, plan %v", c.ReviewStatus, c.ReviewPlan)
	}
}

func TestOverdueListsCreativesWhoseActiveStageIsPastItsDueDate(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	late := d.staged(t, d.stageOf("Brand", "all", 1, "reviewer"))
	d.staged(t, d.stageOf("Brand", "all", 1, "reviewer")) // due in an hour
	d.staged(t, d.stageOf("Brand", "all", 0, "reviewer")) // never due
	d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	// An earlier round's stage, past due but ended, is no longer overdue.
	ended := d.staged(t, d.stageOf("Brand", "all", 1, "reviewer"))
	d.decide(t, "reviewer", ended, "request_changes")
	if _, err := d.env.DB.Pool.Exec(context.Background(),
		`UPDATE review_stage_rounds SET due_at = now() - interval '1 minute' WHERE creative_id = ANY($1)`, []uuid.UUID{late, ended}); err != nil {
		t.Fatal(err)
	}
	list := func(query string) []uuid.UUID {
		r := d.clients["viewer"].Do(http.MethodGet, creativesURL(d.org)+query, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		var l api.CreativeList
		r.JSON(t, &l)
		var ids []uuid.UUID
		for _, c := range l.Items {
			ids = append(ids, c.Id)
		}
		return ids
	}
	if got := list("?overdue=true"); !slices.Equal(got, []uuid.UUID{late}) {
		t.Fatalf("overdue: %v; want %v", got, late)
	}
	if got := list("?overdue=true&authorId=" + d.users["admin"].String()); len(got) != 0 {
		t.Fatalf("overdue by another author: %v", got)
	}
	if got := list("?overdue=false"); len(got) != 5 {
		t.Fatalf("overdue=false filters: %d creatives", len(got))
	}
}

// TestTheApprovalRecordOfAStagedReviewIsTheRoundThatApproved: the record
// lists every decision of the round that approved, and a stage decision
// of a later round (an approve that moved nothing) is not taken for the
// approval.
func TestTheApprovalRecordOfAStagedReviewIsTheRoundThatApproved(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	c := d.create(t, "author", newCreativeBody("Two stages"))
	if r := d.addVersion("author", c.Id, versionBody(pngAsset("hero.png"))); r.Status != http.StatusCreated {
		t.Fatalf("version: %d %s", r.Status, r.Body)
	}
	plan := map[string]any{"stages": []any{d.stageOf("Brand", "any", 0, "reviewer"), d.stageOf("Legal", "any", 0, "other reviewer")}}
	if r := d.putPlan("author", c.Id, plan); r.Status != http.StatusOK {
		t.Fatalf("plan: %d %s", r.Status, r.Body)
	}
	d.decide(t, "author", c.Id, "submit")
	d.decide(t, "reviewer", c.Id, "approve")
	approved := d.decide(t, "other reviewer", c.Id, "approve")
	// The next round: a new version, submitted, its first stage approved.
	if r := d.addVersion("author", c.Id, versionBody(pngAsset("hero-v2.png"))); r.Status != http.StatusCreated {
		t.Fatalf("version 2: %d %s", r.Status, r.Body)
	}
	d.decide(t, "author", c.Id, "submit")
	d.decide(t, "reviewer", c.Id, "approve")
	r := d.clients["viewer"].Do(http.MethodGet, approvalURL(d.org, c.Id), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("approval: %d %s", r.Status, r.Body)
	}
	var got api.CreativeApproval
	r.JSON(t, &got)
	rec := got.Record
	if rec.VersionNumber != 1 || !rec.ApprovedAt.Equal(approved.UpdatedAt) || len(rec.Decisions) != 2 ||
		rec.Decisions[0].Reviewer.Id != d.users["reviewer"] || rec.Decisions[1].Reviewer.Id != d.users["other reviewer"] {
		t.Fatalf("record v%d approved at %v (want %v), decisions %+v", rec.VersionNumber, rec.ApprovedAt, approved.UpdatedAt, rec.Decisions)
	}
}

func TestDueDatesAreAnnouncedOncePerStageAndRound(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	ctx := context.Background()
	soon := d.staged(t, d.stageOf("Brand", "all", 48, "reviewer"))
	late := d.staged(t, d.stageOf("Brand", "all", 48, "reviewer"))
	d.staged(t, d.stageOf("Brand", "all", 48, "reviewer")) // due in two days: nothing yet
	due := func(id uuid.UUID, at string) {
		t.Helper()
		if _, err := d.env.DB.Pool.Exec(ctx, `UPDATE review_stage_rounds SET due_at = now() + $2::interval WHERE creative_id = $1`, id, at); err != nil {
			t.Fatal(err)
		}
	}
	due(soon, "1 hour")
	due(late, "-1 minute")
	announce := func(want int) []string {
		t.Helper()
		seen := len(outbox(t, d))
		n, err := creative.AnnounceDue(ctx, d.env.DB.Store)
		if err != nil || n != want {
			t.Fatalf("announced %d, %v; want %d", n, err, want)
		}
		return outboxTypes(t, d, seen)
	}
	// An overdue stage never announced due soon is announced overdue only.
	if got := announce(2); !slices.Equal(got, []string{string(events.CreativeStageDueSoon), string(events.CreativeStageOverdue)}) {
		t.Fatalf("events %v", got)
	}
	announce(0)
	due(soon, "-1 minute")
	if got := announce(1); !slices.Equal(got, []string{string(events.CreativeStageOverdue)}) {
		t.Fatalf("events %v", got)
	}
	announce(0)
	// A stage decided is no longer announced; the next round's is.
	d.decide(t, "reviewer", soon, "request_changes")
	d.decide(t, "author", soon, "submit")
	due(soon, "-1 minute")
	if got := announce(1); !slices.Equal(got, []string{string(events.CreativeStageOverdue)}) {
		t.Fatalf("the next round: events %v", got)
	}
}
