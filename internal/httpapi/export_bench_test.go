package httpapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"creativeapi/gen/api"
	"creativeapi/internal/config"
	"creativeapi/internal/creative"
	"creativeapi/internal/gate"
)

// BodyChecksFor are the body rules a server configured with cfg validates,
// for benchmarks of the gate's whole validation.
func BodyChecksFor(cfg config.Config) map[string]gate.BodyCheck {
	return (&Server{cfg: cfg}).bodyChecks()
}

// SampleCreative is a creative detail with every field set; nulled is the
// same with every nullable field null.
func SampleCreative() (full, nulled creative.Detail) {
	n := int32(7)
	id := uuid.New()
	name := api.UserRef{Id: uuid.New(), Name: "Ada"}
	v := &creative.VersionDetail{Id: uuid.New(), Number: 2, CreatedAt: time.Unix(1700000000, 0).UTC(), Author: name,
		Assets: []creative.AssetDetail{{Id: uuid.New(), FileName: "a.mp4", MimeType: "video/mp4", SizeBytes: 10, Url: "https://cdn.test/a.mp4",
			Sha256: "00", Width: &n, Height: &n, DurationMs: &n}}}
	full = creative.Detail{
		ApprovedVersion: v, AspectRatio: "1:1", Author: name, AvailableActions: []api.CreativeAction{"submit"},
		Client: &api.NamedRef{Id: uuid.New(), Name: "Client <&>"}, CurrentVersion: v, DirectionId: &id, Geo: "DE", Id: uuid.New(),
		Language: "de-DE", Number: "CR-000001", ReviewStatus: "draft", Reviewer: &name, Task: &api.NamedRef{Id: uuid.New(), Name: "Task \u2028"},
		Title: "T \"quoted\"", Type: "static", UpdatedAt: time.Unix(1700000000, 123456789).UTC(), Version: 3,
		OpenCommentCount: 4,
	}
	active := 1
	due := time.Unix(1700100000, 5000).UTC()
	comment := "Crop <the> logo"
	full.ReviewPlan = &creative.ReviewPlanDetail{ActiveStage: &active, Stages: []creative.ReviewStageDetail{
		{Name: "Brand", Rule: "all", Status: "approved", Reviewers: []api.UserRef{name}, GuestEmails: []string{},
			Decisions: []creative.ReviewDecisionDetail{{At: time.Unix(1700000000, 0).UTC(), Decision: "approve", Reviewer: name, VersionNumber: 2}}},
		{Name: "Legal \"EU\"", Rule: "majority", Status: "active", DueAt: &due, Reviewers: []api.UserRef{name}, GuestEmails: []string{"a@b.test"},
			Decisions: []creative.ReviewDecisionDetail{{At: time.Unix(1700000001, 0).UTC(), Comment: &comment, Decision: "request_changes", Reviewer: name, VersionNumber: 2}}},
	}}
	nulled = full
	nulled.ReviewPlan = nil
	nulled.ApprovedVersion, nulled.Client, nulled.CurrentVersion, nulled.DirectionId, nulled.Reviewer, nulled.Task = nil, nil, nil, nil, nil, nil
	return full, nulled
}

// WriteCreativeList writes a page of creatives as ListCreatives answers it.
func WriteCreativeList(w http.ResponseWriter, items []creative.Detail, next *string) error {
	page := make([]creative.Creative, len(items))
	for i := range items {
		page[i].Detail = items[i]
	}
	cursor := nullable.NewNullNullable[string]()
	if next != nil {
		cursor.Set(*next)
	}
	return creativePageOK(page, cursor).VisitListCreativesResponse(w)
}
