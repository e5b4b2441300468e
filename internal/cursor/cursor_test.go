package cursor_test

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"creativeapi/internal/cursor"
)

func TestACursorDecodesOnlyForTheListThatMadeIt(t *testing.T) {
	t.Parallel()
	c := cursor.Encode("d1", "123", "abc")
	if parts, err := cursor.Decode("d1", c, 2); err != nil || !slices.Equal(parts, []string{"123", "abc"}) {
		t.Fatalf("round trip: %q, %v", parts, err)
	}
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for name, s := range map[string]string{
		"another list's cursor": cursor.Encode("c1", "123", "abc"),
		"too few parts":         cursor.Encode("d1", "123"),
		"too many parts":        enc("d1.1.2.3"),
		"no kind":               enc("123.abc"),
		"padded base64":         base64.URLEncoding.EncodeToString([]byte("d1.1.ab")),
		"standard base64":       base64.RawStdEncoding.EncodeToString([]byte("d1.>>>.???")),
		"not base64":            "%%%",
		"empty":                 "",
		"too long":              enc("d1." + strings.Repeat("1", 200) + ".x"),
	} {
		if _, err := cursor.Decode("d1", s, 2); !errors.Is(err, cursor.ErrInvalid) {
			t.Errorf("%s: Decode(%q) = %v, want ErrInvalid", name, s, err)
		}
	}
}

// TestAPageReadsOneRowOverToKnowWhetherAnotherFollows: Over reads one row
// more than the page; Trim drops it and says another page follows, and a
// last page (no row over) comes back whole with more false.
func TestAPageReadsOneRowOverToKnowWhetherAnotherFollows(t *testing.T) {
	t.Parallel()
	if n := cursor.Over(20); n != 21 {
		t.Fatalf("Over(20) = %d", n)
	}
	for _, tc := range []struct {
		name     string
		rows     []int
		wantRows int
		wantMore bool
	}{
		{"one row over: a next page", []int{1, 2, 3}, 2, true},
		{"exactly the page: the last page", []int{1, 2}, 2, false},
		{"fewer than the page: the last page", []int{1}, 1, false},
		{"no rows: an empty last page", nil, 0, false},
	} {
		rows, more := cursor.Trim(tc.rows, 2)
		if len(rows) != tc.wantRows || more != tc.wantMore {
			t.Errorf("%s: %v, %v", tc.name, rows, more)
		}
	}
}
