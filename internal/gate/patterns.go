package gate

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"

	"creativeapi/internal/idempotency"
)

// singleLinePattern is openapi.yaml's pattern of single-line text (names,
// titles, emails): no control character (Unicode category Cc: U+0000 to
// U+001F and U+007F to U+009F).
const singleLinePattern = `^[^\u0000-\u001F\u007F-\u009F]*$`

// patternMatchers replace regular expressions of the spec that cost more
// than the rest of a request's validation: the Idempotency-Key's bounded
// repetitions make Go's regexp track hundreds of states per character.
// Each says exactly what its pattern says (TestPatternMatchersMatchTheirPatterns).
var patternMatchers = map[string]func(string) bool{
	singleLinePattern: func(s string) bool { return !strings.ContainsFunc(s, unicode.IsControl) },
	// The Idempotency-Key format.
	`^(?:[\x21-\x7E]{1,255}|"[\x21-\x7E]{1,255}")$`: idempotency.ValidKey,
	`^[0-9]+$`: func(s string) bool {
		for i := range len(s) {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return len(s) > 0
	},
}

// patternMessages say in words what a pattern asks for.
var patternMessages = map[string]string{
	singleLinePattern: "Must not contain control characters (such as line breaks or U+0000).",
}

type patternMatcher func(string) bool

func (m patternMatcher) MatchString(s string) bool { return m(s) }

// compilePattern is the gate's pattern compiler, for parameters and bodies
// alike: a matcher of patternMatchers, else Go's regexp as kin-openapi
// compiles it. kin-openapi keeps the first matcher compiled for a pattern
// for the whole process; in the server the gate compiles every pattern of
// a request first.
func compilePattern(expr string) (openapi3.RegexMatcher, error) {
	if m, ok := patternMatchers[expr]; ok {
		return patternMatcher(m), nil
	}
	return regexp.Compile(unicodeEscape.ReplaceAllString(expr, `\x{${code}}`))
}

// unicodeEscape is JSON Schema's \uXXXX, which Go's regexp writes \x{XXXX}.
var unicodeEscape = regexp.MustCompile(`\\u(?P<code>[0-9A-F]{4})`)

// isRFC9562UUID matches openapi3.FormatOfStringForUUIDOfRFC9562: 8-4-4-4-12
// hex digits with version 1 to 8 and variant 8 to b, or the nil or max UUID.
func isRFC9562UUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	if s == "00000000-0000-0000-0000-000000000000" || strings.EqualFold(s, "ffffffff-ffff-ffff-ffff-ffffffffffff") {
		return true
	}
	return '1' <= s[14] && s[14] <= '8' && strings.ContainsRune("89abAB", rune(s[19]))
}
