// Package cursor is the one codec of the lists' opaque nextCursor values:
// a list's kind and the position of the last row of a page, written as
// URL-safe base64 of "kind.part.part". A cursor is refused whole when it
// was not made for that list, so a client cannot page from a position of
// its own making; each list also checks that the position's values are
// ones its rows can have.
package cursor

import (
	"encoding/base64"
	"errors"
	"strings"
)

// ErrInvalid is the error of anything Decode did not expect.
var ErrInvalid = errors.New("not a cursor of this list")

// maxLen bounds a cursor before it is decoded (openapi.yaml's Cursor
// parameter allows 200 characters).
const maxLen = 200

// Encode makes the cursor of list kind at the position parts. Parts must
// not contain ".".
func Encode(kind string, parts ...string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + "." + strings.Join(parts, ".")))
}

// Decode returns the n parts of a cursor Encode made for list kind, or
// ErrInvalid.
func Decode(kind, s string, n int) ([]string, error) {
	if len(s) == 0 || len(s) > maxLen {
		return nil, ErrInvalid
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, ErrInvalid
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != n+1 || parts[0] != kind {
		return nil, ErrInvalid
	}
	return parts[1:], nil
}

// Over is the number of rows a list reads for a page of size: one more
// than the page tells whether another page follows.
func Over(size int) int32 { return int32(size) + 1 }

// Trim cuts rows, read with Over(size), to the page; more reports that
// another page follows, which continues after the page's last row.
func Trim[T any](rows []T, size int) (page []T, more bool) {
	if len(rows) > size {
		return rows[:size], true
	}
	return rows, false
}
