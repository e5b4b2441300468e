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

// deliveryBody is a delivery of the event numbered seq, with the log of
// its attempts, first to last.
func deliveryBody(d db.WebhookDelivery, seq int64, log []db.WebhookDeliveryAttempt) api.WebhookDelivery {
	out := api.WebhookDelivery{
		Id: d.ID, MessageId: d.ID, EventId: seq, EventType: d.EventType, Status: api.WebhookDeliveryStatus(d.Status),
		NextAttemptAt: nullableTime(d.NextAttemptAt), CreatedAt: d.CreatedAt.UTC(), FinishedAt: nullableTime(d.FinishedAt),
		Attempts: make([]api.WebhookDeliveryAttempt, len(log)),
	}
	if d.MessageID != nil {
		out.MessageId = *d.MessageID
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

// PlatformEndpoint is a platform endpoint in its own schema: the
// organization endpoint's fields, whose event types are deposit types.
func PlatformEndpoint(ep api.WebhookEndpoint) api.PlatformWebhookEndpoint {
	types := make([]api.PlatformWebhookEventType, len(ep.EventTypes))
	for i, t := range ep.EventTypes {
		types[i] = string(t)
	}
	return api.PlatformWebhookEndpoint{
		Id: ep.Id, Url: ep.Url, EventTypes: types, Enabled: ep.Enabled, DisabledReason: ep.DisabledReason,
		CreatedAt: ep.CreatedAt, UpdatedAt: ep.UpdatedAt,
	}
}

// NewPlatformEndpoint is a platform endpoint just added, with its secret.
func NewPlatformEndpoint(ep api.NewWebhookEndpoint) api.NewPlatformWebhookEndpoint {
	b := PlatformEndpoint(api.WebhookEndpoint{Id: ep.Id, Url: ep.Url, EventTypes: ep.EventTypes, Enabled: ep.Enabled,
		DisabledReason: ep.DisabledReason, CreatedAt: ep.CreatedAt, UpdatedAt: ep.UpdatedAt})
	return api.NewPlatformWebhookEndpoint{Id: b.Id, Url: b.Url, EventTypes: b.EventTypes, Enabled: b.Enabled,
		DisabledReason: b.DisabledReason, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt, Secret: ep.Secret}
}
