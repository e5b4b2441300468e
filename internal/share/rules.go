// Package share holds the shares that let guests outside an organization
// review chosen creatives (docs/shares.md): their rules (limits, expiry,
// tokens) and the service over the database.
package share

import (
	"fmt"
	"time"

	"creativeapi/internal/auth"
)

// Permission is what a guest of a share may do; each includes the one
// before it.
type Permission string

const (
	PermissionView    Permission = "view"
	PermissionComment Permission = "comment"
	PermissionDecide  Permission = "decide"
)

// Valid reports whether p is one of the three permissions.
func (p Permission) Valid() bool {
	return p == PermissionView || p == PermissionComment || p == PermissionDecide
}

// The bounds of docs/shares.md. MaxInvitations is also the schema's
// maxItems; MaxCreatives is checked here (over it is 409 share_limit, as
// the issue asks, not a 422 of the schema).
const (
	MaxCreatives   = 50
	MaxInvitations = 50
	MaxLive        = 100
	DefaultExpiry  = 14 * 24 * time.Hour
	MaxExpiry      = 90 * 24 * time.Hour
)

// NewToken returns a new share token and the hash under which it is
// stored: 256 random bits, base64url without padding, and their SHA-256,
// made as a session's (auth.NewToken, auth.HashToken). With 256 random
// bits no slow hash is needed to keep the token from being guessed back.
func NewToken() (token string, hash []byte) {
	token = auth.NewToken()
	return token, auth.HashToken(token)
}

// ExpiryError is a refused expiresAt; Reason is a sentence for the
// field error.
type ExpiryError struct{ Reason string }

func (e *ExpiryError) Error() string { return "share expiry: " + e.Reason }

// Expiry is the expiry of a new share made at now: requested, or
// DefaultExpiry from now; in the future and at most MaxExpiry ahead.
func Expiry(requested *time.Time, now time.Time) (time.Time, error) {
	if requested == nil {
		return now.Add(DefaultExpiry), nil
	}
	at := *requested
	switch {
	case !at.After(now):
		return time.Time{}, &ExpiryError{Reason: "Must be in the future."}
	case at.Sub(now) > MaxExpiry:
		return time.Time{}, &ExpiryError{Reason: fmt.Sprintf("Must be at most %d days ahead.", int(MaxExpiry/(24*time.Hour)))}
	}
	return at, nil
}
