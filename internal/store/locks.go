package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The advisory locks the service takes, each key given here once so that
// no two uses share one. The SQL statements that take a lock write its key
// as a literal (sqlc and the bench's pgbench scripts read them as they
// are), name the constant in a comment, and
// TestEveryAdvisoryLockKeyInTheQueriesIsANamedOne holds them to this block.
const (
	// LockMigrations is held (for the session) by the replica running the
	// migrations; the others wait for it.
	LockMigrations int64 = 7_305_551_001
	// LockChainWatcher is held (for the session) by the one replica that
	// polls the chain.
	LockChainWatcher int64 = 7_305_551_002
	// LockOutboxPublish makes the events' publishers take turns (to the
	// end of their transaction), so seq follows commit order.
	LockOutboxPublish int64 = 7_305_551_017
)

// Two-key locks: the first key names the kind, the second is a hashed id.
const (
	// LockDepositOwner, with hashtext(the user's id), is one user's deposit
	// owner lock (queries/deposits.sql).
	LockDepositOwner int32 = 1_685_024
	// LockDepositSlot + slot, with hashtext(the user's id), is one of a
	// user's deposit create slots; slots run from 0 to one less than the
	// open-deposit limit, so the keys above it up to that limit are taken.
	LockDepositSlot int32 = 1_685_025
	// LockEmailRecipient, with hashtext(the address), is one recipient's
	// email ceiling (queries/email_sends.sql); LockEmailSender, with
	// hashtext(the user's id), one inviting user's.
	LockEmailRecipient int32 = 1_685_100
	LockEmailSender    int32 = 1_685_101
	// LockDepositClaimer, with hashtext(the user's id), makes one user's
	// deposit claims take turns, so the claim limits are exact
	// (queries/chain.sql, DepositClaimLock).
	LockDepositClaimer int32 = 1_685_000
	// LockAccessTokenOwner, with hashtext(the user's id), makes one user's
	// token creations take turns (queries/access_tokens.sql).
	LockAccessTokenOwner int32 = 2_058_001
	// LockWebhookEndpoint, with hashtext(the endpoint's id), makes the
	// in-flight claims of one webhook endpoint take turns
	// (queries/events.sql).
	LockWebhookEndpoint int32 = 2_058_002
)

// Held is a session advisory lock held on a connection of its own,
// outside the pool (which it would otherwise shrink by one for as long as
// the lock is held). The lock lasts as long as that connection.
type Held struct{ conn *pgx.Conn }

// TryLock takes the session lock key on a new connection. held is nil
// when another session holds it. Errors come back translated.
func (s *Store) TryLock(ctx context.Context, key int64) (*Held, error) {
	conn, err := pgx.ConnectConfig(ctx, s.Pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, translateCall(err)
	}
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&got); err != nil || !got {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, translateCall(err)
	}
	return &Held{conn: conn}, nil
}

// Alive fails once the lock's connection is lost, and with it the lock.
func (h *Held) Alive(ctx context.Context) error {
	if _, err := h.conn.Exec(ctx, "SELECT 1"); err != nil {
		return fmt.Errorf("lock connection: %w", translateCall(err))
	}
	return nil
}

// Release gives the lock up by closing its connection, even when ctx is
// cancelled (for at most five seconds).
func (h *Held) Release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = h.conn.Close(ctx)
}
