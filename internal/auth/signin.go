package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/store"
)

// ErrInvalidCredentials is the one answer to an unknown email and to a
// wrong password, so sign-in does not reveal which emails have accounts.
var ErrInvalidCredentials = errors.New("invalid credentials")

// ThrottledError refuses a sign-in attempt of a subject that failed too
// often; RetryAfter is the time until its window ends.
type ThrottledError struct {
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("too many failed sign-ins; retry after %s", e.RetryAfter)
}

// SignedIn is a new session: Token goes into the cookie and nowhere else.
type SignedIn struct {
	Token  string
	Caller requestctx.Caller
}

// dummyHash is verified when the email is unknown, so that answer costs the
// same argon2id work as a wrong password.
var dummyHash = sync.OnceValues(func() (string, error) {
	return HashPassword(NewToken(), DefaultPasswordParams)
})

// SignIn counts the attempt against the throttle, then checks the
// credentials and starts a new session. Failures are ErrInvalidCredentials
// or *ThrottledError. The email is matched in its normalised form
// (NormalizeEmail).
//
// The attempt is counted before the password is checked, and counting is
// atomic per subject, so no burst of parallel attempts gets more password
// checks than the limit: a sign-in that succeeds takes its count back.
func (s *Service) SignIn(ctx context.Context, email, password, clientIP string) (SignedIn, error) {
	email = NormalizeEmail(email)
	subjects := s.throttle.Subjects(email, clientIP)
	if err := s.countAttempt(ctx, subjects); err != nil {
		return SignedIn{}, err
	}

	user, err := s.store.Q.UserGetForSignIn(ctx, email)
	found := err == nil
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			return SignedIn{}, err
		}
		if user.PasswordHash, err = dummyHash(); err != nil {
			return SignedIn{}, err
		}
	}
	ok, err := VerifyPassword(user.PasswordHash, password)
	if err != nil {
		s.log.ErrorContext(ctx, "stored password hash is unreadable", "user_id", user.ID, "error", err, "trace_id", requestctx.TraceID(ctx))
	}
	if !found || !ok {
		return SignedIn{}, ErrInvalidCredentials
	}

	token, csrf := NewToken(), NewToken()
	var sessionID uuid.UUID
	err = s.store.InTx(ctx, func(q store.Tx) error {
		var err error
		sessionID, err = q.SessionCreate(ctx, db.SessionCreateParams{
			UserID: user.ID, TokenHash: HashToken(token), CsrfToken: csrf,
			IdleSeconds: seconds(s.cfg.IdleTTL), AbsoluteSeconds: seconds(s.cfg.AbsoluteTTL),
		})
		if err != nil {
			return err
		}
		return forgiveFailures(ctx, q, subjects, EmailSubject(email))
	})
	if err != nil {
		return SignedIn{}, err
	}
	return SignedIn{Token: token, Caller: requestctx.Caller{
		UserID: user.ID, SessionID: sessionID, Email: user.Email, Name: user.Name, CSRFToken: csrf, Operator: user.Operator,
	}}, nil
}

// countAttempt counts one sign-in attempt for each subject, or refuses it
// with *ThrottledError when a subject has used up its window. The counters
// are locked from the check to the count, so concurrent attempts of one
// subject are counted one after another.
func (s *Service) countAttempt(ctx context.Context, subjects []string) error {
	return s.store.InTx(ctx, func(q store.Tx) error {
		rows, err := q.SignInFailureLock(ctx, subjects)
		if err != nil {
			return err
		}
		if len(rows) > 0 {
			counters := make([]Counter, len(rows))
			for i, r := range rows {
				counters[i] = Counter{Subject: r.Subject, Failures: int(r.Failures), WindowStart: r.WindowStart}
			}
			if wait := s.throttle.Wait(rows[0].Now, counters); wait > 0 {
				return &ThrottledError{RetryAfter: wait}
			}
		}
		return q.SignInFailureRecord(ctx, db.SignInFailureRecordParams{
			Subjects: subjects, WindowSeconds: seconds(s.throttle.Window),
		})
	})
}

// SignOut revokes a session; false when it was no longer live.
func (s *Service) SignOut(ctx context.Context, sessionID uuid.UUID) (bool, error) {
	n, err := s.store.Q.SessionRevoke(ctx, sessionID)
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

// SessionCookie is the Set-Cookie value that hands token to the browser,
// living as long as the session's absolute expiry.
func (s *Service) SessionCookie(token string) string {
	return s.cookie(token, int(s.cfg.AbsoluteTTL/time.Second))
}

// ClearCookie is the Set-Cookie value that makes the browser drop the
// session cookie.
func (s *Service) ClearCookie() string {
	return s.cookie("", -1)
}

func (s *Service) cookie(value string, maxAge int) string {
	return s.namedCookie(s.cfg.CookieName(), value, maxAge)
}

// namedCookie is the one shape of every session cookie, a user's or a
// guest's: HttpOnly, Lax, Secure unless COOKIE_SECURE=false.
func (s *Service) namedCookie(name, value string, maxAge int) string {
	c := http.Cookie{
		Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: s.cfg.CookieSecure, SameSite: http.SameSiteLaxMode,
	}
	return c.String()
}

// PurgeSessions deletes sessions that stopped working a day ago; safe to
// run on every replica at once.
func PurgeSessions(ctx context.Context, st *store.Store, log *slog.Logger) error {
	n, err := st.Q.SessionDeleteExpired(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		log.Info("expired sessions purged", "count", n)
	}
	return nil
}

// PurgeSignInFailures deletes throttle counters whose window has ended.
func PurgeSignInFailures(ctx context.Context, st *store.Store, log *slog.Logger) error {
	// The longest window: a share's counter lives an hour.
	n, err := st.Q.SignInFailureDeleteExpired(ctx, seconds(max(DefaultThrottle.Window, DefaultSharePasswords.ShareWindow)))
	if err != nil {
		return err
	}
	if n > 0 {
		log.Info("sign-in failure counters purged", "count", n)
	}
	return nil
}

// forgiveFailures is what a successful sign-in does to its subjects'
// counters: the one it proved (an email, a share) starts afresh; the
// others (the client address) only get this attempt back, as others may
// have failed from them.
func forgiveFailures(ctx context.Context, q store.Tx, subjects []string, proved string) error {
	for _, subject := range subjects {
		var err error
		if subject == proved {
			err = q.SignInFailureClear(ctx, subject)
		} else {
			err = q.SignInFailureDiscount(ctx, subject)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
