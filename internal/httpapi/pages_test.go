package httpapi

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/cursor"
	"creativeapi/internal/problem"
)

// TestEveryListReadsTheCursorsItGaveOutBefore: each list's cursor as the
// handlers wrote it before the one pagination helper (cursor.Encode of the
// list's kind and the position as text; cursor.EncodeTimeID) pages from
// the same position, and is written the same way now.
func TestEveryListReadsTheCursorsItGaveOutBefore(t *testing.T) {
	t.Parallel()
	number := func(kind string, n int64) string { return cursor.Encode(kind, strconv.FormatInt(n, 10)) }
	at, id := time.Date(2026, 11, 20, 10, 15, 0, 123456000, time.UTC), uuid.New()
	numbers := map[string]struct {
		codec cursor.Codec[int64]
		kind  string
	}{
		"creatives":          {creativeCursor, "c1"},
		"creative events":    {eventCursor, "e1"},
		"comments":           {commentCursor, "cm1"},
		"operator transfers": {operatorTransferCursor, "ot1"},
	}
	for name, l := range numbers {
		old := number(l.kind, 4321)
		if n, err := l.codec.Decode(old); err != nil || n != 4321 {
			t.Errorf("%s: %q decodes to %d, %v", name, old, n, err)
		}
		if got := l.codec.Encode(4321); got != old {
			t.Errorf("%s: written as %q, was %q", name, got, old)
		}
	}
	timeIDs := map[string]struct {
		codec cursor.Codec[cursor.TimeID]
		kind  string
	}{
		"webhook endpoints": {webhookCursor, "w1"},
		"deliveries":        {deliveryCursor, "wd1"},
		"deposits":          {depositCursor, "d1"},
	}
	for name, l := range timeIDs {
		old := cursor.EncodeTimeID(l.kind, at, id)
		if p, err := l.codec.Decode(old); err != nil || !p.At.Equal(at) || p.ID != id {
			t.Errorf("%s: %q decodes to %+v, %v", name, old, p, err)
		}
		if got := l.codec.Encode(cursor.TimeID{At: at, ID: id}); got != old {
			t.Errorf("%s: written as %q, was %q", name, got, old)
		}
	}
	old := cursor.Encode("m1", id.String())
	if got, err := memberCursor.Decode(old); err != nil || got != id {
		t.Errorf("members: %q decodes to %s, %v", old, got, err)
	}
	if got := memberCursor.Encode(id); got != old {
		t.Errorf("members: written as %q, was %q", got, old)
	}
}

func TestPageReadsTheLimitAndTheCursor(t *testing.T) {
	t.Parallel()
	size, at, err := page(commentCursor, nil, nil)
	if err != nil || size != defaultPageSize || at != 0 {
		t.Fatalf("first page: %d, %d, %v", size, at, err)
	}
	limit, c := 7, commentCursor.Encode(99)
	if size, at, err = page(commentCursor, &limit, &c); err != nil || size != 7 || at != 99 {
		t.Fatalf("a later page: %d, %d, %v", size, at, err)
	}
	// Another list's cursor is the 422 of every list.
	other := eventCursor.Encode(99)
	_, _, err = page(commentCursor, nil, &other)
	perr, ok := err.(*problem.Error)
	if !ok || perr.Status != http.StatusUnprocessableEntity || len(perr.FieldErrors) != 1 || perr.FieldErrors[0].Field != "cursor" {
		t.Fatalf("another list's cursor: %v", err)
	}
}

func TestNextCursorIsNullOnTheLastPage(t *testing.T) {
	t.Parallel()
	if next := nextCursor(commentCursor, 0); !next.IsNull() {
		t.Fatalf("last page: %v", next)
	}
	if next, err := nextCursor(commentCursor, 5).Get(); err != nil || next != commentCursor.Encode(5) {
		t.Fatalf("next page: %q, %v", next, err)
	}
}
