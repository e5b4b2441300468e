-- Webhook endpoints as admins manage them (docs/events.md, "The admin
-- API"); the deliveries' own queries are in events.sql.

-- name: WebhookEndpointPage :many
-- WebhookEndpointPage pages an owner's endpoints newest first (owner_id:
-- the organization, or the nil UUID for the platform).
SELECT * FROM webhook_endpoints
WHERE owner_id = @owner_id
  AND (created_at, id) < (coalesce(sqlc.narg('cursor_created_at')::timestamptz, 'infinity'),
                          coalesce(sqlc.narg('cursor_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
ORDER BY created_at DESC, id DESC
LIMIT @row_limit;

-- name: WebhookEndpointLock :one
-- WebhookEndpointLock reads an endpoint of the owner for a change.
SELECT * FROM webhook_endpoints WHERE id = @id AND owner_id = @owner_id FOR UPDATE;

-- name: WebhookEndpointUpdate :one
-- WebhookEndpointUpdate writes an endpoint as the admin API decided it.
UPDATE webhook_endpoints
SET url = @url, event_types = @event_types, enabled = @enabled, disabled_reason = sqlc.narg('disabled_reason'), updated_at = now()
WHERE id = @id
RETURNING *;

-- name: WebhookEndpointDelete :execrows
-- WebhookEndpointDelete removes an endpoint with its deliveries and their
-- attempts (ON DELETE CASCADE).
DELETE FROM webhook_endpoints WHERE id = @id AND owner_id = @owner_id;

-- name: WebhookEndpointRotateSecret :one
-- WebhookEndpointRotateSecret makes secret the endpoint's signing secret;
-- the one it replaces keeps signing beside it until previous_until.
UPDATE webhook_endpoints
SET previous_secret = webhook_endpoints.secret, previous_secret_until = @previous_until::timestamptz,
    secret = @secret, updated_at = now()
WHERE id = @id
RETURNING *;

-- name: WebhookDeliveryGet :one
-- WebhookDeliveryGet reads a delivery of the endpoint.
SELECT * FROM webhook_deliveries WHERE id = @id AND endpoint_id = @endpoint_id;

-- name: WebhookTestEventInsert :one
-- WebhookTestEventInsert writes a webhook.test event, published at once:
-- it names no organization and no user, so no stream and no fan-out
-- carries it; the one delivery the test makes does. The caller holds
-- OutboxPublishLock, so its seq is given in commit order as every other.
INSERT INTO outbox_events (type, payload, seq, published_at)
VALUES (@type, @payload, nextval('outbox_events_seq'), now())
RETURNING id, seq::bigint AS seq;

-- name: WebhookDeliveryInsert :one
-- WebhookDeliveryInsert makes one delivery of an event to an endpoint: a
-- first one (message_id null), or a redelivery of message_id.
INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, message_id)
VALUES (@endpoint_id, @event_id, @event_type, sqlc.narg('message_id'))
RETURNING *;

-- name: OutboxEventSeq :one
-- OutboxEventSeq is a published event's seq, the id clients see.
SELECT seq::bigint AS seq FROM outbox_events WHERE id = @id;
