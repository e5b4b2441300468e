package httpapi

import (
	"context"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/creative"
	"creativeapi/internal/cursor"
	"creativeapi/internal/requestctx"
)

// ListOrganizationMembers answers one page of an organization's members by
// name. Any member may read it.
func (s *Server) ListOrganizationMembers(ctx context.Context, r api.ListOrganizationMembersRequestObject) (api.ListOrganizationMembersResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	limit, after, err := page(memberCursor, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	params := db.MemberPageParams{OrganizationID: r.OrganizationId, RowLimit: cursor.Over(limit), Roles: []string{}}
	if r.Params.Cursor != nil {
		params.AfterID = &after
	}
	if r.Params.Role != nil {
		for _, role := range *r.Params.Role {
			params.Roles = append(params.Roles, string(role))
		}
	}
	if _, err := creative.MemberRole(ctx, s.store.Q, r.OrganizationId, caller.UserID); err != nil {
		return nil, organizationProblem(err)
	}
	rows, err := s.store.Q.MemberPage(ctx, params)
	if err != nil {
		return nil, err
	}
	rows, more := cursor.Trim(rows, limit)
	out := api.ListOrganizationMembers200JSONResponse{Items: make([]api.Member, 0, len(rows)), NextCursor: nextCursor(memberCursor, uuid.Nil)}
	if more {
		out.NextCursor = nextCursor(memberCursor, rows[len(rows)-1].ID)
	}
	for _, m := range rows {
		out.Items = append(out.Items, api.Member{User: api.UserRef{Id: m.ID, Name: m.Name}, Role: api.Role(m.Role)})
	}
	return out, nil
}
