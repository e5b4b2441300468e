package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"creativeapi/internal/creative"
	"creativeapi/internal/directory"
	"creativeapi/internal/problem"
	"creativeapi/internal/review"
	"creativeapi/internal/webhooks"
)

// TestEachResourceMapsItsRefusalsThenTheOrganizations: the refusals every
// organization resource shares have one mapper (organizationProblem),
// which the creative, comment and webhook mappers and the member list fall
// back to; each resource's own refusals stay in its own mapper.
func TestEachResourceMapsItsRefusalsThenTheOrganizations(t *testing.T) {
	t.Parallel()
	other := errors.New("database down")
	for _, tc := range []struct {
		name   string
		mapper func(error) error
		err    error
		status int
		code   problem.Code
	}{
		{"not a member", organizationProblem, fmt.Errorf("read: %w", directory.ErrOrganizationNotVisible), http.StatusNotFound, problem.NotFound},
		{"a role that may not", organizationProblem, &review.Refusal{Reason: review.Forbidden, Detail: "no"}, http.StatusForbidden, problem.Code(review.Forbidden)},
		{"a state that does not allow it", organizationProblem, &review.Refusal{Reason: review.InvalidTransition, Detail: "no"}, http.StatusConflict, problem.Code(review.InvalidTransition)},
		{"a creative not visible", creativeProblem, creative.ErrCreativeNotVisible, http.StatusNotFound, problem.NotFound},
		{"a creative's organization", creativeProblem, directory.ErrOrganizationNotVisible, http.StatusNotFound, problem.NotFound},
		{"a comment not visible", commentProblem, creative.ErrCommentNotVisible, http.StatusNotFound, problem.NotFound},
		{"an endpoint not visible", webhookProblem, webhooks.ErrEndpointNotVisible, http.StatusNotFound, problem.NotFound},
		{"webhooks for a non-admin", webhookProblem, &review.Refusal{Reason: review.Forbidden, Detail: "no"}, http.StatusForbidden, problem.Code(review.Forbidden)},
		{"webhooks of another organization", webhookProblem, directory.ErrOrganizationNotVisible, http.StatusNotFound, problem.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var perr *problem.Error
			if err := tc.mapper(tc.err); !errors.As(err, &perr) || perr.Status != tc.status || perr.Code != tc.code {
				t.Fatalf("got %v, want %d %s", err, tc.status, tc.code)
			}
		})
	}
	// Anything else passes on; a webhook refusal is not the creative mapper's.
	for name, mapper := range map[string]func(error) error{"organizationProblem": organizationProblem, "creativeProblem": creativeProblem, "webhookProblem": webhookProblem} {
		if err := mapper(other); err != other {
			t.Errorf("%s(%v) = %v, want it passed on", name, other, err)
		}
	}
	if err := creativeProblem(webhooks.ErrEndpointNotVisible); err != webhooks.ErrEndpointNotVisible {
		t.Errorf("creativeProblem mapped a webhook refusal: %v", err)
	}
}
