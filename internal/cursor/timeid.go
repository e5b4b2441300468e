package cursor

import (
	"strconv"
	"time"

	"github.com/google/uuid"
)

// Bounds of a cursor's time: rows are stamped by now(), so a cursor of a
// real row lies between these; anything outside was made up (and −2⁶³ µs
// would not even be a time PostgreSQL can compare).
var (
	earliest = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	latest   = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).UnixMicro()
)

// EncodeTimeID makes the cursor of list kind for a list ordered by a time
// and an id (newest first): the last row's time, in microseconds as
// PostgreSQL keeps it, and its id, which breaks ties (one transaction's
// now() stamps many rows alike).
func EncodeTimeID(kind string, at time.Time, id uuid.UUID) string {
	return Encode(kind, strconv.FormatInt(at.UnixMicro(), 10), id.String())
}

// DecodeTimeID reads a cursor EncodeTimeID made for list kind; the time
// comes back exactly. Anything else is ErrInvalid.
func DecodeTimeID(kind, s string) (time.Time, uuid.UUID, error) {
	parts, err := Decode(kind, s, 2)
	if err != nil {
		return time.Time{}, uuid.UUID{}, err
	}
	return timeID(parts)
}

// timeID reads the two parts EncodeTimeID writes.
func timeID(parts []string) (time.Time, uuid.UUID, error) {
	micros, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || micros < earliest || micros > latest {
		return time.Time{}, uuid.UUID{}, ErrInvalid
	}
	id, err := uuid.Parse(parts[1])
	if err != nil || len(parts[1]) != 36 {
		return time.Time{}, uuid.UUID{}, ErrInvalid
	}
	return time.UnixMicro(micros).UTC(), id, nil
}
