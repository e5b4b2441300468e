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
	author := api.UserRef{Id: uuid.New(), Name: "Ada"}
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
	}
	nulled := full
	nulled.ApprovedVersion, nulled.Client, nulled.CurrentVersion, nulled.DirectionId, nulled.Reviewer, nulled.Task = nil, nil, nil, nil, nil, nil
	nulled.AvailableActions = nil
	empty := full
	empty.AvailableActions = []api.CreativeAction{}
	empty.CurrentVersion = &VersionDetail{Id: uuid.New(), Author: author, CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 100, time.FixedZone("", 3600))}
	empty.ApprovedVersion = &VersionDetail{Id: uuid.New(), Author: author, Assets: []AssetDetail{}}
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
