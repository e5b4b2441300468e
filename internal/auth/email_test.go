package auth_test

import (
	"testing"

	"creativeapi/internal/auth"
)

func TestEmailsAreNormalisedByLowerCasingASCIILettersOnly(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"viewer@acme.test":         "viewer@acme.test",
		"Viewer@ACME.Test":         "viewer@acme.test",
		"v\u0130ewer@acme.test":    "v\u0130ewer@acme.test", // İ is not I
		"\u212Aelvin@acme.test":    "\u212Aelvin@acme.test", // the Kelvin sign is not K
		"ÄNNE@example.test":        "Änne@example.test",
		"":                         "",
		"ALL-UPPER@EXAMPLE.TEST":   "all-upper@example.test",
		"\xff\xfeBROKEN@utf8.test": "\xff\xfebroken@utf8.test",
	} {
		if got := auth.NormalizeEmail(in); got != want {
			t.Errorf("NormalizeEmail(%q) = %q, want %q", in, got, want)
		}
	}
}
