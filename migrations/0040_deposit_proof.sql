-- Money moves to a person only on proof (docs/deposits.md, "Matching a
-- transfer" and "The payer's claim").

-- A claim is a payer saying an unmatched transfer is theirs. It never
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

-- review_contested: the deposit's claimed transfer was claimed by another
-- deposit too (it stays set once a second claim existed).
ALTER TABLE deposits ADD COLUMN review_contested boolean NOT NULL DEFAULT false;

-- The claims open before this migration.
INSERT INTO deposit_claims (transfer_id, deposit_id, user_id, created_at)
SELECT t.id, d.id, d.user_id, d.review_opened_at
FROM chain_transfers t JOIN deposits d ON d.id = t.deposit_id
WHERE t.status = 'unmatched' AND t.needs_review AND d.status = 'under_review'
  AND d.review_reason = 'amount_mismatch' AND d.transfer_tx_id = t.tx_id;

-- Deposits that claim one transfer are all under review with its
-- transaction: a transaction pays at most one deposit in every other state.
ALTER TABLE deposits DROP CONSTRAINT deposits_network_transfer_tx_id_key;
CREATE UNIQUE INDEX deposits_network_transfer_tx_id_key ON deposits (network, transfer_tx_id) WHERE status <> 'under_review';

-- A deposit credited by its fingerprint within the shortfall tolerance
-- keeps its review (amount_mismatch, what arrived, the transaction).
ALTER TABLE deposits DROP CONSTRAINT deposits_review_check;
ALTER TABLE deposits ADD CONSTRAINT deposits_review_check
    CHECK ((status <> 'under_review' OR (review_reason IS NOT NULL AND review_received_minor IS NOT NULL
                                          AND review_opened_at IS NOT NULL AND transfer_tx_id IS NOT NULL))
           AND (status IN ('under_review', 'refunded', 'credited') OR (review_reason IS NULL AND review_received_minor IS NULL
                                                                       AND review_opened_at IS NULL)));

-- The watcher's lookup of the one deposit whose matching suffix a transfer
-- carries (DepositsForFingerprints): deposits of a suffix by expiry.
CREATE INDEX deposits_fingerprint_idx ON deposits (network, address, currency, suffix_minor, expires_at)
    WHERE top_up_of IS NULL;

-- The deposit an entry credits, typed, so the ledger's page joins deposits
-- by their key (LedgerEntryListByUser) instead of reading every deposit.
ALTER TABLE ledger_entries
    ADD COLUMN deposit_id uuid GENERATED ALWAYS AS (CASE WHEN source_type = 'deposit' THEN source_id::uuid END) STORED;
