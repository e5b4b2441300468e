package creative

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/review"
	"creativeapi/internal/userref"
)

// Detail is the CreativeDetail schema as it is encoded, the one
// hand-written encoder of a generated schema type: the fields of
// api.CreativeDetail, with pointers (null when nil) where the generated
// type has nullable.Nullable, written by AppendJSON (encode.go). The
// generated type's nullable.Nullable fields are maps, each marshalled by a
// json.Marshal of its own whose output is then checked again: a page of 20
// creatives took 0.55–0.65 ms through it, 0.20 ms through json.Marshal of
// this struct and 0.09 ms through AppendJSON, with 673, 311 and 131
// allocations (BenchmarkCreativePageEncoding in internal/httpapi, its
// sample full of strings that need escapes). httpapi's
// TestCreativeEncodingIsTheGeneratedOneByteForByte proves the bytes are
// those the generated response writes. The ablation kept it
// (docs/performance.md, ablation row D): through the generated types a
// GET of one creative cost the server about 30 µs of CPU more. It lives
// here, not in httpapi, because the creative's events carry it too
// (eventData).
type Detail struct {
	ApprovedVersion  *VersionDetail          `json:"approvedVersion"`
	AspectRatio      string                  `json:"aspectRatio"`
	Author           api.UserRef             `json:"author"`
	AvailableActions []api.CreativeAction    `json:"availableActions"`
	Client           *api.NamedRef           `json:"client"`
	CurrentVersion   *VersionDetail          `json:"currentVersion"`
	DirectionId      *uuid.UUID              `json:"directionId"`
	Geo              string                  `json:"geo"`
	Id               uuid.UUID               `json:"id"`
	Language         string                  `json:"language"`
	Number           string                  `json:"number"`
	OpenCommentCount int                     `json:"openCommentCount"`
	OpenThreadCount  int                     `json:"openThreadCount"`
	Permissions      api.CreativePermissions `json:"permissions"`
	ReviewPlan       *ReviewPlanDetail       `json:"reviewPlan"`
	ReviewStatus     api.ReviewStatus        `json:"reviewStatus"`
	Reviewer         *api.UserRef            `json:"reviewer"`
	Task             *api.NamedRef           `json:"task"`
	Title            string                  `json:"title"`
	Type             api.CreativeType        `json:"type"`
	UpdatedAt        time.Time               `json:"updatedAt"`
	Version          int                     `json:"version"`
}

// VersionDetail is the CreativeVersion schema (see Detail).
type VersionDetail struct {
	Assets    []AssetDetail `json:"assets"`
	Author    api.UserRef   `json:"author"`
	CreatedAt time.Time     `json:"createdAt"`
	Id        uuid.UUID     `json:"id"`
	Number    int           `json:"number"`
	// openComments is the version's open top-level comments, which a
	// creative shows as openCommentCount when this is its current version;
	// openThreads its creative's, of every version (openThreadCount).
	openComments, openThreads int
}

// AssetDetail is the Asset schema (see Detail).
type AssetDetail struct {
	DurationMs *int32     `json:"durationMs"`
	FileName   string     `json:"fileName"`
	Height     *int32     `json:"height"`
	Id         uuid.UUID  `json:"id"`
	MimeType   string     `json:"mimeType"`
	Sha256     string     `json:"sha256"`
	SizeBytes  int64      `json:"sizeBytes"`
	UploadId   *uuid.UUID `json:"uploadId"`
	Url        string     `json:"url"`
	Width      *int32     `json:"width"`
}

// detail is the CreativeDetail of r with its versions, as who sees it.
func detail(r row, current, approved *VersionDetail, p *plan, who review.Caller) Detail {
	c, rc := r.c, withPlan(reviewCreative(r.c), p)
	if current != nil {
		rc.VersionAuthorID = current.Author.Id
	}
	available := review.Available(rc, who)
	actions := make([]api.CreativeAction, len(available))
	for j, a := range available {
		actions[j] = api.CreativeAction(a)
	}
	may := review.Allowed(rc, who)
	reviewer := ref(c.ReviewerID, r.reviewerName, userref.Member)
	var shown *ReviewPlanDetail
	if p != nil {
		// With a plan the reviewer is the active stage's first member.
		shown, reviewer = p.detail, nil
		if a := shown.ActiveStage; a != nil && len(shown.Stages[*a].Reviewers) > 0 {
			reviewer = &shown.Stages[*a].Reviewers[0]
		}
	}
	return Detail{
		Id:               c.ID,
		Number:           fmt.Sprintf("CR-%06d", c.Number),
		Title:            c.Title,
		Type:             api.CreativeType(c.Type),
		AspectRatio:      c.AspectRatio,
		Geo:              c.Geo,
		Language:         c.Language,
		DirectionId:      c.DirectionID,
		ReviewStatus:     api.ReviewStatus(c.ReviewStatus),
		Version:          int(c.Version),
		UpdatedAt:        c.UpdatedAt.UTC(),
		AvailableActions: actions,
		Permissions:      api.CreativePermissions{AddVersion: may.AddVersion, Edit: may.Edit, AssignReviewer: may.AssignReviewer},
		Author:           userref.Member(c.AuthorID, r.authorName),
		Reviewer:         reviewer,
		Client:           ref(c.ClientID, r.clientName, func(id uuid.UUID, n string) api.NamedRef { return api.NamedRef{Id: id, Name: n} }),
		Task:             ref(c.TaskID, r.taskName, func(id uuid.UUID, n string) api.NamedRef { return api.NamedRef{Id: id, Name: n} }),
		CurrentVersion:   current,
		ApprovedVersion:  approved,
		OpenCommentCount: openComments(current),
		OpenThreadCount:  openThreads(current),
		ReviewPlan:       shown,
	}
}

// ref is nil (null) when the reference is unset, so "always present, may be
// null" never becomes a zero-valued object.
func ref[T any](id *uuid.UUID, name *string, build func(uuid.UUID, string) T) *T {
	if id == nil || name == nil {
		return nil
	}
	v := build(*id, *name)
	return &v
}

// openThreads is a creative's openThreadCount: its open top-level
// comments of every version, read with its current version; 0 without a
// version, which no comment can be on.
func openThreads(current *VersionDetail) int {
	if current == nil {
		return 0
	}
	return current.openThreads
}

// openComments is a creative's openCommentCount: its current version's
// open top-level comments, 0 without a version.
func openComments(current *VersionDetail) int {
	if current == nil {
		return 0
	}
	return current.openComments
}
