-- A payer fixes a short payment themselves (docs/deposits.md, "Top-ups"):
-- a top-up is a deposit of its own (top_up_of names the deposit under
-- review it completes), so its amount is reserved by the same unique index
-- as every deposit's, deposits_reserved_amount_key: no reservation of a
-- deposit and of a top-up ever share an amount. The deposit under review
-- shows its latest top-up (top_up_amount_minor, top_up_expires_at).
ALTER TABLE deposits
    ADD COLUMN top_up_of uuid REFERENCES deposits (id) ON DELETE CASCADE,
    ADD COLUMN top_up_amount_minor bigint,
    ADD COLUMN top_up_expires_at timestamptz,
    ADD COLUMN refund_address text,
    ADD COLUMN refund_tx_id text,
    ADD COLUMN refunded_at timestamptz;
ALTER TABLE deposits ADD CONSTRAINT deposits_top_up_check
    CHECK ((top_up_amount_minor IS NULL) = (top_up_expires_at IS NULL) AND (top_up_of IS NULL OR top_up_amount_minor IS NULL));
CREATE INDEX deposits_top_up_of_idx ON deposits (top_up_of) WHERE top_up_of IS NOT NULL;

-- A payer names where a refund goes (a TRON base58check address; the
-- checksum is checked in Go); an operator's refund records the transaction
-- that sent it back and when.
ALTER TABLE deposits ADD CONSTRAINT deposits_refund_check
    CHECK (refund_address ~ '^T[1-9A-HJ-NP-Za-km-z]{33}$'
           AND refund_tx_id ~ '^[0-9a-f]{64}$'
           AND (refund_tx_id IS NULL OR refunded_at IS NOT NULL));
ALTER TABLE deposits ADD CONSTRAINT deposits_refunded_at_check CHECK (refunded_at IS NULL OR status = 'refunded');

-- A refunded deposit keeps its review, so the payer sees what arrived and
-- where it went back: the review is set while under review, may stay once
-- refunded, and is cleared in every other state.
ALTER TABLE deposits DROP CONSTRAINT deposits_review_check;
ALTER TABLE deposits ADD CONSTRAINT deposits_review_check
    CHECK ((status <> 'under_review' OR (review_reason IS NOT NULL AND review_received_minor IS NOT NULL
                                          AND review_opened_at IS NOT NULL AND transfer_tx_id IS NOT NULL))
           AND (status IN ('under_review', 'refunded') OR (review_reason IS NULL AND review_received_minor IS NULL
                                                           AND review_opened_at IS NULL)));
