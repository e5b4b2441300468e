-- A payer may cancel a deposit still awaiting its transfer (docs/deposits.md,
-- "Cancelling a deposit"): cancelled is terminal, and the deposit's amount is
-- free again at once. cancelled_at is set exactly while it is cancelled.
ALTER TABLE deposits DROP CONSTRAINT deposits_status_check;
ALTER TABLE deposits ADD CONSTRAINT deposits_status_check
    CHECK (status IN ('awaiting_transfer', 'confirming', 'credited', 'expired', 'under_review', 'refunded', 'cancelled'));
ALTER TABLE deposits ADD COLUMN cancelled_at timestamptz;
ALTER TABLE deposits ADD CONSTRAINT deposits_cancelled_check CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL));
-- The watcher looks up cancelled deposits by amount beside the reserved
-- ones (DepositsForAmounts): an index of their own keeps that an index
-- scan however many deposits there are.
CREATE INDEX deposits_cancelled_amount_idx
    ON deposits (network, address, currency, requested_amount_minor) WHERE status = 'cancelled';

-- The ledger is readable by its owner (listLedgerEntries): each entry gets
-- the public id the API answers, and an index for the newest-first pages.
ALTER TABLE ledger_entries ADD COLUMN public_id uuid NOT NULL DEFAULT gen_random_uuid();
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_public_id_key UNIQUE (public_id);
CREATE INDEX ledger_entries_user_id_created_at_idx ON ledger_entries (user_id, created_at DESC, public_id DESC);
