package deposit

import (
	"errors"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/cursor"
)

// ErrBadCursor is returned by DecodeCursor for anything it did not encode.
var ErrBadCursor = errors.New("deposit: not a cursor of this list")

// cursorKind names the list and versions the cursor's layout, so a future
// layout can refuse or translate old cursors.
const cursorKind = "d1"

// EncodeCursor makes the opaque nextCursor of a list page from its last
// deposit, ordered as the list is: creation time, then id.
func EncodeCursor(createdAt time.Time, id uuid.UUID) string {
	return cursor.EncodeTimeID(cursorKind, createdAt, id)
}

// DecodeCursor reads a cursor made by EncodeCursor.
func DecodeCursor(s string) (time.Time, uuid.UUID, error) {
	at, id, err := cursor.DecodeTimeID(cursorKind, s)
	if err != nil {
		return time.Time{}, uuid.UUID{}, ErrBadCursor
	}
	return at, id, nil
}
