package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/auth"
	"creativeapi/internal/creative"
	"creativeapi/internal/email"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
)

// The guest handlers: people outside the organization who hold a share's
// link (docs/shares.md, "Guest sessions").

// CreateGuestSession opens a guest session on a live share and sets its
// cookie.
func (s *Server) CreateGuestSession(ctx context.Context, r api.CreateGuestSessionRequestObject) (api.CreateGuestSessionResponseObject, error) {
	in := auth.GuestOpen{Token: r.Body.Token, InvitationToken: r.Body.ShareInvitationToken, Name: r.Body.Name,
		Password: r.Body.Password, ClientIP: requestctx.ClientIP(ctx)}
	if r.Body.Email != nil {
		email := string(*r.Body.Email)
		in.Email = &email
	}
	g, err := s.auth.GuestSignIn(ctx, in)
	if err != nil {
		return nil, guestSessionProblem(err)
	}
	cookie := s.auth.GuestCookie(g)
	return api.CreateGuestSession201JSONResponse{
		Body:    guestSessionBody(g),
		Headers: api.CreateGuestSession201ResponseHeaders{SetCookie: &cookie},
	}, nil
}

// guestSessionBody is the answer of a new guest session.
func guestSessionBody(g auth.GuestSignedIn) api.GuestSession {
	return api.GuestSession{
		Guest: api.Guest{Id: g.GuestID, Name: g.Name, Email: g.Email, Verified: g.Verified},
		Share: api.GuestShare{Permission: api.SharePermission(g.Permission), ExpiresAt: g.ShareExpiresAt.UTC(),
			Organization: api.NamedRef{Id: g.OrganizationID, Name: g.OrganizationName}},
		CsrfToken: g.CSRFToken,
	}
}

// guestSessionProblem maps the refusals of opening and verifying a guest
// session.
func guestSessionProblem(err error) error {
	var throttled *auth.ThrottledError
	switch {
	case errors.As(err, &throttled):
		seconds := auth.RetryAfterSeconds(throttled.RetryAfter)
		return &problem.Error{Status: http.StatusTooManyRequests, Code: problem.TooManyAttempts, RetryAfter: seconds,
			Detail: fmt.Sprintf("Too many wrong passwords for this share. Try again in %d seconds.", seconds)}
	case errors.Is(err, auth.ErrShareNotFound):
		return problem.New(http.StatusNotFound, problem.ShareNotFound, "No live share has this token; ask for a new link.")
	case errors.Is(err, auth.ErrSharePasswordRequired):
		return problem.New(http.StatusUnauthorized, problem.SharePasswordRequired, "This share needs its password.")
	case errors.Is(err, auth.ErrGuestEmailRequired):
		return problem.Invalid([]problem.FieldError{{Field: "email", Code: problem.Required,
			Message: "Is required without a shareInvitationToken."}})
	case errors.Is(err, auth.ErrInvitationEmail):
		return problem.Invalid([]problem.FieldError{{Field: "email", Code: problem.InvalidValue,
			Message: "Is not the email this invitation was sent to; leave it out to use that one."}})
	case errors.Is(err, auth.ErrMemberEmail):
		return problem.New(http.StatusConflict, problem.MemberEmail,
			"This email is a member's of the organization: sign in and review as a member.")
	case errors.Is(err, auth.ErrCodeWrong):
		return problem.Invalid([]problem.FieldError{{Field: "code", Code: problem.InvalidValue, Message: "Is not the code we sent."}})
	case errors.Is(err, auth.ErrCodeExpired):
		return problem.New(http.StatusConflict, problem.CodeExpired, "This code no longer works; ask for a new one.")
	}
	return err
}

// RequestGuestVerification mails the guest session's email a code, under
// the recipient's email ceiling (over it: the same answer, nothing sent).
func (s *Server) RequestGuestVerification(ctx context.Context, _ api.RequestGuestVerificationRequestObject) (api.RequestGuestVerificationResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	c, err := s.auth.GuestRequestCode(ctx, caller.SessionID)
	if err != nil {
		return nil, err
	}
	if c.Code != "" && s.mail != nil {
		m, err := email.GuestCodeMessage(s.msgHost, c.Email, c.OrganizationName, c.Code, c.ExpiresAt)
		if err != nil {
			return nil, err
		}
		if err := s.mail.Send(ctx, m); err != nil {
			return nil, err
		}
	}
	return api.RequestGuestVerification202JSONResponse{Body: api.GuestVerification{ExpiresAt: c.ExpiresAt.UTC()}}, nil
}

// ConfirmGuestVerification verifies the guest session with its code: a
// new, verified session replaces it.
func (s *Server) ConfirmGuestVerification(ctx context.Context, r api.ConfirmGuestVerificationRequestObject) (api.ConfirmGuestVerificationResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	g, err := s.auth.GuestConfirmCode(ctx, caller.SessionID, r.Body.Code)
	if err != nil {
		return nil, guestSessionProblem(err)
	}
	cookie := s.auth.GuestCookie(g)
	return api.ConfirmGuestVerification200JSONResponse{
		Body:    guestSessionBody(g),
		Headers: api.ConfirmGuestVerification200ResponseHeaders{SetCookie: &cookie},
	}, nil
}

// guestOf is the guest of a guest operation's request: the gate let
// nobody else through (docs/shares.md).
func guestOf(ctx context.Context) creative.Guest {
	caller, _ := requestctx.CallerFrom(ctx)
	return creative.Guest{ID: caller.Guest.ID, ShareID: caller.Guest.ShareID, OrganizationID: caller.Guest.OrganizationID,
		Email: caller.Email, Permission: caller.Guest.Permission, Name: caller.Name, Verified: caller.Guest.Verified,
		Invited: caller.Guest.Invited, AccountID: caller.Guest.AccountID}
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

// guestCommentPath is where a guest finds a comment of theirs.
func guestCommentPath(creativeID, id uuid.UUID) string {
	return fmt.Sprintf("/api/v1/guest/creatives/%s/comments/%s", creativeID, id)
}

// ListGuestCreativeComments answers one page of a shared creative's
// comments, without the internal ones.
func (s *Server) ListGuestCreativeComments(ctx context.Context, r api.ListGuestCreativeCommentsRequestObject) (api.ListGuestCreativeCommentsResponseObject, error) {
	size, after, err := page(commentCursor, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	f := creative.CommentFilter{VersionNumber: r.Params.VersionNumber, ParentID: r.Params.ParentId}
	p, err := creative.ListGuestComments(ctx, s.store.Q, guestOf(ctx), r.CreativeId, f, after, size)
	if err != nil {
		return nil, commentProblem(err)
	}
	return api.ListGuestCreativeComments200JSONResponse{Body: api.CommentList{Items: p.Items, NextCursor: nextCursor(commentCursor, p.Next)}}, nil
}

// CreateGuestCreativeComment writes a guest's comment under their
// Idempotency-Key.
func (s *Server) CreateGuestCreativeComment(ctx context.Context, r api.CreateGuestCreativeCommentRequestObject) (api.CreateGuestCreativeCommentResponseObject, error) {
	in := creative.NewComment{Body: r.Body.Body, VersionNumber: r.Body.VersionNumber, ParentID: r.Body.ParentId, Anchor: anchorFrom(r.Body.Anchor)}
	g := guestOf(ctx)
	mayReplay := func(ctx context.Context) error {
		if err := creative.MayGuestComment(ctx, s.store.Q, g, r.CreativeId); err != nil {
			return commentProblem(err)
		}
		return nil
	}
	return s.command(ctx, r.Params.IdempotencyKey, mayReplay, func(ctx context.Context, q store.Tx) (idempotency.Response, error) {
		c, err := creative.CreateGuestComment(ctx, q, g, r.CreativeId, in)
		if err != nil {
			return idempotency.Response{}, commentProblem(err)
		}
		return idempotency.JSON(http.StatusCreated, c, guestCommentPath(r.CreativeId, c.Id))
	})
}

// UpdateGuestCreativeComment edits or resolves a guest's own comment, in
// one transaction (a repeat of an applied change changes nothing).
func (s *Server) UpdateGuestCreativeComment(ctx context.Context, r api.UpdateGuestCreativeCommentRequestObject) (api.UpdateGuestCreativeCommentResponseObject, error) {
	var c api.Comment
	err := s.store.InTx(ctx, func(q store.Tx) error {
		var err error
		c, err = creative.UpdateGuestComment(ctx, q, guestOf(ctx), r.CreativeId, r.CommentId,
			creative.CommentPatch{Body: r.Body.Body, Resolved: r.Body.Resolved})
		return err
	})
	if err != nil {
		return nil, commentProblem(err)
	}
	return api.UpdateGuestCreativeComment200JSONResponse{Body: c}, nil
}

// ExecuteGuestCreativeAction runs a guest's decision under their
// Idempotency-Key, as ExecuteCreativeAction runs a member's.
func (s *Server) ExecuteGuestCreativeAction(ctx context.Context, r api.ExecuteGuestCreativeActionRequestObject) (api.ExecuteGuestCreativeActionResponseObject, error) {
	in := creative.ActionRequest{Action: review.Action(r.Body.Action), Comment: r.Body.Comment, ExpectedVersion: widen(r.Body.ExpectedVersion)}
	g := guestOf(ctx)
	mayReplay := func(ctx context.Context) error {
		if err := creative.MayGuestDecide(ctx, s.store.Q, g, r.CreativeId, in.Action); err != nil {
			return creativeProblem(err)
		}
		return nil
	}
	out, err := s.command(ctx, r.Params.IdempotencyKey, mayReplay, func(ctx context.Context, q store.Tx) (idempotency.Response, error) {
		c, err := creative.GuestAct(ctx, q, g, r.CreativeId, in)
		if err != nil {
			return idempotency.Response{}, creativeProblem(err)
		}
		return creativeOK(&c.Detail).Response, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
