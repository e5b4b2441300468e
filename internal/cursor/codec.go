package cursor

import (
	"strconv"
	"time"

	"github.com/google/uuid"
)

// Codec is the cursor of one list: the kind that names it, and how the
// position of a page's last row is written in it. Every list pages
// through one (httpapi's page and nextCursor). The zero position means
// none: a page that ends the list has it as its next position, and no
// cursor Encode made for a row holds it.
type Codec[P comparable] struct {
	kind   string
	parts  int
	encode func(P) []string
	decode func([]string) (P, bool)
}

// Encode makes the cursor of the position p.
func (c Codec[P]) Encode(p P) string { return Encode(c.kind, c.encode(p)...) }

// Decode reads a cursor Encode made; anything else is ErrInvalid.
func (c Codec[P]) Decode(s string) (P, error) {
	var zero P
	parts, err := Decode(c.kind, s, c.parts)
	if err != nil {
		return zero, err
	}
	p, ok := c.decode(parts)
	if !ok {
		return zero, ErrInvalid
	}
	return p, nil
}

// Number is the codec of a list ordered by a number (a creative's number,
// an event's sequence): positions from 1 to max, as the list's column
// holds them.
func Number(kind string, max int64) Codec[int64] {
	return Codec[int64]{kind: kind, parts: 1,
		encode: func(n int64) []string { return []string{strconv.FormatInt(n, 10)} },
		decode: func(parts []string) (int64, bool) {
			n, err := strconv.ParseInt(parts[0], 10, 64)
			return n, err == nil && n >= 1 && n <= max
		}}
}

// ID is the codec of a list ordered by a UUID.
func ID(kind string) Codec[uuid.UUID] {
	return Codec[uuid.UUID]{kind: kind, parts: 1,
		encode: func(id uuid.UUID) []string { return []string{id.String()} },
		decode: func(parts []string) (uuid.UUID, bool) {
			id, err := uuid.Parse(parts[0])
			return id, err == nil
		}}
}

// TimeID is the position in a list ordered by a time and an id
// (EncodeTimeID).
type TimeID struct {
	At time.Time
	ID uuid.UUID
}

// TimeIDs is the codec of a list ordered by a time and an id, as
// EncodeTimeID writes them.
func TimeIDs(kind string) Codec[TimeID] {
	return Codec[TimeID]{kind: kind, parts: 2,
		encode: func(p TimeID) []string { return []string{strconv.FormatInt(p.At.UnixMicro(), 10), p.ID.String()} },
		decode: func(parts []string) (TimeID, bool) {
			at, id, err := timeID(parts)
			return TimeID{At: at, ID: id}, err == nil
		}}
}
