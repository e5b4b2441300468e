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
	Status    string
	CreatedAt time.Time
	ExpiresAt time.Time
	// TxID is the transaction already paying it, if any.
	TxID *string
}

// Verdict is what a transfer does to the deposit it may pay.
type Verdict string

// The verdicts of Match (docs/deposits.md, "Matching a transfer").
const (
	// Confirming: the transfer pays the deposit on time; it counts
	// confirmations until its block is solidified, then credits.
	Confirming Verdict = "confirming"
	// Late: the transfer is for the deposit but its block came after
	// expiresAt; the deposit stays expired and an operator settles it.
	Late Verdict = "late"
	// Unmatched: the transfer pays no deposit; Reason says why.
	Unmatched Verdict = "unmatched"
)

// The reasons of an unmatched transfer that Match gives.
const (
	ReasonNoReservation = "no_reservation"
	ReasonAlreadyPaid   = "already_paid"
	ReasonBeforeDeposit = "before_deposit"
)

// Match judges a transfer of a deposit's exact amount in a block of
// blockTime against c, the deposit reserving that amount (nil: none). The
// payer was on time when the block is no later than expiresAt, however
// late the watcher notices it; a block before the deposit was created
// cannot be its payment.
func Match(c *Candidate, blockTime time.Time) (Verdict, string) {
	switch {
	case c == nil || c.Status == StatusCredited:
		return Unmatched, ReasonNoReservation
	case c.TxID != nil:
		return Unmatched, ReasonAlreadyPaid
	case blockTime.Before(c.CreatedAt):
		return Unmatched, ReasonBeforeDeposit
	case blockTime.After(c.ExpiresAt):
		return Late, ""
	}
	return Confirming, ""
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
