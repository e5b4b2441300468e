package approval

import (
	"math"
	"strings"
	"testing"
)

// TestCanonicalizeMatchesRFC8785sExamples: the examples RFC 8785 gives
// (section 3.2.2's input and output, 3.2.3's sorting, appendix B's
// numbers) come out as the RFC prints them.
func TestCanonicalizeMatchesRFC8785sExamples(t *testing.T) {
	t.Run("3.2.2: whitespace, literals, numbers and strings", func(t *testing.T) {
		in := `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`
		want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
		got, err := Canonicalize([]byte(in))
		if err != nil || string(got) != want {
			t.Fatalf("got %s (%v)\nwant %s", got, err, want)
		}
	})
	t.Run("3.2.3: members sorted by their UTF-16 code units", func(t *testing.T) {
		in := `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`
		got, err := Canonicalize([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		order := []string{"Carriage Return", "One", "Control", "Latin Small Letter O With Diaeresis",
			"Euro Sign", "Emoji: Grinning Face", "Hebrew Letter Dalet With Dagesh"}
		at := -1
		for _, v := range order {
			i := strings.Index(string(got), `"`+v+`"`)
			if i < at {
				t.Fatalf("%q comes before the member sorted ahead of it:\n%s", v, got)
			}
			at = i
		}
	})
	t.Run("appendix B: numbers as ECMAScript prints them", func(t *testing.T) {
		for _, tc := range []struct {
			bits uint64
			want string
		}{
			{0x0000000000000000, "0"},
			{0x8000000000000000, "0"},
			{0x0000000000000001, "5e-324"},
			{0x8000000000000001, "-5e-324"},
			{0x7fefffffffffffff, "1.7976931348623157e+308"},
			{0xffefffffffffffff, "-1.7976931348623157e+308"},
			{0x4340000000000000, "9007199254740992"},
			{0xc340000000000000, "-9007199254740992"},
			{0x4430000000000000, "295147905179352830000"},
			{0x44b52d02c7e14af5, "9.999999999999997e+22"},
			{0x44b52d02c7e14af6, "1e+23"},
			{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
			{0x444b1ae4d6e2ef4e, "999999999999999700000"},
			{0x444b1ae4d6e2ef4f, "999999999999999900000"},
			{0x444b1ae4d6e2ef50, "1e+21"},
			{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
			{0x3eb0c6f7a0b5ed8d, "0.000001"},
			{0x41b3de4355555553, "333333333.3333332"},
			{0x41b3de4355555554, "333333333.33333325"},
			{0x41b3de4355555555, "333333333.3333333"},
			{0x41b3de4355555556, "333333333.3333334"},
			{0x41b3de4355555557, "333333333.33333343"},
			{0xbecbf647612f3696, "-0.0000033333333333333333"},
			{0x43143ff3c1cb0959, "1424953923781206.2"},
		} {
			got, err := formatNumber(math.Float64frombits(tc.bits))
			if err != nil || got != tc.want {
				t.Errorf("%016x: %s (%v), want %s", tc.bits, got, err, tc.want)
			}
		}
		for _, bits := range []uint64{0x7fffffffffffffff, 0x7ff0000000000000} {
			if _, err := formatNumber(math.Float64frombits(bits)); err == nil {
				t.Errorf("%016x (NaN or Infinity) has no JSON form, yet formatted", bits)
			}
		}
	})
}

// TestCanonicalizeRefusesWhatIJSONRefuses: duplicate names, invalid UTF-8
// and trailing text are errors, not a guess at what was meant.
func TestCanonicalizeRefusesWhatIJSONRefuses(t *testing.T) {
	for _, in := range []string{`{"a":1,"a":2}`, "\"\xff\"", `{} {}`, `[1,`, `1e400`} {
		if got, err := Canonicalize([]byte(in)); err == nil {
			t.Errorf("%q canonicalized to %s", in, got)
		}
	}
}
