-- Events (docs/events.md): the transactional outbox, webhook endpoints and
-- their deliveries. River's job tables live in the schema "river", created
-- by `migrate` after these files (store.Migrate); they are River's, not
-- part of schema.sql.

-- outbox_events holds every event, written in the same transaction as the
-- change it reports. id orders inserts; seq is the order of publication,
-- given by one publisher at a time after commit, so a reader that has seen
-- seq N has seen every event with a smaller seq (the SSE stream resumes on
-- it, and it is the event id clients see). organization_id is set for
-- creative events, user_id for deposit events (the owner).
CREATE TABLE outbox_events (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    seq             bigint UNIQUE,
    type            text NOT NULL CHECK (type <> ''),
    organization_id uuid,
    user_id         uuid,
    payload         json NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    published_at    timestamptz
);

CREATE INDEX outbox_events_unpublished_idx ON outbox_events (id) WHERE seq IS NULL;
CREATE INDEX outbox_events_published_at_idx ON outbox_events (published_at) WHERE seq IS NOT NULL;

CREATE SEQUENCE outbox_events_seq AS bigint;

-- outbox_events_notify wakes the publishers (LISTEN outbox_events) when a
-- transaction that wrote events commits; one notice per transaction.
CREATE FUNCTION outbox_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('outbox_events', '');
    RETURN NULL;
END;
$$;

CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_events_notify();

-- webhook_endpoints are an organization's receivers of creative events. The
-- secret (whsec_ + base64 of 24 random bytes) is kept as it is: signing
-- needs it. disabled_reason says why the service turned one off (gone: the
-- receiver answered 410).
CREATE TABLE webhook_endpoints (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    url             text NOT NULL CHECK (url <> ''),
    event_types     text[] NOT NULL,
    enabled         boolean NOT NULL DEFAULT true,
    disabled_reason text,
    secret          text NOT NULL CHECK (secret LIKE 'whsec\_%'),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX webhook_endpoints_organization_id_idx ON webhook_endpoints (organization_id, created_at, id);

-- webhook_deliveries is one event for one endpoint: its id is the
-- webhook-id header, the same on every attempt.
CREATE TABLE webhook_deliveries (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    endpoint_id     uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id        bigint NOT NULL REFERENCES outbox_events (id) ON DELETE CASCADE,
    event_type      text NOT NULL,
    status          text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'succeeded', 'failed', 'cancelled')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    UNIQUE (endpoint_id, event_id)
);

CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_event_id_idx ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_finished_at_idx ON webhook_deliveries (finished_at) WHERE finished_at IS NOT NULL;

-- webhook_delivery_attempts logs every request sent: the status the
-- receiver answered, or the error when none came.
CREATE TABLE webhook_delivery_attempts (
    delivery_id     uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt         integer NOT NULL CHECK (attempt >= 1),
    started_at      timestamptz NOT NULL,
    duration_ms     integer NOT NULL CHECK (duration_ms >= 0),
    response_status integer,
    error           text,
    PRIMARY KEY (delivery_id, attempt)
);
