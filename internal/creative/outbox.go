package creative

import (
	"context"

	"creativeapi/internal/events"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
)

// answerWithEvent is the creative a command answers, r as who sees it,
// after writing the command's outbox event of type t in the command's
// transaction (docs/events.md): each command that changes a creative ends
// here, once. The event waits for the transaction's next statement (the
// stored answer, or COMMIT), so it costs no round trip of its own.
func answerWithEvent(ctx context.Context, q store.Tx, r row, who review.Caller, t events.Type) (Creative, error) {
	c, err := one(ctx, q.Queries, r, who)
	if err != nil {
		return Creative{}, err
	}
	if err := events.Write(ctx, q.Next(), events.Event{
		Type: t, OrganizationID: c.OrganizationID, Timestamp: c.UpdatedAt, Data: eventData{Detail: c.Detail},
	}); err != nil {
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
