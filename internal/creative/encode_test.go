package creative

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
)

// TestDetailJSON holds AppendJSON to what encoding/json writes for the same
// fields by reflection, whatever is set, null or awkward in them.
func TestDetailJSON(t *testing.T) {
	t.Parallel()
	n := int32(1080)
	dir := uuid.MustParse("0193F6A0-0000-7000-8000-00000000ABCD")
	author := api.UserRef{Id: uuid.New(), Name: "Ada", Kind: api.UserRefKindUser}
	version := &VersionDetail{Id: uuid.New(), Number: 2, CreatedAt: time.Date(2026, 11, 23, 1, 2, 3, 0, time.UTC), Author: author,
		Assets: []AssetDetail{
			{Id: uuid.New(), FileName: "a.mp4", MimeType: "video/mp4", SizeBytes: 1 << 40, Url: "https://cdn.test/a.mp4?x=1&y=<2>", Sha256: "ab", Width: &n, Height: &n, DurationMs: &n},
			{Id: uuid.New(), FileName: "b.png", MimeType: "image/png", SizeBytes: 0, Url: "https://cdn.test/b.png", Sha256: "cd"},
		}}
	full := Detail{
		ApprovedVersion: version, AspectRatio: "9:16", Author: author, AvailableActions: []api.CreativeAction{"approve", "request_changes"},
		Client: &api.NamedRef{Id: uuid.New(), Name: "Client <&>"}, CurrentVersion: version, DirectionId: &dir, Geo: "DE", Id: uuid.New(),
		Language: "de-DE", Number: "CR-000001", Permissions: api.CreativePermissions{AddVersion: true, Edit: true},
		ReviewStatus: "in_review", Reviewer: &author, Task: &api.NamedRef{Id: uuid.New(), Name: "Task \u2028 \"q\" \\ \x01 é \xff"},
		Title: "Sommer — 50 %", Type: "video", UpdatedAt: time.Date(2026, 11, 23, 1, 2, 3, 123456789, time.UTC), Version: 7,
		OpenCommentCount: 12345,
		OpenThreadCount:  678,
		ReviewPlan:       samplePlan(author),
	}
	nulled := full
	nulled.ApprovedVersion, nulled.Client, nulled.CurrentVersion, nulled.DirectionId, nulled.Reviewer, nulled.Task = nil, nil, nil, nil, nil, nil
	nulled.AvailableActions = nil
	nulled.ReviewPlan = nil
	empty := full
	empty.AvailableActions = []api.CreativeAction{}
	empty.CurrentVersion = &VersionDetail{Id: uuid.New(), Author: author, CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 100, time.FixedZone("", 3600))}
	empty.ApprovedVersion = &VersionDetail{Id: uuid.New(), Author: author, Assets: []AssetDetail{}}
	empty.ReviewPlan = &ReviewPlanDetail{Stages: []ReviewStageDetail{{Name: "Legal", Rule: "any", Status: "pending"},
		{Name: "Brand", Rule: "all", Status: "pending", Decisions: []ReviewDecisionDetail{}, GuestEmails: []string{}, Reviewers: []api.UserRef{}}}}
	for _, tc := range []struct {
		name string
		d    Detail
	}{
		{"every field set, strings that need escapes", full},
		{"every nullable field null", nulled},
		{"empty lists, versions without assets, times in other zones", empty},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want, err := json.Marshal(tc.d)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.d.AppendJSON(nil); string(got) != string(want) {
				t.Fatalf("AppendJSON wrote\n%s\nencoding/json writes\n%s", got, want)
			}
		})
	}
}

// samplePlan is a review plan with every field set: an active second
// stage with a due date in another zone, decisions with and without a
// comment, strings that need escapes.
func samplePlan(author api.UserRef) *ReviewPlanDetail {
	active := 1
	due := time.Date(2026, 11, 25, 9, 0, 0, 500, time.FixedZone("", -7200))
	comment := "Logo <too> \"small\""
	at := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	return &ReviewPlanDetail{ActiveStage: &active, Stages: []ReviewStageDetail{
		{Name: "Brand & co", Rule: "all", Status: "approved", Reviewers: []api.UserRef{author}, GuestEmails: []string{},
			Decisions: []ReviewDecisionDetail{{At: at, Decision: "approve", Reviewer: author, VersionNumber: 2}}},
		{Name: "Legal", Rule: "majority", Status: "active", DueAt: &due, Reviewers: []api.UserRef{author, {Id: uuid.New(), Name: "Bo", Kind: api.UserRefKindUser}},
			GuestEmails: []string{"lawyer@client.test"},
			Decisions: []ReviewDecisionDetail{{At: at, Comment: &comment, Decision: "request_changes", Reviewer: author, VersionNumber: 2},
				{At: at, Decision: "approve", Reviewer: api.UserRef{Id: uuid.New(), Name: "Lawyer", Kind: api.UserRefKindGuest}, VersionNumber: 2}}},
	}}
}
