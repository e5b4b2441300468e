-- 0023: a settlement has one word (issue 44): the audit record says the
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
