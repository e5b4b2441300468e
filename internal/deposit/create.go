package deposit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"creativeapi/gen/db"
	"creativeapi/internal/money"
	"creativeapi/internal/store"
)

// Settings are the configured facts a new deposit is made from.
type Settings struct {
	// Address is the treasury address transfers go to.
	Address string
	// Confirmations is how many confirmations credit a transfer.
	Confirmations int
	// TTL is a deposit's lifetime; MonitoringWindow keeps its amount
	// reserved that much longer, so a late exact transfer still finds it.
	TTL              time.Duration
	MonitoringWindow time.Duration
	// MaxOpenPerUser bounds a user's open deposits.
	MaxOpenPerUser int
}

// The refusals of Create.
var (
	// ErrTooManyOpen: the user already has Settings.MaxOpenPerUser open deposits.
	ErrTooManyOpen = errors.New("deposit: too many open deposits")
	// ErrCapacityExhausted: every suffix of the amount is reserved.
	ErrCapacityExhausted = errors.New("deposit: every matching suffix of this amount is taken")
)

// randomTries is how many random suffixes Create tries before asking the
// database for a free one: with few reservations of an amount the first
// try almost always succeeds, and it costs one statement.
const randomTries = 3

// freeTries bounds the free-suffix query, which finds nothing either when
// every suffix is taken or when a concurrent creation took the one it
// picked; only the first case persists over retries.
const freeTries = 3

// Create opens a deposit of base minor units of USDT for user, in the
// caller's transaction q. It refuses with ErrTooManyOpen before writing
// anything, and with ErrCapacityExhausted when no suffix is free.
//
// Creations of one user are serialised on an advisory lock of theirs
// (DepositOwnerLock), so the open count read after the lock is exact and a
// waiting creation sleeps in PostgreSQL, spending nothing (docs/deposits.md
// says what serialises and why); the partial unique index
// deposits_reserved_amount_key makes the requested amounts of all users
// unique, and ON CONFLICT DO NOTHING turns a taken amount into a retry.
func Create(ctx context.Context, q store.Tx, s Settings, user uuid.UUID, base int64) (db.Deposit, error) {
	// The lock goes with the first insert, in one round trip.
	if err := q.Next().DepositOwnerLock(ctx, user); err != nil {
		return db.Deposit{}, err
	}
	ttl := interval(s.TTL)
	reserveFor := interval(s.TTL + s.MonitoringWindow)
	for try := range randomTries {
		suffix := RandomSuffix(nil)
		requested, err := RequestedAmount(base, suffix)
		if err != nil {
			return db.Deposit{}, err
		}
		d, err := q.DepositInsert(ctx, db.DepositInsertParams{
			UserID: user, Network: Network, Address: s.Address, Currency: money.USDT.Code,
			BaseAmountMinor: base, SuffixMinor: int32(suffix), RequestedAmountMinor: requested,
			ConfirmationsRequired: int32(s.Confirmations), Ttl: ttl, ReserveFor: reserveFor,
			MaxOpen: int32(s.MaxOpenPerUser),
		})
		if !errors.Is(err, store.ErrNotFound) {
			return d, err
		}
		if try == 0 {
			// No row: the limit or a taken amount. Only the first refusal
			// needs telling apart; the lock keeps the count from rising.
			open, err := q.DepositOpenCount(ctx, user)
			if err != nil {
				return db.Deposit{}, err
			}
			if open >= int64(s.MaxOpenPerUser) {
				return db.Deposit{}, ErrTooManyOpen
			}
		}
	}
	for range freeTries {
		d, err := q.DepositInsertFreeSuffix(ctx, db.DepositInsertFreeSuffixParams{
			UserID: user, Network: Network, Address: s.Address, Currency: money.USDT.Code,
			BaseAmountMinor: base, ConfirmationsRequired: int32(s.Confirmations), Ttl: ttl, ReserveFor: reserveFor,
		})
		if !errors.Is(err, store.ErrNotFound) {
			return d, err
		}
	}
	return db.Deposit{}, fmt.Errorf("%w: %s", ErrCapacityExhausted, money.USDT.Format(base))
}

// interval is d as a PostgreSQL interval, exact to the microsecond.
func interval(d time.Duration) pgtype.Interval {
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}
}
