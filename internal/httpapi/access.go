package httpapi

import (
	"net/http"

	"creativeapi/internal/problem"
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
