package creative

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
)

// Event is one entry of a creative's history.
type Event struct {
	ID         uuid.UUID
	Type       string
	ActorID    uuid.UUID
	ActorName  string
	FromStatus *string
	ToStatus   string
	Version    int32
	Comment    *string
	// Changes are the fields an updated event changed; nil for other types.
	Changes   []Change
	CreatedAt time.Time
}

// Change is one field an edit changed, with its value before and after
// (nil: unset), as the history stores and shows it.
type Change struct {
	Field string  `json:"field"`
	From  *string `json:"from"`
	To    *string `json:"to"`
}

// EventPage is one page of a history, newest first.
type EventPage struct {
	Items []Event
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
	rows, err := q.CreativeEventPage(ctx, db.CreativeEventPageParams{CreativeID: id, BeforeID: before, RowLimit: int32(limit + 1)})
	if err != nil {
		return EventPage{}, err
	}
	var p EventPage
	if len(rows) > limit {
		rows = rows[:limit]
		p.Next = rows[limit-1].ID
	}
	p.Items = make([]Event, len(rows))
	for i, r := range rows {
		e := Event{
			ID: r.PublicID, Type: r.Type, ActorID: r.ActorID, ActorName: r.ActorName, FromStatus: r.FromStatus,
			ToStatus: r.ToStatus, Version: r.Version, Comment: r.Comment, CreatedAt: r.CreatedAt,
		}
		if r.Changes != nil {
			if err := json.Unmarshal(r.Changes, &e.Changes); err != nil {
				return EventPage{}, fmt.Errorf("event %d: changes: %w", r.ID, err)
			}
		}
		p.Items[i] = e
	}
	return p, nil
}
