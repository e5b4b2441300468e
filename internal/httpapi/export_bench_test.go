package httpapi

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

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

// SampleCreativeJSON encodes a creative detail with every field set, and one
// with every nullable field null, as the server encodes them.
func SampleCreativeJSON() (full, nulls []byte, err error) {
	n := int32(7)
	id := uuid.New()
	name := api.UserRef{Id: uuid.New(), Name: "Ada"}
	v := &creative.VersionDetail{Id: uuid.New(), Number: 2, CreatedAt: time.Unix(1700000000, 0).UTC(), Author: name,
		Assets: []creative.AssetDetail{{Id: uuid.New(), FileName: "a.mp4", MimeType: "video/mp4", SizeBytes: 10, Url: "https://cdn.test/a.mp4",
			Sha256: "00", Width: &n, Height: &n, DurationMs: &n}}}
	c := creative.Detail{
		ApprovedVersion: v, AspectRatio: "1:1", Author: name, AvailableActions: []api.CreativeAction{"submit"},
		Client: &api.NamedRef{Id: uuid.New(), Name: "Client"}, CurrentVersion: v, DirectionId: &id, Geo: "DE", Id: uuid.New(),
		Language: "de-DE", Number: "CR-000001", ReviewStatus: "draft", Reviewer: &name, Task: &api.NamedRef{Id: uuid.New(), Name: "Task"},
		Title: "T", Type: "static", UpdatedAt: time.Unix(1700000000, 0).UTC(), Version: 3,
	}
	if full, err = json.Marshal(creativeListJSON{Items: []creative.Detail{c}, NextCursor: &c.Number}); err != nil {
		return nil, nil, err
	}
	c.ApprovedVersion, c.Client, c.CurrentVersion, c.DirectionId, c.Reviewer, c.Task = nil, nil, nil, nil, nil, nil
	nulls, err = json.Marshal(creativeListJSON{Items: []creative.Detail{c}})
	return full, nulls, err
}
