package creative

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
)

// ErrNotApproved: the creative has no approved version, so no record.
var ErrNotApproved = errors.New("creative never approved")

// ApprovalRecord is the record of the creative's approved version as
// docs/review.md ("An approval anyone can verify") defines it, for a
// member of its organization: the version's assets with their SHA-256,
// the decisions of the round that approved it, and its threads as they
// stood at the approval.
func ApprovalRecord(ctx context.Context, q *db.Queries, org, creativeID, user uuid.UUID) (api.ApprovalRecord, error) {
	c, err := q.ApprovalCreativeGet(ctx, db.ApprovalCreativeGetParams{CallerID: user, ID: creativeID, OrganizationID: org})
	if err != nil {
		return api.ApprovalRecord{}, notVisible(err, ErrCreativeNotVisible)
	}
	if c.VersionID == nil {
		return api.ApprovalRecord{}, ErrNotApproved
	}
	assets, err := q.ApprovalAssets(ctx, *c.VersionID)
	if err != nil {
		return api.ApprovalRecord{}, err
	}
	decisions, err := q.ApprovalDecisions(ctx, creativeID)
	if err != nil {
		return api.ApprovalRecord{}, err
	}
	if len(decisions) == 0 {
		return api.ApprovalRecord{}, fmt.Errorf("creative %s: an approved version without an approve in its history", creativeID)
	}
	approvedAt := decisions[len(decisions)-1].CreatedAt.UTC().Truncate(time.Microsecond)
	threads, err := q.CreativeThreadCounts(ctx, db.CreativeThreadCountsParams{CreativeID: creativeID, AsOf: &approvedAt})
	if err != nil {
		return api.ApprovalRecord{}, err
	}
	r := api.ApprovalRecord{
		CreativeId: c.ID, OrganizationId: c.OrganizationID, Number: fmt.Sprintf("CR-%06d", c.Number), Title: c.Title,
		VersionNumber: int(*c.VersionNumber), Assets: make([]api.ApprovalAsset, len(assets)),
		Decisions: make([]api.ApprovalDecision, len(decisions)), ResolvedThreads: int(threads.Resolved),
		OpenThreads: int(threads.Open), ApprovedAt: approvedAt,
	}
	for i, a := range assets {
		r.Assets[i] = api.ApprovalAsset{Id: a.ID, FileName: a.FileName, MimeType: a.MimeType, SizeBytes: a.SizeBytes, Sha256: a.Sha256}
	}
	for i, d := range decisions {
		kind := api.ApprovalPersonKindUser
		if d.ActorIsGuest {
			kind = api.ApprovalPersonKindGuest
		}
		r.Decisions[i] = api.ApprovalDecision{
			Reviewer: api.ApprovalPerson{Id: d.ActorID, Name: d.ActorName, Kind: kind},
			Decision: api.ApprovalDecisionDecision(d.Type), At: d.CreatedAt.UTC().Truncate(time.Microsecond),
		}
	}
	return r, nil
}
