package deposit

import "time"

// Status is a deposit's status, as stored and as answered; its moves are
// DepositMoves.
type Status string

// The states of a deposit (docs/deposits.md).
const (
	StatusAwaitingTransfer Status = "awaiting_transfer"
	StatusConfirming       Status = "confirming"
	StatusCredited         Status = "credited"
	StatusExpired          Status = "expired"
	// StatusUnderReview: a transfer is attached to the deposit that an
	// operator must settle (Review says why and what arrived).
	StatusUnderReview Status = "under_review"
	// StatusRefunded: an operator sent the attached transfer back; final.
	StatusRefunded Status = "refunded"
	// StatusCancelled: the payer cancelled it while it awaited its
	// transfer; final, and its amount is free again.
	StatusCancelled Status = "cancelled"
)

// Statuses lists every deposit state, in lifecycle order.
var Statuses = []Status{StatusAwaitingTransfer, StatusConfirming, StatusCredited, StatusExpired, StatusUnderReview, StatusRefunded, StatusCancelled}

// Network and NetworkLabel name the only chain deposits are taken on.
const (
	Network      = "TRC20"
	NetworkLabel = "TRON (TRC20)"
)

// EffectiveStatus is the status a deposit reads as at now: one awaiting its
// transfer past expiresAt is expired even before the sweeper marks its row,
// so reads never depend on when the sweeper last ran. With IsOpen it is
// the open-deposit rule that deposit_open (schema.sql) states for the
// queries; TestOpenIsOneRuleInSQLAndGo holds the two equal.
func EffectiveStatus(status Status, expiresAt, now time.Time) Status {
	if status == StatusAwaitingTransfer && !now.Before(expiresAt) {
		return StatusExpired
	}
	return status
}

// IsOpen reports whether a deposit in this effective status counts towards
// the user's open-deposit limit.
func IsOpen(effectiveStatus Status) bool {
	return effectiveStatus == StatusAwaitingTransfer || effectiveStatus == StatusConfirming
}
