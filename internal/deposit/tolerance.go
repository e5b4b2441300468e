package deposit

import (
	"fmt"
	"strconv"
	"strings"
)

// Tolerance is the shortfall a claimed transfer may have and still be
// credited at once, with no operator (docs/deposits.md, "The shortfall
// tolerance"): a wallet, exchange or network fee taken from the amount
// sent is the common reason a payer falls short. It is a share of the
// requested amount in basis points (1% = 100), capped at MaxMinor micro-USDT.
type Tolerance struct {
	BasisPoints int64
	MaxMinor    int64
}

// DefaultTolerance is 1% of the requested amount, at most 1 USDT.
func DefaultTolerance() Tolerance { return Tolerance{BasisPoints: 100, MaxMinor: 1_000_000} }

// basisPointsPerWhole is 100%: Allowed divides by it.
const basisPointsPerWhole = 10_000

// Validate refuses a share above 100% or below 0, and a negative cap.
func (t Tolerance) Validate() error {
	switch {
	case t.BasisPoints < 0 || t.BasisPoints > basisPointsPerWhole:
		return fmt.Errorf("share %d basis points: must be between 0 and 10000 (0%% to 100%%)", t.BasisPoints)
	case t.MaxMinor < 0:
		return fmt.Errorf("cap %d: must not be negative", t.MaxMinor)
	}
	return nil
}

// Allowed is the largest shortfall on requestedMinor that t accepts: the
// share rounded down to the micro-USDT, at most the cap. It is computed in
// integers without overflow for any int64 amount (the share is applied to
// the whole ten-thousands and the rest apart).
func (t Tolerance) Allowed(requestedMinor int64) int64 {
	if requestedMinor <= 0 {
		return 0
	}
	share := requestedMinor/basisPointsPerWhole*t.BasisPoints +
		requestedMinor%basisPointsPerWhole*t.BasisPoints/basisPointsPerWhole
	return min(share, t.MaxMinor)
}

// Accepts reports whether a transfer of receivedMinor pays a deposit of
// requestedMinor by the policy: it is at least the requested amount (an
// overpayment is credited as received), or short by no more than Allowed.
func (t Tolerance) Accepts(requestedMinor, receivedMinor int64) bool {
	if receivedMinor <= 0 {
		return false
	}
	return receivedMinor >= requestedMinor || requestedMinor-receivedMinor <= t.Allowed(requestedMinor)
}

// ParsePercent reads a share written as a percentage with at most two
// decimals ("1%", "0.5%", "0"), as DEPOSIT_SHORTFALL_TOLERANCE gives it,
// into basis points. It reads digits, never a float, so "0.29%" is 29.
func ParsePercent(s string) (int64, error) {
	v := strings.TrimSuffix(strings.TrimSpace(s), "%")
	whole, frac, _ := strings.Cut(v, ".")
	if whole == "" || len(frac) > 2 || !allDigits(whole) || !allDigits(frac) || len(whole) > 3 {
		return 0, fmt.Errorf("%q: want a percentage such as 1%% or 0.5%%", s)
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt(frac+strings.Repeat("0", 2-len(frac)), 10, 64)
	return w*100 + f, nil
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
