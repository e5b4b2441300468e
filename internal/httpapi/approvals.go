package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"creativeapi/gen/api"
	"creativeapi/internal/creative"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
)

// GetCreativeApproval answers the record of the creative's approved
// version with its JWS (docs/review.md, "An approval anyone can verify").
func (s *Server) GetCreativeApproval(ctx context.Context, r api.GetCreativeApprovalRequestObject) (api.GetCreativeApprovalResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	record, err := creative.ApprovalRecord(ctx, s.store.Q, r.OrganizationId, r.CreativeId, caller.UserID)
	if errors.Is(err, creative.ErrNotApproved) {
		return nil, problem.New(http.StatusNotFound, problem.NotFound, "This creative has no approved version, so no approval record.")
	}
	if err != nil {
		return nil, creativeProblem(err)
	}
	_, jws, err := s.approvals.Sign(record)
	if err != nil {
		return nil, err
	}
	return api.GetCreativeApproval200JSONResponse{Body: api.CreativeApproval{Record: record, Jws: jws}}, nil
}

// GetApprovalKeys answers the public keys that verify approval records,
// in go-jose's encoding of RFC 8037 keys.
func (s *Server) GetApprovalKeys(context.Context, api.GetApprovalKeysRequestObject) (api.GetApprovalKeysResponseObject, error) {
	text, err := json.Marshal(s.approvals.JWKS())
	if err != nil {
		return nil, err
	}
	var set api.JSONWebKeySet
	if err := json.Unmarshal(text, &set); err != nil {
		return nil, err
	}
	return api.GetApprovalKeys200JSONResponse(set), nil
}
