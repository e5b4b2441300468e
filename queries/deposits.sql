-- Account deposits and the balance ledger.
--
-- Whether a deposit is open is deposit_open (schema.sql) in SQL, and
-- deposit.IsOpen(deposit.EffectiveStatus(...)) in Go (a test holds them equal).

-- name: DepositOwnerLock :exec
-- DepositOwnerLock serialises one user's deposit creations when the
-- user is near the open-deposit limit, so the open-deposit count read by
-- the next statement cannot be raced (each statement of a transaction
-- reads a snapshot taken after the statements before it, also when they
-- are sent in one pipeline). It is the exclusive mode of the user's owner
-- lock: an advisory lock held to the end of the transaction, keyed by the
-- user (the first key, store.LockDepositOwner; two users
-- whose ids hash alike only take turns). Unlike a row lock on users it
-- writes nothing, no WAL record, no dirtied page, and nothing else that
-- locks the users row (sign-ins, foreign key checks) ever waits on it. A
-- waiter sleeps in PostgreSQL's lock queue: it costs no CPU
-- (docs/deposits.md).
SELECT pg_advisory_xact_lock(1685024, hashtext(CAST(sqlc.arg(user_id)::uuid AS text)));

-- name: DepositOwnerSlotLock :exec
-- DepositOwnerSlotLock lets a user's creations far below the limit run
-- side by side, a bounded number at once: it takes the owner lock shared
-- (so no exclusive holder counts meanwhile), then one of the user's
-- create slots exclusively (keys store.LockDepositSlot + slot). Its holder may insert
-- only while the count leaves room for every other slot's holder too
-- (DepositInsert's max_open is the limit less the other slots), which
-- keeps the limit exact with that many creations in flight
-- (docs/deposits.md proves it). Shared before slot, in this order, in
-- the one statement (a target list is evaluated left to right): an
-- exclusive waiter then never waits on a slot holder that waits on it.
SELECT pg_advisory_xact_lock_shared(1685024, hashtext(CAST(sqlc.arg(user_id)::uuid AS text))),
       pg_advisory_xact_lock(1685025 + sqlc.arg(slot)::integer, hashtext(CAST(sqlc.arg(user_id)::uuid AS text)));

-- name: DepositCreateSavepoint :exec
-- DepositCreateSavepoint marks where a creation's slot lock starts, so
-- a creation that finds the user near the limit gives its slot back
-- (DepositCreateRollbackToSavepoint releases the locks taken after it)
-- before it waits for the exclusive owner lock.
SAVEPOINT deposit_create;

-- name: DepositCreateRollbackToSavepoint :exec
ROLLBACK TO SAVEPOINT deposit_create;

-- name: DepositOpenCount :one
-- DepositOpenCount counts the user's open deposits.
SELECT count(*) FROM deposits
WHERE user_id = @user_id AND deposit_open(status, expires_at) AND top_up_of IS NULL;

-- name: DepositOpenCounts :one
-- DepositOpenCounts counts the open deposits by status, for the operators'
-- metrics. It reads the partial index of open deposits, so a scrape costs
-- what the open deposits cost, however many were ever made.
SELECT count(*) FILTER (WHERE status = 'awaiting_transfer')::bigint AS awaiting_transfer,
       count(*) FILTER (WHERE status = 'confirming')::bigint AS confirming
FROM deposits
WHERE deposit_open(status, expires_at);

-- name: DepositReservedBoundsReset :exec
-- DepositReservedBoundsReset sets the user's bound back to the reserved
-- deposits it counts, in part 0. Only a create holding the user's
-- exclusive owner lock may run it: no other create is in flight then, and
-- only an insert makes a deposit reserved, so no reserved deposit is
-- missing from the count when it commits (docs/deposits.md).
WITH counted AS (
    SELECT count(*)::integer AS reserved FROM deposits WHERE user_id = @user_id::uuid AND reserved AND top_up_of IS NULL
), others AS (
    UPDATE deposit_reserved_bounds SET reserved = 0 WHERE user_id = @user_id::uuid AND slot <> 0
)
INSERT INTO deposit_reserved_bounds (user_id, slot, reserved)
SELECT @user_id::uuid, 0, counted.reserved FROM counted
ON CONFLICT (user_id, slot) DO UPDATE SET reserved = excluded.reserved;

-- name: DepositInsert :one
-- DepositInsert creates a deposit with the given suffix when the user is
-- below max_open open deposits and the requested amount is free, and adds
-- 1 to the user's reserved bound in the part of the given slot. No row
-- means either the limit (DepositOpenCount tells) or a taken amount.
-- The limit is checked on the bound when the bound is below max_open:
-- the user's open deposits are fewer still, and none are counted (a
-- subquery runs only when CASE reaches it). Otherwise they are counted.
-- Times come from the database clock: created_at is now(), expires_at
-- now() + ttl, reserved_until now() + reserve_for (the lifetime plus the
-- monitoring window).
WITH inserted AS (
    INSERT INTO deposits (
        user_id, network, address, currency, base_amount_minor, suffix_minor, requested_amount_minor,
        confirmations_required, expires_at, reserved_until)
    SELECT @user_id::uuid, @network::text, @address::text, @currency::text, @base_amount_minor::bigint,
           @suffix_minor::integer, @requested_amount_minor::bigint, @confirmations_required::integer,
           now() + @ttl::interval, now() + @reserve_for::interval
    WHERE CASE WHEN (SELECT coalesce(sum(b.reserved), 0) FROM deposit_reserved_bounds b
                     WHERE b.user_id = @user_id::uuid) < @max_open::integer THEN true
               ELSE (SELECT count(*) FROM deposits
                     WHERE user_id = @user_id::uuid AND deposit_open(status, expires_at) AND top_up_of IS NULL) < @max_open::integer
          END
    ON CONFLICT (network, address, currency, requested_amount_minor) WHERE reserved DO NOTHING
    RETURNING *
), bound AS (
    INSERT INTO deposit_reserved_bounds (user_id, slot, reserved)
    SELECT user_id, @slot::integer, 1 FROM inserted
    ON CONFLICT (user_id, slot) DO UPDATE SET reserved = deposit_reserved_bounds.reserved + 1
)
SELECT * FROM inserted;

-- name: DepositInsertFreeSuffix :one
-- DepositInsertFreeSuffix creates a deposit with a suffix picked at random
-- among those no reserved deposit of this network, address, currency and
-- base amount holds, and adds 1 to the user's reserved bound in the part of
-- the given slot. No row: none is free, or a concurrent creation took the
-- one picked. The caller holds a create slot or the owner lock and checked
-- the limit (deposit.Create).
WITH p AS (
    SELECT @user_id::uuid AS user_id, @network::text AS network, @address::text AS address,
           @currency::text AS currency, @base_amount_minor::bigint AS base_amount_minor,
           @confirmations_required::integer AS confirmations_required,
           now() + @ttl::interval AS expires_at, now() + @reserve_for::interval AS reserved_until
), free AS (
    SELECT s.suffix, p.base_amount_minor + s.suffix AS requested_amount_minor
    FROM p, generate_series(1, 9999) AS s (suffix)
    WHERE NOT EXISTS (
        SELECT 1 FROM deposits d
        WHERE d.reserved
          AND d.network = p.network
          AND d.address = p.address
          AND d.currency = p.currency
          AND d.requested_amount_minor = p.base_amount_minor + s.suffix)
    ORDER BY random()
    LIMIT 1
), inserted AS (
    INSERT INTO deposits (
        user_id, network, address, currency, base_amount_minor, suffix_minor, requested_amount_minor,
        confirmations_required, expires_at, reserved_until)
    SELECT p.user_id, p.network, p.address, p.currency, p.base_amount_minor, free.suffix,
           free.requested_amount_minor, p.confirmations_required, p.expires_at, p.reserved_until
    FROM p, free
    ON CONFLICT (network, address, currency, requested_amount_minor) WHERE reserved DO NOTHING
    RETURNING *
), bound AS (
    INSERT INTO deposit_reserved_bounds (user_id, slot, reserved)
    SELECT user_id, @slot::integer, 1 FROM inserted
    ON CONFLICT (user_id, slot) DO UPDATE SET reserved = deposit_reserved_bounds.reserved + 1
)
SELECT * FROM inserted;

-- name: DepositGetByUser :one
-- DepositGetByUser reads one of the user's deposits with the database
-- clock, so its effective status agrees with DepositOpenCount. A top-up
-- is part of its deposit, never a deposit the user reads.
SELECT sqlc.embed(deposits), now()::timestamptz AS db_now
FROM deposits
WHERE id = @id AND user_id = @user_id AND top_up_of IS NULL;

-- name: DepositListByUser :many
-- DepositListByUser pages the user's deposits newest first; the cursor is
-- the (created_at, id) of the last row of the previous page, and no cursor
-- starts above every row. One row comparison (not "cursor IS NULL OR …")
-- keeps it an index range in the generic plan the pool uses, so a deep page
-- costs what the first does.
SELECT sqlc.embed(deposits), now()::timestamptz AS db_now
FROM deposits
WHERE user_id = @user_id AND top_up_of IS NULL
  AND (created_at, id) < (coalesce(sqlc.narg('cursor_created_at')::timestamptz, 'infinity'),
                          coalesce(sqlc.narg('cursor_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
ORDER BY created_at DESC, id DESC
LIMIT @row_limit;

-- name: DepositCancel :one
-- DepositCancel is the payer's cancel of their deposit awaiting its
-- transfer before expires_at (deposit.MoveCancel), in one statement: it is
-- cancelled (terminal) and its amount is no longer reserved, so another
-- deposit may take it. No row: no such deposit of the user, or another
-- state.
UPDATE deposits SET status = 'cancelled', cancelled_at = now(), reserved = false
WHERE id = @id AND user_id = @user_id AND status = 'awaiting_transfer' AND expires_at > now() AND top_up_of IS NULL
RETURNING *;

-- name: DepositExpire :many
-- DepositExpire marks a batch of deposits past expires_at that saw no
-- transfer as expired, and returns them (for their events). SKIP LOCKED
-- lets several replicas sweep at once.
UPDATE deposits SET status = 'expired'
WHERE id IN (
    SELECT id FROM deposits
    WHERE status = 'awaiting_transfer' AND expires_at <= now()
    ORDER BY expires_at
    LIMIT @batch_size
    FOR UPDATE SKIP LOCKED)
  AND status = 'awaiting_transfer'
RETURNING *;

-- name: DepositReleaseReservations :execrows
-- DepositReleaseReservations frees the requested amounts of a batch of
-- deposits whose monitoring window has passed. A confirming deposit keeps
-- its amount until it is credited.
UPDATE deposits SET reserved = false
WHERE id IN (
    SELECT id FROM deposits
    WHERE reserved AND reserved_until <= now() AND status <> 'confirming'
    ORDER BY reserved_until
    LIMIT @batch_size
    FOR UPDATE SKIP LOCKED)
  AND reserved AND status <> 'confirming';

-- name: DepositCredit :one
-- DepositCredit credits a deposit paid by chain transaction tx_id with
-- exactly its requested amount (or, settling a review, exactly the amount
-- received: a claimed short transfer; or, with fingerprint set, a
-- confirming transfer that carried the deposit's suffix within the
-- shortfall tolerance, whose review it opens and keeps), and appends its
-- ledger entry, in one statement. Other deposits under review with tx_id
-- (claims of the same transfer) do not stop it. The deposit must be open (confirming, or awaiting its
-- transfer before expires_at), or, when late is set (an operator settling
-- a late transfer), awaiting, expired or under review. No row: the amount differs, the
-- deposit is already credited, not creditable, paid by another transaction,
-- or tx_id already paid another deposit; UNIQUE (source_type, source_id)
-- and UNIQUE (network, transfer_tx_id) back this up under races.
WITH credited AS (
    UPDATE deposits d
    SET status = 'credited', transfer_tx_id = @tx_id::text, credited_amount_minor = @amount_minor::bigint,
        confirmations = d.confirmations_required, reserved = false,
        review_reason = CASE WHEN @fingerprint::boolean THEN 'amount_mismatch' END,
        review_received_minor = CASE WHEN @fingerprint::boolean THEN @amount_minor::bigint END,
        review_opened_at = CASE WHEN @fingerprint::boolean THEN now() END
    WHERE d.id = @id
      AND (d.requested_amount_minor = @amount_minor::bigint
           OR (@late::boolean AND d.status = 'under_review' AND d.review_received_minor = @amount_minor::bigint)
           OR (@fingerprint::boolean AND d.status = 'confirming' AND d.transfer_tx_id = @tx_id::text))
      AND (deposit_open(d.status, d.expires_at)
           OR (@late::boolean AND d.status IN ('awaiting_transfer', 'expired', 'under_review')))
      AND (d.transfer_tx_id IS NULL OR d.transfer_tx_id = @tx_id)
      AND NOT EXISTS (
          SELECT 1 FROM deposits t
          WHERE t.network = d.network AND t.transfer_tx_id = @tx_id AND t.id <> d.id AND t.status <> 'under_review')
    RETURNING d.id, d.user_id, d.currency, d.credited_amount_minor
)
INSERT INTO ledger_entries (user_id, currency, amount_minor, source_type, source_id)
SELECT user_id, currency, credited_amount_minor, 'deposit', id::text
FROM credited
RETURNING id;

-- name: DepositGet :one
-- DepositGet reads a deposit by id alone, for the chain side (crediting),
-- with the database clock for its effective status.
SELECT sqlc.embed(deposits), now()::timestamptz AS db_now FROM deposits WHERE id = @id;

-- name: LedgerEntryListByUser :many
-- LedgerEntryListByUser pages the user's ledger entries newest first, with
-- the transaction that paid each credited deposit and the top-ups it
-- took in (DepositCreditTopUp); the cursor is the
-- (created_at, public_id) of the last row of the previous page, as for
-- DepositListByUser. Deposits are joined by the entry's typed deposit_id,
-- so each entry costs one primary key lookup however many deposits there
-- are (a join on d.id::text read them all: docs/performance.md).
SELECT e.public_id, e.amount_minor, e.currency, e.source_type, e.created_at,
       d.id AS deposit_id, d.top_up_of, d.transfer_tx_id,
       ARRAY(SELECT c.transfer_tx_id FROM deposits c
             WHERE c.top_up_of = d.id AND c.status = 'credited' AND c.credited_amount_minor = 0
             ORDER BY c.created_at)::text[] AS top_up_tx_ids
FROM ledger_entries e
LEFT JOIN deposits d ON d.id = e.deposit_id
WHERE e.user_id = @user_id
  AND (e.created_at, e.public_id) < (coalesce(sqlc.narg('cursor_created_at')::timestamptz, 'infinity'),
                                     coalesce(sqlc.narg('cursor_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
ORDER BY e.created_at DESC, e.public_id DESC
LIMIT @row_limit;

-- name: LedgerBalance :one
-- LedgerBalance sums the user's ledger entries in one currency.
SELECT coalesce(sum(amount_minor), 0)::bigint AS balance_minor
FROM ledger_entries
WHERE user_id = @user_id AND currency = @currency;

-- name: DepositTopUp :one
-- DepositTopUp reserves a top-up for the user's deposit under review for a
-- short transfer the watcher attached by its fingerprint (never a claimed
-- one: deposit.MoveTopUp), in one statement: a deposit of
-- its own (top_up_of) of the shortfall plus a suffix picked at random among
-- the free ones, reserved like every deposit (deposits_reserved_amount_key
-- makes it unique among deposits and top-ups), and the deposit shows it. The
-- deposit must have no open top-up. No row: the deposit is not in that
-- state, or no suffix is free (or a concurrent creation took the one picked).
WITH parent AS (
    SELECT d.id, d.user_id, d.network, d.address, d.currency, d.confirmations_required,
           d.requested_amount_minor - d.review_received_minor AS shortfall
    FROM deposits d
    WHERE d.id = @id AND d.user_id = @user_id AND d.top_up_of IS NULL AND d.status = 'under_review'
      AND d.review_reason = 'amount_mismatch' AND d.review_received_minor < d.requested_amount_minor
      AND (d.top_up_expires_at IS NULL OR d.top_up_expires_at <= now())
      AND EXISTS (
          SELECT 1 FROM chain_transfers t
          WHERE t.network = d.network AND t.tx_id = d.transfer_tx_id AND t.deposit_id = d.id
            AND t.status = 'unmatched' AND t.reason = 'amount_mismatch' AND t.needs_review)
    FOR UPDATE
), free AS (
    SELECT s.suffix, p.shortfall + s.suffix AS requested_amount_minor
    FROM parent p, generate_series(1, 9999) AS s (suffix)
    WHERE NOT EXISTS (
        SELECT 1 FROM deposits d
        WHERE d.reserved AND d.network = p.network AND d.address = p.address AND d.currency = p.currency
          AND d.requested_amount_minor = p.shortfall + s.suffix)
    ORDER BY random()
    LIMIT 1
), inserted AS (
    INSERT INTO deposits (
        user_id, network, address, currency, base_amount_minor, suffix_minor, requested_amount_minor,
        confirmations_required, expires_at, reserved_until, top_up_of)
    SELECT p.user_id, p.network, p.address, p.currency, p.shortfall, free.suffix, free.requested_amount_minor,
           p.confirmations_required, now() + @ttl::interval, now() + @reserve_for::interval, p.id
    FROM parent p, free
    ON CONFLICT (network, address, currency, requested_amount_minor) WHERE reserved DO NOTHING
    RETURNING top_up_of, requested_amount_minor, expires_at
)
UPDATE deposits d SET top_up_amount_minor = i.requested_amount_minor, top_up_expires_at = i.expires_at
FROM inserted i
WHERE d.id = i.top_up_of
RETURNING d.*;

-- name: DepositCreditTopUp :one
-- DepositCreditTopUp credits top-up id paid on time by chain transaction
-- tx_id with exactly its amount, in one statement (deposit.MovePayTopUp):
-- the deposit it completes, still under review, is credited with the sum
-- of both transfers (deposit.MoveCreditTopUp) and gets the ledger entry,
-- the top-up is credited with 0 (its money is in the deposit's entry). A
-- deposit no longer under review (an operator settled it meanwhile) takes
-- nothing: the top-up is credited alone with its own entry, so the money
-- is never lost. No row: the top-up is not open, the amount differs, or
-- tx_id paid another deposit.
WITH parent AS (
    SELECT p.id FROM deposits p JOIN deposits c ON c.top_up_of = p.id
    WHERE c.id = @id AND p.status = 'under_review' AND p.review_received_minor IS NOT NULL
    FOR UPDATE OF p
), top_up AS (
    UPDATE deposits c
    SET status = 'credited', transfer_tx_id = @tx_id::text,
        credited_amount_minor = CASE WHEN EXISTS (SELECT 1 FROM parent) THEN 0 ELSE @amount_minor::bigint END,
        confirmations = c.confirmations_required, reserved = false
    WHERE c.id = @id AND c.top_up_of IS NOT NULL AND c.requested_amount_minor = @amount_minor::bigint
      AND deposit_open(c.status, c.expires_at)
      AND (c.transfer_tx_id IS NULL OR c.transfer_tx_id = @tx_id)
      AND NOT EXISTS (
          SELECT 1 FROM deposits t
          WHERE t.network = c.network AND t.transfer_tx_id = @tx_id AND t.id <> c.id)
    RETURNING c.id, c.user_id, c.currency, c.credited_amount_minor
), completed AS (
    UPDATE deposits p
    SET status = 'credited', credited_amount_minor = p.review_received_minor + @amount_minor::bigint,
        confirmations = p.confirmations_required, reserved = false,
        review_reason = NULL, review_received_minor = NULL, review_opened_at = NULL,
        top_up_amount_minor = NULL, top_up_expires_at = NULL
    FROM parent, top_up
    WHERE p.id = parent.id
    RETURNING p.id, p.user_id, p.currency, p.credited_amount_minor
)
INSERT INTO ledger_entries (user_id, currency, amount_minor, source_type, source_id)
SELECT user_id, currency, credited_amount_minor, 'deposit', id::text FROM completed
UNION ALL
SELECT user_id, currency, credited_amount_minor, 'deposit', id::text FROM top_up WHERE credited_amount_minor > 0
RETURNING source_id::uuid AS deposit_id;

-- name: DepositRefundAddressSet :one
-- DepositRefundAddressSet stores where a refund of the user's deposit
-- under review goes. No row: no such deposit of the user, or another state.
UPDATE deposits SET refund_address = @address
WHERE id = @id AND user_id = @user_id AND status = 'under_review' AND top_up_of IS NULL
RETURNING *;
