package deposit

import "time"

// The states of a deposit (docs/deposits.md), as stored and as answered.
const (
	StatusAwaitingTransfer = "awaiting_transfer"
	StatusConfirming       = "confirming"
	StatusCredited         = "credited"
	StatusExpired          = "expired"
)

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
func EffectiveStatus(status string, expiresAt, now time.Time) string {
	if status == StatusAwaitingTransfer && !now.Before(expiresAt) {
		return StatusExpired
	}
	return status
}

// IsOpen reports whether a deposit in this effective status counts towards
// the user's open-deposit limit.
func IsOpen(effectiveStatus string) bool {
	return effectiveStatus == StatusAwaitingTransfer || effectiveStatus == StatusConfirming
}
