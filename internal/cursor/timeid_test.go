package cursor_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/cursor"
)

// deposits is the codec of the deposit list, whose tests these were.
var deposits = cursor.TimeIDs("d1")

func TestCursor_RoundTripsToTheMicrosecond(t *testing.T) {
	t.Parallel()
	for _, at := range []time.Time{
		time.Date(2026, 11, 20, 10, 15, 0, 123456000, time.UTC),
		time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
	} {
		id := uuid.New()
		got, err := deposits.Decode(deposits.Encode(cursor.TimeID{At: at, ID: id}))
		if err != nil || !got.At.Equal(at) || got.ID != id {
			t.Fatalf("round trip of %s/%s = %s/%s, %v", at, id, got.At, got.ID, err)
		}
	}
}

func TestCursor_RefusesWhatItDidNotMake(t *testing.T) {
	t.Parallel()
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	id := uuid.NewString()
	for name, c := range map[string]string{
		"not base64":        "%%%",
		"padded base64":     base64.URLEncoding.EncodeToString([]byte("d1.1." + id)),
		"other prefix":      enc("c1.1." + id),
		"missing part":      enc("d1.1"),
		"extra part":        enc("d1.1." + id + ".x"),
		"time not integer":  enc("d1.x." + id),
		"time at -2^63 µs":  enc("d1.-9223372036854775808." + id),
		"time before 2000":  enc("d1.0." + id),
		"time after 9999":   enc("d1.253402300800000000." + id),
		"bad id":            enc("d1.1.not-a-uuid"),
		"id without dashes": enc("d1.1." + strings.ReplaceAll(id, "-", "")),
		"empty":             "",
	} {
		if _, err := deposits.Decode(c); !errors.Is(err, cursor.ErrInvalid) {
			t.Errorf("%s: Decode(%q) = %v, want ErrInvalid", name, c, err)
		}
	}
}

func FuzzDecodeCursor(f *testing.F) {
	f.Add(deposits.Encode(cursor.TimeID{At: time.Now(), ID: uuid.New()}))
	f.Add("")
	f.Add("ZDEuMS4x")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := deposits.Decode(s)
		if err != nil {
			return
		}
		// Whatever decodes encodes back to a cursor naming the same row.
		p2, err := deposits.Decode(deposits.Encode(p))
		if err != nil || !p2.At.Equal(p.At) || p2.ID != p.ID {
			t.Fatalf("re-encoding %q: %s/%s, %v", s, p2.At, p2.ID, err)
		}
	})
}
