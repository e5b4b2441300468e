package httpapi

import (
	"context"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

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
	limit := pageSize(r.Params.Limit)
	params := db.MemberPageParams{OrganizationID: r.OrganizationId, RowLimit: int32(limit) + 1, Roles: []string{}}
	if r.Params.Cursor != nil {
		after, ok := decodeMemberCursor(*r.Params.Cursor)
		if !ok {
			return nil, errInvalidCursor()
		}
		params.AfterID = &after
	}
	if r.Params.Role != nil {
		for _, role := range *r.Params.Role {
			params.Roles = append(params.Roles, string(role))
		}
	}
	if _, err := creative.MemberRole(ctx, s.store.Q, r.OrganizationId, caller.UserID); err != nil {
		return nil, creativeProblem(err)
	}
	rows, err := s.store.Q.MemberPage(ctx, params)
	if err != nil {
		return nil, err
	}
	out := api.ListOrganizationMembers200JSONResponse{Items: make([]api.Member, 0, len(rows)), NextCursor: nullable.NewNullNullable[string]()}
	if len(rows) > limit {
		rows = rows[:limit]
		out.NextCursor.Set(cursor.Encode(memberCursorKind, rows[limit-1].ID.String()))
	}
	for _, m := range rows {
		out.Items = append(out.Items, api.Member{User: api.UserRef{Id: m.ID, Name: m.Name}, Role: api.Role(m.Role)})
	}
	return out, nil
}

// decodeMemberCursor reads the member a page of members continues after.
func decodeMemberCursor(s string) (uuid.UUID, bool) {
	parts, err := cursor.Decode(memberCursorKind, s, 1)
	if err != nil {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(parts[0])
	return id, err == nil
}
