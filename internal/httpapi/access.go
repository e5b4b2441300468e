package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/problem"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
)

// Workspace access lives here so that every endpoint under an organization
// answers the same way: a caller who is not a member gets exactly the 404 of
// an id that does not exist, and so never learns that the organization, or
// anything in it, exists in another workspace.

// errOrganizationNotVisible is the answer for an organization the caller is
// not a member of, or that does not exist.
func errOrganizationNotVisible() error {
	return problem.New(http.StatusNotFound, problem.NotFound, "No organization with this id is visible to you.")
}

// errCreativeNotVisible is the answer for a creative that does not exist, is
// in another organization, or is in an organization the caller is not a
// member of: one detail for all three, so the answer reveals none of them.
func errCreativeNotVisible() error {
	return problem.New(http.StatusNotFound, problem.NotFound, "No creative with this id is visible to you in this organization.")
}

// memberRole is the caller's role in org. notVisible is the error to answer
// when the caller is not a member, so each endpoint names what it was asked
// for without saying why it is not visible.
func memberRole(ctx context.Context, q *db.Queries, org, user uuid.UUID, notVisible func() error) (review.Role, error) {
	role, err := q.MembershipRoleGet(ctx, db.MembershipRoleGetParams{OrganizationID: org, UserID: user})
	if err != nil {
		if err = store.Translate(err); errors.Is(err, store.ErrNotFound) {
			return "", notVisible()
		}
		return "", err
	}
	return review.Role(role), nil
}
