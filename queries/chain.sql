-- The chain watcher's statements (docs/deposits.md). Every batch statement
-- takes arrays, so a poll costs a fixed number of round trips however many
-- transfers it sees.

-- name: ChainPositionGet :one
-- ChainPositionGet reads where the watcher of one treasury and token stands.
SELECT position FROM chain_watch_positions
WHERE network = @network AND address = @address AND token = @token;

-- name: ChainPositionSave :exec
-- ChainPositionSave stores where the watcher stands after a poll.
INSERT INTO chain_watch_positions (network, address, token, position, head_block, solid_block, polled_at)
VALUES (@network, @address, @token, @position, @head_block, @solid_block, now())
ON CONFLICT (network, address, token) DO UPDATE
SET position = excluded.position, head_block = excluded.head_block,
    solid_block = excluded.solid_block, polled_at = excluded.polled_at;

-- name: ChainPositionStatus :one
-- ChainPositionStatus reads where the watcher stands, for the operators'
-- metrics. lag_seconds is how far its position trails the database's
-- clock: every transfer with an older block time has been processed.
SELECT position, head_block, solid_block, polled_at,
       extract(epoch FROM now() - position)::float8 AS lag_seconds
FROM chain_watch_positions
WHERE network = @network AND address = @address AND token = @token;

-- name: ChainTransfersKnown :many
-- ChainTransfersKnown returns which of the given transactions' transfers are
-- recorded already. A vanished one counts as unknown: if the chain shows it
-- again, it is judged again.
SELECT tx_id, token, from_address, amount_raw FROM chain_transfers
WHERE network = @network AND tx_id = ANY (@tx_ids::text[]) AND status <> 'vanished';

-- name: DepositsForAmounts :many
-- DepositsForAmounts locks the deposits holding a reservation for any of
-- the given amounts on the treasury (by deposits_reserved_amount_key, at
-- most one per amount), and the cancelled deposits of those amounts inside
-- their monitoring window (reserved_until), whose late transfers are
-- recorded for review. Reserved ones come last, so a caller keeping the
-- last row of each amount keeps the reserved one.
SELECT id, requested_amount_minor, status, transfer_tx_id, created_at, expires_at
FROM deposits
WHERE (reserved OR (status = 'cancelled' AND reserved_until > now()))
  AND network = @network AND address = @address AND currency = @currency
  AND requested_amount_minor = ANY (@amounts::bigint[])
ORDER BY reserved, cancelled_at
FOR UPDATE;

-- name: DepositsForFingerprints :many
-- DepositsForFingerprints locks the deposits (never top-ups) on the
-- treasury whose matching suffix is one of the given ones and whose
-- lifetime reaches since (the earliest block time judged): those a
-- transfer carrying that suffix may be for (deposit.Fingerprint decides).
-- deposits_fingerprint_idx serves it; a deposit lives DEPOSIT_TTL, so it
-- reads the deposits of the last half hour or so of each suffix.
SELECT id, suffix_minor, requested_amount_minor, status, transfer_tx_id, created_at, expires_at, cancelled_at
FROM deposits
WHERE network = @network AND address = @address AND currency = @currency
  AND suffix_minor = ANY (@suffixes::integer[]) AND expires_at >= @since::timestamptz AND top_up_of IS NULL
ORDER BY id
FOR UPDATE;

-- name: ChainTransfersRecord :many
-- ChainTransfersRecord records judged transfers and moves the deposits the
-- confirming ones pay to confirming (deposit.MoveMatch), those a late
-- one is for to under_review (deposit.MoveAttachLate), and those an
-- unmatched one carries the fingerprint of to under_review for the amount
-- (deposit.MoveAttachMismatch), in one statement. A transfer recorded
-- before is left alone (and so is its deposit) unless it had vanished.
-- The arrays are the columns of the transfers, of equal length; empty
-- strings, zero amounts and the nil UUID stand for null.
WITH input AS (
    SELECT unnest(@tx_ids::text[]) AS tx_id, unnest(@tokens::text[]) AS token,
           unnest(@from_addresses::text[]) AS from_address, unnest(@to_addresses::text[]) AS to_address,
           unnest(@amount_raws::text[]) AS amount_raw, unnest(@amount_minors::bigint[]) AS amount_minor,
           unnest(@block_times::timestamptz[]) AS block_time, unnest(@block_numbers::bigint[]) AS block_number,
           unnest(@statuses::text[]) AS status, unnest(@reasons::text[]) AS reason,
           unnest(@deposit_ids::uuid[]) AS deposit_id
), recorded AS (
    INSERT INTO chain_transfers AS t (
        network, tx_id, token, from_address, to_address, amount_raw, amount_minor, block_time,
        block_number, status, reason, deposit_id, needs_review)
    SELECT @network::text, i.tx_id, i.token, i.from_address, i.to_address, i.amount_raw,
           nullif(i.amount_minor, 0), i.block_time, i.block_number, i.status, nullif(i.reason, ''),
           nullif(i.deposit_id, '00000000-0000-0000-0000-000000000000'::uuid),
           i.status IN ('late', 'unmatched')
    FROM input i
    ON CONFLICT (network, tx_id, token, from_address, amount_raw) DO UPDATE
    SET block_time = excluded.block_time, block_number = excluded.block_number, status = excluded.status,
        reason = excluded.reason, deposit_id = excluded.deposit_id, needs_review = excluded.needs_review,
        updated_at = now()
    WHERE t.status = 'vanished'
    RETURNING t.id, t.tx_id, t.status, t.deposit_id, t.block_number, t.amount_minor
)
UPDATE deposits d
SET status = CASE WHEN r.status = 'confirming' THEN 'confirming' ELSE 'under_review' END,
    transfer_tx_id = r.tx_id,
    confirmations = CASE WHEN r.status = 'confirming'
        THEN least(greatest(sqlc.arg('head_block')::bigint - r.block_number + 1, 0), d.confirmations_required) ELSE 0 END,
    review_reason = CASE WHEN r.status = 'late' THEN 'late' WHEN r.status = 'unmatched' THEN 'amount_mismatch' END,
    review_received_minor = CASE WHEN r.status IN ('late', 'unmatched') THEN r.amount_minor END,
    review_opened_at = CASE WHEN r.status IN ('late', 'unmatched') THEN now() END
FROM recorded r
WHERE d.id = r.deposit_id AND d.transfer_tx_id IS NULL
  AND (r.status = 'confirming' OR (r.status IN ('late', 'unmatched') AND d.status IN ('awaiting_transfer', 'expired')))
RETURNING d.*;

-- name: ChainTransfersConfirming :many
-- ChainTransfersConfirming lists the transfers paying a deposit that wait
-- for their block to be solidified, oldest first.
SELECT t.id, t.tx_id, t.block_number, t.amount_minor, t.deposit_id, t.reason, d.confirmations_required, d.top_up_of
FROM chain_transfers t JOIN deposits d ON d.id = t.deposit_id
WHERE t.network = @network AND t.status = 'confirming'
ORDER BY t.id
LIMIT @row_limit;

-- name: ChainConfirmationsSet :many
-- ChainConfirmationsSet stores each confirming transfer's block (a fork may
-- have moved it) and its deposit's confirmations, in one statement, and
-- returns the deposits whose confirmations changed (for their events).
WITH u AS (
    SELECT unnest(@transfer_ids::bigint[]) AS id, unnest(@block_numbers::bigint[]) AS block_number,
           unnest(@confirmations::integer[]) AS confirmations
), moved AS (
    UPDATE chain_transfers t SET block_number = u.block_number, updated_at = now()
    FROM u
    WHERE t.id = u.id AND t.status = 'confirming' AND t.block_number IS DISTINCT FROM u.block_number
)
UPDATE deposits d SET confirmations = u.confirmations
FROM u JOIN chain_transfers t ON t.id = u.id
WHERE d.id = t.deposit_id AND d.status = 'confirming' AND d.transfer_tx_id = t.tx_id
  AND d.confirmations <> u.confirmations
RETURNING d.*;

-- name: ChainTransfersRevert :many
-- ChainTransfersRevert ends confirming transfers that failed or vanished
-- and puts their deposits back: awaiting the transfer, or expired past
-- expires_at, with no confirmations and no transaction.
WITH u AS (
    SELECT unnest(@transfer_ids::bigint[]) AS id, unnest(@statuses::text[]) AS status,
           unnest(@reasons::text[]) AS reason
), ended AS (
    UPDATE chain_transfers t
    SET status = u.status, reason = u.reason, needs_review = u.status IN ('late', 'unmatched'), updated_at = now()
    FROM u
    WHERE t.id = u.id AND t.status = 'confirming'
    RETURNING t.deposit_id, t.tx_id
)
UPDATE deposits d
SET status = CASE WHEN d.expires_at <= now() THEN 'expired' ELSE 'awaiting_transfer' END,
    confirmations = 0, transfer_tx_id = NULL
FROM ended e
WHERE d.id = e.deposit_id AND d.status = 'confirming' AND d.transfer_tx_id = e.tx_id
RETURNING d.*;

-- name: ChainTransferCredited :execrows
-- ChainTransferCredited marks a confirming transfer as having paid its
-- deposit (deposit.MoveMarkCredited).
UPDATE chain_transfers SET status = 'credited', needs_review = false, updated_at = now()
WHERE id = @id AND status = 'confirming';

-- name: ChainTransferPolicyAudit :exec
-- ChainTransferPolicyAudit writes the audit record of a transfer the
-- shortfall policy credited with no operator (a fingerprint within the
-- tolerance: deposit.CreditByFingerprint), naming policy as its operator.
INSERT INTO chain_transfer_settlements (transfer_id, decision, operator, note, deposit_id)
VALUES (@transfer_id, 'credit', 'policy', @note, @deposit_id);

-- name: ChainTransfersForReview :many
-- ChainTransfersForReview pages transfers by id: those waiting for an
-- operator (needs_review) or, with every set, all of them; status narrows it.
SELECT * FROM chain_transfers
WHERE (@every::boolean OR needs_review)
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status'))
  AND id > @after_id
ORDER BY id
LIMIT @row_limit;

-- name: ChainTransferLock :one
-- ChainTransferLock reads a transfer for settling it.
SELECT * FROM chain_transfers WHERE id = @id FOR UPDATE;

-- name: ChainTransferSettle :one
-- ChainTransferSettle closes the review of a transfer as an operator's
-- settlement and writes its audit record, in one statement
-- (deposit.MoveSettleCredit: late, or unmatched and claimed for a deposit,
-- to credited; deposit.MoveSettleRefund:
-- late or unmatched to refunded, and its deposit under review, if any, to
-- refunded, keeping its review and recording the refund's transaction:
-- deposit.MoveRefund). No row: the transfer is not waiting for
-- that settlement. The unique index on a transfer's final settlements
-- (chain_transfer_settlements_final_key) backs this up under races.
WITH settled AS (
    UPDATE chain_transfers t SET status = @status::text, needs_review = false, updated_at = now()
    WHERE t.id = @id AND t.needs_review
      AND (t.status = 'late' OR (t.status = 'unmatched' AND (@status::text = 'refunded' OR t.deposit_id IS NOT NULL)))
    RETURNING t.id, t.deposit_id, t.tx_id
), refunded AS (
    UPDATE deposits d
    SET status = 'refunded', refund_tx_id = sqlc.narg('refund_tx_id')::text, refunded_at = now(),
        top_up_amount_minor = NULL, top_up_expires_at = NULL
    FROM settled s
    WHERE @status::text = 'refunded' AND d.id = s.deposit_id AND d.status = 'under_review' AND d.transfer_tx_id = s.tx_id
)
INSERT INTO chain_transfer_settlements (transfer_id, decision, operator, note, deposit_id)
SELECT s.id, @decision::text, @operator, @note, s.deposit_id FROM settled s
RETURNING id;

-- name: ChainTransferReject :many
-- ChainTransferReject is an operator's rejection of a late or claimed
-- transfer, in one statement: the transfer is detached from its deposit and
-- unmatched again, still waiting for review (deposit.MoveSettleReject), and
-- attached to the next open claim of it, if any; the deposit's claim is
-- closed, its audit record names the deposit, and the deposit under review with it
-- goes back to awaiting_transfer, or expired past expires_at
-- (deposit.MoveReject), showing no top-up (one still open pays only
-- itself now). It returns the deposit it moved: none for a
-- transfer attached to a deposit that is not under review with it.
WITH rejected AS (
    UPDATE chain_transfers t SET status = 'unmatched', reason = 'rejected', updated_at = now(),
        deposit_id = (SELECT c.deposit_id FROM deposit_claims c
                      WHERE c.transfer_id = t.id AND c.closed_at IS NULL AND c.deposit_id <> o.deposit_id
                      ORDER BY c.id LIMIT 1)
    FROM chain_transfers o
    WHERE t.id = @id AND o.id = t.id AND t.needs_review AND t.status IN ('late', 'unmatched') AND t.deposit_id IS NOT NULL
    RETURNING t.id, t.tx_id, o.deposit_id
), closed AS (
    UPDATE deposit_claims c SET closed_at = now()
    FROM rejected r
    WHERE c.transfer_id = r.id AND c.deposit_id = r.deposit_id AND c.closed_at IS NULL
), audit AS (
    INSERT INTO chain_transfer_settlements (transfer_id, decision, operator, note, deposit_id)
    SELECT r.id, 'reject', @operator, @note, r.deposit_id FROM rejected r
)
UPDATE deposits d
SET status = CASE WHEN d.expires_at <= now() THEN 'expired' ELSE 'awaiting_transfer' END,
    transfer_tx_id = NULL, confirmations = 0,
    review_reason = NULL, review_received_minor = NULL, review_opened_at = NULL,
    top_up_amount_minor = NULL, top_up_expires_at = NULL
FROM rejected r
WHERE d.id = r.deposit_id AND d.status = 'under_review' AND d.transfer_tx_id = r.tx_id
RETURNING d.*;

-- name: ChainTransferReviewCount :one
-- ChainTransferReviewCount counts the transfers waiting for an operator
-- (a partial index holds only those).
SELECT count(*) FROM chain_transfers WHERE needs_review;

-- name: ChainTransfersByTx :many
-- ChainTransfersByTx lists the transfers of one transaction, for a payer's
-- claim (one transaction may hold several).
SELECT * FROM chain_transfers WHERE network = @network AND tx_id = @tx_id ORDER BY id;

-- name: DepositClaimLock :exec
-- DepositClaimLock makes one user's claims take turns (an advisory lock
-- to the end of the transaction, store.LockDepositClaimer), so the limits
-- on open and daily claims DepositClaim checks cannot be raced.
SELECT pg_advisory_xact_lock(1685000, hashtext(CAST(sqlc.arg(user_id)::uuid AS text)));

-- name: DepositClaim :one
-- DepositClaim records the user's claim of unmatched transfer transfer_id
-- for their deposit, which goes under review with what arrived
-- (deposit.MoveClaim: awaiting_transfer or expired to under_review), in
-- one statement. A claim never credits. The transfer must be unsettled,
-- paying no deposit (attached to none, or to a deposit of an open claim:
-- several deposits may claim one transfer), with a countable amount, to the
-- deposit's address, in a block from the deposit's creation (to the
-- millisecond: block times are whole milliseconds) to its expiry plus
-- window_seconds, and not rejected for this deposit by an operator
-- before; the user must hold fewer than max_open open claims and have made
-- fewer than max_daily in the last day. The first claim attaches the
-- transfer; a later one marks every claimant's review contested. No row:
-- one of these does not hold (or a concurrent claim moved the transfer;
-- its row is re-checked).
WITH target AS (
    SELECT t.id AS transfer_id, t.tx_id, t.amount_minor, t.deposit_id AS attached, d.id AS deposit_id, d.user_id,
           EXISTS (SELECT 1 FROM deposit_claims c WHERE c.transfer_id = t.id AND c.closed_at IS NULL) AS contested
    FROM chain_transfers t, deposits d
    WHERE t.id = @transfer_id AND d.id = @deposit_id AND d.user_id = @user_id
      AND d.status IN ('awaiting_transfer', 'expired') AND d.transfer_tx_id IS NULL AND d.top_up_of IS NULL
      AND t.status = 'unmatched' AND t.needs_review AND t.amount_minor IS NOT NULL
      AND (t.deposit_id IS NULL OR EXISTS (
          SELECT 1 FROM deposit_claims c WHERE c.transfer_id = t.id AND c.deposit_id = t.deposit_id AND c.closed_at IS NULL))
      AND t.network = d.network AND t.to_address = d.address
      AND t.block_time >= date_trunc('milliseconds', d.created_at)
      AND t.block_time <= d.expires_at + make_interval(secs => @window_seconds::bigint)
      AND NOT EXISTS (
          SELECT 1 FROM chain_transfer_settlements s
          WHERE s.transfer_id = t.id AND s.deposit_id = d.id AND s.decision = 'reject')
      AND (SELECT count(*) FROM deposit_claims c WHERE c.user_id = @user_id AND c.closed_at IS NULL) < @max_open::bigint
      AND (SELECT count(*) FROM deposit_claims c
           WHERE c.user_id = @user_id AND c.created_at > now() - interval '1 day') < @max_daily::bigint
    FOR UPDATE OF t, d
), claim AS (
    INSERT INTO deposit_claims (transfer_id, deposit_id, user_id)
    SELECT transfer_id, deposit_id, user_id FROM target
), attached AS (
    UPDATE chain_transfers t SET deposit_id = g.deposit_id, updated_at = now()
    FROM target g
    WHERE t.id = g.transfer_id AND g.attached IS NULL
), others AS (
    UPDATE deposits o SET review_contested = true
    FROM target g, deposit_claims c
    WHERE c.transfer_id = g.transfer_id AND c.closed_at IS NULL AND o.id = c.deposit_id AND o.status = 'under_review'
)
UPDATE deposits d
SET status = 'under_review', transfer_tx_id = g.tx_id, confirmations = 0,
    review_reason = 'amount_mismatch', review_received_minor = g.amount_minor, review_opened_at = now(),
    review_contested = g.contested
FROM target g
WHERE d.id = g.deposit_id
RETURNING d.*;

-- name: DepositClaimCounts :one
-- DepositClaimCounts counts the user's open claims and those made in the
-- last day, to say why DepositClaim refused (too_many_claims).
SELECT count(*) FILTER (WHERE closed_at IS NULL)::bigint AS open,
       count(*) FILTER (WHERE created_at > now() - interval '1 day')::bigint AS today
FROM deposit_claims
WHERE user_id = @user_id AND (closed_at IS NULL OR created_at > now() - interval '1 day');

-- name: DepositClaimsLose :many
-- DepositClaimsLose closes the open claims of transfer transfer_id once an
-- operator settled it (credited or refunded it for the deposit it is
-- attached to) and puts the other claimants' deposits back: awaiting the
-- transfer, or expired past expires_at, review cleared
-- (deposit.MoveLoseClaim), in one statement. It returns the deposits it
-- moved.
WITH closed AS (
    UPDATE deposit_claims c SET closed_at = now()
    FROM chain_transfers t
    WHERE c.transfer_id = @transfer_id AND t.id = c.transfer_id AND c.closed_at IS NULL AND t.status IN ('credited', 'refunded')
    RETURNING c.deposit_id, t.deposit_id AS winner, t.tx_id
)
UPDATE deposits d
SET status = CASE WHEN d.expires_at <= now() THEN 'expired' ELSE 'awaiting_transfer' END,
    transfer_tx_id = NULL, confirmations = 0,
    review_reason = NULL, review_received_minor = NULL, review_opened_at = NULL, review_contested = false,
    top_up_amount_minor = NULL, top_up_expires_at = NULL
FROM closed c
WHERE d.id = c.deposit_id AND d.id IS DISTINCT FROM c.winner AND d.status = 'under_review' AND d.transfer_tx_id = c.tx_id
RETURNING d.*;

-- name: ChainTransferClaims :many
-- ChainTransferClaims is every claim of the transfers ids, oldest first,
-- for operators.
SELECT c.transfer_id, c.deposit_id, c.user_id, u.email, c.created_at, c.closed_at
FROM deposit_claims c JOIN users u ON u.id = c.user_id
WHERE c.transfer_id = ANY (@transfer_ids::bigint[])
ORDER BY c.id;

-- name: OperatorTransfersList :many
-- OperatorTransfersList pages every transfer by id for operators; status
-- and needs_review narrow it when set.
SELECT * FROM chain_transfers
WHERE (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status'))
  AND (sqlc.narg('needs_review')::boolean IS NULL OR needs_review = sqlc.narg('needs_review'))
  AND id > @after_id
ORDER BY id
LIMIT @row_limit;

-- name: ChainTransferGet :one
-- ChainTransferGet reads a transfer by its id in the API (public_id).
SELECT * FROM chain_transfers WHERE public_id = @public_id;

-- name: ChainTransferSettlements :many
-- ChainTransferSettlements is the audit records of the transfers ids, oldest
-- first, with the operator's user id when the recorded name is a user's email.
SELECT s.transfer_id, s.decision, s.operator, s.note, s.created_at, u.id AS user_id, s.deposit_id
FROM chain_transfer_settlements s
LEFT JOIN users u ON u.email = s.operator
WHERE s.transfer_id = ANY(@transfer_ids::bigint[])
ORDER BY s.id;

-- name: DepositRefundAddresses :many
-- DepositRefundAddresses is the refund address the payers of the given
-- deposits named, for operators reading transfers.
SELECT id, refund_address FROM deposits
WHERE id = ANY (@ids::uuid[]) AND refund_address IS NOT NULL;
