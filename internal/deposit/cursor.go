package deposit

import (
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/cursor"
)

// ErrBadCursor is returned by DecodeCursor for anything it did not encode.
var ErrBadCursor = errors.New("deposit: not a cursor of this list")

// cursorKind names the list and versions the cursor's layout, so a future
// layout can refuse or translate old cursors.
const cursorKind = "d1"

// Bounds of a cursor's creation time: deposits are created by now(), so a
// cursor of a real row lies between these; anything outside was made up
// (and −2⁶³ µs would not even be a time PostgreSQL can compare).
var (
	cursorEarliest = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	cursorLatest   = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).UnixMicro()
)

// EncodeCursor makes the opaque nextCursor of a list page from its last
// deposit. Creation time alone is not unique (one transaction's now()), so
// the id breaks ties, as in the list's ORDER BY.
func EncodeCursor(createdAt time.Time, id uuid.UUID) string {
	return cursor.Encode(cursorKind, strconv.FormatInt(createdAt.UnixMicro(), 10), id.String())
}

// DecodeCursor reads a cursor made by EncodeCursor. PostgreSQL keeps
// microseconds, so the time comes back exactly.
func DecodeCursor(s string) (time.Time, uuid.UUID, error) {
	parts, err := cursor.Decode(cursorKind, s, 2)
	if err != nil {
		return time.Time{}, uuid.UUID{}, ErrBadCursor
	}
	micros, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || micros < cursorEarliest || micros > cursorLatest {
		return time.Time{}, uuid.UUID{}, ErrBadCursor
	}
	id, err := uuid.Parse(parts[1])
	if err != nil || len(parts[1]) != 36 {
		return time.Time{}, uuid.UUID{}, ErrBadCursor
	}
	return time.UnixMicro(micros).UTC(), id, nil
}
