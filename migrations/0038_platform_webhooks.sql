-- Platform webhook endpoints (docs/events.md, "Platform webhooks"): an
-- endpoint without an organization is the platform's, managed by
-- operators, and receives every user's deposit events. owner_id names the
-- owner in one column (the nil UUID for the platform), so the admin API's
-- queries and the fan-out read one index whoever owns the endpoint.
ALTER TABLE webhook_endpoints
    ALTER COLUMN organization_id DROP NOT NULL,
    ADD COLUMN owner_id uuid NOT NULL
        GENERATED ALWAYS AS (coalesce(organization_id, '00000000-0000-0000-0000-000000000000'::uuid)) STORED;

DROP INDEX webhook_endpoints_organization_id_idx;
CREATE INDEX webhook_endpoints_owner_id_idx ON webhook_endpoints (owner_id, created_at, id);

-- A redelivery (docs/events.md, "Testing and redelivering") is a delivery
-- of its own, with its own attempts, that sends the same message again:
-- message_id is the webhook-id it sends, the first delivery's id (null on
-- a first delivery, whose webhook-id is its id). Only first deliveries
-- are one per endpoint and event: the fan-out's de-duplication.
ALTER TABLE webhook_deliveries
    ADD COLUMN message_id uuid,
    DROP CONSTRAINT webhook_deliveries_endpoint_id_event_id_key;
CREATE UNIQUE INDEX webhook_deliveries_first_key ON webhook_deliveries (endpoint_id, event_id) WHERE message_id IS NULL;
