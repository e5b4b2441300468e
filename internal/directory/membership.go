package directory

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/cursor"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
	"creativeapi/internal/userref"
)

// This file is organization membership as the API reads it: the one home
// of "is this user a member, and with which role", which every resource of
// an organization asks first (creatives, uploads, webhooks, members).

// ErrOrganizationNotVisible is the refusal of anything in an organization
// the caller is not a member of: no such organization and not a member
// are one answer (404), so the answer never says which.
var ErrOrganizationNotVisible = errors.New("organization not visible")

// MemberRole is user's role in org, or ErrOrganizationNotVisible.
func MemberRole(ctx context.Context, q *db.Queries, org, user uuid.UUID) (review.Role, error) {
	role, err := q.MembershipRoleGet(ctx, db.MembershipRoleGetParams{OrganizationID: org, UserID: user})
	if errors.Is(err, store.ErrNotFound) {
		return "", ErrOrganizationNotVisible
	}
	if err != nil {
		return "", err
	}
	return review.Role(role), nil
}

// Memberships are user's organizations with user's role in each, as the
// session shows them.
func Memberships(ctx context.Context, q *db.Queries, user uuid.UUID) ([]api.Membership, error) {
	rows, err := q.MembershipListByUser(ctx, user)
	if err != nil {
		return nil, err
	}
	out := make([]api.Membership, len(rows))
	for i, m := range rows {
		out[i] = api.Membership{Organization: api.NamedRef{Id: m.OrganizationID, Name: m.OrganizationName}, Role: api.Role(m.Role)}
	}
	return out, nil
}

// OrganizationIDs are the organizations user is a member of.
func OrganizationIDs(ctx context.Context, q *db.Queries, user uuid.UUID) ([]uuid.UUID, error) {
	return q.MembershipOrganizationIDs(ctx, user)
}

// MemberPage is one page of an organization's members; Next is the
// position the next page continues from (uuid.Nil on the last page).
type MemberPage struct {
	Items []api.Member
	Next  uuid.UUID
}

// ListMembers reads one page of org's members with one of roles (any role
// when none), by name, after the member after (uuid.Nil for the first
// page). Any member may read them; anyone else gets
// ErrOrganizationNotVisible.
func ListMembers(ctx context.Context, q *db.Queries, org, user uuid.UUID, roles []review.Role, after uuid.UUID, limit int) (MemberPage, error) {
	if _, err := MemberRole(ctx, q, org, user); err != nil {
		return MemberPage{}, err
	}
	params := db.MemberPageParams{OrganizationID: org, RowLimit: cursor.Over(limit), Roles: make([]string, len(roles))}
	for i, r := range roles {
		params.Roles[i] = string(r)
	}
	if after != uuid.Nil {
		params.AfterID = &after
	}
	rows, err := q.MemberPage(ctx, params)
	if err != nil {
		return MemberPage{}, err
	}
	rows, more := cursor.Trim(rows, limit)
	p := MemberPage{Items: make([]api.Member, len(rows))}
	for i, m := range rows {
		p.Items[i] = api.Member{User: userref.Member(m.ID, m.Name), Role: api.Role(m.Role)}
	}
	if more {
		p.Next = rows[len(rows)-1].ID
	}
	return p, nil
}
