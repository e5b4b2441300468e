-- 0014: deposits under review and refunded (issue 29). A late transfer of
-- the exact amount is attached to its deposit, which waits for an
-- operator (under_review) with what arrived; schema.sql says what each
-- column holds.
ALTER TABLE deposits DROP CONSTRAINT deposits_status_check;
ALTER TABLE deposits ADD CONSTRAINT deposits_status_check
    CHECK (status IN ('awaiting_transfer', 'confirming', 'credited', 'expired', 'under_review', 'refunded'));
ALTER TABLE deposits
    ADD COLUMN review_reason text CHECK (review_reason IN ('late', 'amount_mismatch')),
    ADD COLUMN review_received_minor bigint CHECK (review_received_minor > 0),
    ADD COLUMN review_opened_at timestamptz;
ALTER TABLE deposits ADD CONSTRAINT deposits_review_check
    CHECK ((status = 'under_review') = (review_reason IS NOT NULL AND review_received_minor IS NOT NULL
                                        AND review_opened_at IS NOT NULL AND transfer_tx_id IS NOT NULL));
-- Platform operators settle transfers (the /api/v1/operator API); set from
-- the command line (users create --operator, users set-operator).
ALTER TABLE users ADD COLUMN operator boolean NOT NULL DEFAULT false;
