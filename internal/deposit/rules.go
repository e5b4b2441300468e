// Package deposit holds the rules of USDT deposits on TRON TRC20.
package deposit

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"creativeapi/internal/money"
	"creativeapi/internal/problem"
)

// SuffixMin and SuffixMax bound the matching suffix in micro-USDT
// (0.000001–0.009999 USDT): added to a whole number of cents, it makes each
// open deposit's requested amount unique yet never reaches another cent.
const SuffixMin, SuffixMax = 1, 9999

// CentMinor is one cent in minor units at scale 6; requested amounts must be
// multiples of it so the suffix below a cent is free for matching.
const CentMinor = 10000

// The request field paths that CheckRequest reports on.
const (
	FieldAmountMinor = "amount.amountMinor"
	FieldCurrency    = "amount.currency"
	FieldScale       = "amount.scale"
)

// Bounds is the configured inclusive range of a deposit request, in minor
// units of USDT.
type Bounds struct{ MinMinor, MaxMinor int64 }

// DefaultBounds returns the bounds of docs/deposits.md, 10 to 100 000 USDT,
// for when configuration sets none (DEPOSIT_MIN_MINOR, DEPOSIT_MAX_MINOR).
func DefaultBounds() Bounds {
	return Bounds{MinMinor: 10_000_000, MaxMinor: 100_000_000_000}
}

// maxBoundMinor caps a configured maximum at 10¹⁸ micro-USDT (10¹² USDT):
// far past any deposit, and far from int64's limit once a suffix is added.
const maxBoundMinor = 1_000_000_000_000_000

// Validate reports configured bounds that could never accept a request or
// could overflow once a suffix is added, so a bad configuration is refused
// at start-up (config.Load calls it).
func (b Bounds) Validate() error {
	switch {
	case b.MinMinor <= 0:
		return fmt.Errorf("minimum amount %d must be positive", b.MinMinor)
	case b.MaxMinor < b.MinMinor:
		return fmt.Errorf("maximum amount %d is below the minimum %d", b.MaxMinor, b.MinMinor)
	case b.MaxMinor > maxBoundMinor || b.MaxMinor > math.MaxInt64-SuffixMax:
		return fmt.Errorf("maximum amount %d is past 10^18", b.MaxMinor)
	case b.MinMinor%CentMinor != 0 || b.MaxMinor%CentMinor != 0:
		return fmt.Errorf("bounds %d and %d must be whole numbers of cents (multiples of %d)", b.MinMinor, b.MaxMinor, CentMinor)
	}
	return nil
}

// CheckRequest checks the amount of a deposit request and returns it in
// minor units. It reports every failing field at once, as docs/errors.md
// asks; the amount is 0 whenever any field error is returned. An amount that
// is both off-cent and out of bounds gets both errors.
func CheckRequest(amountMinor, currency string, scale int, b Bounds) (int64, []problem.FieldError) {
	var errs []problem.FieldError
	if currency != money.USDT.Code {
		errs = append(errs, problem.FieldError{
			Field: FieldCurrency, Code: problem.InvalidValue,
			Message: fmt.Sprintf("Currency must be %q.", money.USDT.Code),
		})
	}
	if scale != money.USDT.Scale {
		errs = append(errs, problem.FieldError{
			Field: FieldScale, Code: problem.InvalidValue,
			Message: fmt.Sprintf("Scale must be %d for %s.", money.USDT.Scale, money.USDT.Code),
		})
	}
	// The range message is written only when it is reported: formatting
	// the bounds was 12 of a valid request's allocations, and every deposit
	// create checks its amount twice (the gate, the handler).
	rangeErr := func() problem.FieldError {
		return problem.FieldError{
			Field: FieldAmountMinor, Code: problem.OutOfRange,
			Message: fmt.Sprintf("Amount must be between %s and %s (amountMinor %s to %s).",
				money.USDT.Format(b.MinMinor), money.USDT.Format(b.MaxMinor),
				money.FormatMinor(b.MinMinor), money.FormatMinor(b.MaxMinor)),
		}
	}
	v, err := money.ParseMinor(amountMinor)
	switch {
	case err == nil && len(amountMinor) > 1 && amountMinor[0] == '0':
		// One amount, one spelling: "010000000" is refused, not read as
		// 10000000, so the amount a client sent is the one it is shown.
		errs = append(errs, problem.FieldError{
			Field: FieldAmountMinor, Code: problem.InvalidFormat,
			Message: "Amount must be written without leading zeros, in minor units (1 USDT = 1000000).",
		})
	case errors.Is(err, money.ErrOutOfRange):
		errs = append(errs, rangeErr())
	case err != nil:
		errs = append(errs, problem.FieldError{
			Field: FieldAmountMinor, Code: problem.InvalidFormat,
			Message: "Amount must be a string of digits only, in minor units (1 USDT = 1000000).",
		})
	default:
		if v%CentMinor != 0 {
			errs = append(errs, problem.FieldError{
				Field: FieldAmountMinor, Code: problem.InvalidValue,
				Message: fmt.Sprintf("Amount must be a whole number of cents (a multiple of %d).", CentMinor),
			})
		}
		if v < b.MinMinor || v > b.MaxMinor {
			errs = append(errs, rangeErr())
		}
	}
	if len(errs) > 0 {
		return 0, errs
	}
	return v, nil
}

// The errors RequestedAmount returns; all are programming or configuration
// errors, never the user's.
var (
	ErrSuffixRange    = fmt.Errorf("deposit: suffix outside %d..%d", SuffixMin, SuffixMax)
	ErrNegativeBase   = errors.New("deposit: base amount is negative")
	ErrAmountOverflow = errors.New("deposit: requested amount overflows")
)

// RequestedAmount adds the matching suffix to a checked base amount, giving
// the exact amount the user must transfer. It refuses a suffix outside
// SuffixMin..SuffixMax, a negative base, and a sum above math.MaxInt64.
func RequestedAmount(base int64, suffix int) (int64, error) {
	if suffix < SuffixMin || suffix > SuffixMax {
		return 0, fmt.Errorf("%w: %d", ErrSuffixRange, suffix)
	}
	if base < 0 {
		return 0, fmt.Errorf("%w: %d", ErrNegativeBase, base)
	}
	if base > math.MaxInt64-int64(suffix) {
		return 0, fmt.Errorf("%w: %d + %d", ErrAmountOverflow, base, suffix)
	}
	return base + int64(suffix), nil
}

// RandomSuffix picks a suffix uniformly in SuffixMin..SuffixMax, so that
// free suffixes are found quickly and amounts are hard to guess. A nil r uses
// the global source of math/rand/v2.
func RandomSuffix(r *rand.Rand) int {
	const n = SuffixMax - SuffixMin + 1
	if r == nil {
		return SuffixMin + rand.IntN(n)
	}
	return SuffixMin + r.IntN(n)
}
