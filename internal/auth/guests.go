package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/emailcap"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/store"
)

// Guest sessions (docs/shares.md, "Guest sessions"): a person outside the
// organization opens a share with its token. The session is scoped to the
// share and lives no longer than it; its lookup reads the share, so a
// revoked or expired share ends every session of it at once.

var (
	// ErrShareNotFound is the one answer to an unknown, a revoked and an
	// expired token: the same missing row of one read. An invitation
	// token of no invitation of the share is a dead link too.
	ErrShareNotFound = errors.New("share not found")
	// ErrSharePasswordRequired refuses a wrong or missing password.
	ErrSharePasswordRequired = errors.New("share password required")
	// ErrGuestEmailRequired: no email and no invitation token.
	ErrGuestEmailRequired = errors.New("guest email required")
	// ErrInvitationEmail: the email sent is not the invitation's.
	ErrInvitationEmail = errors.New("not the invitation's email")
	// ErrMemberEmail refuses a proven email of a member of the share's
	// organization: members sign in (docs/shares.md).
	ErrMemberEmail = errors.New("member email")
	// ErrCodeExpired: no live code (never asked for, expired, or ended by
	// its last wrong try).
	ErrCodeExpired = errors.New("code expired")
	// ErrCodeWrong: a wrong code with tries left.
	ErrCodeWrong = errors.New("wrong code")
)

// The email code of a guest session (docs/shares.md, "A guest is who
// their inbox says").
const (
	CodeTTL      = 10 * time.Minute
	CodeMaxTries = 5
)

// GuestSignedIn is a new guest session: Token goes into the guest cookie
// and nowhere else.
type GuestSignedIn struct {
	Token, CSRFToken string
	ExpiresAt        time.Time // the session's, at most the share's
	GuestID          uuid.UUID
	Name, Email      string
	Verified         bool
	ShareID          uuid.UUID
	Permission       string
	ShareExpiresAt   time.Time
	OrganizationID   uuid.UUID
	OrganizationName string
}

// GuestOpen is what a person sends to open a guest session: the share's
// token, the invitation's own token (nil: none), and the email (nil:
// the invitation's).
type GuestOpen struct {
	Token           string
	InvitationToken *string
	Name            string
	Email           *string
	Password        *string
	ClientIP        string
}

// ShareSubject is the throttling subject of a share's password.
func ShareSubject(share uuid.UUID) string { return "share:" + share.String() }

// GuestSignIn opens a guest session on the live share of in.Token, in
// the documented refusal order: a dead link (404, also an invitation
// token of no invitation of the share), the password (its throttle,
// then the check), the email, a member's proven email. A session opened
// with the invitation's own token is verified: the link reached that
// inbox. The same email on the same share is the same guest again; an
// unverified session does not rename the guest.
func (s *Service) GuestSignIn(ctx context.Context, in GuestOpen) (GuestSignedIn, error) {
	if in.Email == nil && in.InvitationToken == nil {
		return GuestSignedIn{}, ErrGuestEmailRequired
	}
	hash := HashToken(in.Token)
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
	invited, err := s.invitationOf(ctx, sh.ID, in.InvitationToken)
	if err != nil {
		return GuestSignedIn{}, err
	}
	subjects, err := s.checkSharePassword(ctx, sh, in.Password, in.ClientIP)
	if err != nil {
		return GuestSignedIn{}, err
	}
	out := GuestSignedIn{
		Token: NewToken(), CSRFToken: NewToken(), ShareID: sh.ID, Permission: sh.Permission, ShareExpiresAt: sh.ExpiresAt,
		OrganizationID: sh.OrganizationID, OrganizationName: row.OrganizationName, Name: in.Name,
	}
	if in.Email != nil {
		out.Email = NormalizeEmail(*in.Email)
	}
	if invited != "" {
		if in.Email != nil && out.Email != invited {
			return GuestSignedIn{}, ErrInvitationEmail
		}
		out.Email, out.Verified = invited, true
		if err := s.refuseMember(ctx, sh.OrganizationID, invited); err != nil {
			return GuestSignedIn{}, err
		}
	}
	out.ExpiresAt = sh.ExpiresAt
	if limit := time.Now().Add(s.cfg.AbsoluteTTL); limit.Before(out.ExpiresAt) {
		out.ExpiresAt = limit
	}
	err = s.store.InTx(ctx, func(q store.Tx) error {
		g, err := q.GuestUpsert(ctx, db.GuestUpsertParams{ShareID: sh.ID, Email: out.Email, Name: in.Name, Verified: out.Verified})
		if err != nil {
			return err
		}
		out.GuestID = g.ID
		if err := q.ShareInvitationSeen(ctx, db.ShareInvitationSeenParams{ShareID: sh.ID, Email: out.Email}); err != nil {
			return err
		}
		if in.ClientIP != "" {
			if err := q.ShareOpenerAdd(ctx, db.ShareOpenerAddParams{ShareID: sh.ID, Address: in.ClientIP}); err != nil {
				return err
			}
		}
		if _, err := q.GuestSessionCreate(ctx, db.GuestSessionCreateParams{
			GuestID: g.ID, TokenHash: HashToken(out.Token), CsrfToken: out.CSRFToken, ExpiresAt: out.ExpiresAt,
			Verified: out.Verified, Name: in.Name,
		}); err != nil {
			return err
		}
		// A success proves its address's tries, not the share's others.
		proved := ""
		if len(subjects) > 1 {
			proved = subjects[1]
		}
		return forgiveFailures(ctx, q, subjects, proved)
	})
	if err != nil {
		return GuestSignedIn{}, err
	}
	return out, nil
}

// invitationOf is the email of the invitation of share whose own token
// is token ("" without a token); ErrShareNotFound when no invitation of
// the share has it.
func (s *Service) invitationOf(ctx context.Context, share uuid.UUID, token *string) (string, error) {
	if token == nil {
		return "", nil
	}
	hash := HashToken(*token)
	inv, err := s.store.Q.ShareInvitationGetByTokenHash(ctx, db.ShareInvitationGetByTokenHashParams{ShareID: share, TokenHash: hash})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", ErrShareNotFound
	case err != nil:
		return "", err
	case subtle.ConstantTimeCompare(hash, inv.TokenHash) != 1:
		return "", ErrShareNotFound
	}
	return inv.Email, nil
}

// refuseMember is ErrMemberEmail when email (normalised) is a member's of
// org: called only once the inbox is proven, so it is never an oracle of
// who the members are.
func (s *Service) refuseMember(ctx context.Context, org uuid.UUID, email string) error {
	members, err := s.store.Q.ShareMemberEmails(ctx, db.ShareMemberEmailsParams{OrganizationID: org, Emails: []string{email}})
	if err != nil {
		return err
	}
	if len(members) > 0 {
		return ErrMemberEmail
	}
	return nil
}

// checkSharePassword checks the password of a share that has one and
// returns the throttle's subjects it counted (none without a password).
// The attempt is counted before the check, so parallel guesses cannot
// pass the limit; a missing password is refused without counting, since
// it guesses nothing (a client learns so that it must ask for one).
func (s *Service) checkSharePassword(ctx context.Context, sh db.Share, password *string, clientIP string) ([]string, error) {
	if sh.PasswordHash == nil {
		return nil, nil
	}
	if password == nil {
		return nil, ErrSharePasswordRequired
	}
	subjects, err := s.countShareAttempt(ctx, sh.ID, clientIP)
	if err != nil {
		return nil, err
	}
	ok, err := VerifyPassword(*sh.PasswordHash, *password)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrSharePasswordRequired
	}
	return subjects, nil
}

// countShareAttempt counts one password attempt on share from clientIP
// (SharePasswordPolicy), or refuses it with *ThrottledError. The
// subjects are sorted, the share's first: every attempt locks them in
// one order. The last subject is the one a success proves (the address's).
func (s *Service) countShareAttempt(ctx context.Context, share uuid.UUID, clientIP string) ([]string, error) {
	p := s.sharePasswords
	subjects := []string{ShareSubject(share)}
	if clientIP != "" {
		subjects = append(subjects, ShareAddressSubject(share, clientIP))
	}
	err := s.store.InTx(ctx, func(q store.Tx) error {
		rows, err := q.SignInFailureLock(ctx, subjects)
		if err != nil {
			return err
		}
		var shareCounter, addressCounter Counter
		var now time.Time
		for _, r := range rows {
			now = r.Now
			c := Counter{Subject: r.Subject, Failures: int(r.Failures), WindowStart: r.WindowStart}
			if r.Subject == subjects[0] {
				shareCounter = c
			} else {
				addressCounter = c
			}
		}
		opener := false
		if clientIP != "" && shareCounter.Failures >= p.PerShare {
			if opener, err = q.ShareOpenerExists(ctx, db.ShareOpenerExistsParams{ShareID: share, Address: clientIP}); err != nil {
				return err
			}
		}
		if wait := p.Wait(now, shareCounter, addressCounter, opener); wait > 0 {
			return &ThrottledError{RetryAfter: wait}
		}
		if err := q.SignInFailureRecord(ctx, db.SignInFailureRecordParams{Subjects: subjects[:1], WindowSeconds: seconds(p.ShareWindow)}); err != nil {
			return err
		}
		if len(subjects) == 1 {
			return nil
		}
		return q.SignInFailureRecord(ctx, db.SignInFailureRecordParams{Subjects: subjects[1:], WindowSeconds: seconds(p.Window)})
	})
	return subjects, err
}

// GuestCode is a code asked for a guest session: Code is "" when the
// recipient's email ceiling was reached (nothing to send, nothing
// changed); ExpiresAt is the code's expiry either way.
type GuestCode struct {
	Code, Email, OrganizationName string
	ExpiresAt                     time.Time
}

// GuestCodeHash is what a session stores of its code: the code is bound
// to the session, so a hash is no other session's code.
func GuestCodeHash(session uuid.UUID, code string) []byte {
	sum := sha256.Sum256(append(session[:], code...))
	return sum[:]
}

// newCode is six random digits.
func newCode() string {
	n, _ := rand.Int(rand.Reader, big.NewInt(1_000_000)) // crypto/rand never fails (Go 1.24)
	return fmt.Sprintf("%06d", n.Int64())
}

// GuestRequestCode gives the guest session a new email code, valid
// CodeTTL for CodeMaxTries, unless the session's email has reached its
// ceiling (emailcap.PerRecipient): then nothing changes, and the answer
// is the same, with the earlier code's expiry if it has a live one. The
// caller mails Code when it is not "".
func (s *Service) GuestRequestCode(ctx context.Context, session uuid.UUID) (GuestCode, error) {
	var out GuestCode
	err := s.store.InTx(ctx, func(q store.Tx) error {
		r, err := q.GuestSessionCodeLock(ctx, session)
		if err != nil {
			return err
		}
		out = GuestCode{Email: r.Email, OrganizationName: r.OrganizationName, ExpiresAt: r.Now.Add(CodeTTL)}
		ok, err := emailcap.AllowRecipient(ctx, q.Queries, emailcap.KindGuestCode, r.Email)
		if err != nil {
			return err
		}
		if !ok {
			if r.CodeExpiresAt != nil && r.CodeExpiresAt.After(r.Now) {
				out.ExpiresAt = *r.CodeExpiresAt
			}
			return nil
		}
		out.Code = newCode()
		return q.GuestSessionCodeSet(ctx, db.GuestSessionCodeSetParams{ID: session, CodeHash: GuestCodeHash(session, out.Code), CodeExpiresAt: &out.ExpiresAt})
	})
	return out, err
}

// GuestConfirmCode verifies the guest session with its code: the right
// one ends this session and opens a verified one of the same guest and
// name (a new cookie and CSRF token), and the guest takes the session's
// name. A wrong one is ErrCodeWrong, the last allowed wrong one and any
// try without a live code ErrCodeExpired; a proven member's email is
// ErrMemberEmail (the code is spent).
func (s *Service) GuestConfirmCode(ctx context.Context, session uuid.UUID, code string) (GuestSignedIn, error) {
	var out GuestSignedIn
	var refusal error
	err := s.store.InTx(ctx, func(q store.Tx) error {
		r, err := q.GuestSessionCodeLock(ctx, session)
		if err != nil {
			return err
		}
		if r.CodeHash == nil || r.CodeExpiresAt == nil || !r.CodeExpiresAt.After(r.Now) {
			refusal = ErrCodeExpired
			return nil
		}
		if subtle.ConstantTimeCompare(GuestCodeHash(session, code), r.CodeHash) != 1 {
			refusal = ErrCodeWrong
			if int(r.CodeFailures)+1 >= CodeMaxTries {
				refusal = ErrCodeExpired
			}
			return q.GuestSessionCodeFailed(ctx, db.GuestSessionCodeFailedParams{ID: session, MaxFailures: CodeMaxTries})
		}
		if err := q.GuestSessionCodeClear(ctx, session); err != nil {
			return err
		}
		members, err := q.ShareMemberEmails(ctx, db.ShareMemberEmailsParams{OrganizationID: r.OrganizationID, Emails: []string{r.Email}})
		if err != nil {
			return err
		}
		if len(members) > 0 {
			refusal = ErrMemberEmail
			return nil
		}
		g, err := q.GuestUpsert(ctx, db.GuestUpsertParams{ShareID: r.ShareID, Email: r.Email, Name: r.Name, Verified: true})
		if err != nil {
			return err
		}
		if err := q.GuestSessionDelete(ctx, session); err != nil {
			return err
		}
		out = GuestSignedIn{
			Token: NewToken(), CSRFToken: NewToken(), ExpiresAt: r.ExpiresAt, GuestID: g.ID, Name: r.Name, Email: r.Email, Verified: true,
			ShareID: r.ShareID, Permission: r.Permission, ShareExpiresAt: r.ShareExpiresAt,
			OrganizationID: r.OrganizationID, OrganizationName: r.OrganizationName,
		}
		_, err = q.GuestSessionCreate(ctx, db.GuestSessionCreateParams{
			GuestID: g.ID, TokenHash: HashToken(out.Token), CsrfToken: out.CSRFToken, ExpiresAt: out.ExpiresAt, Verified: true, Name: r.Name,
		})
		return err
	})
	if err == nil {
		err = refusal
	}
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
			Invited: row.Invited, AccountID: account, Verified: row.Verified},
	}, true, nil
}
