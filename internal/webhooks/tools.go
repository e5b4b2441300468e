package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/events"
	"creativeapi/internal/store"
)

// The webhook tools (docs/events.md, "Testing and redelivering"): a signed
// test event, and a past delivery sent again. Both make a new delivery
// and queue its job in one transaction, so it takes the path every
// delivery takes (deliveryWorker): signing, retries, the attempt log.

// ErrDeliveryNotVisible: no delivery with this id of this endpoint.
var ErrDeliveryNotVisible = errors.New("webhook delivery not visible")

// Tools queues the deliveries the tools make. It inserts jobs only (a
// River client without workers): the replicas' Service works them.
type Tools struct {
	st       *store.Store
	inserter *river.Client[pgx.Tx]
}

// NewTools makes the tools over st.
func NewTools(st *store.Store, log *slog.Logger) (*Tools, error) {
	inserter, err := river.NewClient(riverpgxv5.New(st.Pool), &river.Config{Schema: store.RiverSchema, Logger: log})
	if err != nil {
		return nil, err
	}
	return &Tools{st: st, inserter: inserter}, nil
}

// jobOpts are the options of a delivery job retried on schedule: the
// webhooks queue, and one attempt more than schedule has waits. Fanout
// gives the service's schedule; the tools, which run beside no service,
// DefaultSchedule, the servers' (only tests change it).
func jobOpts(schedule []time.Duration) *river.InsertOpts {
	return &river.InsertOpts{Queue: queue, MaxAttempts: len(schedule) + 1}
}

// testData is the data of a webhook.test event: the endpoint tried.
type testData struct {
	WebhookID uuid.UUID `json:"webhookId"`
}

// SendTest makes a new delivery of a webhook.test event to an endpoint of
// owner and queues it; the answer is the delivery, pending.
func (t *Tools) SendTest(ctx context.Context, owner Owner, who Caller, id uuid.UUID, now time.Time) (api.WebhookDelivery, error) {
	payload, err := json.Marshal(events.Payload{Type: events.WebhookTest, Timestamp: now.UTC(), Data: testData{WebhookID: id}})
	if err != nil {
		return api.WebhookDelivery{}, err
	}
	var out api.WebhookDelivery
	err = t.st.InPgxTx(ctx, func(tx pgx.Tx, q store.Tx) error {
		if err := owner.authorize(ctx, q.Queries, who); err != nil {
			return err
		}
		if _, err := q.WebhookEndpointGet(ctx, db.WebhookEndpointGetParams{ID: id, OwnerID: owner.id()}); err != nil {
			return endpointNotVisible(err)
		}
		// The event takes its seq as the publisher gives them, in commit
		// order (OutboxPublishLock, held to the commit).
		if err := q.OutboxPublishLock(ctx); err != nil {
			return err
		}
		ev, err := q.WebhookTestEventInsert(ctx, db.WebhookTestEventInsertParams{Type: string(events.WebhookTest), Payload: payload})
		if err != nil {
			return err
		}
		d, err := q.WebhookDeliveryInsert(ctx, db.WebhookDeliveryInsertParams{EndpointID: id, EventID: ev.ID, EventType: string(events.WebhookTest)})
		if err != nil {
			return err
		}
		if _, err := t.inserter.InsertTx(ctx, tx, deliveryArgs{DeliveryID: d.ID}, jobOpts(DefaultSchedule)); err != nil {
			return err
		}
		out = deliveryBody(d, ev.Seq, nil)
		return nil
	})
	return out, err
}

// Redeliver sends a delivery of an endpoint of owner again: a new
// delivery of the same event with the same message id, so the same
// webhook-id and payload, with a job and attempts of its own. The one it
// repeats is left as it is, finished or still pending: their attempt logs
// never share a key, and neither job waits for the other.
func (t *Tools) Redeliver(ctx context.Context, owner Owner, who Caller, endpoint, delivery uuid.UUID) (api.WebhookDelivery, error) {
	var out api.WebhookDelivery
	err := t.st.InPgxTx(ctx, func(tx pgx.Tx, q store.Tx) error {
		if err := owner.authorize(ctx, q.Queries, who); err != nil {
			return err
		}
		if _, err := q.WebhookEndpointGet(ctx, db.WebhookEndpointGetParams{ID: endpoint, OwnerID: owner.id()}); err != nil {
			return endpointNotVisible(err)
		}
		past, err := q.WebhookDeliveryGet(ctx, db.WebhookDeliveryGetParams{ID: delivery, EndpointID: endpoint})
		if errors.Is(err, store.ErrNotFound) {
			return ErrDeliveryNotVisible
		} else if err != nil {
			return err
		}
		message := past.ID
		if past.MessageID != nil {
			message = *past.MessageID
		}
		d, err := q.WebhookDeliveryInsert(ctx, db.WebhookDeliveryInsertParams{
			EndpointID: endpoint, EventID: past.EventID, EventType: past.EventType, MessageID: &message,
		})
		if err != nil {
			return err
		}
		if _, err := t.inserter.InsertTx(ctx, tx, deliveryArgs{DeliveryID: d.ID}, jobOpts(DefaultSchedule)); err != nil {
			return err
		}
		seq, err := q.OutboxEventSeq(ctx, d.EventID)
		if err != nil {
			return err
		}
		out = deliveryBody(d, seq, nil)
		return nil
	})
	return out, err
}
