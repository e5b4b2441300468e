package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/auth"
	"creativeapi/internal/cursor"
	"creativeapi/internal/emailcap"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/share"
	"creativeapi/internal/store"
)

// The share handlers translate HTTP to internal/share and back
// (docs/shares.md).

func sharesPath(org uuid.UUID) string {
	return fmt.Sprintf("/api/v1/organizations/%s/shares", org)
}

// shareProblem turns the share service's refusals into Problems; the
// organization and the role are answered as for every organization
// resource (organizationProblem).
func shareProblem(err error) error {
	var bad *share.CreativeError
	var expiry *share.ExpiryError
	var member *share.InviteError
	var quota *emailcap.ExceededError
	switch {
	case errors.As(err, &member):
		return problem.Invalid([]problem.FieldError{{Field: fmt.Sprintf("invite[%d].email", member.Index), Code: problem.InvalidValue,
			Message: "Is a member of this organization: members sign in, they are not invited as guests."}})
	case errors.As(err, &quota):
		seconds := auth.RetryAfterSeconds(quota.RetryAfter)
		return &problem.Error{Status: http.StatusTooManyRequests, Code: problem.EmailQuotaExceeded, RetryAfter: seconds,
			Detail: fmt.Sprintf("These invitations would pass the organization's, an address's or your email ceiling; nothing was made. Try again in %d seconds, or invite fewer.", seconds)}
	case errors.Is(err, share.ErrNotVisible):
		return problem.New(http.StatusNotFound, problem.NotFound, "No share with this id is visible to you in this organization.")
	case errors.As(err, &bad):
		return problem.Invalid([]problem.FieldError{{Field: fmt.Sprintf("creativeIds[%d]", bad.Index), Code: problem.InvalidValue,
			Message: "Is not a creative of this organization."}})
	case errors.As(err, &expiry):
		return problem.Invalid([]problem.FieldError{{Field: "expiresAt", Code: problem.OutOfRange, Message: expiry.Reason}})
	case errors.Is(err, share.ErrArchived):
		return problem.New(http.StatusConflict, problem.InvalidTransition, "An archived creative cannot be shared.")
	case errors.Is(err, share.ErrLimit):
		return problem.New(http.StatusConflict, problem.ShareLimit,
			"A share lists at most %d creatives, and an organization has at most %d live shares (revoke one or let it expire).",
			share.MaxCreatives, share.MaxLive)
	}
	return organizationProblem(err)
}

// ListShares answers one page of the shares the caller may see.
func (s *Server) ListShares(ctx context.Context, r api.ListSharesRequestObject) (api.ListSharesResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	size, after, err := page(shareCursor, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	var at *share.Position
	if after != (cursor.TimeID{}) {
		at = &share.Position{At: after.At, ID: after.ID}
	}
	p, err := share.List(ctx, s.store.Q, r.OrganizationId, caller.UserID, at, size)
	if err != nil {
		return nil, shareProblem(err)
	}
	var next cursor.TimeID
	if p.Next != nil {
		next = cursor.TimeID{At: p.Next.At, ID: p.Next.ID}
	}
	out := api.ListShares200JSONResponse{Body: api.ShareList{Items: make([]api.Share, len(p.Items)), NextCursor: nextCursor(shareCursor, next)}}
	for i, sh := range p.Items {
		out.Body.Items[i] = sh.Answer("", "")
	}
	return out, nil
}

// CreateShare makes a share under the caller's Idempotency-Key; the answer
// is the only one that shows the token. Its stored copy (for replays) holds
// the token too: a retry after a lost answer must get the share that was
// made, and it is replayed only to the same caller while they may still
// share (docs/shares.md, "The token").
func (s *Server) CreateShare(ctx context.Context, r api.CreateShareRequestObject) (api.CreateShareResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	in := share.New{CreativeIDs: r.Body.CreativeIds, Permission: share.Permission(r.Body.Permission), ExpiresAt: r.Body.ExpiresAt}
	if r.Body.Invite != nil {
		for _, inv := range *r.Body.Invite {
			in.Invite = append(in.Invite, share.Invite{Email: string(inv.Email), Name: deref(inv.Name)})
		}
	}
	if r.Body.Password != nil {
		// Hashed before the transaction: argon2id takes a CPU for a while.
		hash, err := auth.HashPassword(*r.Body.Password, auth.DefaultPasswordParams)
		if err != nil {
			return nil, err
		}
		in.PasswordHash = &hash
	}
	return s.command(ctx, r.Params.IdempotencyKey,
		func(ctx context.Context) error {
			if err := share.MayCreate(ctx, s.store.Q, r.OrganizationId, caller.UserID); err != nil {
				return shareProblem(err)
			}
			return nil
		},
		func(ctx context.Context, q store.Tx) (idempotency.Response, error) {
			sh, token, err := share.Create(ctx, q, r.OrganizationId, caller.UserID, in, s.invitations, time.Now())
			if err != nil {
				return idempotency.Response{}, shareProblem(err)
			}
			return idempotency.JSON(http.StatusCreated, sh.Answer(token, s.cfg.AppURL+"/share/"+token),
				sharesPath(r.OrganizationId)+"/"+sh.ID.String())
		})
}

// GetShare answers one share, without its token.
func (s *Server) GetShare(ctx context.Context, r api.GetShareRequestObject) (api.GetShareResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	sh, err := share.Get(ctx, s.store.Q, r.OrganizationId, r.ShareId, caller.UserID)
	if err != nil {
		return nil, shareProblem(err)
	}
	return api.GetShare200JSONResponse{Body: sh.Answer("", "")}, nil
}

// RevokeShare revokes a share at once. It takes no Idempotency-Key: a
// repeat changes nothing and answers the same.
func (s *Server) RevokeShare(ctx context.Context, r api.RevokeShareRequestObject) (api.RevokeShareResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	err := s.store.InTx(ctx, func(q store.Tx) error {
		return share.Revoke(ctx, q, r.OrganizationId, r.ShareId, caller.UserID)
	})
	if err != nil {
		return nil, shareProblem(err)
	}
	// The share's guests' streams end now, on every replica; should the
	// notice fail, they end at the next check (STREAM_HEARTBEAT).
	if err := s.streams.SessionEnded(ctx); err != nil {
		s.log.WarnContext(ctx, "revoke share: the streams were not told", "error", err, "trace_id", requestctx.TraceID(ctx))
	}
	return api.RevokeShare204Response{}, nil
}
