package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"creativeapi/gen/api"
	"creativeapi/internal/auth"
	"creativeapi/internal/creative"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
)

// The guest handlers: people outside the organization who hold a share's
// link (docs/shares.md, "Guest sessions").

// CreateGuestSession opens a guest session on a live share and sets its
// cookie.
func (s *Server) CreateGuestSession(ctx context.Context, r api.CreateGuestSessionRequestObject) (api.CreateGuestSessionResponseObject, error) {
	g, err := s.auth.GuestSignIn(ctx, r.Body.Token, r.Body.Name, string(r.Body.Email), r.Body.Password, requestctx.ClientIP(ctx))
	var throttled *auth.ThrottledError
	switch {
	case errors.As(err, &throttled):
		seconds := auth.RetryAfterSeconds(throttled.RetryAfter)
		return nil, &problem.Error{Status: http.StatusTooManyRequests, Code: problem.TooManyAttempts, RetryAfter: seconds,
			Detail: fmt.Sprintf("Too many wrong passwords for this share. Try again in %d seconds.", seconds)}
	case errors.Is(err, auth.ErrShareNotFound):
		return nil, problem.New(http.StatusNotFound, problem.ShareNotFound, "No live share has this token; ask for a new link.")
	case errors.Is(err, auth.ErrSharePasswordRequired):
		return nil, problem.New(http.StatusUnauthorized, problem.SharePasswordRequired, "This share needs its password.")
	case err != nil:
		return nil, err
	}
	cookie := s.auth.GuestCookie(g)
	return api.CreateGuestSession201JSONResponse{
		Body: api.GuestSession{
			Guest: api.Guest{Id: g.GuestID, Name: g.Name, Email: g.Email},
			Share: api.GuestShare{Permission: api.SharePermission(g.Permission), ExpiresAt: g.ShareExpiresAt.UTC(),
				Organization: api.NamedRef{Id: g.OrganizationID, Name: g.OrganizationName}},
			CsrfToken: g.CSRFToken,
		},
		Headers: api.CreateGuestSession201ResponseHeaders{SetCookie: &cookie},
	}, nil
}

// guestOf is the guest of a guest operation's request: the gate let
// nobody else through (docs/shares.md).
func guestOf(ctx context.Context) creative.Guest {
	caller, _ := requestctx.CallerFrom(ctx)
	return creative.Guest{ID: caller.Guest.ID, ShareID: caller.Guest.ShareID, OrganizationID: caller.Guest.OrganizationID,
		Email: caller.Email, Permission: caller.Guest.Permission}
}

// ListGuestCreatives answers one page of the guest's share's creatives.
func (s *Server) ListGuestCreatives(ctx context.Context, r api.ListGuestCreativesRequestObject) (api.ListGuestCreativesResponseObject, error) {
	size, after, err := page(guestCreativeCursor, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	p, err := creative.GuestList(ctx, s.store.Q, guestOf(ctx), int32(after), size)
	if err != nil {
		return nil, creativeProblem(err)
	}
	return creativePageOK(p.Items, nextCursor(guestCreativeCursor, int64(p.Next))), nil
}

// GetGuestCreative answers one creative of the guest's share.
func (s *Server) GetGuestCreative(ctx context.Context, r api.GetGuestCreativeRequestObject) (api.GetGuestCreativeResponseObject, error) {
	c, err := creative.GuestGet(ctx, s.store.Q, guestOf(ctx), r.CreativeId)
	if err != nil {
		return nil, creativeProblem(err)
	}
	return creativeOK(&c.Detail), nil
}
