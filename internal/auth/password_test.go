package auth_test

import (
	"testing"

	"creativeapi/internal/auth"
)

// TestVerifyPassword: a hash verifies its password and no other, whatever
// settings made it: each hash names its own, so the hashes stored before a
// change of the defaults keep working.
func TestVerifyPassword(t *testing.T) {
	t.Parallel()
	for name, params := range map[string]auth.PasswordParams{
		"the defaults":                       auth.DefaultPasswordParams,
		"OWASP's 19 MiB, 2 passes (earlier)": {Memory: 19 * 1024, Time: 2, Threads: 1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			hash, err := auth.HashPassword("correct horse", params)
			if err != nil {
				t.Fatal(err)
			}
			for password, want := range map[string]bool{"correct horse": true, "correct horse ": false, "": false} {
				if got, err := auth.VerifyPassword(hash, password); got != want || err != nil {
					t.Errorf("VerifyPassword(%q) = %v, %v; want %v", password, got, err, want)
				}
			}
		})
	}
}
