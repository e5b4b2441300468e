package share_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"testing"
	"time"

	"creativeapi/internal/review"
	"creativeapi/internal/share"
)

func TestExpiryIsInTheFutureAtMost90DaysAheadAnd14ByDefault(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := now.Add(d); return &v }
	tests := []struct {
		name      string
		requested *time.Time
		want      time.Time
		refused   bool
	}{
		{"default", nil, now.Add(14 * 24 * time.Hour), false},
		{"now", at(0), time.Time{}, true},
		{"past", at(-time.Second), time.Time{}, true},
		{"one second", at(time.Second), now.Add(time.Second), false},
		{"90 days", at(90 * 24 * time.Hour), now.Add(90 * 24 * time.Hour), false},
		{"over 90 days", at(90*24*time.Hour + time.Second), time.Time{}, true},
	}
	for _, tt := range tests {
		got, err := share.Expiry(tt.requested, now)
		if (err != nil) != tt.refused || !got.Equal(tt.want) {
			t.Errorf("%s: %s, %v", tt.name, got, err)
		}
	}
}

func TestATokenIs32RandomBytesStoredAsItsSHA256(t *testing.T) {
	a, hashA := share.NewToken()
	b, _ := share.NewToken()
	if raw, err := base64.RawURLEncoding.DecodeString(a); err != nil || len(raw) != 32 || a == b {
		t.Fatalf("tokens %q, %q", a, b)
	}
	if want := sha256.Sum256([]byte(a)); !bytes.Equal(hashA, want[:]) {
		t.Error("the stored hash is not the token's SHA-256")
	}
}

func TestSharesAreForAdminsAndAuthorsOfTheirOwnCreatives(t *testing.T) {
	for _, role := range review.Roles {
		mayShare := role == review.RoleAdmin || role == review.RoleAuthor
		if got := review.AuthorizeShares(role) == nil; got != mayShare {
			t.Errorf("%s may manage shares: %v, want %v", role, got, mayShare)
		}
		for _, isAuthor := range []bool{true, false} {
			want := role == review.RoleAdmin || role == review.RoleAuthor && isAuthor
			if got := review.AuthorizeShareCreative(role, isAuthor) == nil; got != want {
				t.Errorf("%s (author of it: %v) may share a creative: %v, want %v", role, isAuthor, got, want)
			}
		}
		if review.SeesAllShares(role) != (role == review.RoleAdmin) {
			t.Errorf("%s sees every share: %v", role, review.SeesAllShares(role))
		}
	}
}
