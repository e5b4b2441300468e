package deposit

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// ErrBadCursor is returned by DecodeCursor for anything it did not encode.
var ErrBadCursor = errors.New("deposit: not a cursor of this list")

// cursorPrefix versions the cursor's layout, so a future layout can refuse
// or translate old cursors.
const cursorPrefix = "d1"

// EncodeCursor makes the opaque nextCursor of a list page from its last
// deposit. Creation time alone is not unique (one transaction's now()), so
// the id breaks ties, as in the list's ORDER BY.
func EncodeCursor(createdAt time.Time, id uuid.UUID) string {
	raw := cursorPrefix + "." + strconv.FormatInt(createdAt.UnixMicro(), 10) + "." + id.String()
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// DecodeCursor reads a cursor made by EncodeCursor. PostgreSQL keeps
// microseconds, so the time comes back exactly.
func DecodeCursor(s string) (time.Time, uuid.UUID, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, uuid.UUID{}, ErrBadCursor
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != 3 || parts[0] != cursorPrefix {
		return time.Time{}, uuid.UUID{}, ErrBadCursor
	}
	micros, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return time.Time{}, uuid.UUID{}, ErrBadCursor
	}
	id, err := uuid.Parse(parts[2])
	if err != nil || len(parts[2]) != 36 {
		return time.Time{}, uuid.UUID{}, ErrBadCursor
	}
	return time.UnixMicro(micros).UTC(), id, nil
}
