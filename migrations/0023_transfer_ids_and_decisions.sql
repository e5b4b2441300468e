-- 0023, issue 44: one name for each thing.
--
-- A settlement has one word: the audit record says the
-- operator's decision as the request does (credit, refund, reject), not a
-- past participle of it. The column is renamed after what it holds, the
-- stored words are rewritten once (the append-only trigger is lifted for
-- that statement only), and the final-settlement index follows.
DROP INDEX chain_transfer_settlements_final_key;
ALTER TABLE chain_transfer_settlements DROP CONSTRAINT chain_transfer_settlements_action_check;
ALTER TABLE chain_transfer_settlements RENAME COLUMN action TO decision;
ALTER TABLE chain_transfer_settlements DISABLE TRIGGER chain_transfer_settlements_append_only;
UPDATE chain_transfer_settlements
SET decision = CASE decision WHEN 'credited' THEN 'credit' WHEN 'refunded' THEN 'refund' ELSE 'reject' END;
ALTER TABLE chain_transfer_settlements ENABLE TRIGGER chain_transfer_settlements_append_only;
ALTER TABLE chain_transfer_settlements ADD CONSTRAINT chain_transfer_settlements_decision_check
    CHECK (decision IN ('credit', 'refund', 'reject'));
CREATE UNIQUE INDEX chain_transfer_settlements_final_key ON chain_transfer_settlements (transfer_id) WHERE decision <> 'reject';

-- A transfer's id in the operator API and the CLI is a UUID, as every other
-- id: public_id, random (gen_random_uuid: a transfer's id says nothing of
-- its order or time), given to existing rows by the default. The bigint key
-- stays the internal key (foreign keys, list order, cursors).
ALTER TABLE chain_transfers ADD COLUMN public_id uuid NOT NULL DEFAULT gen_random_uuid();
ALTER TABLE chain_transfers ADD CONSTRAINT chain_transfers_public_id_key UNIQUE (public_id);
