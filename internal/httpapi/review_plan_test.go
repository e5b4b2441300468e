package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
)

func reviewPlanURL(org, id uuid.UUID) string { return creativeURL(org, id) + "/review-plan" }

func (d *reviewDesk) putPlan(who string, id uuid.UUID, body any, headers ...testenv.Header) *testenv.Response {
	return d.clients[who].Do(http.MethodPut, reviewPlanURL(d.org, id), body, headers...)
}

// twoStages is a plan of two stages: the reviewer alone, then the other
// reviewer or the admin (any), due in two days, with a guest email.
func (d *reviewDesk) twoStages() map[string]any {
	return map[string]any{"stages": []any{
		map[string]any{"name": "Brand", "rule": "all", "reviewerIds": []uuid.UUID{d.users["reviewer"]}},
		map[string]any{"name": "Legal", "rule": "any", "reviewerIds": []uuid.UUID{d.users["other reviewer"], d.users["admin"]},
			"guestEmails": []string{"Lawyer@Client.test"}, "dueInHours": 48},
	}}
}

func TestReviewPlanIsSetShownAndRemoved(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1})
	// The plan names a guest: an admin's to set (§21).
	r := d.putPlan("admin", id, d.twoStages(), testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()})
	if r.Status != http.StatusOK {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	var put api.CreativeDetail
	r.JSON(t, &put)
	plan, err := put.ReviewPlan.Get()
	if err != nil || put.Version != 2 {
		t.Fatalf("v%d, plan %v", put.Version, put.ReviewPlan)
	}
	if plan.ActiveStage.IsSpecified() && !plan.ActiveStage.IsNull() {
		t.Fatalf("activeStage %v before a submit", plan.ActiveStage)
	}
	if len(plan.Stages) != 2 || plan.Stages[0].Name != "Brand" || plan.Stages[1].Rule != api.StageRuleAny ||
		len(plan.Stages[1].Reviewers) != 2 || plan.Stages[1].Reviewers[0].Name != "other reviewer" || plan.Stages[1].Reviewers[1].Name != "admin" ||
		len(plan.Stages[1].GuestEmails) != 1 || plan.Stages[0].Status != api.StagePending || plan.Stages[1].Status != api.StagePending ||
		len(plan.Stages[0].Decisions) != 0 || !plan.Stages[1].DueAt.IsNull() {
		t.Fatalf("stages %s", r.Body)
	}
	if got := d.clients["viewer"].Do(http.MethodGet, creativeURL(d.org, id), nil); got.Status != http.StatusOK ||
		!strings.Contains(string(got.Body), `"reviewPlan":{"activeStage":null,"stages":[{"decisions":[],"dueAt":null,"guestEmails":[],"name":"Brand"`) {
		t.Fatalf("get: %d %s", got.Status, got.Body)
	}
	if e := d.history(t, "viewer", id, 1)[0]; e.Type != "updated" || len(e.Changes) != 1 || e.Changes[0].Field != "reviewPlan" ||
		e.Changes[0].From != nil || *e.Changes[0].To != "Brand (all), Legal (any)" {
		t.Fatalf("history %+v", e)
	}
	// A new plan replaces the stages; the history says what it was.
	one := map[string]any{"expectedVersion": 2, "stages": []any{map[string]any{"name": "Final", "rule": "majority",
		"reviewerIds": []uuid.UUID{d.users["reviewer"], d.users["other reviewer"]}}}}
	if r := d.putPlan("admin", id, one); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"stages":[{"decisions":[]`) ||
		strings.Contains(string(r.Body), "Legal") {
		t.Fatalf("replace: %d %s", r.Status, r.Body)
	}
	if e := d.history(t, "viewer", id, 1)[0]; e.Changes[0].From == nil || *e.Changes[0].From != "Brand (all), Legal (any)" {
		t.Fatalf("history %+v", e)
	}
	del := d.clients["author"].Do(http.MethodDelete, reviewPlanURL(d.org, id), nil)
	var gone api.CreativeDetail
	del.JSON(t, &gone)
	if del.Status != http.StatusOK || !gone.ReviewPlan.IsNull() || gone.Version != 4 {
		t.Fatalf("delete: %d %s", del.Status, del.Body)
	}
	// Removing no plan changes nothing.
	if again := d.clients["author"].Do(http.MethodDelete, reviewPlanURL(d.org, id), nil); again.Status != http.StatusOK {
		t.Fatalf("delete again: %d %s", again.Status, again.Body)
	}
	if _, version, _ := d.state(t, id); version != 4 {
		t.Fatalf("v%d after deleting no plan", version)
	}
}

func TestReviewPlanRefusalsFollowTheCommandOrder(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	draft := d.creative(t, creativeSpec{versions: 1})
	inReview := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	stage := func(ids ...uuid.UUID) map[string]any {
		return map[string]any{"stages": []any{map[string]any{"name": "S", "rule": "all", "reviewerIds": ids}}}
	}
	for _, tt := range []struct {
		name, who string
		id        uuid.UUID
		body      any
		status    int
		code      string
		field     string
	}{
		{"a reviewer may not set the plan", "reviewer", draft, d.twoStages(), 403, "action_forbidden", ""},
		{"a viewer may not", "viewer", draft, d.twoStages(), 403, "action_forbidden", ""},
		{"another workspace sees no creative", "outsider", draft, d.twoStages(), 404, "not_found", ""},
		{"in review the plan is fixed", "admin", inReview, d.twoStages(), 409, "invalid_transition", ""},
		{"a stale expectedVersion", "admin", draft, map[string]any{"expectedVersion": 9, "stages": d.twoStages()["stages"]}, 409, "version_conflict", ""},
		{"the author reviews nothing of theirs", "admin", draft, stage(d.users["author"]), 422, "invalid_request", "stages[0].reviewerIds[0]"},
		{"a viewer does not review", "admin", draft, stage(d.users["viewer"]), 422, "invalid_request", "stages[0].reviewerIds[0]"},
		{"a member of another workspace", "admin", draft, stage(d.users["outsider"]), 422, "invalid_request", "stages[0].reviewerIds[0]"},
		{"a stage without anyone", "author", draft, stage(), 422, "invalid_request", "stages[0].reviewerIds"},
		{"nobody twice in a stage", "author", draft, stage(d.users["reviewer"], d.users["reviewer"]), 422, "invalid_request", "stages[0].reviewerIds[1]"},
		{"at most five stages", "author", draft, map[string]any{"stages": []any{
			stage(d.users["reviewer"])["stages"].([]any)[0], stage(d.users["reviewer"])["stages"].([]any)[0], stage(d.users["reviewer"])["stages"].([]any)[0],
			stage(d.users["reviewer"])["stages"].([]any)[0], stage(d.users["reviewer"])["stages"].([]any)[0], stage(d.users["reviewer"])["stages"].([]any)[0],
		}}, 422, "invalid_request", "stages"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := d.putPlan(tt.who, tt.id, tt.body)
			if r.Status != tt.status || problemCode(t, r) != tt.code {
				t.Fatalf("%d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
			if tt.field != "" {
				if p := r.Problem(t); len(p.FieldErrors) != 1 || p.FieldErrors[0].Field != tt.field {
					t.Fatalf("field errors %s, want %s", r.Body, tt.field)
				}
			}
		})
	}
	if r := d.clients["reviewer"].Do(http.MethodDelete, reviewPlanURL(d.org, draft), nil); r.Status != 403 {
		t.Fatalf("delete by a reviewer: %d %s", r.Status, r.Body)
	}
	if r := d.clients["admin"].Do(http.MethodDelete, reviewPlanURL(d.org, inReview), nil); r.Status != 409 || problemCode(t, r) != "invalid_transition" {
		t.Fatalf("delete in review: %d %s", r.Status, r.Body)
	}
	if _, version, events := d.state(t, draft); version != 1 || events != 0 {
		t.Fatalf("refusals changed the draft: v%d, %d events", version, events)
	}
}

func TestReviewPlanReplaysUnderTheSameIdempotencyKey(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1})
	k := testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()}
	first, again := d.putPlan("admin", id, d.twoStages(), k), d.putPlan("admin", id, d.twoStages(), k)
	if first.Status != 200 || again.Status != 200 || again.Header.Get("Idempotent-Replayed") != "true" || string(first.Body) != string(again.Body) {
		t.Fatalf("first %d %s\nagain %d %s", first.Status, first.Body, again.Status, again.Body)
	}
	if _, version, _ := d.state(t, id); version != 2 {
		t.Fatalf("v%d after a replay", version)
	}
}

func TestReviewerIDCannotBeAssignedWhileAReviewPlanIsSet(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1})
	if r := d.putPlan("admin", id, d.twoStages()); r.Status != http.StatusOK {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	if c := d.get(t, "admin", id); c.Permissions.AssignReviewer {
		t.Fatal("permissions offer assignReviewer with a plan")
	}
	r := d.patch("admin", id, map[string]any{"reviewerId": d.users["reviewer"]})
	if r.Status != http.StatusConflict || problemCode(t, r) != "review_plan_set" {
		t.Fatalf("patch reviewerId: %d %s", r.Status, r.Body)
	}
	if r := d.clients["admin"].Do(http.MethodDelete, reviewPlanURL(d.org, id), nil); r.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := d.patch("admin", id, map[string]any{"reviewerId": d.users["reviewer"]}); r.Status != http.StatusOK {
		t.Fatalf("patch reviewerId without a plan: %d %s", r.Status, r.Body)
	}
}

// TestOnlyAnAdminSetsReplacesOrRemovesAPlanThatNamesGuests: a plan's
// guests decide, so setting a plan that names guests, replacing one and
// removing one are an admin's (403 action_forbidden to the author, nothing
// changed); the author still sets and removes plans of members.
func TestOnlyAnAdminSetsReplacesOrRemovesAPlanThatNamesGuests(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1})
	members := map[string]any{"stages": []any{map[string]any{"name": "Brand", "rule": "all", "reviewerIds": []uuid.UUID{d.users["reviewer"]}}}}
	forbidden := func(what string, r *testenv.Response) {
		t.Helper()
		if r.Status != http.StatusForbidden || problemCode(t, r) != "action_forbidden" {
			t.Fatalf("%s: %d %s, want 403 action_forbidden", what, r.Status, r.Body)
		}
	}
	forbidden("the author sets a plan with a guest", d.putPlan("author", id, d.twoStages()))
	if _, version, _ := d.state(t, id); version != 1 {
		t.Fatalf("v%d after a refused plan", version)
	}
	if r := d.putPlan("admin", id, d.twoStages()); r.Status != http.StatusOK {
		t.Fatalf("the admin sets it: %d %s", r.Status, r.Body)
	}
	forbidden("the author replaces it", d.putPlan("author", id, members))
	forbidden("the author removes it", d.clients["author"].Do(http.MethodDelete, reviewPlanURL(d.org, id), nil))
	if _, version, _ := d.state(t, id); version != 2 {
		t.Fatalf("v%d after refused changes", version)
	}
	if r := d.clients["admin"].Do(http.MethodDelete, reviewPlanURL(d.org, id), nil); r.Status != http.StatusOK {
		t.Fatalf("the admin removes it: %d %s", r.Status, r.Body)
	}
	if r := d.putPlan("author", id, members); r.Status != http.StatusOK {
		t.Fatalf("the author sets a plan of members: %d %s", r.Status, r.Body)
	}
	if r := d.clients["author"].Do(http.MethodDelete, reviewPlanURL(d.org, id), nil); r.Status != http.StatusOK {
		t.Fatalf("the author removes it: %d %s", r.Status, r.Body)
	}
}
