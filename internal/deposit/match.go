package deposit

import (
	"time"

	"github.com/google/uuid"
)

// Candidate is the deposit holding a reservation for a transfer's exact
// amount on the treasury (at most one does: the requested amounts of
// reserved deposits are unique).
type Candidate struct {
	ID        uuid.UUID
	Status    Status
	CreatedAt time.Time
	ExpiresAt time.Time
	// TxID is the transaction already paying it, if any.
	TxID *string
}

// The reasons of an unmatched transfer that Match gives.
const (
	ReasonNoReservation = "no_reservation"
	ReasonAlreadyPaid   = "already_paid"
	ReasonBeforeDeposit = "before_deposit"
	// ReasonCancelled: a late transfer of the amount of a deposit the
	// payer cancelled; it is attached to no deposit (cancelled is final).
	ReasonCancelled = "cancelled"
)

// ChainTimePrecision is the precision of a block's time on the chain
// (TronGrid's block_timestamp is in milliseconds); a deposit's createdAt,
// to the microsecond, is compared with block times at it.
const ChainTimePrecision = time.Millisecond

// Match judges a transfer of a deposit's exact amount in a block of
// blockTime against c, the deposit reserving that amount (nil: none)
// (docs/deposits.md, "Matching a transfer"): TransferConfirming when it
// pays the deposit on time (it counts confirmations until its block is
// solidified, then credits); TransferLate when its block came after
// expiresAt (the deposit stays expired and an operator settles it);
// TransferUnmatched, with the reason, when it pays no deposit. The
// payer was on time when the block is no later than expiresAt, however
// late the watcher notices it; a block before the deposit was created
// cannot be its payment. Block times are whole milliseconds, so a block
// of the millisecond the deposit was created in is not before it. A
// cancelled deposit (in its monitoring window, and its amount not taken
// by another) takes no transfer: one of its amount is TransferLate with
// ReasonCancelled, for an operator, attached to nothing.
func Match(c *Candidate, blockTime time.Time) (TransferStatus, string) {
	switch {
	case c == nil || c.Status == StatusCredited:
		return TransferUnmatched, ReasonNoReservation
	case c.TxID != nil:
		return TransferUnmatched, ReasonAlreadyPaid
	case blockTime.Before(c.CreatedAt.Truncate(ChainTimePrecision)):
		return TransferUnmatched, ReasonBeforeDeposit
	case c.Status == StatusCancelled:
		return TransferLate, ReasonCancelled
	case blockTime.After(c.ExpiresAt):
		return TransferLate, ""
	}
	return TransferConfirming, ""
}

// Confirmations is how many confirmations a transfer in block has at head
// (head - block + 1), within 0..required: the count a deposit shows.
func Confirmations(head, block int64, required int32) int32 {
	n := head - block + 1
	return int32(max(0, min(n, int64(required))))
}

// Creditable reports whether a transfer in block has been confirmed enough
// to credit: its block is solidified (no fork can remove it) and it has
// the required confirmations.
func Creditable(head, solid, block int64, required int32) bool {
	return block <= solid && head-block+1 >= int64(required)
}

// The reasons of a transfer judged by its fingerprint (Fingerprint).
const (
	// ReasonFingerprint: a confirming transfer that carries its deposit's
	// fingerprint, short of it by no more than the tolerance; it is
	// credited with the amount received (MoveCreditPolicy).
	ReasonFingerprint = "fingerprint"
)

// FingerprintCandidate is a deposit whose matching suffix a transfer may
// carry (DepositsForFingerprints).
type FingerprintCandidate struct {
	ID             uuid.UUID
	Suffix         int64
	RequestedMinor int64
	Status         Status
	CreatedAt      time.Time
	ExpiresAt      time.Time
	CancelledAt    *time.Time
	// TxID is the transaction already paying it, if any.
	TxID *string
}

// Fingerprinted is the one deposit a transfer carries the fingerprint of,
// and what the transfer is for it: TransferConfirming when it is short by
// no more than the tolerance (then credited by policy once final), else
// TransferUnmatched, attached to the deposit for review (MoveAttachMismatch).
type Fingerprinted struct {
	Deposit *FingerprintCandidate
	Verdict TransferStatus
}

// FingerprintOf is the fingerprint a transfer of amountMinor carries: its
// last four digits (amountMinor mod 10000), the matching suffix of the
// deposit it was meant for; 0 (which no suffix is) when it carries none.
func FingerprintOf(amountMinor int64) int64 {
	if amountMinor <= 0 {
		return 0
	}
	return amountMinor % CentMinor
}

// Fingerprint judges a transfer of amountMinor in a block of blockTime
// that no deposit matches exactly (docs/deposits.md, "Matching a
// transfer"): when its fingerprint is the matching suffix of exactly one
// deposit of cs that was awaiting its transfer at blockTime (created no
// later, expiring no earlier, not cancelled before), and that deposit is
// still unpaid, the deposit is the transfer's, credited with no operator
// when tol accepts the shortfall and attached for review otherwise (also
// above the requested amount: an operator settles an overpayment). Two
// such deposits, none, or a fingerprint of 0000: nil, the transfer is
// unmatched. A fee taken in whole cents keeps the fingerprint; a stranger's
// transfer carries another one, or no deposit's.
func Fingerprint(amountMinor int64, blockTime time.Time, cs []FingerprintCandidate, tol Tolerance) *Fingerprinted {
	fp := FingerprintOf(amountMinor)
	if fp == 0 {
		return nil
	}
	var one *FingerprintCandidate
	for i := range cs {
		c := &cs[i]
		if c.Suffix != fp || blockTime.Before(c.CreatedAt.Truncate(ChainTimePrecision)) || blockTime.After(c.ExpiresAt) ||
			(c.CancelledAt != nil && !c.CancelledAt.After(blockTime)) {
			continue
		}
		if one != nil {
			return nil
		}
		one = c
	}
	if one == nil || one.TxID != nil || (one.Status != StatusAwaitingTransfer && one.Status != StatusExpired) ||
		amountMinor == one.RequestedMinor {
		return nil
	}
	verdict := TransferUnmatched
	if amountMinor < one.RequestedMinor && tol.Accepts(one.RequestedMinor, amountMinor) {
		verdict = TransferConfirming
	}
	return &Fingerprinted{Deposit: one, Verdict: verdict}
}
