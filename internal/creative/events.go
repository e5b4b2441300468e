package creative

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/apifield"
	"creativeapi/internal/cursor"
	"creativeapi/internal/userref"
)

// Change is one field an edit changed, with its value before and after
// (nil: unset), as the history stores and shows it.
type Change struct {
	Field string  `json:"field"`
	From  *string `json:"from"`
	To    *string `json:"to"`
}

// EventPage is one page of a history, newest first.
type EventPage struct {
	Items []api.CreativeEvent
	// Next is the Seq the next page continues below; 0 on the last page.
	Next int64
}

// Events reads one page of a creative's history below the entry before
// (math.MaxInt64 for the first page). Any member of the organization may
// read it.
func Events(ctx context.Context, q *db.Queries, org, id, user uuid.UUID, before int64, limit int) (EventPage, error) {
	if _, err := q.CreativeMemberRole(ctx, db.CreativeMemberRoleParams{CallerID: user, ID: id, OrganizationID: org}); err != nil {
		return EventPage{}, notVisible(err, ErrCreativeNotVisible)
	}
	rows, err := q.CreativeEventPage(ctx, db.CreativeEventPageParams{CreativeID: id, BeforeID: before, RowLimit: cursor.Over(limit)})
	if err != nil {
		return EventPage{}, err
	}
	var p EventPage
	rows, more := cursor.Trim(rows, limit)
	if more {
		p.Next = rows[len(rows)-1].ID
	}
	p.Items = make([]api.CreativeEvent, len(rows))
	for i, r := range rows {
		e := api.CreativeEvent{
			Id: r.PublicID, Type: api.CreativeEventType(r.Type), Actor: actorRef(r.ActorID, r.ActorName, r.ActorIsGuest, r.ActorVerified),
			FromStatus: apifield.Nullable(r.FromStatus), ToStatus: api.ReviewStatus(r.ToStatus), Version: int(r.Version),
			Comment: apifield.Nullable(r.Comment), Changes: nullable.NewNullNullable[[]api.CreativeChange](), CreatedAt: r.CreatedAt.UTC(),
			AcknowledgedOpenThreadIds: nullable.NewNullNullable[[]uuid.UUID](),
			Stage:                     apifield.Nullable(r.Stage), Override: r.Override,
		}
		if r.AcknowledgedThreads != nil {
			e.AcknowledgedOpenThreadIds.Set(r.AcknowledgedThreads)
		}
		if r.Changes != nil {
			var changes []api.CreativeChange
			if err := json.Unmarshal(r.Changes, &changes); err != nil {
				return EventPage{}, fmt.Errorf("event %d: changes: %w", r.ID, err)
			}
			e.Changes.Set(changes)
		}
		p.Items[i] = e
	}
	return p, nil
}

// actorRef is who made a history event: a member, or a guest (kind
// guest) with the verification of the session that acted.
func actorRef(id uuid.UUID, name string, guest bool, verified *bool) api.UserRef {
	if guest {
		return person{Guest: &id, Verified: verifiedOrFalse(verified)}.ref(name)
	}
	return userref.Member(id, name)
}

// verifiedOrFalse is a guest's recorded verification; a row from before
// it was recorded is unverified.
func verifiedOrFalse(v *bool) *bool {
	if v == nil {
		f := false
		return &f
	}
	return v
}
