package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/store"
)

// Guest sessions (docs/shares.md, "Guest sessions"): a person outside the
// organization opens a share with its token. The session is scoped to the
// share and lives no longer than it; its lookup reads the share, so a
// revoked or expired share ends every session of it at once.

var (
	// ErrShareNotFound is the one answer to an unknown, a revoked and an
	// expired token: the same missing row of one read.
	ErrShareNotFound = errors.New("share not found")
	// ErrSharePasswordRequired refuses a wrong or missing password.
	ErrSharePasswordRequired = errors.New("share password required")
)

// GuestSignedIn is a new guest session: Token goes into the guest cookie
// and nowhere else.
type GuestSignedIn struct {
	Token, CSRFToken string
	ExpiresAt        time.Time // the session's, at most the share's
	GuestID          uuid.UUID
	Name, Email      string
	ShareID          uuid.UUID
	Permission       string
	ShareExpiresAt   time.Time
	OrganizationID   uuid.UUID
	OrganizationName string
}

// ShareSubject is the throttling subject of a share's password.
func ShareSubject(share uuid.UUID) string { return "share:" + share.String() }

// GuestSignIn opens a guest session on the live share of token for the
// person named. A share with a password counts the attempt against the
// throttle (per share and per client address) before the password is
// checked; a missing password is refused without counting, since it
// guesses nothing (a client learns so that it must ask for one). The
// same email on the same share is the same guest again.
func (s *Service) GuestSignIn(ctx context.Context, token, name, email string, password *string, clientIP string) (GuestSignedIn, error) {
	hash := HashToken(token)
	row, err := s.store.Q.ShareGetByTokenHash(ctx, hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return GuestSignedIn{}, ErrShareNotFound
	case err != nil:
		return GuestSignedIn{}, err
	case subtle.ConstantTimeCompare(hash, row.Share.TokenHash) != 1:
		return GuestSignedIn{}, ErrShareNotFound
	}
	sh := row.Share
	var subjects []string
	if sh.PasswordHash != nil {
		if password == nil {
			return GuestSignedIn{}, ErrSharePasswordRequired
		}
		// Sorted, as Subjects sorts a sign-in's: every attempt locks
		// its counters in one order.
		subjects = []string{ShareSubject(sh.ID)}
		if clientIP != "" {
			subjects = []string{AddressSubject(clientIP), ShareSubject(sh.ID)}
		}
		if err := s.countAttempt(ctx, subjects); err != nil {
			return GuestSignedIn{}, err
		}
		ok, err := VerifyPassword(*sh.PasswordHash, *password)
		if err != nil {
			return GuestSignedIn{}, err
		}
		if !ok {
			return GuestSignedIn{}, ErrSharePasswordRequired
		}
	}
	out := GuestSignedIn{
		Token: NewToken(), CSRFToken: NewToken(), ShareID: sh.ID, Permission: sh.Permission, ShareExpiresAt: sh.ExpiresAt,
		OrganizationID: sh.OrganizationID, OrganizationName: row.OrganizationName, Email: NormalizeEmail(email),
	}
	out.ExpiresAt = sh.ExpiresAt
	if limit := time.Now().Add(s.cfg.AbsoluteTTL); limit.Before(out.ExpiresAt) {
		out.ExpiresAt = limit
	}
	err = s.store.InTx(ctx, func(q store.Tx) error {
		g, err := q.GuestUpsert(ctx, db.GuestUpsertParams{ShareID: sh.ID, Email: out.Email, Name: name})
		if err != nil {
			return err
		}
		out.GuestID, out.Name = g.ID, g.Name
		if err := q.ShareInvitationSeen(ctx, db.ShareInvitationSeenParams{ShareID: sh.ID, Email: out.Email}); err != nil {
			return err
		}
		if _, err := q.GuestSessionCreate(ctx, db.GuestSessionCreateParams{
			GuestID: g.ID, TokenHash: HashToken(out.Token), CsrfToken: out.CSRFToken, ExpiresAt: out.ExpiresAt,
		}); err != nil {
			return err
		}
		return forgiveFailures(ctx, q, subjects, ShareSubject(sh.ID))
	})
	if err != nil {
		return GuestSignedIn{}, err
	}
	return out, nil
}

// GuestCookieName is the guest session's cookie, apart from the user
// session's so neither is mistaken for the other: __Host-guest when
// Secure, else guest.
func (c SessionConfig) GuestCookieName() string {
	if c.CookieSecure {
		return "__Host-guest"
	}
	return "guest"
}

// GuestCookie is the Set-Cookie value that hands a guest session's token
// to the browser, living until the session's expiry.
func (s *Service) GuestCookie(g GuestSignedIn) string {
	return s.namedCookie(s.cfg.GuestCookieName(), g.Token, max(1, int(time.Until(g.ExpiresAt)/time.Second)))
}

// PurgeGuestSessions deletes guest sessions that stopped working a day
// ago (their share revoked or expired, or their own expiry); safe to run
// on every replica at once.
func PurgeGuestSessions(ctx context.Context, st *store.Store, log *slog.Logger) error {
	n, err := st.Q.GuestSessionDeleteEnded(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		log.Info("ended guest sessions purged", "count", n)
	}
	return nil
}

// AuthenticateGuest finds the live guest session of the request's guest
// cookie (ok false without one): its own expiry not passed and its share
// neither revoked nor expired, read in one statement. A request with an
// Authorization header is no guest's: ErrInvalidToken, the answer of a
// token on any operation that takes no token. A user's session cookie beside the guest's is ignored: a member
// may hold a guest link of another workspace in the same browser.
func (s *Service) AuthenticateGuest(r *http.Request) (requestctx.Caller, bool, error) {
	if _, bearer := bearerToken(r); bearer {
		return requestctx.Caller{}, false, ErrInvalidToken
	}
	cookie, err := r.Cookie(s.cfg.GuestCookieName())
	if err != nil || cookie.Value == "" || len(cookie.Value) > 100 {
		return requestctx.Caller{}, false, nil
	}
	row, err := s.store.Q.GuestSessionGet(r.Context(), HashToken(cookie.Value))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return requestctx.Caller{}, false, nil
	case err != nil:
		return requestctx.Caller{}, false, err
	}
	var account uuid.UUID
	if row.AccountID != nil {
		account = *row.AccountID
	}
	return requestctx.Caller{
		SessionID: row.ID, Email: row.Email, Name: row.Name, CSRFToken: row.CsrfToken,
		Guest: requestctx.Guest{ID: row.GuestID, ShareID: row.ShareID, OrganizationID: row.OrganizationID, Permission: row.Permission,
			Invited: row.Invited, AccountID: account},
	}, true, nil
}
