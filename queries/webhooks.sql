-- Webhook endpoints as admins manage them (docs/events.md, "The admin
-- API"); the deliveries' own queries are in events.sql.

-- name: WebhookEndpointPage :many
-- WebhookEndpointPage pages an organization's endpoints newest first.
SELECT * FROM webhook_endpoints
WHERE organization_id = @organization_id
  AND (created_at, id) < (coalesce(sqlc.narg('cursor_created_at')::timestamptz, 'infinity'),
                          coalesce(sqlc.narg('cursor_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
ORDER BY created_at DESC, id DESC
LIMIT @row_limit;

-- name: WebhookEndpointLock :one
-- WebhookEndpointLock reads an endpoint of the organization for a change.
SELECT * FROM webhook_endpoints WHERE id = @id AND organization_id = @organization_id FOR UPDATE;

-- name: WebhookEndpointUpdate :one
-- WebhookEndpointUpdate writes an endpoint as the admin API decided it.
UPDATE webhook_endpoints
SET url = @url, event_types = @event_types, enabled = @enabled, disabled_reason = sqlc.narg('disabled_reason'), updated_at = now()
WHERE id = @id
RETURNING *;

-- name: WebhookEndpointDelete :execrows
-- WebhookEndpointDelete removes an endpoint with its deliveries and their
-- attempts (ON DELETE CASCADE).
DELETE FROM webhook_endpoints WHERE id = @id AND organization_id = @organization_id;

-- name: WebhookEndpointRotateSecret :one
-- WebhookEndpointRotateSecret makes secret the endpoint's signing secret;
-- the one it replaces keeps signing beside it until previous_until.
UPDATE webhook_endpoints
SET previous_secret = webhook_endpoints.secret, previous_secret_until = @previous_until::timestamptz,
    secret = @secret, updated_at = now()
WHERE id = @id
RETURNING *;
