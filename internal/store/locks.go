package store

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
)
