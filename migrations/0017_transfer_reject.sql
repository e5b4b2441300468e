-- 0017: an operator may reject a transfer attached to a deposit (issue 29):
-- the transfer is detached and unmatched again, waiting for review or a
-- claim, and may be settled later. The audit table records the rejection
-- with the deposit it concerned, so a transfer has any number of rejections
-- and at most one final settlement (credited or refunded).
ALTER TABLE chain_transfer_settlements DROP CONSTRAINT chain_transfer_settlements_action_check;
ALTER TABLE chain_transfer_settlements ADD CONSTRAINT chain_transfer_settlements_action_check
    CHECK (action IN ('credited', 'refunded', 'rejected'));
ALTER TABLE chain_transfer_settlements DROP CONSTRAINT chain_transfer_settlements_transfer_id_key;
ALTER TABLE chain_transfer_settlements ADD COLUMN deposit_id uuid REFERENCES deposits (id);
CREATE UNIQUE INDEX chain_transfer_settlements_final_key ON chain_transfer_settlements (transfer_id) WHERE action <> 'rejected';
CREATE INDEX chain_transfer_settlements_transfer_id_idx ON chain_transfer_settlements (transfer_id);
