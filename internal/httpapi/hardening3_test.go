package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/httpapi"
	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
)

// The third outside review's low findings, each a rule.

// TestRawInvalidUTF8InABodyIsMalformedJSON: JSON text is UTF-8 (RFC 8259
// §8.1); a body with invalid bytes inside a string is 400 malformed_json,
// never stored rewritten to U+FFFD.
func TestRawInvalidUTF8InABodyIsMalformedJSON(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	for name, raw := range map[string]string{
		"a lone 0xff":        "t\xff",
		"a raw surrogate":    "\xed\xa0\x80",
		"a broken sequence":  "\xc3\x28",
		"a truncated rune":   "ok\xe2\x82",
		"an overlong encode": "\xc0\xaf",
	} {
		t.Run(name, func(t *testing.T) {
			before := d.commentCount(t, id)
			r := d.comment("reviewer", id, `{"body":"`+raw+`"}`, key(uuid.NewString()))
			if r.Status != http.StatusBadRequest || r.Problem(t).Code != "malformed_json" {
				t.Fatalf("%d %s; want 400 malformed_json", r.Status, r.Body)
			}
			if d.commentCount(t, id) != before {
				t.Fatal("the comment was stored")
			}
		})
	}
	t.Run("a creative's title too", func(t *testing.T) {
		r := d.clients["author"].Do(http.MethodPost, creativesURL(d.org), `{"title":"Ad \xff","type":"static","aspectRatio":"9:16","geo":"DE","language":"de-DE"}`, key(uuid.NewString()))
		if r.Status != http.StatusBadRequest || r.Problem(t).Code != "malformed_json" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
}

// TestACommentOfOnlyWhiteSpaceNamesBody: a comment (or an edit) that says
// nothing is a 422 naming body.
func TestACommentOfOnlyWhiteSpaceNamesBody(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	c := d.mustComment(t, "reviewer", id, map[string]any{"body": "Fine."})
	for _, body := range []string{" ", "\n\t  \n", strings.Repeat(" ", 4000)} {
		r := d.comment("reviewer", id, map[string]any{"body": body})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `"field":"body"`) {
			t.Errorf("create %q: %d %s", body, r.Status, r.Body)
		}
		r = d.clients["reviewer"].Do(http.MethodPatch, commentsURL(d.org, id)+"/"+c.Id.String(), map[string]any{"body": body})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `"field":"body"`) {
			t.Errorf("edit to %q: %d %s", body, r.Status, r.Body)
		}
	}
	if r := d.comment("reviewer", id, map[string]any{"body": "  spaced out  "}); r.Status != http.StatusCreated {
		t.Errorf("a body with white space around words: %d %s", r.Status, r.Body)
	}
}

// TestADemotedAuthorOnlyReadsTheirComments: a member who wrote a comment
// and is now a viewer may no longer edit or delete it (403
// action_forbidden); viewers only read.
func TestADemotedAuthorOnlyReadsTheirComments(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	c := d.mustComment(t, "reviewer", id, map[string]any{"body": "Mine."})
	if _, err := d.env.DB.Pool.Exec(context.Background(), "UPDATE memberships SET role = 'viewer' WHERE user_id = $1 AND organization_id = $2", d.users["reviewer"], d.org); err != nil {
		t.Fatal(err)
	}
	url := commentsURL(d.org, id) + "/" + c.Id.String()
	for name, r := range map[string]func() (int, string){
		"edit": func() (int, string) {
			r := d.clients["reviewer"].Do(http.MethodPatch, url, map[string]any{"body": "Changed."})
			return r.Status, problemCode(t, r)
		},
		"delete": func() (int, string) {
			r := d.clients["reviewer"].Do(http.MethodDelete, url, nil)
			return r.Status, problemCode(t, r)
		},
	} {
		if status, code := r(); status != http.StatusForbidden || code != "action_forbidden" {
			t.Errorf("%s as a demoted author: %d %s", name, status, code)
		}
	}
}

// TestTheOperatorAPIIsNotFoundForOthersBeforeAnyValidation: for a signed-in
// non-operator every x-operator-only operation is the 404 of an unknown
// path, whatever the request holds (a malformed id, query or body, no CSRF
// token); an anonymous caller still gets 401.
func TestTheOperatorAPIIsNotFoundForOthersBeforeAnyValidation(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Nora Notoperator")
	anonymous := env.Client(t)
	transfer := "/api/v1/operator/transfers/"
	for _, tc := range []struct {
		name, method, path string
		body               any
	}{
		{"a malformed query", http.MethodGet, "/api/v1/operator/transfers?limit=abc&status=nope", nil},
		{"a malformed id", http.MethodGet, transfer + "not-an-id", nil},
		{"a malformed body", http.MethodPost, transfer + "1/settlements", `{"decision":`},
		{"a body of the wrong shape", http.MethodPost, transfer + "1/settlements", map[string]any{"decision": 7, "extra": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.Do(tc.method, tc.path, tc.body, key(uuid.NewString()))
			if r.Status != http.StatusNotFound || r.Problem(t).Code != "not_found" {
				t.Errorf("a non-operator: %d %s; want 404 not_found", r.Status, r.Body)
			}
			if r := anonymous.Do(tc.method, tc.path, tc.body); r.Status != http.StatusUnauthorized {
				t.Errorf("anonymous: %d %s; want 401", r.Status, r.Body)
			}
		})
	}
	t.Run("an operator's malformed request is validated", func(t *testing.T) {
		op, _ := signedInOperator(t, env, "Otto Operator")
		for _, path := range []string{transfer + "not-an-id", "/api/v1/operator/transfers?limit=abc"} {
			if r := op.Do(http.MethodGet, path, nil); r.Status != http.StatusUnprocessableEntity {
				t.Errorf("%s as an operator: %d %s; want 422", path, r.Status, r.Body)
			}
		}
	})
	t.Run("the spec marks every operator operation", func(t *testing.T) {
		spec, err := httpapi.Spec()
		if err != nil {
			t.Fatal(err)
		}
		for path, item := range spec.Paths.Map() {
			for method, op := range item.Operations() {
				if strings.HasPrefix(path, "/api/v1/operator/") != (op.Extensions["x-operator-only"] == true) {
					t.Errorf("%s %s: x-operator-only %v", method, path, op.Extensions["x-operator-only"])
				}
			}
		}
	})
}
