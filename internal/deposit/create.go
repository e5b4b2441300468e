package deposit

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
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
// The open-deposit limit is a count, so a user's creations must not race
// it (docs/deposits.md says what serialises and why, and proves the limit
// exact). Far below the limit, up to createSlots(s) of them run side by
// side, each holding one of the user's slots (DepositOwnerSlotLock) and
// inserting only while the count leaves room for the others in flight;
// the count is then read off the user's reserved bound, which costs the
// same however many deposits the user has open (deposit_reserved_bounds
// in schema.sql). Near it, they take turns on the user's exclusive owner
// lock (DepositOwnerLock), count exactly and reset the bound. A waiting
// creation sleeps in PostgreSQL, spending nothing. The partial unique index
// deposits_reserved_amount_key makes the requested amounts of all users
// unique, and ON CONFLICT DO NOTHING turns a taken amount into a retry.
// The slots and the bound are kept by the ablation
// (docs/performance.md, ablation row A): with one lock per user and a
// count, 8 users' creates at 64 clients ran at 0.88× the throughput.
func Create(ctx context.Context, q store.Tx, s Settings, user uuid.UUID, base int64) (db.Deposit, error) {
	if slots := createSlots(s); slots > 1 {
		// The savepoint and the slot go with the first insert, in one
		// round trip; near the limit, rolling back to the savepoint gives
		// the slot back before the exclusive lock is waited for.
		if err := q.Next().DepositCreateSavepoint(ctx); err != nil {
			return db.Deposit{}, err
		}
		slot := slotFor(user, slots)
		if err := q.Next().DepositOwnerSlotLock(ctx, db.DepositOwnerSlotLockParams{UserID: user, Slot: slot}); err != nil {
			return db.Deposit{}, err
		}
		d, err := insert(ctx, q, s, user, base, slot, s.MaxOpenPerUser-(slots-1))
		if !errors.Is(err, errNearLimit) {
			return d, err
		}
		if err := q.Next().DepositCreateRollbackToSavepoint(ctx); err != nil {
			return db.Deposit{}, err
		}
	}
	if err := q.Next().DepositOwnerLock(ctx, user); err != nil {
		return db.Deposit{}, err
	}
	// No other creation of the user is in flight: the bound may be set
	// back to what it bounds, so the next ones far below the limit need
	// not count.
	if err := q.Next().DepositReservedBoundsReset(ctx, user); err != nil {
		return db.Deposit{}, err
	}
	return insert(ctx, q, s, user, base, 0, s.MaxOpenPerUser)
}

// maxCreateSlots bounds how many creations of one user run at once.
const maxCreateSlots = 8

// createSlots is how many of a user's creations may run at once far below
// the limit: half the limit, at most maxCreateSlots. With 1 (a limit of 3
// or less) every creation takes the exclusive owner lock.
func createSlots(s Settings) int { return max(1, min(maxCreateSlots, s.MaxOpenPerUser/2)) }

// createTurns hands each user's creations the slots in turn, so the
// creations of one user on this replica wait for a slot only when all of
// them are taken. Users share a counter when their ids' last bytes agree,
// which only makes their turns less even; another replica's creations may
// pick a taken slot, and then wait in PostgreSQL for it. Either way the
// choice only decides who waits, never whether the limit holds.
var createTurns [1024]atomic.Uint32

func slotFor(user uuid.UUID, slots int) int32 {
	turn := &createTurns[binary.BigEndian.Uint16(user[14:])%uint16(len(createTurns))]
	return int32(turn.Add(1) % uint32(slots))
}

// errNearLimit: a creation holding a slot found fewer rooms left under the
// limit than there are slots, so it must count again under the exclusive
// owner lock.
var errNearLimit = errors.New("deposit: near the open-deposit limit")

// insert inserts the deposit under the owner lock the caller holds,
// while the user has fewer than bound open deposits, adding to the
// reserved bound's part of slot (0 under the exclusive lock). A refusal
// for the count answers ErrTooManyOpen at the limit itself, errNearLimit
// below it.
func insert(ctx context.Context, q store.Tx, s Settings, user uuid.UUID, base int64, slot int32, bound int) (db.Deposit, error) {
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
			MaxOpen: int32(bound), Slot: slot,
		})
		if !errors.Is(err, store.ErrNotFound) {
			return db.Deposit(d), err
		}
		if try == 0 {
			// No row: the count or a taken amount. Only the first refusal
			// needs telling apart; the lock keeps the count from rising.
			open, err := q.DepositOpenCount(ctx, user)
			if err != nil {
				return db.Deposit{}, err
			}
			switch {
			case open >= int64(s.MaxOpenPerUser):
				return db.Deposit{}, ErrTooManyOpen
			case open >= int64(bound):
				return db.Deposit{}, errNearLimit
			}
		}
	}
	for range freeTries {
		d, err := q.DepositInsertFreeSuffix(ctx, db.DepositInsertFreeSuffixParams{
			UserID: user, Network: Network, Address: s.Address, Currency: money.USDT.Code,
			BaseAmountMinor: base, ConfirmationsRequired: int32(s.Confirmations), Ttl: ttl, ReserveFor: reserveFor,
			Slot: slot,
		})
		if !errors.Is(err, store.ErrNotFound) {
			return db.Deposit(d), err
		}
	}
	return db.Deposit{}, fmt.Errorf("%w: %s", ErrCapacityExhausted, money.USDT.Format(base))
}

// interval is d as a PostgreSQL interval, exact to the microsecond.
func interval(d time.Duration) pgtype.Interval {
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: true}
}
