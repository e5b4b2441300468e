package deposit

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"creativeapi/internal/money"
	"creativeapi/internal/problem"
)

type fe struct {
	field string
	code  problem.FieldCode
}

func codes(errs []problem.FieldError) []fe {
	var out []fe
	for _, e := range errs {
		out = append(out, fe{e.Field, e.Code})
	}
	return out
}

func TestCheckRequest_AcceptsWholeCentsInsideBounds(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
	}{
		{"10000000", 10_000_000},          // the minimum, 10 USDT
		{"100000000000", 100_000_000_000}, // the maximum, 100 000 USDT
		{"10010000", 10_010_000},          // 10.01 USDT
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, errs := CheckRequest(tt.in, "USDT", 6, DefaultBounds())
			if errs != nil || got != tt.want {
				t.Fatalf("CheckRequest(%q) = %d, %v; want %d, nil", tt.in, got, errs, tt.want)
			}
		})
	}
}

func TestCheckRequest_ReportsEveryProblemAtOnce(t *testing.T) {
	tests := []struct {
		name     string
		amount   string
		currency string
		scale    int
		want     []fe
	}{
		{"wrong currency", "10000000", "USDC", 6, []fe{{FieldCurrency, problem.InvalidValue}}},
		{"currency is case-sensitive", "10000000", "usdt", 6, []fe{{FieldCurrency, problem.InvalidValue}}},
		{"empty currency", "10000000", "", 6, []fe{{FieldCurrency, problem.InvalidValue}}},
		{"wrong scale", "10000000", "USDT", 2, []fe{{FieldScale, problem.InvalidValue}}},
		{"negative amount", "-10000000", "USDT", 6, []fe{{FieldAmountMinor, problem.InvalidFormat}}},
		{"decimal point", "10.5", "USDT", 6, []fe{{FieldAmountMinor, problem.InvalidFormat}}},
		{"empty amount", "", "USDT", 6, []fe{{FieldAmountMinor, problem.InvalidFormat}}},
		{"spaces", " 10000000", "USDT", 6, []fe{{FieldAmountMinor, problem.InvalidFormat}}},
		{"a leading zero: only the canonical digits are an amount", "010000000", "USDT", 6, []fe{{FieldAmountMinor, problem.InvalidFormat}}},
		{"zero written twice", "00", "USDT", 6, []fe{{FieldAmountMinor, problem.InvalidFormat}}},
		{"not whole cents", "10000001", "USDT", 6, []fe{{FieldAmountMinor, problem.InvalidValue}}},
		{"below minimum", "9990000", "USDT", 6, []fe{{FieldAmountMinor, problem.OutOfRange}}},
		{"zero", "0", "USDT", 6, []fe{{FieldAmountMinor, problem.OutOfRange}}},
		{"above maximum", "100000010000", "USDT", 6, []fe{{FieldAmountMinor, problem.OutOfRange}}},
		{"overflow", "99999999999999999999", "USDT", 6, []fe{{FieldAmountMinor, problem.OutOfRange}}},
		{"off-cent and below minimum", "5", "USDT", 6, []fe{
			{FieldAmountMinor, problem.InvalidValue}, {FieldAmountMinor, problem.OutOfRange}}},
		{"all three fields", "abc", "BTC", 8, []fe{
			{FieldCurrency, problem.InvalidValue}, {FieldScale, problem.InvalidValue}, {FieldAmountMinor, problem.InvalidFormat}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := CheckRequest(tt.amount, tt.currency, tt.scale, DefaultBounds())
			if got != 0 {
				t.Errorf("amount = %d; want 0 alongside field errors", got)
			}
			if g := codes(errs); !slices.Equal(g, tt.want) {
				t.Fatalf("field errors = %v; want %v", g, tt.want)
			}
			for _, e := range errs {
				if !strings.HasSuffix(e.Message, ".") || e.Message[0] < 'A' || e.Message[0] > 'Z' {
					t.Errorf("message %q is not a sentence", e.Message)
				}
			}
		})
	}
}

func TestCheckRequest_MessagesNameTheRule(t *testing.T) {
	_, errs := CheckRequest("10000001", "USDT", 6, DefaultBounds())
	if len(errs) != 1 || !strings.Contains(errs[0].Message, "must be a whole number of cents (a multiple of 10000)") {
		t.Fatalf("cents message = %v", errs)
	}
	_, errs = CheckRequest("1", "USDT", 6, Bounds{MinMinor: 10_000_000, MaxMinor: 100_000_000_000})
	var msg string
	for _, e := range errs {
		if e.Code == problem.OutOfRange {
			msg = e.Message
		}
	}
	for _, want := range []string{"10.000000 USDT", "100000.000000 USDT", "10000000", "100000000000"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("range message %q does not name %q", msg, want)
		}
	}
}

func TestCheckRequest_UsesConfiguredBounds(t *testing.T) {
	b := Bounds{MinMinor: 1_000_000, MaxMinor: 2_000_000}
	if v, errs := CheckRequest("1500000", "USDT", 6, b); errs != nil || v != 1_500_000 {
		t.Fatalf("inside configured bounds: %d, %v", v, errs)
	}
	if _, errs := CheckRequest("2010000", "USDT", 6, b); len(errs) != 1 || errs[0].Code != problem.OutOfRange {
		t.Fatalf("above configured max: %v", errs)
	}
}

func TestBounds_DefaultsAreValidAndBadOnesRefused(t *testing.T) {
	if err := DefaultBounds().Validate(); err != nil {
		t.Fatalf("DefaultBounds().Validate() = %v", err)
	}
	for _, b := range []Bounds{
		{0, 10_000}, {-10_000, 10_000}, {20_000, 10_000}, {10_000, math.MaxInt64}, {10_001, 20_000}, {10_000, 20_001},
	} {
		if err := b.Validate(); err == nil {
			t.Errorf("%+v.Validate() = nil; want an error", b)
		}
	}
}

func TestRequestedAmount_AddsSuffixBelowOneCent(t *testing.T) {
	tests := []struct {
		base   int64
		suffix int
		want   int64
	}{
		{100_000_000, 4217, 100_004_217},
		{10_000_000, SuffixMin, 10_000_001},
		{10_000_000, SuffixMax, 10_009_999},
		{math.MaxInt64 - SuffixMax, SuffixMax, math.MaxInt64},
	}
	for _, tt := range tests {
		got, err := RequestedAmount(tt.base, tt.suffix)
		if err != nil || got != tt.want {
			t.Fatalf("RequestedAmount(%d, %d) = %d, %v; want %d", tt.base, tt.suffix, got, err, tt.want)
		}
	}
	if got := money.USDT.Format(100_004_217); got != "100.004217 USDT" {
		t.Fatalf("format = %q", got)
	}
}

func TestRequestedAmount_RefusesBadSuffixNegativeBaseAndOverflow(t *testing.T) {
	tests := []struct {
		base   int64
		suffix int
		want   error
	}{
		{10_000_000, 0, ErrSuffixRange},
		{10_000_000, CentMinor, ErrSuffixRange},
		{10_000_000, -1, ErrSuffixRange},
		{-10_000, 1, ErrNegativeBase},
		{math.MaxInt64, 1, ErrAmountOverflow},
		{math.MaxInt64 - SuffixMax + 1, SuffixMax, ErrAmountOverflow},
	}
	for _, tt := range tests {
		if _, err := RequestedAmount(tt.base, tt.suffix); !errors.Is(err, tt.want) {
			t.Fatalf("RequestedAmount(%d, %d) error = %v; want %v", tt.base, tt.suffix, err, tt.want)
		}
	}
}

func TestRandomSuffix_StaysInRangeAndReachesBothEnds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	seen := make([]bool, SuffixMax+1)
	for range 200_000 {
		s := RandomSuffix(r)
		if s < SuffixMin || s > SuffixMax {
			t.Fatalf("RandomSuffix = %d outside %d..%d", s, SuffixMin, SuffixMax)
		}
		seen[s] = true
	}
	if !seen[SuffixMin] || !seen[SuffixMax] {
		t.Fatalf("ends not reached: min %v, max %v", seen[SuffixMin], seen[SuffixMax])
	}
	missing := 0
	for s := SuffixMin; s <= SuffixMax; s++ {
		if !seen[s] {
			missing++
		}
	}
	// 200 000 draws over 9 999 values: expected misses ≈ 9999·e^-20, so any is a bias.
	if missing > 0 {
		t.Fatalf("%d suffixes never drawn", missing)
	}
	if s := RandomSuffix(nil); s < SuffixMin || s > SuffixMax {
		t.Fatalf("RandomSuffix(nil) = %d", s)
	}
}

func FuzzCheckRequest(f *testing.F) {
	f.Add("10000000", "USDT", 6, int64(10_000_000), int64(100_000_000_000))
	f.Add("10000001", "USDT", 6, int64(10_000_000), int64(100_000_000_000))
	f.Add("99999999999999999999", "USDT", 6, int64(10_000_000), int64(100_000_000_000))
	f.Add("abc", "BTC", 8, int64(0), int64(0))
	f.Add("9223372036854770000", "USDT", 6, int64(math.MinInt64), int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, amount, currency string, scale int, min, max int64) {
		b := Bounds{MinMinor: min, MaxMinor: max}
		v, errs := CheckRequest(amount, currency, scale, b)
		if len(errs) > 0 {
			if v != 0 {
				t.Fatalf("amount %d alongside field errors", v)
			}
			for _, e := range errs {
				switch e.Field {
				case FieldAmountMinor, FieldCurrency, FieldScale:
				default:
					t.Fatalf("unexpected field %q", e.Field)
				}
				if e.Message == "" {
					t.Fatalf("empty message for %v", e)
				}
			}
			return
		}
		if v < b.MinMinor || v > b.MaxMinor {
			t.Fatalf("accepted %d outside %+v", v, b)
		}
		if v%CentMinor != 0 {
			t.Fatalf("accepted %d, not whole cents", v)
		}
		if currency != "USDT" || scale != 6 {
			t.Fatalf("accepted currency %q scale %d", currency, scale)
		}
	})
}

func FuzzRequestedAmount(f *testing.F) {
	f.Add(int64(100_000_000), 4217)
	f.Add(int64(10_000_000), SuffixMin)
	f.Add(int64(10_000_000), SuffixMax)
	f.Add(int64(math.MaxInt64), 1)
	f.Add(int64(-1), 1)
	f.Add(int64(0), 0)
	f.Add(int64(0), 10000)
	f.Fuzz(func(t *testing.T, base int64, suffix int) {
		got, err := RequestedAmount(base, suffix)
		valid := suffix >= SuffixMin && suffix <= SuffixMax && base >= 0 && base <= math.MaxInt64-int64(suffix)
		if err != nil {
			if valid {
				t.Fatalf("RequestedAmount(%d, %d) refused valid input: %v", base, suffix, err)
			}
			return
		}
		if !valid {
			t.Fatalf("RequestedAmount(%d, %d) = %d, accepted invalid input", base, suffix, got)
		}
		if got < base || got-base != int64(suffix) {
			t.Fatalf("RequestedAmount(%d, %d) = %d; difference is not the suffix", base, suffix, got)
		}
		if base%CentMinor == 0 {
			if got%CentMinor == 0 {
				t.Fatalf("RequestedAmount(%d, %d) = %d hides the suffix in a whole cent", base, suffix, got)
			}
			if got/CentMinor != base/CentMinor {
				t.Fatalf("RequestedAmount(%d, %d) = %d crosses into another cent", base, suffix, got)
			}
		}
	})
}
