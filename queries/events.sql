-- Events (docs/events.md): the outbox, its publication, webhook endpoints,
-- deliveries and their attempts.

-- name: OutboxEventsInsert :exec
-- OutboxEventsInsert writes events in the caller's transaction; the arrays
-- are the columns, of equal length; the nil UUID stands for null.
WITH input AS (
    SELECT unnest(@types::text[]) AS type, unnest(@organization_ids::uuid[]) AS organization_id,
           unnest(@user_ids::uuid[]) AS user_id, unnest(@payloads::json[]) AS payload
)
INSERT INTO outbox_events (type, organization_id, user_id, payload)
SELECT i.type, nullif(i.organization_id, '00000000-0000-0000-0000-000000000000'::uuid),
       nullif(i.user_id, '00000000-0000-0000-0000-000000000000'::uuid), i.payload
FROM input i;

-- name: OutboxUnpublishedExists :one
-- OutboxUnpublishedExists is the publishers' poll: one read of the partial
-- index of unpublished events, no transaction and no lock while there is
-- nothing to publish.
SELECT EXISTS (SELECT 1 FROM outbox_events WHERE seq IS NULL)::boolean AS pending;

-- name: OutboxPublishLock :exec
-- OutboxPublishLock makes publishers take turns (until their transaction
-- ends), so seq is given in commit order: the next publisher's statements
-- see every event the one before published. The key is
-- store.LockOutboxPublish.
SELECT pg_advisory_xact_lock(7305551017);

-- name: OutboxPublish :many
-- OutboxPublish gives the oldest unpublished events their seq, in id order.
WITH next AS (
    SELECT id FROM outbox_events WHERE seq IS NULL ORDER BY id LIMIT @batch_size FOR UPDATE
), numbered AS (
    SELECT id, nextval('outbox_events_seq') AS seq FROM (SELECT id FROM next ORDER BY id) n
)
UPDATE outbox_events e SET seq = numbered.seq, published_at = now()
FROM numbered
WHERE e.id = numbered.id
RETURNING e.id, e.seq::bigint AS seq, e.type, e.organization_id, e.user_id, e.created_at, e.published_at::timestamptz AS published_at;

-- name: OutboxPurge :execrows
-- OutboxPurge deletes a batch of events published before the cutoff that no
-- delivery still waits for (their finished deliveries and attempts go with
-- them).
DELETE FROM outbox_events
WHERE id IN (
    SELECT e.id FROM outbox_events e
    WHERE e.seq IS NOT NULL AND e.published_at < @cutoff::timestamptz
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
    ORDER BY e.published_at
    LIMIT @batch_size);

-- name: WebhookDeliveriesPurge :execrows
-- WebhookDeliveriesPurge deletes a batch of finished deliveries (and their
-- attempts) older than the cutoff.
DELETE FROM webhook_deliveries
WHERE id IN (
    SELECT f.id FROM webhook_deliveries f
    WHERE f.finished_at < @cutoff::timestamptz
    ORDER BY f.finished_at
    LIMIT @batch_size);

-- name: WebhookDeliveriesAbandon :execrows
-- WebhookDeliveriesAbandon ends as failed a batch of pending deliveries
-- whose next attempt was due before the cutoff: no job will attempt them
-- any more (the last attempt could not be logged), and while pending they
-- would keep their event from being purged. They are purged in turn a
-- retention period later.
UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, finished_at = now()
WHERE id IN (
    SELECT p.id FROM webhook_deliveries p
    WHERE p.status = 'pending' AND coalesce(p.next_attempt_at, p.created_at) < @cutoff::timestamptz
    ORDER BY coalesce(p.next_attempt_at, p.created_at)
    LIMIT @batch_size);

-- name: WebhookDeliveriesCreate :many
-- WebhookDeliveriesCreate fans published events out to the enabled
-- endpoints that subscribe to their type: their organization's, and for a
-- deposit event (deposit.*, whatever its type) the platform's (owner_id
-- nil), where 'deposit.*' subscribes to every deposit type.
INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type)
SELECT w.id, e.id, e.type
FROM outbox_events e
JOIN webhook_endpoints w
  ON w.owner_id = CASE WHEN e.type LIKE 'deposit.%' THEN '00000000-0000-0000-0000-000000000000'::uuid ELSE e.organization_id END
 AND w.enabled
 AND (e.type = ANY (w.event_types) OR (e.type LIKE 'deposit.%' AND 'deposit.*' = ANY (w.event_types)))
WHERE e.id = ANY (@event_ids::bigint[])
ORDER BY e.seq, w.id
ON CONFLICT (endpoint_id, event_id) WHERE message_id IS NULL DO NOTHING
RETURNING id;

-- name: WebhookEndpointCreate :one
-- WebhookEndpointCreate adds an endpoint of owner_id (the nil UUID: the
-- platform's, with no organization).
INSERT INTO webhook_endpoints (organization_id, url, event_types, enabled, secret)
VALUES (nullif(@owner_id::uuid, '00000000-0000-0000-0000-000000000000'::uuid), @url, @event_types, @enabled, @secret)
RETURNING *;

-- name: WebhookEndpointGet :one
SELECT * FROM webhook_endpoints WHERE id = @id AND owner_id = @owner_id;

-- name: WebhookEndpointDisable :exec
-- WebhookEndpointDisable turns an endpoint off on the service's side.
UPDATE webhook_endpoints SET enabled = false, disabled_reason = @reason, updated_at = now()
WHERE id = @id;

-- name: WebhookDeliveryForAttempt :one
-- WebhookDeliveryForAttempt reads what one attempt sends, the secret a
-- rotation replaced (it signs until previous_secret_until) included, and
-- the webhook-id: the delivery's id, or a redelivery's message_id.
SELECT d.id, coalesce(d.message_id, d.id)::uuid AS message_id, d.status, d.event_type, d.endpoint_id, w.url, w.secret, w.enabled, e.payload, e.created_at AS event_created_at,
       w.previous_secret, w.previous_secret_until
FROM webhook_deliveries d
JOIN webhook_endpoints w ON w.id = d.endpoint_id
JOIN outbox_events e ON e.id = d.event_id
WHERE d.id = @id;

-- name: WebhookEndpointInFlightLock :exec
-- WebhookEndpointInFlightLock makes the claims of one endpoint's
-- deliveries take turns, to the end of their transaction, on every replica
-- (store.LockWebhookEndpoint, with the hash of the endpoint's id), so the
-- count WebhookDeliveryClaim reads next is exact.
SELECT pg_advisory_xact_lock(2058002, hashtext(CAST(sqlc.arg(endpoint_id)::uuid AS text)));

-- name: WebhookDeliveryClaim :execrows
-- WebhookDeliveryClaim marks a delivery in flight until its lease ends,
-- while its endpoint has fewer than max_in_flight other deliveries whose
-- lease has not run out; no row when it has that many. Run after
-- WebhookEndpointInFlightLock, in its transaction.
UPDATE webhook_deliveries d
SET in_flight_until = now() + make_interval(secs => @lease_seconds::float8)
WHERE d.id = @delivery_id::uuid
  AND (SELECT count(*) FROM webhook_deliveries o
       WHERE o.endpoint_id = @endpoint_id::uuid AND o.in_flight_until > now() AND o.id <> @delivery_id::uuid) < @max_in_flight::integer;

-- name: WebhookAttemptRecord :exec
-- WebhookAttemptRecord logs one attempt and moves its delivery on: status
-- pending with the time of the next attempt, or finished.
WITH attempt AS (
    INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, duration_ms, response_status, error)
    VALUES (@delivery_id, @attempt, @started_at, @duration_ms, sqlc.narg('response_status'), sqlc.narg('error'))
    ON CONFLICT (delivery_id, attempt) DO UPDATE
    SET started_at = excluded.started_at, duration_ms = excluded.duration_ms,
        response_status = excluded.response_status, error = excluded.error
)
UPDATE webhook_deliveries
SET status = @status, attempts = greatest(attempts, @attempt), next_attempt_at = sqlc.narg('next_attempt_at'),
    finished_at = CASE WHEN @status = 'pending' THEN NULL ELSE now() END, in_flight_until = NULL
WHERE id = @delivery_id;

-- name: WebhookDeliveryCancel :exec
-- WebhookDeliveryCancel ends a delivery whose endpoint was disabled.
UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, finished_at = now(), in_flight_until = NULL
WHERE id = @id AND status = 'pending';

-- name: WebhookDeliveryList :many
-- WebhookDeliveryList pages an endpoint's deliveries newest first, with
-- their event's seq (the event id clients see).
SELECT d.*, e.seq::bigint AS event_seq FROM webhook_deliveries d
JOIN outbox_events e ON e.id = d.event_id
WHERE d.endpoint_id = @endpoint_id
  AND (d.created_at, d.id) < (coalesce(sqlc.narg('cursor_created_at')::timestamptz, 'infinity'),
                              coalesce(sqlc.narg('cursor_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
ORDER BY d.created_at DESC, d.id DESC
LIMIT @row_limit;

-- name: WebhookAttemptsForDeliveries :many
SELECT * FROM webhook_delivery_attempts
WHERE delivery_id = ANY (@delivery_ids::uuid[])
ORDER BY delivery_id, attempt;


-- name: EventsBacklog :one
-- EventsBacklog is what waits, read by the metrics at each scrape from
-- partial indexes that hold only waiting rows: events not yet published
-- and the age of the oldest, pending deliveries and how long the most
-- overdue one has been due (0 while every one waits for its retry time).
SELECT
    (SELECT count(*) FROM outbox_events WHERE seq IS NULL)::bigint AS unpublished,
    coalesce(extract(epoch FROM now() - (SELECT created_at FROM outbox_events WHERE seq IS NULL ORDER BY id LIMIT 1)), 0)::float8 AS oldest_unpublished_seconds,
    (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')::bigint AS pending_deliveries,
    greatest(0, coalesce(extract(epoch FROM now() - (SELECT min(coalesce(next_attempt_at, created_at)) FROM webhook_deliveries WHERE status = 'pending')), 0))::float8 AS most_overdue_seconds;
