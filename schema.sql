-- schema.sql is the schema that sqlc reads and that the migrations in
-- migrations/ must produce exactly (internal/store tests prove it).

-- pg_trgm backs the title search of the creative list.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- People, workspaces and roles.

-- Emails are stored normalised (auth.NormalizeEmail: ASCII letters in
-- lower case, nothing else folded), so lookup, uniqueness and sign-in
-- throttling compare them one way.
CREATE TABLE users (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email         text NOT NULL CHECK (email <> ''),
    name          text NOT NULL,
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    -- operator marks platform staff who settle chain transfers (not an
    -- organization role); only the command line sets it.
    operator      boolean NOT NULL DEFAULT false,
    CONSTRAINT users_email_key UNIQUE (email),
    CONSTRAINT users_email_normalised
        CHECK (email = translate(email, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'))
);

CREATE TABLE organizations (
    id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                 text NOT NULL,
    slug                 text NOT NULL UNIQUE,
    -- next_creative_number backs the per-organization CR-000123 numbers.
    next_creative_number integer NOT NULL DEFAULT 1,
    created_at           timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role            text NOT NULL CHECK (role IN ('admin', 'reviewer', 'author', 'viewer')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (organization_id, user_id)
);

CREATE INDEX memberships_user_id_idx ON memberships (user_id);

-- Sessions store only a SHA-256 hash of the cookie's token.
CREATE TABLE sessions (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id             uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash          bytea NOT NULL UNIQUE,
    csrf_token          text NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    last_seen_at        timestamptz NOT NULL DEFAULT now(),
    idle_expires_at     timestamptz NOT NULL,
    absolute_expires_at timestamptz NOT NULL,
    revoked_at          timestamptz
);

CREATE INDEX sessions_user_id_idx ON sessions (user_id);

-- Failed sign-ins per subject ('email:<address>' or 'ip:<address>'), in a
-- fixed window, so throttling holds across server replicas.
CREATE TABLE sign_in_failures (
    subject      text PRIMARY KEY,
    failures     integer NOT NULL,
    window_start timestamptz NOT NULL
);

-- Creative review.

CREATE TABLE clients (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            text NOT NULL,
    UNIQUE (organization_id, name)
);

CREATE TABLE tasks (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            text NOT NULL,
    UNIQUE (organization_id, name)
);

CREATE TABLE creatives (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id     uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    number              integer NOT NULL CHECK (number > 0),
    title               text NOT NULL,
    type                text NOT NULL CHECK (type IN ('static', 'video', 'html5')),
    aspect_ratio        text NOT NULL,
    geo                 text NOT NULL,
    language            text NOT NULL,
    direction_id        uuid,
    author_id           uuid NOT NULL REFERENCES users (id),
    reviewer_id         uuid REFERENCES users (id),
    client_id           uuid REFERENCES clients (id),
    task_id             uuid REFERENCES tasks (id),
    current_version_id  uuid,
    approved_version_id uuid,
    review_status       text NOT NULL DEFAULT 'draft'
        CHECK (review_status IN ('draft', 'in_review', 'changes_requested', 'approved', 'archived')),
    version             integer NOT NULL DEFAULT 1 CHECK (version > 0),
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    -- review_plan: the creative has review stages; review_round counts the
    -- submits under a plan (docs/review.md, "Review stages").
    review_plan         boolean NOT NULL DEFAULT false,
    review_round        integer NOT NULL DEFAULT 0 CHECK (review_round >= 0),
    UNIQUE (organization_id, number)
);

CREATE INDEX creatives_organization_status_number_idx ON creatives (organization_id, review_status, number DESC);
-- The list's filters: title contains (q, through pg_trgm), author, assigned reviewer.
CREATE INDEX creatives_title_trgm_idx ON creatives USING gin (title gin_trgm_ops);
CREATE INDEX creatives_organization_author_number_idx ON creatives (organization_id, author_id, number DESC);
CREATE INDEX creatives_organization_reviewer_number_idx ON creatives (organization_id, reviewer_id, number DESC)
    WHERE reviewer_id IS NOT NULL;

CREATE TABLE creative_versions (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    creative_id uuid NOT NULL REFERENCES creatives (id) ON DELETE CASCADE,
    number      integer NOT NULL CHECK (number > 0),
    author_id   uuid NOT NULL REFERENCES users (id),
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (creative_id, number)
);

ALTER TABLE creatives
    ADD CONSTRAINT creatives_current_version_id_fkey
        FOREIGN KEY (current_version_id) REFERENCES creative_versions (id),
    ADD CONSTRAINT creatives_approved_version_id_fkey
        FOREIGN KEY (approved_version_id) REFERENCES creative_versions (id);

-- An asset id names a file: an uploaded file has its upload's asset id in
-- every version that uses it, so a row is the file in one version
-- (docs/uploads.md, "One file, one id").
CREATE TABLE assets (
    id          uuid NOT NULL DEFAULT gen_random_uuid(),
    version_id  uuid NOT NULL REFERENCES creative_versions (id) ON DELETE CASCADE,
    position    integer NOT NULL,
    file_name   text NOT NULL,
    mime_type   text NOT NULL,
    size_bytes  bigint NOT NULL CHECK (size_bytes >= 0),
    url         text NOT NULL,
    width       integer,
    height      integer,
    duration_ms integer,
    sha256      text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    PRIMARY KEY (id, version_id),
    UNIQUE (version_id, position)
);

-- creative_events is the append-only history of a creative: its creation,
-- new versions, edits and review actions. from_status is null only for
-- created; changes lists the fields an update changed; public_id is the id
-- the API shows (id orders the history and pages it).
CREATE TABLE creative_events (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    creative_id uuid NOT NULL REFERENCES creatives (id) ON DELETE CASCADE,
    -- actor_id is a member's, actor_guest_id a guest's (one of them).
    actor_id    uuid REFERENCES users (id),
    type        text NOT NULL
        CHECK (type IN ('created', 'version_added', 'updated', 'submit', 'request_changes', 'approve', 'archive', 'stage_approved')),
    from_status text CONSTRAINT creative_events_from_status_check CHECK ((type = 'created') = (from_status IS NULL)),
    to_status   text NOT NULL,
    comment     text,
    version     integer NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    public_id   uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
    changes     jsonb CONSTRAINT creative_events_changes_check
        CHECK ((type = 'updated') = (changes IS NOT NULL AND jsonb_typeof(changes) = 'array')),
    -- acknowledged_threads: the open threads not marked addressed that a
    -- submit with acknowledgeOpenThreads went past.
    acknowledged_threads uuid[],
    -- stage: the review stage (its name) a decision or a stage_approved
    -- event was in; override: an admin decided for the whole creative.
    stage       text,
    override    boolean NOT NULL DEFAULT false,
    actor_guest_id uuid, -- references guests (below)
    CONSTRAINT creative_events_actor_check CHECK ((actor_id IS NULL) <> (actor_guest_id IS NULL)),
    -- actor_verified: a guest actor's session was verified.
    actor_verified boolean,
    CONSTRAINT creative_events_actor_verified_check CHECK ((actor_guest_id IS NULL) = (actor_verified IS NULL))
);

CREATE INDEX creative_events_creative_id_idx ON creative_events (creative_id, id);

-- Account deposits and balance.

CREATE TABLE deposits (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id                uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    network                text NOT NULL,
    address                text NOT NULL,
    currency               text NOT NULL,
    base_amount_minor      bigint NOT NULL CHECK (base_amount_minor > 0),
    suffix_minor           integer NOT NULL CHECK (suffix_minor BETWEEN 1 AND 9999),
    requested_amount_minor bigint NOT NULL,
    credited_amount_minor  bigint NOT NULL DEFAULT 0 CHECK (credited_amount_minor >= 0),
    confirmations          integer NOT NULL DEFAULT 0 CHECK (confirmations >= 0),
    confirmations_required integer NOT NULL CHECK (confirmations_required > 0),
    status                 text NOT NULL DEFAULT 'awaiting_transfer'
        CHECK (status IN ('awaiting_transfer', 'confirming', 'credited', 'expired', 'under_review', 'refunded', 'cancelled')),
    -- reserved holds the requested amount for this deposit until the sweeper
    -- releases it at reserved_until (expiry plus the monitoring window).
    reserved               boolean NOT NULL DEFAULT true,
    reserved_until         timestamptz NOT NULL,
    -- transfer_tx_id is the chain transaction that paid this deposit.
    transfer_tx_id         text,
    needs_review           boolean NOT NULL DEFAULT false,
    created_at             timestamptz NOT NULL DEFAULT now(),
    expires_at             timestamptz NOT NULL,
    -- The review of a deposit under_review (docs/deposits.md): why it waits
    -- for an operator (late: the exact amount arrived after expires_at;
    -- amount_mismatch: the payer claimed a transfer of another amount), the
    -- amount received by transfer_tx_id, and since when. Null otherwise.
    review_reason          text CHECK (review_reason IN ('late', 'amount_mismatch')),
    review_received_minor  bigint CHECK (review_received_minor > 0),
    review_opened_at       timestamptz,
    -- cancelled_at is when the payer cancelled the deposit; set exactly
    -- while it is cancelled.
    cancelled_at           timestamptz,
    -- A top-up (docs/deposits.md, "Top-ups") is a deposit of its own whose
    -- top_up_of names the deposit under review it completes: its amount is
    -- reserved by deposits_reserved_amount_key like every deposit's. The
    -- deposit under review shows its latest top-up's amount and expiry.
    top_up_of              uuid REFERENCES deposits (id) ON DELETE CASCADE,
    top_up_amount_minor    bigint,
    top_up_expires_at      timestamptz,
    -- Where the payer asked a refund to go, and the operator's refund.
    refund_address         text,
    refund_tx_id           text,
    refunded_at            timestamptz,
    -- review_contested: the deposit's claimed transfer was claimed by
    -- another deposit too (it stays set once a second claim existed).
    review_contested       boolean NOT NULL DEFAULT false,
    CHECK (requested_amount_minor = base_amount_minor + suffix_minor),
    CHECK (reserved_until >= expires_at),
    -- A refunded deposit keeps its review, so the payer sees what arrived
    -- and where it went back.
    CONSTRAINT deposits_review_check
        CHECK ((status <> 'under_review' OR (review_reason IS NOT NULL AND review_received_minor IS NOT NULL
                                              AND review_opened_at IS NOT NULL AND transfer_tx_id IS NOT NULL))
               AND (status IN ('under_review', 'refunded', 'credited') OR (review_reason IS NULL AND review_received_minor IS NULL
                                                                           AND review_opened_at IS NULL))),
    -- A confirming deposit keeps its amount reserved (the sweeper releases
    -- none), so every open deposit is reserved (deposit_reserved_bounds).
    CONSTRAINT deposits_confirming_reserved_check CHECK (reserved OR status <> 'confirming'),
    CONSTRAINT deposits_cancelled_check CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
    CONSTRAINT deposits_top_up_check
        CHECK ((top_up_amount_minor IS NULL) = (top_up_expires_at IS NULL) AND (top_up_of IS NULL OR top_up_amount_minor IS NULL)),
    CONSTRAINT deposits_refund_check
        CHECK (refund_address ~ '^T[1-9A-HJ-NP-Za-km-z]{33}$'
               AND refund_tx_id ~ '^[0-9a-f]{64}$'
               AND (refund_tx_id IS NULL OR refunded_at IS NOT NULL)),
    CONSTRAINT deposits_refunded_at_check CHECK (refunded_at IS NULL OR status = 'refunded')
);

-- A transaction pays at most one deposit, except that the deposits
-- claiming one transfer are all under review with it (deposit_claims).
CREATE UNIQUE INDEX deposits_network_transfer_tx_id_key ON deposits (network, transfer_tx_id) WHERE status <> 'under_review';
-- The watcher's lookup of the one deposit whose matching suffix a transfer
-- carries (DepositsForFingerprints): deposits of a suffix by expiry.
CREATE INDEX deposits_fingerprint_idx ON deposits (network, address, currency, suffix_minor, expires_at)
    WHERE top_up_of IS NULL;

-- No two reserved deposits on one network, address and currency share a
-- requested amount: the amount alone identifies the deposit a transfer pays.
CREATE UNIQUE INDEX deposits_reserved_amount_key
    ON deposits (network, address, currency, requested_amount_minor) WHERE reserved;
-- Cancelled deposits by amount, for the watcher's lookup of a transfer
-- that came after its deposit was cancelled (DepositsForAmounts).
CREATE INDEX deposits_cancelled_amount_idx
    ON deposits (network, address, currency, requested_amount_minor) WHERE status = 'cancelled';
CREATE INDEX deposits_user_id_created_at_idx ON deposits (user_id, created_at DESC, id DESC);
CREATE INDEX deposits_open_user_id_idx ON deposits (user_id, expires_at)
    WHERE status IN ('awaiting_transfer', 'confirming');
CREATE INDEX deposits_awaiting_expires_at_idx ON deposits (expires_at) WHERE status = 'awaiting_transfer';
CREATE INDEX deposits_reserved_until_idx ON deposits (reserved_until) WHERE reserved;
CREATE INDEX deposits_reserved_user_id_idx ON deposits (user_id) WHERE reserved;
CREATE INDEX deposits_top_up_of_idx ON deposits (top_up_of) WHERE top_up_of IS NOT NULL;

-- deposit_reserved_bounds holds, for each user, an upper bound on how many
-- of the user's deposits are reserved, in parts, one per create slot: the
-- bound is the sum of the user's parts. Every open deposit is reserved, and
-- a deposit is reserved only by the insert that makes it, so the bound is
-- also one on the user's open deposits, and it stays one as long as every
-- insert adds 1 to a part in its own statement (DepositInsert,
-- DepositInsertFreeSuffix). A create far below the open-deposit limit reads
-- the bound instead of counting the user's open deposits, so what it costs
-- does not grow with them; a create holding the user's exclusive owner
-- lock sets the parts back to the reserved deposits it counts
-- (DepositReservedBoundsReset). Parts per slot: a create adds to the part
-- of the slot it holds, so the creates of one user in flight never wait on
-- each other's rows (docs/deposits.md).
CREATE TABLE deposit_reserved_bounds (
    user_id  uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    slot     integer NOT NULL CHECK (slot >= 0),
    reserved integer NOT NULL CHECK (reserved >= 0),
    PRIMARY KEY (user_id, slot)
);

-- deposit_open is whether a deposit is open (docs/deposits.md): confirming,
-- or awaiting its transfer before expires_at. The queries that count, limit
-- and credit open deposits all call it. One SQL expression, so the planner
-- inlines it and the partial index deposits_open_user_id_idx still serves.
-- deposit.IsOpen(deposit.EffectiveStatus(...)) is the rule in Go, for
-- reads; a test holds the two equal.
CREATE FUNCTION deposit_open(status text, expires_at timestamptz) RETURNS boolean
    LANGUAGE sql STABLE AS $$
SELECT status IN ('awaiting_transfer', 'confirming') AND NOT (status = 'awaiting_transfer' AND expires_at <= now())
$$;

-- ledger_entries is the append-only account ledger; one entry per source, so
-- a deposit (or anything else) credits at most once.
CREATE TABLE ledger_entries (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    currency     text NOT NULL,
    amount_minor bigint NOT NULL,
    source_type  text NOT NULL,
    source_id    text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    -- public_id is the id the API answers (listLedgerEntries).
    public_id    uuid NOT NULL DEFAULT gen_random_uuid(),
    -- deposit_id is the deposit an entry credits, typed, so the ledger's
    -- page joins deposits by their key (LedgerEntryListByUser).
    deposit_id   uuid GENERATED ALWAYS AS (CASE WHEN source_type = 'deposit' THEN source_id::uuid END) STORED,
    UNIQUE (source_type, source_id),
    CONSTRAINT ledger_entries_public_id_key UNIQUE (public_id)
);

CREATE INDEX ledger_entries_user_id_idx ON ledger_entries (user_id, currency);
CREATE INDEX ledger_entries_user_id_created_at_idx ON ledger_entries (user_id, created_at DESC, public_id DESC);

-- forbid_change keeps history tables append-only.
CREATE FUNCTION forbid_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END;
$$;

CREATE TRIGGER creative_events_append_only BEFORE UPDATE ON creative_events
    FOR EACH ROW EXECUTE FUNCTION forbid_change();
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
    FOR EACH ROW EXECUTE FUNCTION forbid_change();

-- Idempotency keys: the stored outcome of a command, committed in the same
-- transaction as the command's effect.
-- user_id is the principal's: a user's id, or a guest's (docs/shares.md).
CREATE TABLE idempotency_keys (
    user_id           uuid NOT NULL,
    key               text NOT NULL,
    fingerprint       bytea NOT NULL,
    status_code       integer,
    response_body     bytea,
    response_location text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    expires_at        timestamptz NOT NULL,
    PRIMARY KEY (user_id, key)
);

CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);

-- The chain watcher.

-- chain_transfers records every transfer to the treasury the watcher saw,
-- matched or not, so nothing received is dropped silently. One row per
-- transfer event: a transaction is identified by tx_id, and the event within
-- it by its token, sender and raw value (the chain API gives no event index).
CREATE TABLE chain_transfers (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    network      text NOT NULL,
    tx_id        text NOT NULL CHECK (tx_id <> ''),
    token        text NOT NULL,
    from_address text NOT NULL,
    to_address   text NOT NULL,
    -- amount_raw is the value as the chain API sent it; amount_minor is it
    -- in minor units when it is a positive whole number that fits, else null.
    amount_raw   text NOT NULL,
    amount_minor bigint CHECK (amount_minor > 0),
    block_time   timestamptz NOT NULL,
    block_number bigint,
    -- confirming: pays an on-time deposit, waiting for its block to be
    -- solidified; credited: paid it; late: arrived after the deposit expired;
    -- unmatched: pays nothing (reason says why); failed: its receipt failed;
    -- vanished: the node no longer knows it (a fork), seen again if it returns;
    -- refunded: an operator sent it back.
    status       text NOT NULL
        CHECK (status IN ('confirming', 'credited', 'late', 'unmatched', 'failed', 'vanished', 'refunded')),
    reason       text,
    deposit_id   uuid REFERENCES deposits (id),
    -- needs_review marks late and unmatched transfers until an operator settles them.
    needs_review boolean NOT NULL DEFAULT false,
    seen_at      timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    -- public_id is the transfer's id in the operator API and the CLI; id
    -- stays the internal key.
    public_id    uuid NOT NULL DEFAULT gen_random_uuid(),
    UNIQUE (network, tx_id, token, from_address, amount_raw),
    CONSTRAINT chain_transfers_public_id_key UNIQUE (public_id)
);

CREATE INDEX chain_transfers_confirming_idx ON chain_transfers (id) WHERE status = 'confirming';
CREATE INDEX chain_transfers_review_idx ON chain_transfers (id) WHERE needs_review;

-- chain_watch_positions is where the watcher stands, per treasury and token:
-- every transfer with a block time before position is processed.
CREATE TABLE chain_watch_positions (
    network    text NOT NULL,
    address    text NOT NULL,
    token      text NOT NULL,
    position   timestamptz NOT NULL,
    head_block bigint NOT NULL,
    solid_block bigint NOT NULL,
    polled_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (network, address, token)
);

-- chain_transfer_settlements is the audit record of operators settling a
-- late or unmatched transfer by hand, with the decision's word (the API's
-- and the CLI's). A transfer is settled (credit or refund) at most once; before that it may be rejected any number of
-- times: detached from the deposit it was attached to (deposit_id), and
-- unmatched again.
CREATE TABLE chain_transfer_settlements (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    transfer_id bigint NOT NULL REFERENCES chain_transfers (id),
    decision    text NOT NULL CHECK (decision IN ('credit', 'refund', 'reject')),
    operator    text NOT NULL CHECK (operator <> ''),
    note        text NOT NULL CHECK (note <> ''),
    created_at  timestamptz NOT NULL DEFAULT now(),
    deposit_id  uuid REFERENCES deposits (id)
);

CREATE UNIQUE INDEX chain_transfer_settlements_final_key ON chain_transfer_settlements (transfer_id) WHERE decision <> 'reject';
CREATE INDEX chain_transfer_settlements_transfer_id_idx ON chain_transfer_settlements (transfer_id);

CREATE TRIGGER chain_transfer_settlements_append_only BEFORE UPDATE OR DELETE ON chain_transfer_settlements
    FOR EACH ROW EXECUTE FUNCTION forbid_change();

-- deposit_claims holds the payers' claims (docs/deposits.md, "The payer's
-- claim"): a payer saying an unmatched transfer is theirs. A claim never
-- credits; several deposits may claim one transfer, and an operator sees
-- every claim. A claim is open until an operator settles or rejects it
-- (closed_at). The first open claim of a transfer is the one it is
-- attached to (chain_transfers.deposit_id).
CREATE TABLE deposit_claims (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    transfer_id bigint NOT NULL REFERENCES chain_transfers (id),
    deposit_id  uuid NOT NULL REFERENCES deposits (id) ON DELETE CASCADE,
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    closed_at   timestamptz
);

CREATE UNIQUE INDEX deposit_claims_open_deposit_key ON deposit_claims (deposit_id) WHERE closed_at IS NULL;
CREATE INDEX deposit_claims_open_transfer_idx ON deposit_claims (transfer_id, id) WHERE closed_at IS NULL;
CREATE INDEX deposit_claims_open_user_id_idx ON deposit_claims (user_id) WHERE closed_at IS NULL;
CREATE INDEX deposit_claims_user_id_created_at_idx ON deposit_claims (user_id, created_at);

-- Events (docs/events.md). River's job tables live in the schema "river",
-- created by store.Migrate; they are not part of this file.

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

-- webhook_endpoints are an organization's receivers of creative events, or
-- (organization_id null) the platform's receivers of every user's deposit
-- events. The secret (whsec_ + base64 of 24 random bytes) is kept as it
-- is: signing needs it. disabled_reason says why the service turned one off
-- (gone: the receiver answered 410).
CREATE TABLE webhook_endpoints (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
    url             text NOT NULL CHECK (url <> ''),
    event_types     text[] NOT NULL,
    enabled         boolean NOT NULL DEFAULT true,
    disabled_reason text,
    secret          text NOT NULL CHECK (secret LIKE 'whsec\_%'),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    -- previous_secret signs deliveries beside secret until
    -- previous_secret_until, after a rotation (docs/events.md).
    previous_secret       text CHECK (previous_secret LIKE 'whsec\_%'),
    previous_secret_until timestamptz,
    CONSTRAINT webhook_endpoints_previous_secret_until_check
        CHECK ((previous_secret IS NULL) = (previous_secret_until IS NULL)),
    -- owner_id is whose endpoint it is, the nil UUID for the platform: the
    -- one key of the admin API's queries and of the fan-out.
    owner_id uuid NOT NULL
        GENERATED ALWAYS AS (coalesce(organization_id, '00000000-0000-0000-0000-000000000000'::uuid)) STORED
);

CREATE INDEX webhook_endpoints_owner_id_idx ON webhook_endpoints (owner_id, created_at, id);

-- webhook_deliveries is one event for one endpoint: its id is the
-- webhook-id header, the same on every attempt. A redelivery is a delivery
-- of its own that sends the same message again: message_id is the
-- webhook-id it sends, the first delivery's id (null on a first delivery).
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
    message_id      uuid,
    -- While an attempt is in flight: the end of its lease (migration 0044).
    in_flight_until timestamptz
);

-- Only first deliveries are one per endpoint and event (the fan-out's
-- de-duplication); redeliveries of them are not.
CREATE UNIQUE INDEX webhook_deliveries_first_key ON webhook_deliveries (endpoint_id, event_id) WHERE message_id IS NULL;

CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_event_id_idx ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_finished_at_idx ON webhook_deliveries (finished_at) WHERE finished_at IS NOT NULL;
-- Pending deliveries by when their next attempt is due (or, never
-- attempted, when they were made): the metrics' backlog and the purge's
-- abandoned deliveries read them without reading finished ones.
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries ((coalesce(next_attempt_at, created_at)))
    WHERE status = 'pending';
-- The attempts in flight per endpoint (WebhookDeliveryClaim counts them).
CREATE INDEX webhook_deliveries_in_flight_idx ON webhook_deliveries (endpoint_id)
    WHERE in_flight_until IS NOT NULL;

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

-- development_database marks a database that holds the demo data (known
-- users, a published password): `seed` writes its one row, and every
-- command without DEV_MODE refuses a marked database at start-up.
CREATE TABLE development_database (
    only_row  boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    marked_at timestamptz NOT NULL DEFAULT now()
);

-- comments are review comments on a version of a creative (docs/review.md,
-- "Review comments"): a top-level comment may point at an asset of its
-- version (anchor: a region, a time, a page) and be resolved; a reply's
-- parent is a top-level comment of the same creative (one level). A
-- deleted comment that has replies stays as a tombstone (deleted, body ''),
-- so its thread still reads right. seq orders a list oldest first and is
-- its cursor; it has no index of its own (an identity is unique without
-- one), so a list's plan can only read its page from the index of its
-- shape, never walk the table in seq order.
CREATE TABLE comments (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq              bigint GENERATED ALWAYS AS IDENTITY,
    creative_id      uuid NOT NULL REFERENCES creatives (id) ON DELETE CASCADE,
    version_id       uuid NOT NULL REFERENCES creative_versions (id) ON DELETE CASCADE,
    version_number   integer NOT NULL CHECK (version_number > 0),
    parent_id        uuid REFERENCES comments (id) ON DELETE CASCADE,
    -- author_id is a member's, author_guest_id a guest's (one of them).
    author_id        uuid REFERENCES users (id),
    body             text NOT NULL,
    anchor           jsonb,
    mention_user_ids uuid[] NOT NULL DEFAULT '{}',
    resolved_by      uuid REFERENCES users (id),
    resolved_at      timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    edited_at        timestamptz,
    deleted          boolean NOT NULL DEFAULT false,
    resolved         boolean NOT NULL GENERATED ALWAYS AS (resolved_at IS NOT NULL) STORED,
    -- addressed_in_version: the version the creative's author marked this
    -- top-level comment addressed in (docs/review.md, "Threads that follow
    -- the work").
    addressed_in_version integer,
    CONSTRAINT comments_check1 CHECK (parent_id IS NULL OR (anchor IS NULL AND resolved_at IS NULL)),
    CONSTRAINT comments_check2 CHECK (NOT deleted OR (body = '' AND anchor IS NULL AND mention_user_ids = '{}')),
    CONSTRAINT comments_addressed_in_version_check
        CHECK (addressed_in_version IS NULL OR (parent_id IS NULL AND addressed_in_version > version_number)),
    -- author_guest_id and resolved_by_guest_id reference guests (below).
    author_guest_id  uuid,
    resolved_by_guest_id uuid,
    -- visibility: internal comments are members' only; a guest writes
    -- none (docs/shares.md).
    visibility       text NOT NULL DEFAULT 'everyone',
    -- A guest's comment keeps the name and verification of the session
    -- that wrote it (docs/shares.md).
    author_guest_name text,
    author_verified  boolean,
    CONSTRAINT comments_author_guest_name_check
        CHECK ((author_guest_id IS NULL) = (author_guest_name IS NULL) AND (author_guest_id IS NULL) = (author_verified IS NULL)),
    CONSTRAINT comments_author_check CHECK ((author_id IS NULL) <> (author_guest_id IS NULL)),
    CONSTRAINT comments_visibility_check
        CHECK (visibility IN ('everyone', 'internal') AND (visibility = 'everyone' OR author_guest_id IS NULL)),
    CONSTRAINT comments_resolved_check
        CHECK ((resolved_by IS NULL AND resolved_by_guest_id IS NULL) = (resolved_at IS NULL)
               AND (resolved_by IS NULL OR resolved_by_guest_id IS NULL))
);

-- The list's shapes, each served by an index that returns a page in seq
-- order whatever the table holds: every comment of a creative, those of one
-- version, top-level ones by resolved (of one version), a thread's replies.
CREATE INDEX comments_creative_seq_idx ON comments (creative_id, seq);
CREATE INDEX comments_creative_version_seq_idx ON comments (creative_id, version_number, seq);
CREATE INDEX comments_top_level_resolved_seq_idx ON comments (creative_id, resolved, seq)
    WHERE parent_id IS NULL;
CREATE INDEX comments_top_level_version_resolved_seq_idx ON comments (creative_id, version_number, resolved, seq)
    WHERE parent_id IS NULL;
CREATE INDEX comments_parent_seq_idx ON comments (parent_id, seq) WHERE parent_id IS NOT NULL;
-- openCommentCount: the open top-level comments of a version, counted from
-- this index alone.
CREATE INDEX comments_open_version_idx ON comments (version_id)
    WHERE parent_id IS NULL AND resolved_at IS NULL AND NOT deleted;
-- openThreadCount: the open top-level comments of every version.
CREATE INDEX comments_open_threads_idx ON comments (creative_id)
    WHERE parent_id IS NULL AND resolved_at IS NULL AND NOT deleted;


-- uploads: files uploaded to the object store (docs/uploads.md). An upload is a file a browser sends
-- straight to the object store in parts; the API records what was
-- announced, checks what arrived, and serves it back. object_key is where
-- the file lives in the bucket; store_upload_id is the store's multipart
-- upload, until it is completed or aborted (NULL for a file of one part,
-- PUT whole to object_key). asset_id is the Asset the
-- upload became once ready; width, height and duration_ms are what the
-- file's own bytes said.
CREATE TABLE uploads (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_by      uuid NOT NULL REFERENCES users (id),
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'ready', 'failed')),
    file_name       text NOT NULL,
    mime_type       text NOT NULL,
    size_bytes      bigint NOT NULL CHECK (size_bytes > 0),
    sha256          text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    part_size       bigint NOT NULL CHECK (part_size > 0),
    object_key      text NOT NULL UNIQUE,
    store_upload_id text,
    asset_id        uuid UNIQUE,
    width           integer,
    height          integer,
    duration_ms     integer,
    failure         text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    CONSTRAINT uploads_ready_has_asset CHECK ((status = 'ready') = (asset_id IS NOT NULL)),
    CONSTRAINT uploads_finished CHECK ((status = 'pending') = (finished_at IS NULL))
);

-- The quota sums an organization's ready and pending uploads.
CREATE INDEX uploads_organization_idx ON uploads (organization_id) WHERE status IN ('pending', 'ready');
-- The expiry job reads pending uploads by expiry.
CREATE INDEX uploads_pending_expires_idx ON uploads (expires_at) WHERE status = 'pending';

-- An asset of a version made from an upload names it; its bytes are the
-- upload's object.
ALTER TABLE assets ADD COLUMN upload_id uuid REFERENCES uploads (id);

-- A completion claims its upload (completing_since) while it assembles the
-- parts and reads the file outside any transaction; the expiry job leaves
-- an upload claimed lately alone, and deletes the assembled file of one
-- whose completion never finished.
ALTER TABLE uploads ADD COLUMN completing_since timestamptz;

-- What an upload's presigned URLs write goes to a staging key; completing
-- copies it to the final key before checking it, so nothing a URL writes
-- afterwards reaches what /content serves (docs/uploads.md). The sweep
-- deletes whatever a finished upload's keys still hold once none of its
-- URLs works any more, and records it in swept_at.
ALTER TABLE uploads ADD COLUMN swept_at timestamptz;

-- The sweep reads finished uploads not yet swept, by expiry.
CREATE INDEX uploads_unswept_idx ON uploads (expires_at) WHERE status <> 'pending' AND swept_at IS NULL;

-- A deleted upload (DELETE …/uploads/{id}) is failed and gone from the
-- API; its row stays until the sweep has emptied its keys.
ALTER TABLE uploads ADD COLUMN deleted_at timestamptz;

CREATE TABLE notification_settings (
    user_id          uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    email            text NOT NULL DEFAULT 'instant' CHECK (email IN ('instant', 'daily', 'off')),
    mention          boolean NOT NULL DEFAULT true,
    review_requested boolean NOT NULL DEFAULT true,
    decision         boolean NOT NULL DEFAULT true,
    due              boolean NOT NULL DEFAULT true,
    deposit          boolean NOT NULL DEFAULT true,
    updated_at       timestamptz NOT NULL DEFAULT now()
);

-- A notification's id is its Message-ID: every attempt sends the same
-- mail. event_id names the outbox event it came from (no foreign key: the
-- events are purged after their retention); one per person, kind and event.
-- state: queued (its job will send it), sent, digest (waits for the daily
-- digest), digested, dropped (settings, lost access), failed (refused).
CREATE TABLE notifications (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    event_id        bigint NOT NULL,
    user_id         uuid REFERENCES users (id) ON DELETE CASCADE,
    kind            text NOT NULL CHECK (kind IN ('mention', 'review_requested', 'decision', 'due', 'deposit', 'share_invitation')),
    organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
    creative_id     uuid REFERENCES creatives (id) ON DELETE CASCADE,
    comment_id      uuid,
    deposit_id      uuid REFERENCES deposits (id) ON DELETE CASCADE,
    actor_name      text,
    detail          jsonb NOT NULL DEFAULT '{}',
    state           text NOT NULL DEFAULT 'queued'
        CHECK (state IN ('queued', 'sent', 'digest', 'digested', 'dropped', 'failed')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- A notification goes to a user or to an address (a guest of a share).
    email           text,
    share_id        uuid,
    UNIQUE (event_id, user_id, kind),
    CONSTRAINT notifications_recipient_check CHECK ((user_id IS NULL) <> (email IS NULL)),
    CONSTRAINT notifications_share_check CHECK (kind <> 'share_invitation' OR share_id IS NOT NULL)
);

CREATE INDEX notifications_digest_idx ON notifications (user_id, created_at) WHERE state = 'digest';
CREATE UNIQUE INDEX notifications_email_idx ON notifications (event_id, email, kind) WHERE email IS NOT NULL;

CREATE TABLE access_tokens (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    scopes       text[] NOT NULL CHECK (cardinality(scopes) > 0),
    token_hash   bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at   timestamptz
);

CREATE INDEX access_tokens_user_id_idx ON access_tokens (user_id, created_at DESC);

-- The replicas that share the rate limits' budget (internal/ratelimit):
-- each records itself every few seconds; unlogged, so after a crash it
-- starts empty and fills within one beat.
CREATE UNLOGGED TABLE rate_limit_replicas (
    id uuid PRIMARY KEY,
    seen_at timestamptz NOT NULL
);

-- Shares let people outside the organization review chosen creatives by
-- link (docs/shares.md). Only the SHA-256 of a share's token is kept:
-- the token itself is in the create answer alone. A share is never
-- widened: its permission and creatives are written once. A decide share
-- is made by an admin (migration 0041 narrowed the others to comment).
CREATE TABLE shares (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    token_hash      bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    permission      text NOT NULL CHECK (permission IN ('view', 'comment', 'decide')),
    expires_at      timestamptz NOT NULL,
    password_hash   text,
    created_by      uuid NOT NULL REFERENCES users (id),
    created_at      timestamptz NOT NULL DEFAULT now(),
    revoked_at      timestamptz
);

CREATE INDEX shares_organization_idx ON shares (organization_id, created_at DESC, id DESC);

CREATE TABLE share_creatives (
    share_id    uuid NOT NULL REFERENCES shares (id) ON DELETE CASCADE,
    creative_id uuid NOT NULL REFERENCES creatives (id) ON DELETE CASCADE,
    position    integer NOT NULL,
    PRIMARY KEY (share_id, creative_id)
);

-- sent_at is set when the share_invitation email went out; last_seen_at
-- when the invited guest last opened the share.
CREATE TABLE share_invitations (
    share_id     uuid NOT NULL REFERENCES shares (id) ON DELETE CASCADE,
    email        text NOT NULL CHECK (email <> ''),
    name         text,
    position     integer NOT NULL,
    sent_at      timestamptz,
    last_seen_at timestamptz,
    -- The share's token sealed for this invitation's email until it is
    -- sent (docs/shares.md, "Invitation emails"); never the token itself.
    token_sealed bytea,
    -- The SHA-256 of the invitation's own token (docs/shares.md, "A guest
    -- is who their inbox says"); null for invitations made before.
    token_hash   bytea UNIQUE CHECK (length(token_hash) = 32),
    PRIMARY KEY (share_id, email)
);

ALTER TABLE notifications ADD CONSTRAINT notifications_share_id_fkey
    FOREIGN KEY (share_id) REFERENCES shares (id) ON DELETE CASCADE;

-- A guest is a person who opened a share: one per email and share, so
-- the same email on the same share is the same guest again.
CREATE TABLE guests (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    share_id   uuid NOT NULL REFERENCES shares (id) ON DELETE CASCADE,
    email      text NOT NULL CHECK (email <> ''),
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (share_id, email)
);

-- A guest session belongs to one guest of one share. It is live while
-- its share is (the lookup reads the share's revoked_at and expires_at),
-- so revoking or expiring a share ends all its sessions at once; only a
-- hash of its token is stored, as for users' sessions.
CREATE TABLE guest_sessions (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    guest_id    uuid NOT NULL REFERENCES guests (id) ON DELETE CASCADE,
    token_hash  bytea NOT NULL UNIQUE,
    csrf_token  text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    -- verified: opened with an invitation's token or confirmed by a code
    -- mailed to the email. name: the name the session was opened with.
    -- code_*: the pending email code (its SHA-256), expiry and wrong tries.
    verified    boolean NOT NULL DEFAULT false,
    name        text NOT NULL,
    code_hash   bytea,
    code_expires_at timestamptz,
    code_failures smallint NOT NULL DEFAULT 0,
    CONSTRAINT guest_sessions_code_check CHECK ((code_hash IS NULL) = (code_expires_at IS NULL))
);

-- A guest writes comments, resolves their own threads and decides
-- (docs/shares.md, "What a guest may do").
ALTER TABLE comments
    ADD CONSTRAINT comments_author_guest_id_fkey FOREIGN KEY (author_guest_id) REFERENCES guests (id) ON DELETE CASCADE,
    ADD CONSTRAINT comments_resolved_by_guest_id_fkey FOREIGN KEY (resolved_by_guest_id) REFERENCES guests (id) ON DELETE CASCADE;
ALTER TABLE creative_events
    ADD CONSTRAINT creative_events_actor_guest_id_fkey FOREIGN KEY (actor_guest_id) REFERENCES guests (id) ON DELETE CASCADE;

-- comments_shown is a comment with the names its answer shows: its
-- author's, its resolver's and its mentions' (in the order sent).
CREATE VIEW comments_shown AS
SELECT cm.*, coalesce(au.name, cm.author_guest_name, ag.name) AS author_name, coalesce(rb.name, rg.name, '') AS resolved_by_name,
       ARRAY(SELECT coalesce(u.name, '')
             FROM unnest(cm.mention_user_ids) WITH ORDINALITY AS m (user_id, n)
             LEFT JOIN users u ON u.id = m.user_id
             ORDER BY m.n)::text[] AS mention_names
FROM comments cm
LEFT JOIN users au ON au.id = cm.author_id
LEFT JOIN guests ag ON ag.id = cm.author_guest_id
LEFT JOIN users rb ON rb.id = cm.resolved_by
LEFT JOIN guests rg ON rg.id = cm.resolved_by_guest_id;
-- review_plan_stages are a plan's stages, in order (position 0 first).
-- reviewer_ids are members; guest_emails the guests of a decide share.
-- from_round is the first round the stages decide: a plan set after a
-- round shows its stages pending, not that round's outcome.
CREATE TABLE review_plan_stages (
    creative_id  uuid NOT NULL REFERENCES creatives (id) ON DELETE CASCADE,
    position     smallint NOT NULL CHECK (position BETWEEN 0 AND 4),
    name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    rule         text NOT NULL CHECK (rule IN ('all', 'any', 'majority')),
    due_in_hours integer CHECK (due_in_hours BETWEEN 1 AND 2160),
    reviewer_ids uuid[] NOT NULL DEFAULT '{}',
    guest_emails text[] NOT NULL DEFAULT '{}',
    from_round   integer NOT NULL CHECK (from_round >= 1),
    PRIMARY KEY (creative_id, position),
    CHECK (cardinality(reviewer_ids) + cardinality(guest_emails) BETWEEN 1 AND 40)
);

-- review_stage_rounds are each stage's state in each round: pending,
-- active (due_at set from due_in_hours when it became active), approved
-- or changes_requested. Earlier rounds stay as history. due_soon_at and
-- overdue_at record when the due-date job announced each, once.
CREATE TABLE review_stage_rounds (
    creative_id uuid NOT NULL REFERENCES creatives (id) ON DELETE CASCADE,
    round       integer NOT NULL CHECK (round >= 1),
    position    smallint NOT NULL CHECK (position BETWEEN 0 AND 4),
    status      text NOT NULL CHECK (status IN ('pending', 'active', 'approved', 'changes_requested')),
    due_at      timestamptz,
    due_soon_at timestamptz,
    overdue_at  timestamptz,
    PRIMARY KEY (creative_id, round, position)
);

-- The due-date job and the overdue filter read active stages by due date.
CREATE INDEX review_stage_rounds_active_due_idx ON review_stage_rounds (due_at)
    WHERE status = 'active' AND due_at IS NOT NULL;

-- review_decisions are every person's decisions, a member's (reviewer_id)
-- or a guest's (guest_email); the latest of a person in a stage and round
-- counts. override: an admin decided for the whole creative.
CREATE TABLE review_decisions (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    creative_id    uuid NOT NULL REFERENCES creatives (id) ON DELETE CASCADE,
    round          integer NOT NULL CHECK (round >= 1),
    position       smallint NOT NULL CHECK (position BETWEEN 0 AND 4),
    reviewer_id    uuid REFERENCES users (id),
    guest_email    text,
    decision       text NOT NULL CHECK (decision IN ('approve', 'request_changes')),
    comment        text,
    version_number integer NOT NULL,
    override       boolean NOT NULL DEFAULT false,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CHECK ((reviewer_id IS NULL) <> (guest_email IS NULL)),
    -- guest_id: the guest who decided (with guest_email, their key).
    guest_id       uuid REFERENCES guests (id) ON DELETE CASCADE,
    -- guest_verified: the deciding guest's session was verified.
    guest_verified boolean
);

CREATE INDEX review_decisions_round_idx ON review_decisions (creative_id, round, position, id);

-- The audit log (migration 0041): changes made to an organization by its
-- people or by the service itself (actor_id NULL), one append-only row
-- each; no foreign key to users: an entry outlives the person it names.
CREATE TABLE audit_log (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    action          text NOT NULL CHECK (action <> ''),
    actor_id        uuid,
    target_type     text NOT NULL CHECK (target_type <> ''),
    target_id       uuid NOT NULL,
    target_name     text,
    at              timestamptz NOT NULL DEFAULT now(),
    ip_address      inet,
    details         jsonb NOT NULL DEFAULT '{}'
);

CREATE INDEX audit_log_organization_idx ON audit_log (organization_id, at DESC, id DESC);

CREATE TRIGGER audit_log_append_only BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION forbid_change();

-- share_openers are the client addresses that opened a share: once a
-- share has had 100 wrong passwords in an hour, only they may try.
CREATE TABLE share_openers (
    share_id   uuid NOT NULL REFERENCES shares (id) ON DELETE CASCADE,
    address    text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (share_id, address)
);

-- email_sends are the emails someone else can make us send, kept a day
-- for their ceilings (internal/emailcap): per recipient for what an
-- anonymous caller triggers, per organization, address and inviting user
-- for invitations. A revoked share's invitations stay counted.
CREATE TABLE email_sends (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind            text NOT NULL CHECK (kind IN ('guest_code', 'share_invitation')),
    recipient       text NOT NULL CHECK (recipient <> ''),
    organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
    sender_id       uuid REFERENCES users (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX email_sends_recipient_idx ON email_sends (recipient, created_at);
CREATE INDEX email_sends_organization_idx ON email_sends (organization_id, created_at) WHERE organization_id IS NOT NULL;
CREATE INDEX email_sends_sender_idx ON email_sends (sender_id, created_at) WHERE sender_id IS NOT NULL;
CREATE INDEX email_sends_created_at_idx ON email_sends (created_at);
