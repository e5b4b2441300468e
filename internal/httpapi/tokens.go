package httpapi

import (
	"context"
	"errors"
	"time"

	"creativeapi/gen/api"
	"creativeapi/internal/apifield"
	"creativeapi/internal/auth"
	"creativeapi/internal/cursor"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/store"
)

// ListAccessTokens answers one page of the caller's live personal access
// tokens, newest first.
func (s *Server) ListAccessTokens(ctx context.Context, r api.ListAccessTokensRequestObject) (api.ListAccessTokensResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	size, after, err := page(tokenCursor, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	var at *auth.TokenPosition
	if after != (cursor.TimeID{}) {
		at = &auth.TokenPosition{At: after.At, ID: after.ID}
	}
	rows, more, err := s.auth.AccessTokens(ctx, caller.UserID, at, size)
	if err != nil {
		return nil, err
	}
	var next cursor.TimeID
	if more != nil {
		next = cursor.TimeID{At: more.At, ID: more.ID}
	}
	out := api.ListAccessTokens200JSONResponse{Body: api.AccessTokenList{Items: make([]api.AccessToken, len(rows)), NextCursor: nextCursor(tokenCursor, next)}}
	for i, t := range rows {
		out.Body.Items[i] = api.AccessToken{
			Id: t.ID, Name: t.Name, Scopes: tokenScopes(t.Scopes),
			CreatedAt: t.CreatedAt.UTC(), ExpiresAt: t.ExpiresAt.UTC(), LastUsedAt: apifield.Nullable(utcPtr(t.LastUsedAt)),
		}
	}
	return out, nil
}

// CreateAccessToken makes a token for the caller (a session: the spec
// lets no token call this) and shows its secret this once. It takes no
// Idempotency-Key: a stored answer would keep the secret in clear.
func (s *Server) CreateAccessToken(ctx context.Context, r api.CreateAccessTokenRequestObject) (api.CreateAccessTokenResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	now := time.Now()
	expires := now.Add(auth.DefaultTokenTTL)
	var fields []problem.FieldError
	if r.Body.ExpiresAt != nil {
		expires = *r.Body.ExpiresAt
		if !expires.After(now) || expires.After(now.Add(auth.MaxTokenTTL)) {
			fields = append(fields, problem.FieldError{Field: "expiresAt", Code: problem.OutOfRange,
				Message: "Must be in the future and at most a year away."})
		}
	}
	scopes := make([]string, len(r.Body.Scopes))
	for i, sc := range r.Body.Scopes {
		scopes[i] = string(sc)
		if sc == api.Operator && !caller.Operator {
			fields = append(fields, problem.FieldError{Field: "scopes", Code: problem.InvalidValue,
				Message: "The operator scope is for platform operators only."})
		}
	}
	if len(fields) > 0 {
		return nil, problem.Invalid(fields)
	}
	row, token, err := s.auth.CreateAccessToken(ctx, caller.UserID, auth.TokenGrant{Name: r.Body.Name, Scopes: scopes, ExpiresAt: expires})
	if errors.Is(err, auth.ErrTooManyTokens) {
		return nil, problem.New(409, problem.TooManyTokens,
			"You hold %d access tokens that still work, the most a user may hold. Revoke one you no longer use, then try again.", auth.MaxActiveTokens)
	}
	if err != nil {
		return nil, err
	}
	return api.CreateAccessToken201JSONResponse{Body: api.CreatedAccessToken{
		Id: row.ID, Name: row.Name, Scopes: tokenScopes(row.Scopes), Token: token,
		CreatedAt: row.CreatedAt.UTC(), ExpiresAt: row.ExpiresAt.UTC(), LastUsedAt: apifield.Nullable(utcPtr(row.LastUsedAt)),
	}}, nil
}

// RevokeAccessToken revokes one of the caller's tokens; another user's
// is the 404 of an unknown one.
func (s *Server) RevokeAccessToken(ctx context.Context, r api.RevokeAccessTokenRequestObject) (api.RevokeAccessTokenResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	if err := s.auth.RevokeAccessToken(ctx, caller.UserID, r.TokenId); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, problem.New(404, problem.NotFound, "No such token.")
		}
		return nil, err
	}
	return api.RevokeAccessToken204Response{}, nil
}

func tokenScopes(in []string) []api.TokenScope {
	out := make([]api.TokenScope, len(in))
	for i, s := range in {
		out[i] = api.TokenScope(s)
	}
	return out
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
