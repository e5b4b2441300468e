package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
)

func creativesURL(org uuid.UUID) string {
	return fmt.Sprintf("/api/v1/organizations/%s/creatives", org)
}

func creativeURL(org, id uuid.UUID) string {
	return fmt.Sprintf("/api/v1/organizations/%s/creatives/%s", org, id)
}

func creativeActionURL(org, id uuid.UUID) string {
	return creativeURL(org, id) + "/actions"
}

// reviewDesk is an organization with a member of every role (two
// reviewers, so "the assigned reviewer only" can be told apart), each
// signed in, and a member of another workspace.
type reviewDesk struct {
	env     *testenv.Env
	org     uuid.UUID
	users   map[string]uuid.UUID
	clients map[string]*testenv.Client
}

// The members of a reviewDesk, by the name tests use for them.
var deskMembers = []struct{ name, role string }{
	{"admin", "admin"}, {"reviewer", "reviewer"}, {"other reviewer", "reviewer"},
	{"author", "author"}, {"viewer", "viewer"},
}

func newReviewDesk(t *testing.T, opts ...testenv.Options) *reviewDesk {
	t.Helper()
	env := testenv.New(t, opts...)
	d := &reviewDesk{env: env, org: env.DB.Org(t, "Acme Review"), users: map[string]uuid.UUID{}, clients: map[string]*testenv.Client{}}
	for _, m := range deskMembers {
		id, _ := env.DB.User(t, m.name)
		env.DB.Member(t, d.org, id, m.role)
		d.users[m.name], d.clients[m.name] = id, env.SessionFor(t, id)
	}
	// The outsider is an admin, but of another workspace.
	other := env.DB.Org(t, "Globex Review")
	id, _ := env.DB.User(t, "outsider")
	env.DB.Member(t, other, id, "admin")
	d.users["outsider"], d.clients["outsider"] = id, env.SessionFor(t, id)
	return d
}

// creativeSpec describes a fixture creative; the zero value is a draft
// without a version, authored by "author".
type creativeSpec struct {
	status   review.Status
	author   string
	reviewer string
	versions int
	assets   int
	approved bool
	client   string
}

// creative inserts a creative as spec says, with its versions and assets.
func (d *reviewDesk) creative(t *testing.T, spec creativeSpec) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	q := db.New(d.env.DB.Pool)
	if spec.status == "" {
		spec.status = review.StatusDraft
	}
	if spec.author == "" {
		spec.author = "author"
	}
	author := d.users[spec.author]
	number, err := q.OrganizationCreativeNumbersReserve(ctx, db.OrganizationCreativeNumbersReserveParams{Count: 1, ID: d.org})
	if err != nil {
		t.Fatal(err)
	}
	p := db.CreativeInsertParams{
		OrganizationID: d.org, Number: number, Title: "Fixture " + fmt.Sprint(number), Type: "static",
		AspectRatio: "9:16", Geo: "DE", Language: "de-DE", AuthorID: author, ReviewStatus: string(spec.status), Version: 1,
	}
	if spec.reviewer != "" {
		id := d.users[spec.reviewer]
		p.ReviewerID = &id
	}
	if spec.client != "" {
		id, err := q.ClientUpsert(ctx, db.ClientUpsertParams{OrganizationID: d.org, Name: spec.client})
		if err != nil {
			t.Fatal(err)
		}
		p.ClientID = &id
	}
	id, err := q.CreativeInsert(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var current, approved *uuid.UUID
	for v := 1; v <= spec.versions; v++ {
		vid, err := q.CreativeVersionInsert(ctx, db.CreativeVersionInsertParams{CreativeID: id, Number: int32(v), AuthorID: author})
		if err != nil {
			t.Fatal(err)
		}
		for a := spec.assets; a >= 1; a-- { // inserted backwards: the answer must order by position
			w := int32(1080)
			if err := q.AssetInsert(ctx, db.AssetInsertParams{
				VersionID: vid, Position: int32(a), FileName: fmt.Sprintf("v%d-%d.png", v, a), MimeType: "image/png",
				SizeBytes: 1000, Url: "https://cdn.example.test/a.png", Width: &w, Height: &w, Sha256: strings.Repeat("ab", 32),
			}); err != nil {
				t.Fatal(err)
			}
		}
		current = &vid
	}
	if spec.approved {
		approved = current
	}
	if err := q.CreativeSetVersions(ctx, db.CreativeSetVersionsParams{ID: id, CurrentVersionID: current, ApprovedVersionID: approved}); err != nil {
		t.Fatal(err)
	}
	return id
}

// act runs an action as the named member.
func (d *reviewDesk) act(who string, id uuid.UUID, body any, headers ...testenv.Header) *testenv.Response {
	return d.clients[who].Do(http.MethodPost, creativeActionURL(d.org, id), body, headers...)
}

func (d *reviewDesk) get(t *testing.T, who string, id uuid.UUID) api.CreativeDetail {
	t.Helper()
	r := d.clients[who].Do(http.MethodGet, creativeURL(d.org, id), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("get: %d %s", r.Status, r.Body)
	}
	var c api.CreativeDetail
	r.JSON(t, &c)
	return c
}

// creativeEvent is one row of creative_events.
type creativeEvent struct {
	actor            uuid.UUID
	action, from, to string
	comment          *string
	version          int
}

// state reads a creative's status, version and event count from the database.
func (d *reviewDesk) state(t *testing.T, id uuid.UUID) (status string, version, events int) {
	t.Helper()
	err := d.env.DB.Pool.QueryRow(context.Background(),
		`SELECT review_status, version, (SELECT count(*) FROM creative_events WHERE creative_id = $1) FROM creatives WHERE id = $1`, id).
		Scan(&status, &version, &events)
	if err != nil {
		t.Fatal(err)
	}
	return status, version, events
}

func (d *reviewDesk) lastEvent(t *testing.T, id uuid.UUID) creativeEvent {
	t.Helper()
	var e creativeEvent
	err := d.env.DB.Pool.QueryRow(context.Background(),
		`SELECT actor_id, type, from_status, to_status, comment, version FROM creative_events WHERE creative_id = $1 ORDER BY id DESC LIMIT 1`, id).
		Scan(&e.actor, &e.action, &e.from, &e.to, &e.comment, &e.version)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func problemCode(t *testing.T, r *testenv.Response) string {
	t.Helper()
	if r.Status < 400 {
		return ""
	}
	return r.Problem(t).Code
}

func TestCreativeActionsFollowTheReviewTable(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	const (
		draft     = review.StatusDraft
		inReview  = review.StatusInReview
		changes   = review.StatusChangesRequested
		approved  = review.StatusApproved
		archived  = review.StatusArchived
		forbidden = "action_forbidden"
		invalid   = "invalid_transition"
	)
	type row struct {
		name   string
		spec   creativeSpec
		who    string
		action review.Action
		// to is the new state of an allowed action; code the refusal.
		to   review.Status
		code string
	}
	withVersion := func(s review.Status, reviewer string) creativeSpec {
		return creativeSpec{status: s, versions: 1, assets: 1, reviewer: reviewer}
	}
	rows := []row{
		// submit: draft, changes_requested → in_review; the author, or an admin; needs a current version.
		{"the author submits a draft", withVersion(draft, ""), "author", review.ActionSubmit, inReview, ""},
		{"an admin submits a draft", withVersion(draft, ""), "admin", review.ActionSubmit, inReview, ""},
		{"the author resubmits after changes were requested", withVersion(changes, "reviewer"), "author", review.ActionSubmit, inReview, ""},
		{"an admin resubmits after changes were requested", withVersion(changes, ""), "admin", review.ActionSubmit, inReview, ""},
		{"a reviewer may not submit", withVersion(draft, ""), "reviewer", review.ActionSubmit, "", forbidden},
		{"a viewer may not submit", withVersion(draft, ""), "viewer", review.ActionSubmit, "", forbidden},
		{"an author may not submit another author's creative", creativeSpec{status: draft, versions: 1, author: "admin"}, "author", review.ActionSubmit, "", forbidden},
		{"submit needs a current version", creativeSpec{status: draft}, "author", review.ActionSubmit, "", invalid},
		{"submit is not allowed from in_review", withVersion(inReview, ""), "author", review.ActionSubmit, "", invalid},
		{"submit is not allowed from approved", withVersion(approved, ""), "author", review.ActionSubmit, "", invalid},
		{"submit is not allowed from archived", withVersion(archived, ""), "admin", review.ActionSubmit, "", invalid},

		// request_changes: in_review → changes_requested; a reviewer or admin who is not the author; the assigned reviewer only (admins always).
		{"a reviewer requests changes", withVersion(inReview, ""), "reviewer", review.ActionRequestChanges, changes, ""},
		{"the assigned reviewer requests changes", withVersion(inReview, "reviewer"), "reviewer", review.ActionRequestChanges, changes, ""},
		{"an admin requests changes over the assigned reviewer", withVersion(inReview, "reviewer"), "admin", review.ActionRequestChanges, changes, ""},
		{"another reviewer than the assigned one may not request changes", withVersion(inReview, "reviewer"), "other reviewer", review.ActionRequestChanges, "", forbidden},
		{"the author may not request changes", withVersion(inReview, ""), "author", review.ActionRequestChanges, "", forbidden},
		{"an admin who is the author may not request changes", creativeSpec{status: inReview, versions: 1, author: "admin"}, "admin", review.ActionRequestChanges, "", forbidden},
		{"a viewer may not request changes", withVersion(inReview, ""), "viewer", review.ActionRequestChanges, "", forbidden},
		{"request_changes is not allowed from draft", withVersion(draft, ""), "reviewer", review.ActionRequestChanges, "", invalid},
		{"request_changes is not allowed from approved", withVersion(approved, ""), "reviewer", review.ActionRequestChanges, "", invalid},

		// approve: in_review → approved; as request_changes.
		{"a reviewer approves", withVersion(inReview, ""), "reviewer", review.ActionApprove, approved, ""},
		{"the assigned reviewer approves", withVersion(inReview, "reviewer"), "reviewer", review.ActionApprove, approved, ""},
		{"an admin approves over the assigned reviewer", withVersion(inReview, "reviewer"), "admin", review.ActionApprove, approved, ""},
		{"another reviewer than the assigned one may not approve", withVersion(inReview, "reviewer"), "other reviewer", review.ActionApprove, "", forbidden},
		{"the author may not approve their own creative", withVersion(inReview, ""), "author", review.ActionApprove, "", forbidden},
		{"an admin who is the author may not approve", creativeSpec{status: inReview, versions: 1, author: "admin"}, "admin", review.ActionApprove, "", forbidden},
		{"a viewer may not approve", withVersion(inReview, ""), "viewer", review.ActionApprove, "", forbidden},
		{"approve is not allowed from changes_requested", withVersion(changes, ""), "reviewer", review.ActionApprove, "", invalid},
		{"approve is not allowed from approved", withVersion(approved, ""), "admin", review.ActionApprove, "", invalid},

		// archive: any but archived → archived; an admin; the author while the creative is a draft.
		{"an admin archives a draft", withVersion(draft, ""), "admin", review.ActionArchive, archived, ""},
		{"an admin archives a creative in review", withVersion(inReview, ""), "admin", review.ActionArchive, archived, ""},
		{"an admin archives a creative with changes requested", withVersion(changes, ""), "admin", review.ActionArchive, archived, ""},
		{"an admin archives an approved creative", withVersion(approved, ""), "admin", review.ActionArchive, archived, ""},
		{"the author archives their draft", creativeSpec{status: draft}, "author", review.ActionArchive, archived, ""},
		{"the author may not archive once submitted", withVersion(inReview, ""), "author", review.ActionArchive, "", forbidden},
		{"a reviewer may not archive", withVersion(draft, ""), "reviewer", review.ActionArchive, "", forbidden},
		{"a viewer may not archive", withVersion(draft, ""), "viewer", review.ActionArchive, "", forbidden},
		{"archived is final", withVersion(archived, ""), "admin", review.ActionArchive, "", invalid},
	}
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			id := d.creative(t, tt.spec)
			body := map[string]any{"action": tt.action, "expectedVersion": 1, "comment": "Checked by " + tt.who + "."}
			r := d.act(tt.who, id, body)
			status, version, events := d.state(t, id)
			if tt.code != "" {
				want := http.StatusConflict
				if tt.code == forbidden {
					want = http.StatusForbidden
				}
				if r.Status != want || problemCode(t, r) != tt.code {
					t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, want, tt.code)
				}
				if status != string(tt.spec.status) || version != 1 || events != 0 {
					t.Fatalf("a refusal changed the creative: %s v%d, %d events", status, version, events)
				}
				return
			}
			if r.Status != http.StatusOK {
				t.Fatalf("got %d %s, want 200", r.Status, r.Body)
			}
			var c api.CreativeDetail
			r.JSON(t, &c)
			if c.ReviewStatus != api.ReviewStatus(tt.to) || c.Version != 2 || status != string(tt.to) || version != 2 {
				t.Fatalf("answer %s v%d, stored %s v%d, want %s v2", c.ReviewStatus, c.Version, status, version, tt.to)
			}
			e := d.lastEvent(t, id)
			want := creativeEvent{actor: d.users[tt.who], action: string(tt.action), from: string(tt.spec.status), to: string(tt.to), version: 2}
			if events != 1 || e.actor != want.actor || e.action != want.action || e.from != want.from || e.to != want.to ||
				e.version != want.version || e.comment == nil || *e.comment != "Checked by "+tt.who+"." {
				t.Fatalf("%d events, last %+v, want %+v", events, e, want)
			}
		})
	}
}

func TestAvailableActionsAreExactlyTheActionsThatSucceed(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	for _, status := range review.Statuses {
		for _, who := range []string{"admin", "reviewer", "other reviewer", "author", "viewer"} {
			t.Run(string(status)+" as "+who, func(t *testing.T) {
				t.Parallel()
				spec := creativeSpec{status: status, versions: 1, assets: 1, reviewer: "reviewer"}
				offered := d.get(t, who, d.creative(t, spec)).AvailableActions
				for _, a := range review.Actions {
					r := d.act(who, d.creative(t, spec), map[string]any{"action": a, "comment": "Looks off."})
					if ok := r.Status == http.StatusOK; ok != slices.Contains(offered, api.CreativeAction(a)) {
						t.Errorf("%s: %d %s, offered %v", a, r.Status, r.Body, offered)
					}
				}
			})
		}
	}
}

func TestCreativeActionAnswersInTheDocumentedOrder(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	inReview := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1, assets: 1})
	foreignOrg := d.env.DB.Org(t, "Initech")
	d.env.DB.Member(t, foreignOrg, d.users["outsider"], "admin")
	foreign := (&reviewDesk{env: d.env, org: foreignOrg, users: d.users}).creative(t, creativeSpec{status: review.StatusInReview, versions: 1, author: "outsider"})

	tests := []struct {
		name   string
		who    string // "" is anonymous
		path   string
		body   any
		status int
		code   string
	}{
		{"not signed in is 401, whatever the body", "", creativeActionURL(d.org, inReview), `{"bogus":`, 401, "unauthenticated"},
		{"invalid is 422 before an unknown organization is 404", "reviewer", creativeActionURL(uuid.New(), inReview), `{}`, 422, "invalid_request"},
		{"a member of another workspace gets 404 for an existing creative", "outsider", creativeActionURL(d.org, inReview), map[string]any{"action": "approve"}, 404, "not_found"},
		{"a member of another workspace gets 404 before a forbidden stale action", "outsider", creativeActionURL(d.org, inReview), map[string]any{"action": "submit", "expectedVersion": 9}, 404, "not_found"},
		{"a random creative id is 404", "reviewer", creativeActionURL(d.org, uuid.New()), map[string]any{"action": "approve"}, 404, "not_found"},
		{"a random organization id is 404", "reviewer", creativeActionURL(uuid.New(), inReview), map[string]any{"action": "approve"}, 404, "not_found"},
		{"a creative of another organization under one's own is 404", "reviewer", creativeActionURL(d.org, foreign), map[string]any{"action": "approve"}, 404, "not_found"},
		{"a viewer approving is 403 before a stale version", "viewer", creativeActionURL(d.org, inReview), map[string]any{"action": "approve", "expectedVersion": 9}, 403, "action_forbidden"},
		{"the author approving their own is 403", "author", creativeActionURL(d.org, inReview), map[string]any{"action": "approve"}, 403, "action_forbidden"},
		{"a stale expectedVersion is 409 version_conflict", "reviewer", creativeActionURL(d.org, inReview), map[string]any{"action": "approve", "expectedVersion": 2}, 409, "version_conflict"},
		{"a stale version is answered before an invalid transition", "author", creativeActionURL(d.org, inReview), map[string]any{"action": "submit", "expectedVersion": 2}, 409, "version_conflict"},
		{"an action not allowed from the state is 409 invalid_transition", "author", creativeActionURL(d.org, inReview), map[string]any{"action": "submit", "expectedVersion": 1}, 409, "invalid_transition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := d.env.Client(t)
			if tt.who != "" {
				c = d.clients[tt.who]
			}
			r := c.Do(http.MethodPost, tt.path, tt.body)
			if r.Status != tt.status || problemCode(t, r) != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
		})
	}
	t.Run("the 404s cannot be told apart", func(t *testing.T) {
		foreignAnswer := d.clients["outsider"].Do(http.MethodPost, creativeActionURL(d.org, inReview), map[string]any{"action": "approve"}).Problem(t)
		randomAnswer := d.clients["reviewer"].Do(http.MethodPost, creativeActionURL(d.org, uuid.New()), map[string]any{"action": "approve"}).Problem(t)
		if foreignAnswer.Type != randomAnswer.Type || foreignAnswer.Title != randomAnswer.Title || foreignAnswer.Detail != randomAnswer.Detail {
			t.Fatalf("%+v\n%+v", foreignAnswer, randomAnswer)
		}
	})
	if status, version, events := d.state(t, inReview); status != "in_review" || version != 1 || events != 0 {
		t.Fatalf("refusals changed the creative: %s v%d, %d events", status, version, events)
	}
}

func TestCreativeActionRequestIsValidatedAsAWhole(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	type fe struct{ field, code string }
	tests := []struct {
		name    string
		body    string
		headers []testenv.Header
		status  int
		want    []fe
	}{
		{"a missing action is required", `{}`, nil, 422, []fe{{"action", "required"}}},
		{"an unknown action is invalid_value", `{"action":"publish"}`, nil, 422, []fe{{"action", "invalid_value"}}},
		{"request_changes needs a comment", `{"action":"request_changes"}`, nil, 422, []fe{{"comment", "required"}}},
		{"an unknown field is unknown_field", `{"action":"approve","note":"x"}`, nil, 422, []fe{{"note", "unknown_field"}}},
		{"the missing comment is reported with the schema's errors",
			`{"action":"request_changes","expectedVersion":0,"note":"x"}`, nil, 422,
			[]fe{{"comment", "required"}, {"expectedVersion", "out_of_range"}, {"note", "unknown_field"}}},
		{"a comment of the wrong type is the schema's invalid_type only", `{"action":"request_changes","comment":7}`, nil, 422, []fe{{"comment", "invalid_type"}}},
		{"malformed JSON is 400", `{"action":`, nil, 400, nil},
		{"a form body is 415", `action=approve`, []testenv.Header{{Name: "Content-Type", Value: "application/x-www-form-urlencoded"}}, 415, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := d.act("reviewer", id, tt.body, tt.headers...)
			if r.Status != tt.status {
				t.Fatalf("got %d %s, want %d", r.Status, r.Body, tt.status)
			}
			var got []fe
			for _, f := range r.Problem(t).FieldErrors {
				got = append(got, fe{f.Field, f.Code})
			}
			slices.SortFunc(got, func(a, b fe) int { return strings.Compare(a.field, b.field) })
			if !slices.Equal(got, tt.want) {
				t.Fatalf("field errors %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("with the comment, request_changes runs", func(t *testing.T) {
		r := d.act("reviewer", id, map[string]any{"action": "request_changes", "comment": "Crop the logo."})
		if r.Status != http.StatusOK {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		if e := d.lastEvent(t, id); e.comment == nil || *e.comment != "Crop the logo." {
			t.Fatalf("event %+v", e)
		}
	})
}

func TestApproveSetsTheApprovedVersionToTheCurrentVersion(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 2, assets: 2})
	before := d.get(t, "reviewer", id)
	if !before.ApprovedVersion.IsNull() {
		t.Fatalf("approvedVersion before approval: %v", before.ApprovedVersion)
	}
	r := d.act("reviewer", id, map[string]any{"action": "approve", "expectedVersion": before.Version})
	if r.Status != http.StatusOK {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
	var after api.CreativeDetail
	r.JSON(t, &after)
	current, err := after.CurrentVersion.Get()
	if err != nil {
		t.Fatal(err)
	}
	approvedVersion, err := after.ApprovedVersion.Get()
	if err != nil {
		t.Fatalf("approvedVersion is null after approval: %s", r.Body)
	}
	if approvedVersion.Id != current.Id || approvedVersion.Number != 2 || len(approvedVersion.Assets) != 2 {
		t.Fatalf("approved %+v, current %+v", approvedVersion, current)
	}
	if !after.UpdatedAt.After(before.UpdatedAt) {
		t.Fatalf("updatedAt %s not after %s", after.UpdatedAt, before.UpdatedAt)
	}
}

func TestCreativeDetailHasEveryFieldAndNullsWhatIsUnset(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	bare := d.creative(t, creativeSpec{})
	r := d.clients["author"].Do(http.MethodGet, creativeURL(d.org, bare), nil)
	for _, field := range []string{"directionId", "reviewer", "client", "task", "currentVersion", "approvedVersion"} {
		if !bytes.Contains(r.Body, []byte(`"`+field+`":null`)) {
			t.Errorf("%s is not null in %s", field, r.Body)
		}
	}
	var c api.CreativeDetail
	r.JSON(t, &c)
	if !strings.HasPrefix(c.Number, "CR-0000") || len(c.Number) != len("CR-000001") {
		t.Errorf("number %q", c.Number)
	}
	if !slices.Equal(c.AvailableActions, []api.CreativeAction{api.CreativeActionArchive}) {
		t.Errorf("the author of a draft without a version may only archive it: %v", c.AvailableActions)
	}

	full := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1, assets: 3, reviewer: "reviewer", client: "Acme Shoes"})
	c = d.get(t, "viewer", full)
	reviewer, err := c.Reviewer.Get()
	if err != nil || reviewer.Id != d.users["reviewer"] || reviewer.Name != "reviewer" {
		t.Errorf("reviewer %+v", c.Reviewer)
	}
	if client, err := c.Client.Get(); err != nil || client.Name != "Acme Shoes" {
		t.Errorf("client %+v", c.Client)
	}
	v, err := c.CurrentVersion.Get()
	if err != nil || v.Author.Id != d.users["author"] || len(v.Assets) != 3 {
		t.Fatalf("currentVersion %+v", c.CurrentVersion)
	}
	for i, a := range v.Assets {
		if a.FileName != fmt.Sprintf("v1-%d.png", i+1) || !a.DurationMs.IsNull() {
			t.Errorf("asset %d: %+v (want position order, durationMs null)", i, a)
		}
	}
	if len(c.AvailableActions) != 0 || !bytes.Contains(d.clients["viewer"].Do(http.MethodGet, creativeURL(d.org, full), nil).Body, []byte(`"availableActions":[]`)) {
		t.Errorf("a viewer has no actions: %v", c.AvailableActions)
	}
}

func TestListGetAndActionAnswerTheSameAvailableActions(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{status: review.StatusDraft, versions: 1, assets: 1})
	for _, who := range []string{"admin", "author", "reviewer", "viewer"} {
		t.Run(who, func(t *testing.T) {
			var list api.CreativeList
			r := d.clients[who].Do(http.MethodGet, creativesURL(d.org), nil)
			r.JSON(t, &list)
			i := slices.IndexFunc(list.Items, func(c api.CreativeDetail) bool { return c.Id == id })
			if i < 0 {
				t.Fatalf("creative not listed: %s", r.Body)
			}
			fromList, fromGet := list.Items[i].AvailableActions, d.get(t, who, id).AvailableActions
			if !slices.Equal(fromList, fromGet) {
				t.Fatalf("list %v, get %v", fromList, fromGet)
			}
		})
	}
	// The action's answer is the creative after the action, as its caller sees it.
	r := d.act("author", id, map[string]any{"action": "submit"})
	var after api.CreativeDetail
	r.JSON(t, &after)
	if got := d.get(t, "author", id).AvailableActions; !slices.Equal(after.AvailableActions, got) {
		t.Fatalf("action %v, get %v", after.AvailableActions, got)
	}
	if !slices.Equal(after.AvailableActions, []api.CreativeAction{}) {
		t.Fatalf("the author of a submitted creative has no actions: %v", after.AvailableActions)
	}
}

func TestListCreativesFiltersByReviewStatus(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	want := map[review.Status][]uuid.UUID{}
	for i, s := range []review.Status{review.StatusDraft, review.StatusInReview, review.StatusApproved, review.StatusInReview, review.StatusArchived, review.StatusInReview} {
		want[s] = append(want[s], d.creative(t, creativeSpec{status: s, versions: i % 2}))
	}
	for _, s := range review.Statuses {
		t.Run(string(s), func(t *testing.T) {
			var list api.CreativeList
			d.clients["viewer"].Do(http.MethodGet, creativesURL(d.org)+"?reviewStatus="+string(s), nil).JSON(t, &list)
			var got []uuid.UUID
			for _, c := range list.Items {
				if c.ReviewStatus != api.ReviewStatus(s) {
					t.Errorf("%s listed under %s", c.ReviewStatus, s)
				}
				got = append(got, c.Id)
			}
			slices.Reverse(got) // newest first
			if !slices.Equal(got, want[s]) {
				t.Fatalf("got %v, want %v", got, want[s])
			}
		})
	}
}

func TestListCreativesPagesThroughEveryCreativeOnce(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	const total = 23
	for i := range total {
		d.creative(t, creativeSpec{status: review.Statuses[i%len(review.Statuses)], versions: i % 3, assets: 1})
	}
	for _, tt := range []struct {
		query string
		want  int
	}{{"?limit=5", total}, {"?limit=5&reviewStatus=draft", 5}, {"", total}, {"?limit=100", total}} {
		t.Run(tt.query, func(t *testing.T) {
			seen := map[uuid.UUID]bool{}
			last := ""
			page := func(cursor string) string {
				q := strings.TrimPrefix(tt.query, "?")
				if cursor != "" {
					q = strings.TrimPrefix(q+"&cursor="+cursor, "&")
				}
				return creativesURL(d.org) + "?" + q
			}
			url := page("")
			for pages := 0; ; pages++ {
				if pages > total {
					t.Fatal("the pages never end")
				}
				var list api.CreativeList
				r := d.clients["reviewer"].Do(http.MethodGet, url, nil)
				r.JSON(t, &list)
				for _, c := range list.Items {
					if seen[c.Id] {
						t.Fatalf("%s listed twice", c.Number)
					}
					if last != "" && c.Number >= last {
						t.Fatalf("%s after %s: not newest first", c.Number, last)
					}
					seen[c.Id], last = true, c.Number
				}
				next, err := list.NextCursor.Get()
				if err != nil {
					break
				}
				if !strings.Contains(tt.query, "limit") && len(list.Items) != 20 {
					t.Fatalf("default page size %d, want 20", len(list.Items))
				}
				url = page(next)
			}
			if len(seen) != tt.want {
				t.Fatalf("saw %d creatives, want %d", len(seen), tt.want)
			}
		})
	}
	t.Run("an organization without creatives lists none", func(t *testing.T) {
		empty := d.env.DB.Org(t, "Empty")
		d.env.DB.Member(t, empty, d.users["viewer"], "viewer")
		r := d.clients["viewer"].Do(http.MethodGet, creativesURL(empty), nil)
		if r.Status != http.StatusOK || string(r.Body) != `{"items":[],"nextCursor":null}`+"\n" {
			t.Fatalf("got %d %q", r.Status, r.Body)
		}
	})
}

func TestCreativeReadsAnswerEveryDeclaredStatus(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1})
	type fe struct{ field, code string }
	tests := []struct {
		name   string
		who    string
		path   string
		status int
		code   string
		field  *fe
	}{
		{"list: signed in member is 200", "viewer", creativesURL(d.org), 200, "", nil},
		{"list: not signed in is 401", "", creativesURL(d.org), 401, "unauthenticated", nil},
		{"list: a member of another workspace gets 404", "outsider", creativesURL(d.org), 404, "not_found", nil},
		{"list: a random organization is 404", "viewer", creativesURL(uuid.New()), 404, "not_found", nil},
		{"list: an undecodable cursor is 422", "viewer", creativesURL(d.org) + "?cursor=not*a*cursor", 422, "invalid_request", &fe{"cursor", "invalid_format"}},
		{"list: a cursor that decodes to no number is 422", "viewer", creativesURL(d.org) + "?cursor=YWJj", 422, "invalid_request", &fe{"cursor", "invalid_format"}},
		{"list: a limit above 100 is 422", "viewer", creativesURL(d.org) + "?limit=101", 422, "invalid_request", &fe{"limit", "out_of_range"}},
		{"list: a limit of 0 is 422", "viewer", creativesURL(d.org) + "?limit=0", 422, "invalid_request", &fe{"limit", "out_of_range"}},
		{"list: an unknown reviewStatus is 422", "viewer", creativesURL(d.org) + "?reviewStatus=published", 422, "invalid_request", &fe{"reviewStatus", "invalid_value"}},
		{"list: a bad organization id is 422", "viewer", "/api/v1/organizations/nope/creatives", 422, "invalid_request", &fe{"organizationId", "invalid_format"}},
		{"get: a member is 200", "viewer", creativeURL(d.org, id), 200, "", nil},
		{"get: not signed in is 401", "", creativeURL(d.org, id), 401, "unauthenticated", nil},
		{"get: a member of another workspace gets 404", "outsider", creativeURL(d.org, id), 404, "not_found", nil},
		{"get: a random creative is 404", "viewer", creativeURL(d.org, uuid.New()), 404, "not_found", nil},
		{"get: a random organization is 404", "viewer", creativeURL(uuid.New(), id), 404, "not_found", nil},
		{"get: a bad creative id is 422", "viewer", creativeURL(d.org, id)[:len(creativeURL(d.org, id))-1] + "x", 422, "invalid_request", &fe{"creativeId", "invalid_format"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := d.env.Client(t)
			if tt.who != "" {
				c = d.clients[tt.who]
			}
			r := c.Do(http.MethodGet, tt.path, nil)
			if r.Status != tt.status || problemCode(t, r) != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
			if tt.field != nil {
				p := r.Problem(t)
				if len(p.FieldErrors) != 1 || p.FieldErrors[0].Field != tt.field.field || p.FieldErrors[0].Code != tt.field.code {
					t.Fatalf("field errors %+v, want %v", p.FieldErrors, *tt.field)
				}
			}
		})
	}
}

func TestConcurrentActionsFromOneVersionSucceedOnce(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	const n = 20
	statuses := make([]int, n)
	codes := make([]string, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := d.act("reviewer", id, map[string]any{"action": "approve", "expectedVersion": 1})
			statuses[i] = r.Status
			if r.Status != http.StatusOK {
				var p testenv.Problem
				_ = json.Unmarshal(r.Body, &p)
				codes[i] = p.Code
			}
		}()
	}
	close(start)
	wg.Wait()
	ok := 0
	for i, s := range statuses {
		switch {
		case s == http.StatusOK:
			ok++
		case s != http.StatusConflict || codes[i] != "version_conflict":
			t.Errorf("request %d: %d %s", i, s, codes[i])
		}
	}
	if status, version, events := d.state(t, id); ok != 1 || status != "approved" || version != 2 || events != 1 {
		t.Fatalf("%d succeeded; stored %s v%d with %d events", ok, status, version, events)
	}
}

func TestCreativeActionReplaysUnderTheSameIdempotencyKey(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	k := testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()}
	body := map[string]any{"action": "request_changes", "comment": "Crop the logo.", "expectedVersion": 1}
	first := d.act("reviewer", id, body, k)
	again := d.act("reviewer", id, `{ "expectedVersion": 1, "comment": "Crop the logo.", "action": "request_changes" }`, k)
	if first.Status != http.StatusOK || first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	if again.Status != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.Body, first.Body) {
		t.Fatalf("replay: %d %v\n%s\nfirst: %s", again.Status, again.Header, again.Body, first.Body)
	}
	if _, version, events := d.state(t, id); version != 2 || events != 1 {
		t.Fatalf("v%d with %d events after a replay", version, events)
	}
	// Without the key, the same request runs again and is refused by the state machine.
	if r := d.act("reviewer", id, body); r.Status != http.StatusConflict || problemCode(t, r) != "version_conflict" {
		t.Fatalf("without the key: %d %s", r.Status, r.Body)
	}
}

func TestCreativeEndpointsTakeAFixedNumberOfRoundTrips(t *testing.T) {
	t.Parallel()
	tracer := &testenv.RoundTrips{}
	d := newReviewDesk(t, testenv.Options{Tracer: tracer})
	// Two organizations of different sizes: 3 small creatives against 30
	// creatives with two versions of 5 assets each.
	small := d.org
	for range 2 {
		d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1, assets: 1})
	}
	large := d.env.DB.Org(t, "Large")
	d.env.DB.Member(t, large, d.users["reviewer"], "reviewer")
	d.env.DB.Member(t, large, d.users["author"], "author")
	big := &reviewDesk{env: d.env, org: large, users: d.users, clients: d.clients}
	var smallOne, bigOne uuid.UUID
	for range 30 {
		bigOne = big.creative(t, creativeSpec{status: review.StatusInReview, versions: 2, assets: 5, approved: true, client: "Acme Shoes"})
	}
	smallOne = d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1, assets: 1})
	c := d.clients["reviewer"]
	measure := func(name string, method, path string, body any, headers ...testenv.Header) int {
		var r *testenv.Response
		sql := tracer.Record(func() { r = c.Do(method, path, body, headers...) })
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", name, r.Status, r.Body)
		}
		if method == http.MethodGet && strings.HasSuffix(strings.Split(path, "?")[0], "/creatives") {
			var list api.CreativeList
			r.JSON(t, &list)
			name += fmt.Sprintf(", %d creatives", len(list.Items))
		}
		t.Logf("%s: %d round trips: %s", name, len(sql), strings.Join(sql, ", "))
		return len(sql)
	}
	tests := []struct {
		name        string
		method      string
		small, big  string
		body        any
		headers     []testenv.Header
		want        int
		description string
	}{
		{"list", http.MethodGet, creativesURL(small) + "?limit=100", creativesURL(large) + "?limit=100", nil, nil, 4,
			"session, role, page, versions with assets"},
		{"get", http.MethodGet, creativeURL(small, smallOne), creativeURL(large, bigOne), nil, nil, 4,
			"session, role, creative, versions with assets"},
		{"action", http.MethodPost, creativeActionURL(small, smallOne), creativeActionURL(large, bigOne),
			map[string]any{"action": "request_changes", "comment": "Again."}, nil, 4,
			"session, begin+lock with role and names, transition and history event+versions with assets, outbox event+commit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, b := measure(tt.name+" (small)", tt.method, tt.small, tt.body), measure(tt.name+" (large)", tt.method, tt.big, tt.body)
			if s != b || s != tt.want {
				t.Fatalf("%d and %d round trips, want %d (%s)", s, b, tt.want, tt.description)
			}
		})
	}
	// A review plan costs its reader one statement more, whatever it holds.
	t.Run("get with a review plan", func(t *testing.T) {
		withPlan := d.creative(t, creativeSpec{versions: 1, assets: 1})
		if r := d.putPlan("admin", withPlan, d.twoStages()); r.Status != http.StatusOK {
			t.Fatalf("put plan: %d %s", r.Status, r.Body)
		}
		// session, role, creative, versions with assets, review plans
		if n := measure("get with a plan", http.MethodGet, creativeURL(small, withPlan), nil); n != 5 {
			t.Fatalf("%d round trips, want 5: one more than without a plan", n)
		}
		// A page holding creatives with plans reads them all in that one statement.
		if n := measure("list with a plan", http.MethodGet, creativesURL(small)+"?limit=100", nil); n != 5 {
			t.Fatalf("%d round trips, want 5", n)
		}
		// A decision reads the plan after the lock, and the answer shows it.
		if r := c.Do(http.MethodPost, creativeActionURL(small, withPlan), map[string]any{"action": "submit"}); r.Status != http.StatusForbidden {
			t.Fatalf("submit as the reviewer: %d", r.Status)
		}
		if r := d.act("author", withPlan, map[string]any{"action": "submit"}); r.Status != http.StatusOK {
			t.Fatalf("submit: %d %s", r.Status, r.Body)
		}
		if n := measure("decision with a plan", http.MethodPost, creativeActionURL(small, withPlan), map[string]any{"action": "approve"}); n != 6 {
			t.Fatalf("%d round trips, want 6: session, begin+lock, plan, decision+versions, plan, outbox+commit", n)
		}
	})
	t.Run("action with Idempotency-Key", func(t *testing.T) {
		id := big.creative(t, creativeSpec{status: review.StatusInReview, versions: 2, assets: 5})
		// session with the stored answer, begin+claim+lock, transition+versions, store answer+commit
		n := measure("keyed action", http.MethodPost, creativeActionURL(large, id), map[string]any{"action": "approve"},
			testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()})
		if n != 4 {
			t.Fatalf("%d round trips, want 4", n)
		}
	})
}
