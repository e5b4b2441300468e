package httpapi

import (
	"context"

	"creativeapi/gen/api"
	"creativeapi/internal/directory"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/review"
)

// ListOrganizationMembers answers one page of an organization's members by
// name. Any member may read it.
func (s *Server) ListOrganizationMembers(ctx context.Context, r api.ListOrganizationMembersRequestObject) (api.ListOrganizationMembersResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	limit, after, err := page(memberCursor, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	var roles []review.Role
	if r.Params.Role != nil {
		for _, role := range *r.Params.Role {
			roles = append(roles, review.Role(role))
		}
	}
	p, err := directory.ListMembers(ctx, s.store.Q, r.OrganizationId, caller.UserID, roles, after, limit)
	if err != nil {
		return nil, organizationProblem(err)
	}
	return api.ListOrganizationMembers200JSONResponse{Body: api.MemberList{Items: p.Items, NextCursor: nextCursor(memberCursor, p.Next)}}, nil
}
