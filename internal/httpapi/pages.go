package httpapi

import (
	"math"

	"github.com/oapi-codegen/nullable"

	"creativeapi/gen/api"
	"creativeapi/internal/creative"
	"creativeapi/internal/cursor"
	"creativeapi/internal/problem"
	"creativeapi/internal/share"
)

// defaultPageSize is the page size of every list when the request names
// none: openapi.yaml's Limit default (a test holds them equal).
const defaultPageSize = 20

// The cursor of every list (internal/cursor), named by its kind: a cursor
// of one list is refused by every other. The kinds and layouts are those
// of the cursors already given out to clients, which keep working.
var (
	creativeCursor         = cursor.Number("c1", creative.FirstPage)
	eventCursor            = cursor.Number("e1", math.MaxInt64)
	commentCursor          = cursor.Number("cm1", math.MaxInt64)
	operatorTransferCursor = cursor.Number("ot1", math.MaxInt64)
	memberCursor           = cursor.ID("m1")
	webhookCursor          = cursor.TimeIDs("w1")
	deliveryCursor         = cursor.TimeIDs("wd1")
	depositCursor          = cursor.TimeIDs("d1")
	ledgerEntryCursor      = cursor.TimeIDs("le1")
	shareCursor            = cursor.TimeIDs("sh1")
	tokenCursor            = cursor.TimeIDs("tk1")
	guestCreativeCursor    = cursor.Number("gc1", share.MaxCreatives)
)

// page reads a list request's limit and cursor: the page size (the spec's
// default when none is sent) and the position the page continues from,
// the zero position for the first page. A cursor the list did not make is
// the one answer every list gives it.
func page[P comparable](c cursor.Codec[P], limit *api.Limit, after *string) (size int, at P, err error) {
	size = defaultPageSize
	if limit != nil {
		size = *limit
	}
	if after == nil {
		return size, at, nil
	}
	if at, err = c.Decode(*after); err != nil {
		return 0, at, errInvalidCursor()
	}
	return size, at, nil
}

// nextCursor is a page's nextCursor: the cursor of next, the position the
// next page continues from, or null when next is the zero position (the
// last page).
func nextCursor[P comparable](c cursor.Codec[P], next P) nullable.Nullable[string] {
	var zero P
	if next == zero {
		return nullable.NewNullNullable[string]()
	}
	return nullable.NewNullableWithValue(c.Encode(next))
}

// errInvalidCursor is the one answer of every list to a cursor it did not make.
func errInvalidCursor() error {
	return problem.Invalid([]problem.FieldError{{Field: "cursor", Code: problem.InvalidFormat,
		Message: "Is not a cursor of this list. Pass the nextCursor of the previous page as is."}})
}
