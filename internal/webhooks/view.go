package webhooks

import (
	"time"

	"github.com/oapi-codegen/nullable"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/apifield"
)

// endpointBody is an endpoint as the API shows it: never its secret.
func endpointBody(ep db.WebhookEndpoint) api.WebhookEndpoint {
	types := make([]api.WebhookEventType, len(ep.EventTypes))
	for i, t := range ep.EventTypes {
		types[i] = api.WebhookEventType(t)
	}
	return api.WebhookEndpoint{
		Id: ep.ID, Url: ep.Url, EventTypes: types, Enabled: ep.Enabled, DisabledReason: apifield.Nullable(ep.DisabledReason),
		CreatedAt: ep.CreatedAt.UTC(), UpdatedAt: ep.UpdatedAt.UTC(),
	}
}

// deliveryBody is a delivery with the log of its attempts, first to last.
func deliveryBody(d db.WebhookDeliveryListRow, log []db.WebhookDeliveryAttempt) api.WebhookDelivery {
	out := api.WebhookDelivery{
		Id: d.ID, EventId: d.EventSeq, EventType: api.WebhookEventType(d.EventType), Status: api.WebhookDeliveryStatus(d.Status),
		NextAttemptAt: nullableTime(d.NextAttemptAt), CreatedAt: d.CreatedAt.UTC(), FinishedAt: nullableTime(d.FinishedAt),
		Attempts: make([]api.WebhookDeliveryAttempt, len(log)),
	}
	for i, a := range log {
		attempt := api.WebhookDeliveryAttempt{
			Attempt: int(a.Attempt), StartedAt: a.StartedAt.UTC(), DurationMs: int(a.DurationMs),
			ResponseStatus: nullable.NewNullNullable[int](), Error: apifield.Nullable(a.Error),
		}
		if a.ResponseStatus != nil {
			attempt.ResponseStatus.Set(int(*a.ResponseStatus))
		}
		out.Attempts[i] = attempt
	}
	return out
}

func nullableTime(t *time.Time) nullable.Nullable[time.Time] {
	if t == nil {
		return nullable.NewNullNullable[time.Time]()
	}
	return nullable.NewNullableWithValue(t.UTC())
}
