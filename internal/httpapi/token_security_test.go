package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/testenv"
)

// tokenOf creates, through the API with c's session, a token of c's user
// with scopes and returns its secret.
func tokenOf(t *testing.T, c *testenv.Client, scopes ...string) string {
	t.Helper()
	r := c.Do(http.MethodPost, "/api/v1/me/tokens", map[string]any{"name": "test", "scopes": scopes})
	var body api.CreatedAccessToken
	r.JSON(t, &body)
	if r.Status != http.StatusCreated {
		t.Fatalf("token fixture: %d %s", r.Status, r.Body)
	}
	return body.Token
}

// TestTokenCallsTheOperationsWhoseSecurityNowListsBearer: the three
// operations that had an x-scope but listed only the session cookie in
// their security (issue 67) take a token with their scope and no CSRF
// token, and answer what the spec says (the harness validates each
// answer): the review plan is set and removed, the deposit cancelled.
func TestTokenCallsTheOperationsWhoseSecurityNowListsBearer(t *testing.T) {
	t.Parallel()
	t.Run("putCreativeReviewPlan and deleteCreativeReviewPlan", func(t *testing.T) {
		t.Parallel()
		d := newReviewDesk(t)
		id := d.creative(t, creativeSpec{versions: 1})
		tok := bearer(tokenOf(t, d.clients["admin"], "creatives:write"))
		plan := map[string]any{"stages": []any{map[string]any{"name": "Brand", "rule": "all", "reviewerIds": []uuid.UUID{d.users["reviewer"]}}}}
		r := d.env.Client(t).Do(http.MethodPut, reviewPlanURL(d.org, id), plan, tok, testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()})
		var put api.CreativeDetail
		r.JSON(t, &put)
		if r.Status != http.StatusOK || put.ReviewPlan.IsNull() || put.Version != 2 {
			t.Fatalf("put with a token: %d %s", r.Status, r.Body)
		}
		r = d.env.Client(t).Do(http.MethodDelete, reviewPlanURL(d.org, id), nil, tok)
		var del api.CreativeDetail
		r.JSON(t, &del)
		if r.Status != http.StatusOK || !del.ReviewPlan.IsNull() || del.Version != 3 {
			t.Fatalf("delete with a token: %d %s", r.Status, r.Body)
		}
	})
	t.Run("cancelAccountDeposit", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t)
		c, _ := env.SignedIn(t, "Tia Token")
		dep := createDeposit(t, c, "20000000")
		tok := bearer(tokenOf(t, c, "deposits:write"))
		r := env.Client(t).Do(http.MethodPost, cancelPath(dep.Id.String()), nil, tok)
		var got api.AccountDeposit
		r.JSON(t, &got)
		if r.Status != http.StatusOK || got.Status != api.DepositStatusCancelled {
			t.Fatalf("cancel with a token: %d %s", r.Status, r.Body)
		}
	})
}

// TestSharesTakeASessionOnly: listShares and getShare have no x-scope, and
// their security now lists the session cookie only; a token, even of an
// admin with every scope that reads, is 401 invalid_token on both.
func TestSharesTakeASessionOnly(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	c := d.creative(t, creativeSpec{versions: 1})
	sh := d.newShare(t, shareOf(c))
	tok := bearer(tokenOf(t, d.clients["admin"], "creatives:read", "creatives:write"))
	for _, path := range []string{sharesURL(d.org), sharesURL(d.org) + "/" + sh.Id.String()} {
		if got := outcome(t, d.env.Client(t).Do(http.MethodGet, path, nil, tok)); got != "401 invalid_token" {
			t.Errorf("GET %s with a token: got %s, want 401 invalid_token", path, got)
		}
		if r := d.clients["admin"].Do(http.MethodGet, path, nil); r.Status != http.StatusOK {
			t.Errorf("GET %s with the admin's session: %d %s", path, r.Status, r.Body)
		}
	}
}
