package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"creativeapi/gen/api"
	"creativeapi/internal/auth"
	"creativeapi/internal/directory"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
)

// SignIn starts a new session and sets its cookie.
func (s *Server) SignIn(ctx context.Context, r api.SignInRequestObject) (api.SignInResponseObject, error) {
	signedIn, err := s.auth.SignIn(ctx, r.Body.Email, r.Body.Password, requestctx.ClientIP(ctx))
	var throttled *auth.ThrottledError
	switch {
	case errors.As(err, &throttled):
		seconds := auth.RetryAfterSeconds(throttled.RetryAfter)
		return nil, &problem.Error{Status: http.StatusTooManyRequests, Code: problem.TooManyAttempts, RetryAfter: seconds,
			Detail: fmt.Sprintf("Too many failed sign-in attempts. Try again in %d seconds.", seconds)}
	case errors.Is(err, auth.ErrInvalidCredentials):
		return nil, problem.New(http.StatusUnauthorized, problem.InvalidCredentials, "The email or the password is wrong.")
	case err != nil:
		return nil, err
	}
	body, err := s.sessionBody(ctx, signedIn.Caller)
	if err != nil {
		return nil, err
	}
	cookie := s.auth.SessionCookie(signedIn.Token)
	return api.SignIn200JSONResponse{Body: body, Headers: api.SignIn200ResponseHeaders{SetCookie: &cookie}}, nil
}

// SignOut revokes the caller's session and clears the cookie.
func (s *Server) SignOut(ctx context.Context, _ api.SignOutRequestObject) (api.SignOutResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	revoked, err := s.auth.SignOut(ctx, caller.SessionID)
	if err != nil {
		return nil, err
	}
	if !revoked {
		// Revoked by a concurrent sign-out since the gate let it through.
		return nil, problem.New(http.StatusUnauthorized, problem.Unauthenticated, "Sign in to continue.")
	}
	// The session's live streams end now, on every replica; should the
	// notice fail, they end at the next check (STREAM_HEARTBEAT).
	if err := s.streams.SessionEnded(ctx); err != nil {
		s.log.WarnContext(ctx, "sign-out: the streams were not told", "error", err, "trace_id", requestctx.TraceID(ctx))
	}
	cookie := s.auth.ClearCookie()
	return api.SignOut204Response{Headers: api.SignOut204ResponseHeaders{SetCookie: &cookie}}, nil
}

// GetMe answers the sign-in body of the current session, so a reloaded page
// recovers its csrfToken.
func (s *Server) GetMe(ctx context.Context, _ api.GetMeRequestObject) (api.GetMeResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	body, err := s.sessionBody(ctx, caller)
	if err != nil {
		return nil, err
	}
	return api.GetMe200JSONResponse{Body: body}, nil
}

// sessionBody is the Session schema of a signed-in caller.
func (s *Server) sessionBody(ctx context.Context, c requestctx.Caller) (api.Session, error) {
	memberships, err := directory.Memberships(ctx, s.store.Q, c.UserID)
	if err != nil {
		return api.Session{}, err
	}
	return api.Session{
		User:        api.User{Id: c.UserID, Email: openapi_types.Email(c.Email), Name: c.Name, Operator: c.Operator},
		Memberships: memberships,
		CsrfToken:   c.CSRFToken,
	}, nil
}
