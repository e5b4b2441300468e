package gate

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestUUIDFormatMatchesKinOpenAPIPattern proves the hand-written uuid check
// accepts exactly what openapi3.FormatOfStringForUUIDOfRFC9562 accepts.
func TestUUIDFormatMatchesKinOpenAPIPattern(t *testing.T) {
	t.Parallel()
	pattern := regexp.MustCompile(openapi3.FormatOfStringForUUIDOfRFC9562)
	inputs := []string{
		"", "3f2b8c1a-6d4e-4f8a-9b7c-1e2d3c4b5a69", "3F2B8C1A-6D4E-4F8A-9B7C-1E2D3C4B5A69", "0190d6a8-3c4b-7def-8a12-3456789abcde",
		"00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", "FFFFFFFF-ffff-FFFF-ffff-FFFFFFFFFFFF",
		"3f2b8c1a-6d4e-0f8a-9b7c-1e2d3c4b5a69", "3f2b8c1a-6d4e-9f8a-9b7c-1e2d3c4b5a69", "3f2b8c1a-6d4e-4f8a-7b7c-1e2d3c4b5a69",
		"3f2b8c1a-6d4e-4f8a-cb7c-1e2d3c4b5a69", "3f2b8c1a6d4e-4f8a-9b7c-1e2d3c4b5a69-", "3f2b8c1a-6d4e-4f8a-9b7c-1e2d3c4b5a6",
		"3f2b8c1a-6d4e-4f8a-9b7c-1e2d3c4b5a690", "3f2b8c1g-6d4e-4f8a-9b7c-1e2d3c4b5a69", "{3f2b8c1a-6d4e-4f8a-9b7c-1e2d3c4b5a69}",
		"00000000-0000-0000-0000-000000000001", "fffffffe-ffff-ffff-ffff-ffffffffffff", "3f2b8c1a 6d4e 4f8a 9b7c 1e2d3c4b5a69",
	}
	for v := range 16 {
		for _, variant := range "0789abcdefABCDEF" {
			inputs = append(inputs, fmt.Sprintf("3f2b8c1a-6d4e-%xf8a-%cb7c-1e2d3c4b5a69", v, variant))
		}
	}
	for _, s := range inputs {
		if got, want := isRFC9562UUID(s), pattern.MatchString(s); got != want {
			t.Errorf("%q: %v, the pattern says %v", s, got, want)
		}
	}
}

// TestPatternMatchersMatchTheirPatterns proves each hand-written matcher
// accepts exactly what its regular expression accepts.
func TestPatternMatchersMatchTheirPatterns(t *testing.T) {
	t.Parallel()
	var samples []string
	for _, n := range []int{0, 1, 2, 3, 4, 254, 255, 256, 257, 258, 300} {
		for _, fill := range []string{"a", "7", "\"", " ", "\x7f", "é", "~", "!"} {
			body := strings.Repeat(fill, n)
			samples = append(samples, body, `"`+body+`"`, `"`+body, body+`"`)
			if n > 2 {
				samples = append(samples, "a"+body[1:], body[:n-1]+" ", "0"+body[1:])
			}
		}
	}
	samples = append(samples, "123", "0", "-1", "1.5", "12a", "١٢", "5b3d8a2e-8f1c-4d7e-9a6b-2c4e6f8a0b1d", `"k-1"`, `""`, `"`,
		"a\x00b", "line\nbreak", "tab\t", "\x1f", "\u0080", "\u009f", "\u00a0", "\u2028", "\xff\xfe", "Ada Lovelace", "x@y.test")
	if len(patternMatchers) == 0 {
		t.Fatal("no matchers")
	}
	for pattern, match := range patternMatchers {
		re := regexp.MustCompile(regexp.MustCompile(`\\u([0-9A-F]{4})`).ReplaceAllString(pattern, `\x{$1}`))
		for _, s := range samples {
			if got, want := match(s), re.MatchString(s); got != want {
				t.Errorf("%s on %q (%d bytes): %v, the pattern says %v", pattern, s, len(s), got, want)
			}
		}
	}
}
