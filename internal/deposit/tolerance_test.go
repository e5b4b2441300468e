package deposit_test

import (
	"math"
	"testing"

	"creativeapi/internal/deposit"
)

// TestTolerance_CreditsShortByAtMostOnePercentCappedAtOneUSDTAndAnyOverpayment
// holds the default policy of docs/deposits.md at its edges.
func TestTolerance_CreditsShortByAtMostOnePercentCappedAtOneUSDTAndAnyOverpayment(t *testing.T) {
	t.Parallel()
	def := deposit.DefaultTolerance()
	for name, c := range map[string]struct {
		tol                 deposit.Tolerance
		requested, received int64
		want                bool
	}{
		"exact":                                   {def, 10_000_123, 10_000_123, true},
		"short by exactly 1% of 10 USDT":          {def, 10_000_000, 9_900_000, true},
		"short by 1% and one micro-USDT":          {def, 10_000_000, 9_899_999, false},
		"1% rounds down (10.000123 USDT)":         {def, 10_000_123, 10_000_123 - 100_001, true},
		"1% rounds down, one past":                {def, 10_000_123, 10_000_123 - 100_002, false},
		"the cap: short by 1 USDT of 500 USDT":    {def, 500_000_000, 499_000_000, true},
		"the cap: short by 1.000001 USDT":         {def, 500_000_000, 498_999_999, false},
		"overpaid":                                {def, 10_000_000, 25_000_000, true},
		"nothing received":                        {def, 10_000_000, 0, false},
		"off: short by one micro-USDT":            {deposit.Tolerance{}, 10_000_000, 9_999_999, false},
		"off: overpaid still credits":             {deposit.Tolerance{}, 10_000_000, 10_000_001, true},
		"100% of the largest amount, no overflow": {deposit.Tolerance{BasisPoints: 10_000, MaxMinor: math.MaxInt64}, math.MaxInt64, 1, true},
	} {
		t.Run(name, func(t *testing.T) {
			if got := c.tol.Accepts(c.requested, c.received); got != c.want {
				t.Fatalf("Accepts(%d, %d) = %v (allowed %d), want %v", c.requested, c.received, got, c.tol.Allowed(c.requested), c.want)
			}
		})
	}
}

func TestParsePercent_ReadsTwoDecimalsIntoBasisPoints(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"1%": 100, "0.5%": 50, "0.29%": 29, "0": 0, "100%": 10_000, "2.1": 210} {
		if got, err := deposit.ParsePercent(in); err != nil || got != want {
			t.Errorf("ParsePercent(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "%", "1.005%", "-1%", "1e2%", "abc", "1000%", ".5%"} {
		if _, err := deposit.ParsePercent(in); err == nil {
			t.Errorf("ParsePercent(%q) accepted", in)
		}
	}
	if err := (deposit.Tolerance{BasisPoints: 10_001}).Validate(); err == nil {
		t.Error("a share above 100% validated")
	}
}
