// Package auth signs users in and out and recognises their sessions. Only a
// SHA-256 hash of a session token is stored, so a copy of the database
// does not let anyone impersonate a user.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"creativeapi/gen/db"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/store"
)

// touchEvery limits how often a session's idle expiry is extended, so most
// authenticated requests cost one read and no write.
const touchEvery = time.Minute

// SessionConfig is the session cookie's policy.
type SessionConfig struct {
	CookieSecure bool
	IdleTTL      time.Duration
	AbsoluteTTL  time.Duration
}

// CookieName is __Host-session when Secure (the prefix pins the cookie to
// this host and path /), else session for plain-http development.
func (c SessionConfig) CookieName() string {
	if c.CookieSecure {
		return "__Host-session"
	}
	return "session"
}

// Service signs users in and out and authenticates requests.
type Service struct {
	store    *store.Store
	lookups  *lookups
	cfg      SessionConfig
	throttle ThrottlePolicy
	// sharePasswords limits wrong share passwords.
	sharePasswords SharePasswordPolicy
	log            *slog.Logger
}

// NewService returns a Service over s.
func NewService(s *store.Store, cfg SessionConfig, log *slog.Logger) *Service {
	// Compute the dummy hash now, so even the first unknown email costs
	// only one argon2id verification.
	go func() { _, _ = dummyHash() }()
	return &Service{store: s, lookups: &lookups{store: s}, cfg: cfg, throttle: DefaultThrottle, sharePasswords: DefaultSharePasswords, log: log}
}

// Authenticate finds the live session of the request's cookie. With a
// non-empty idempotencyKey (a command's, as idempotency.LookupKey returns
// it) the same statement reads the live answer stored under that key for
// the session's user (fingerprint and answer only): stored is nil when there
// is none. What a stored answer means is the idempotency package's business,
// so it comes back as that package's Stored, not as a row. Requests queueing
// for the pool share that statement (lookups).
//
// A request with an Authorization header is a bearer request instead
// (authenticateBearer): ErrInvalidToken when its token is not live,
// ErrAmbiguousCredentials when it also sends the session cookie. A cookie
// request pays only the header's map lookup for this.
func (s *Service) Authenticate(r *http.Request, idempotencyKey string) (caller requestctx.Caller, stored *idempotency.Stored, ok bool, err error) {
	cookie, cookieErr := r.Cookie(s.cfg.CookieName())
	if token, bearer := bearerToken(r); bearer {
		if cookieErr == nil {
			return requestctx.Caller{}, nil, false, ErrAmbiguousCredentials
		}
		caller, stored, err := s.authenticateBearer(r.Context(), token, idempotencyKey)
		return caller, stored, err == nil, err
	}
	if cookieErr != nil || cookie.Value == "" || len(cookie.Value) > 100 {
		return requestctx.Caller{}, nil, false, nil
	}
	ctx := r.Context()
	row, err := s.lookups.get(ctx, HashToken(cookie.Value), idempotencyKey)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return requestctx.Caller{}, nil, false, nil
		}
		return requestctx.Caller{}, nil, false, err
	}
	if time.Since(row.LastSeenAt) > touchEvery {
		if err := s.store.Q.SessionTouch(ctx, db.SessionTouchParams{ID: row.ID, IdleSeconds: seconds(s.cfg.IdleTTL)}); err != nil {
			// The session is valid; a failed touch only shortens its idle life.
			s.log.WarnContext(ctx, "session touch failed", "error", err, "trace_id", requestctx.TraceID(ctx))
		}
	}
	if row.StoredFingerprint != nil {
		stored = &idempotency.Stored{
			Fingerprint: row.StoredFingerprint, StatusCode: row.StoredStatusCode,
			Body: row.StoredResponseBody, Location: row.StoredResponseLocation,
		}
	}
	return requestctx.Caller{
		UserID: row.UserID, SessionID: row.ID, Email: row.Email, Name: row.Name, CSRFToken: row.CsrfToken, Operator: row.Operator,
	}, stored, true, nil
}

// NewToken returns 256 random bits, base64url-encoded: a session token or a
// CSRF token.
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// HashToken is what the sessions table stores of a token.
func HashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

func seconds(d time.Duration) int32 { return int32(d / time.Second) }
