package thread

import (
	"unicode"

	"creativeapi/internal/problem"
)

// Blank reports whether a comment's text says nothing a reader can see:
// empty, or only white space (any Unicode space: U+3000, U+00A0, line
// breaks) and format characters (category Cf: U+200B, U+2060, U+FEFF).
// It is the one rule for a blank comment, whoever writes it (a member, a
// guest) and wherever (a comment, an edit, a decision's comment): the
// schema keeps out control characters only, since a JSON Schema pattern
// reads `\s` as its regexp engine does (ASCII only in Go's).
func Blank(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) && !unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

// BlankBody is the field error of a blank body at field: too_short, as an
// empty one is.
func BlankBody(field string) problem.FieldError {
	return problem.FieldError{Field: field, Code: problem.TooShort, Message: "Must say more than white space or invisible characters."}
}
