// Package money holds amounts as integers of minor units so that no value is
// ever rounded by floating point arithmetic.
package money

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Currency names a currency and its scale, the number of decimal digits of
// its minor unit, so an integer amount can be shown to people.
type Currency struct {
	Code  string
	Scale int
}

// USDT is Tether with 6 decimals, the currency of deposits on TRON TRC20.
var USDT = Currency{Code: "USDT", Scale: 6}

// ErrInvalidFormat is returned by ParseMinor for anything other than a
// non-empty string of ASCII digits, so callers can report a format error.
var ErrInvalidFormat = errors.New("money: amount must be a non-empty string of digits")

// ErrOutOfRange is returned by ParseMinor for digit strings above
// math.MaxInt64, so callers can report a range error rather than a format one.
var ErrOutOfRange = errors.New("money: amount is too large")

// ParseMinor parses a non-empty string of ASCII digits (leading zeros
// allowed; no sign, space or point) as minor units, because amounts travel as
// strings to keep their exact value.
func ParseMinor(s string) (int64, error) {
	if s == "" {
		return 0, ErrInvalidFormat
	}
	var v uint64
	overflow := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, ErrInvalidFormat
		}
		if overflow {
			continue // keep scanning: a later non-digit is a format error
		}
		d := uint64(c - '0')
		if v > (math.MaxInt64-d)/10 {
			overflow = true
			continue
		}
		v = v*10 + d
	}
	if overflow {
		return 0, ErrOutOfRange
	}
	return int64(v), nil
}

// FormatMinor writes minor units as decimal digits, the inverse of
// ParseMinor, so amounts go back out in the same string form they came in.
func FormatMinor(v int64) string {
	return strconv.FormatInt(v, 10)
}

// Format writes v minor units as a decimal amount with exactly c.Scale digits
// after the point followed by the code ("100.004217 USDT"), for messages
// meant for people.
func (c Currency) Format(v int64) string {
	neg := v < 0
	var mag uint64
	if neg {
		mag = uint64(-(v + 1)) + 1 // safe for math.MinInt64
	} else {
		mag = uint64(v)
	}
	digits := strconv.FormatUint(mag, 10)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	if c.Scale <= 0 {
		b.WriteString(digits)
	} else {
		if len(digits) <= c.Scale {
			digits = strings.Repeat("0", c.Scale-len(digits)+1) + digits
		}
		cut := len(digits) - c.Scale
		b.WriteString(digits[:cut])
		b.WriteByte('.')
		b.WriteString(digits[cut:])
	}
	if c.Code != "" {
		b.WriteByte(' ')
		b.WriteString(c.Code)
	}
	return b.String()
}
