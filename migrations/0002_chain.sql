-- The chain watcher (docs/deposits.md): what the treasury received, where
-- the watcher stands, and what operators settled by hand.

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
    UNIQUE (network, tx_id, token, from_address, amount_raw)
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
-- late or unmatched transfer by hand; a transfer is settled at most once.
CREATE TABLE chain_transfer_settlements (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    transfer_id bigint NOT NULL UNIQUE REFERENCES chain_transfers (id),
    action      text NOT NULL CHECK (action IN ('credited', 'refunded')),
    operator    text NOT NULL CHECK (operator <> ''),
    note        text NOT NULL CHECK (note <> ''),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TRIGGER chain_transfer_settlements_append_only BEFORE UPDATE OR DELETE ON chain_transfer_settlements
    FOR EACH ROW EXECUTE FUNCTION forbid_change();
