package money

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParseMinor_AcceptsDigitStrings(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"000", 0},
		{"1", 1},
		{"10000000", 10_000_000},
		{"0010000", 10_000},
		{"100000000000", 100_000_000_000},
		{"9223372036854775807", math.MaxInt64},
		{"00009223372036854775807", math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMinor(tt.in)
			if err != nil || got != tt.want {
				t.Fatalf("ParseMinor(%q) = %d, %v; want %d, nil", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseMinor_RejectsAnythingButDigits(t *testing.T) {
	for _, in := range []string{
		"", " ", "-1", "+1", " 1", "1 ", "1.0", "1,000", "1e6", "0x10", "١٢", "１", "NaN", "abc", "10\x00",
		"99999999999999999999999a", // overflow digits followed by a non-digit: still a format error
	} {
		t.Run(in, func(t *testing.T) {
			if _, err := ParseMinor(in); !errors.Is(err, ErrInvalidFormat) {
				t.Fatalf("ParseMinor(%q) error = %v; want ErrInvalidFormat", in, err)
			}
		})
	}
}

func TestParseMinor_ReportsOverflowAsOutOfRange(t *testing.T) {
	for _, in := range []string{
		"9223372036854775808",
		"18446744073709551615",
		"18446744073709551616",
		"99999999999999999999999999999999",
	} {
		t.Run(in, func(t *testing.T) {
			if _, err := ParseMinor(in); !errors.Is(err, ErrOutOfRange) {
				t.Fatalf("ParseMinor(%q) error = %v; want ErrOutOfRange", in, err)
			}
		})
	}
}

func TestFormatMinor_RoundTripsParseMinor(t *testing.T) {
	for _, v := range []int64{0, 1, 10_000, 100_004_217, math.MaxInt64} {
		s := FormatMinor(v)
		got, err := ParseMinor(s)
		if err != nil || got != v {
			t.Fatalf("ParseMinor(FormatMinor(%d)) = %d, %v", v, got, err)
		}
	}
}

func TestCurrencyFormat_ShowsScaleDigitsAfterThePoint(t *testing.T) {
	tests := []struct {
		c    Currency
		v    int64
		want string
	}{
		{USDT, 100_004_217, "100.004217 USDT"},
		{USDT, 10_000_000, "10.000000 USDT"},
		{USDT, 1, "0.000001 USDT"},
		{USDT, 0, "0.000000 USDT"},
		{USDT, 9_999, "0.009999 USDT"},
		{USDT, 100_000_000_000, "100000.000000 USDT"},
		{USDT, -1_500_000, "-1.500000 USDT"},
		{USDT, math.MaxInt64, "9223372036854.775807 USDT"},
		{USDT, math.MinInt64, "-9223372036854.775808 USDT"},
		{Currency{"JPY", 0}, 1234, "1234 JPY"},
		{Currency{"EUR", 2}, 5, "0.05 EUR"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.c.Format(tt.v); got != tt.want {
				t.Fatalf("%v.Format(%d) = %q; want %q", tt.c, tt.v, got, tt.want)
			}
		})
	}
}

func FuzzParseMinor(f *testing.F) {
	for _, s := range []string{"", "0", "000", "1", "0010000", "100004217", "9223372036854775807",
		"9223372036854775808", "-1", "1.5", " 1", "１", "99999999999999999999a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseMinor(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidFormat) && !errors.Is(err, ErrOutOfRange) {
				t.Fatalf("ParseMinor(%q) unexpected error %v", s, err)
			}
			return
		}
		want := strings.TrimLeft(s, "0")
		if want == "" {
			want = "0"
		}
		if got := FormatMinor(v); got != want {
			t.Fatalf("FormatMinor(ParseMinor(%q)) = %q; want %q", s, got, want)
		}
		if v < 0 {
			t.Fatalf("ParseMinor(%q) = %d, negative", s, v)
		}
		if f := USDT.Format(v); !strings.HasSuffix(f, " USDT") {
			t.Fatalf("USDT.Format(%d) = %q", v, f)
		}
	})
}
