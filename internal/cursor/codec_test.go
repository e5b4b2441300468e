package cursor_test

import (
	"encoding/base64"
	"errors"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/cursor"
)

func TestANumberCursorHoldsOneFrom1ToMax(t *testing.T) {
	t.Parallel()
	c := cursor.Number("c1", 1000)
	for _, n := range []int64{1, 42, 1000} {
		if got, err := c.Decode(c.Encode(n)); err != nil || got != n {
			t.Fatalf("round trip of %d = %d, %v", n, got, err)
		}
	}
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for name, s := range map[string]string{
		"zero":                  enc("c1.0"),
		"negative":              enc("c1.-5"),
		"over max":              enc("c1.1001"),
		"not a number":          enc("c1.x"),
		"another list's cursor": cursor.Number("e1", 1000).Encode(5),
		"two parts":             enc("c1.1.2"),
	} {
		if _, err := c.Decode(s); !errors.Is(err, cursor.ErrInvalid) {
			t.Errorf("%s: Decode(%q) = %v, want ErrInvalid", name, s, err)
		}
	}
}

func TestAnIDCursorHoldsAUUID(t *testing.T) {
	t.Parallel()
	c := cursor.ID("m1")
	id := uuid.New()
	if got, err := c.Decode(c.Encode(id)); err != nil || got != id {
		t.Fatalf("round trip of %s = %s, %v", id, got, err)
	}
	if _, err := c.Decode(base64.RawURLEncoding.EncodeToString([]byte("m1.not-a-uuid"))); !errors.Is(err, cursor.ErrInvalid) {
		t.Fatalf("a bad id: %v", err)
	}
}

// TestCodecsReadTheCursorsAlreadyGivenOut: a cursor written as the lists
// wrote them before the codecs (cursor.Encode of the kind and the
// position's text, EncodeTimeID) decodes to the same position, and the
// codecs write the same text.
func TestCodecsReadTheCursorsAlreadyGivenOut(t *testing.T) {
	t.Parallel()
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	if got, err := cursor.Number("c1", 1<<31-1).Decode(enc("c1.1234")); err != nil || got != 1234 {
		t.Fatalf("number: %d, %v", got, err)
	}
	if c := cursor.Number("c1", 1<<31-1).Encode(1234); c != enc("c1.1234") {
		t.Fatalf("number written as %q", c)
	}
	id := uuid.MustParse("0192f1a4-8b1e-7c3d-9e2f-0a1b2c3d4e5f")
	if got, err := cursor.ID("m1").Decode(enc("m1." + id.String())); err != nil || got != id {
		t.Fatalf("id: %s, %v", got, err)
	}
	old := enc("d1.1763979200123456." + id.String())
	p, err := cursor.TimeIDs("d1").Decode(old)
	if err != nil || p.At.UnixMicro() != 1763979200123456 || p.ID != id {
		t.Fatalf("time and id: %+v, %v", p, err)
	}
	if c := cursor.TimeIDs("d1").Encode(p); c != old || c != cursor.EncodeTimeID("d1", p.At, p.ID) {
		t.Fatalf("time and id written as %q", c)
	}
}
