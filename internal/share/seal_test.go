package share

import (
	"bytes"
	"testing"

	"github.com/google/uuid"
)

func TestASealedTokenOpensOnlyForItsInvitationUnderItsSecret(t *testing.T) {
	secret := "a-test-secret-of-at-least-32-bytes-long"
	s, err := NewSealer(secret)
	if err != nil {
		t.Fatal(err)
	}
	token, _ := NewToken()
	share, other := uuid.New(), uuid.New()
	sealed := s.Seal(share, "legal@brand.test", token)
	if bytes.Contains(sealed, []byte(token)) {
		t.Fatal("the sealed token holds the token")
	}
	if got, err := s.Open(share, "legal@brand.test", sealed); err != nil || got != token {
		t.Fatalf("open: %q, %v", got, err)
	}
	if again := s.Seal(share, "legal@brand.test", token); bytes.Equal(again, sealed) {
		t.Error("two seals of one token are equal: the nonce is not random")
	}
	elsewhere, _ := NewSealer(secret + "!")
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	for name, open := range map[string]func() (string, error){
		"another address": func() (string, error) { return s.Open(share, "brand@brand.test", sealed) },
		"another share":   func() (string, error) { return s.Open(other, "legal@brand.test", sealed) },
		"another secret":  func() (string, error) { return elsewhere.Open(share, "legal@brand.test", sealed) },
		"altered":         func() (string, error) { return s.Open(share, "legal@brand.test", tampered) },
		"too short":       func() (string, error) { return s.Open(share, "legal@brand.test", sealed[:5]) },
	} {
		if got, err := open(); err != ErrSealed || got != "" {
			t.Errorf("%s: %q, %v; want ErrSealed", name, got, err)
		}
	}
	if none, err := NewSealer(""); none != nil || err != nil {
		t.Errorf("no secret: %v, %v; want no sealer", none, err)
	}
}
