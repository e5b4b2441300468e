package creative

import (
	"context"

	"creativeapi/internal/events"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
)

// answerWithEvent is the creative a command answers, r as who sees it,
// after writing the command's outbox events of types ts, in that order, in
// the command's transaction (docs/events.md): each command that changes a
// creative ends here, once. The events wait for the transaction's next
// statement (the stored answer, or COMMIT), so they cost no round trip of
// their own.
func answerWithEvent(ctx context.Context, q store.Tx, r row, who review.Caller, ts ...events.Type) (Creative, error) {
	c, err := one(ctx, q.Queries, r, who)
	if err != nil {
		return Creative{}, err
	}
	// The events are the members' (streams, webhooks): a guest's answer
	// leaves out internal comments and names the guest paths, so a guest's
	// command reads the creative once more as members see it (guest
	// streams read it again as guests do, docs/shares.md).
	data := c
	if who.Role.IsGuest() {
		if data, err = one(ctx, q.Queries, r, review.Caller{Role: review.RoleViewer}); err != nil {
			return Creative{}, err
		}
	}
	evs := make([]events.Event, len(ts))
	for i, t := range ts {
		evs[i] = events.Event{Type: t, OrganizationID: c.OrganizationID, Timestamp: c.UpdatedAt, Data: eventData{Detail: data.Detail}}
	}
	if err := events.Write(ctx, q.Next(), evs...); err != nil {
		return Creative{}, err
	}
	return c, nil
}

// eventData is a creative's Detail without what depends on who asks
// (availableActions, permissions): the data of its events, the same for
// every receiver. The omitted fields shadow the embedded ones.
type eventData struct {
	Detail
	AvailableActions *struct{} `json:"availableActions,omitempty"`
	Permissions      *struct{} `json:"permissions,omitempty"`
}
