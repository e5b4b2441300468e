package auth_test

import (
	"regexp"
	"testing"

	"creativeapi/internal/auth"
)

// TestAccessTokenCarriesItsChecksum: a new token has the documented shape
// and passes its own checksum; changing any one character fails it.
func TestAccessTokenCarriesItsChecksum(t *testing.T) {
	t.Parallel()
	shape := regexp.MustCompile(`^cat_[0-9A-Za-z]{49}$`)
	for range 100 {
		tok := auth.NewAccessToken()
		if !shape.MatchString(tok) || !auth.WellFormedAccessToken(tok) {
			t.Fatalf("%q: not a well-formed token", tok)
		}
		for i := len(auth.TokenPrefix); i < len(tok); i++ {
			c := byte('0')
			if tok[i] == c {
				c = '1'
			}
			if bad := tok[:i] + string(c) + tok[i+1:]; auth.WellFormedAccessToken(bad) {
				t.Errorf("%q (position %d changed) passes the checksum", bad, i)
			}
		}
	}
}
