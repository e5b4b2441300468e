package httpapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/httpapi"
	"creativeapi/internal/testenv"
)

// tokenScopes are the scopes of openapi.yaml's TokenScope.
var tokenScopes = []string{"creatives:read", "creatives:write", "comments:write", "uploads:write",
	"deposits:read", "deposits:write", "webhooks:manage", "operator"}

type createdToken struct {
	id, secret string
}

// token creates, through the API, a token of user with scopes.
func (d *matrixDesk) token(t *testing.T, user uuid.UUID, scopes ...string) createdToken {
	t.Helper()
	r := d.env.SessionFor(t, user).Do("POST", "/api/v1/me/tokens", map[string]any{"name": "test", "scopes": scopes})
	var body api.CreatedAccessToken
	r.JSON(t, &body)
	if r.Status != http.StatusCreated {
		t.Fatalf("token fixture: %d %s", r.Status, r.Body)
	}
	return createdToken{id: body.Id.String(), secret: body.Token}
}

func bearer(secret string) testenv.Header {
	return testenv.Header{Name: "Authorization", Value: "Bearer " + secret}
}

func outcome(t *testing.T, r *testenv.Response) string {
	t.Helper()
	got := strconv.Itoa(r.Status)
	if r.Status >= 400 {
		got += " " + r.Problem(t).Code
	}
	return got
}

// TestTokenActsAsItsUserWithinItsScope calls every operation of
// openapi.yaml with tokens of Acme's admin (an operator here): a token
// with the operation's x-scope gets the answer the admin's session gets,
// any other scope 403 insufficient_scope naming the scope (RFC 6750), and
// an operation that declares no scope takes no token (401 invalid_token).
// Token requests send no CSRF token.
func TestTokenActsAsItsUserWithinItsScope(t *testing.T) {
	t.Parallel()
	spec, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	d := newMatrixDesk(t)
	admin := d.users[acmeAdmin]
	execDepositSQL(t, d.env, "UPDATE users SET operator = true WHERE id = $1", admin)
	tokens := map[string]string{}
	for _, sc := range tokenScopes {
		tokens[sc] = d.token(t, admin, sc).secret
	}
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			id := op.OperationID
			if op.Security != nil && len(*op.Security) == 0 {
				continue // open to anyone
			}
			scope, _ := op.Extensions["x-scope"].(string)
			t.Run(id, func(t *testing.T) {
				if scope == "" {
					p, body := d.call(t, id, path)
					r := d.env.Client(t).Do(method, p, body, bearer(tokens["creatives:read"]))
					if got := outcome(t, r); got != "401 invalid_token" {
						t.Errorf("a token on a session-only operation: got %s, want 401 invalid_token", got)
					}
					want := `Bearer realm="creativeapi", error="invalid_token", error_description="This operation takes a session, not a token."`
					if strings.HasPrefix(path, "/api/v1/guest/") {
						want = `Bearer realm="creativeapi", error="invalid_token", error_description="A token opens no guest path."`
					}
					if got := r.Header.Get("WWW-Authenticate"); got != want {
						t.Errorf("WWW-Authenticate %q, want %q", got, want)
					}
					return
				}
				if _, ok := tokens[scope]; !ok {
					t.Fatalf("x-scope %q is not a TokenScope", scope)
				}
				p, body := d.call(t, id, path)
				want := outcome(t, d.client(t, acmeAdmin).Do(method, p, body))
				p, body = d.call(t, id, path)
				if got := outcome(t, d.env.Client(t).Do(method, p, body, bearer(tokens[scope]))); got != want {
					t.Errorf("with scope %s: got %s, the session got %s", scope, got, want)
				}
				other := "creatives:read"
				if scope == other {
					other = "deposits:read"
				}
				p, body = d.call(t, id, path)
				r := d.env.Client(t).Do(method, p, body, bearer(tokens[other]))
				if got := outcome(t, r); got != "403 insufficient_scope" {
					t.Errorf("with scope %s only: got %s, want 403 insufficient_scope", other, got)
				}
				if got, want := r.Header.Get("WWW-Authenticate"), `Bearer realm="creativeapi", error="insufficient_scope", scope="`+scope+`"`; got != want {
					t.Errorf("WWW-Authenticate %q, want %q", got, want)
				}
			})
		}
	}
}

// TestTokenThatIsNotLiveIsInvalidToken: unknown, mistyped (checksum),
// revoked and expired tokens are all 401 invalid_token.
func TestTokenThatIsNotLiveIsInvalidToken(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{})
	d := &matrixDesk{env: env, org: env.DB.Org(t, "Acme Ads")}
	user, _ := env.DB.User(t, "owner")
	env.DB.Member(t, d.org, user, "admin")
	list := "/api/v1/organizations/" + d.org.String() + "/creatives"

	live := d.token(t, user, "creatives:read")
	if r := env.Client(t).Do("GET", list, nil, bearer(live.secret)); r.Status != http.StatusOK {
		t.Fatalf("live token: %d %s", r.Status, r.Body)
	}
	last := byte('a')
	if live.secret[len(live.secret)-1] == last {
		last = 'b'
	}
	mistyped := live.secret[:len(live.secret)-1] + string(last)
	revoked := d.token(t, user, "creatives:read")
	if r := env.SessionFor(t, user).Do("DELETE", "/api/v1/me/tokens/"+revoked.id, nil); r.Status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	expired := d.token(t, user, "creatives:read")
	execDepositSQL(t, env, "UPDATE access_tokens SET expires_at = now() - interval '1 second' WHERE id = $1", uuid.MustParse(expired.id))
	for name, secret := range map[string]string{
		"unknown": "cat_" + strings.Repeat("0", 49), "mistyped": mistyped, "revoked": revoked.secret, "expired": expired.secret, "not a token": "abc",
	} {
		r := env.Client(t).Do("GET", list, nil, bearer(secret))
		if got := outcome(t, r); got != "401 invalid_token" {
			t.Errorf("%s: got %s, want 401 invalid_token", name, got)
		}
	}
	var listed api.AccessTokenList
	env.SessionFor(t, user).Do("GET", "/api/v1/me/tokens", nil).JSON(t, &listed)
	if len(listed.Items) != 1 || listed.Items[0].Id.String() != live.id {
		t.Errorf("listed %+v, want only the live token", listed.Items)
	}
	if lu, err := listed.Items[0].LastUsedAt.Get(); err != nil || time.Since(lu) > time.Minute {
		t.Errorf("lastUsedAt %v (%v), want the use just made", lu, err)
	}
}

// TestTokenLosesWhatItsUserLoses: a token acts within its user's rights
// now; a user removed from the organization loses it through the token.
func TestTokenLosesWhatItsUserLoses(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{})
	d := &matrixDesk{env: env, org: env.DB.Org(t, "Acme Ads")}
	user, _ := env.DB.User(t, "leaver")
	env.DB.Member(t, d.org, user, "viewer")
	tok := d.token(t, user, "creatives:read", "creatives:write")
	list := "/api/v1/organizations/" + d.org.String() + "/creatives"
	create := map[string]string{"title": "By token", "type": "static", "aspectRatio": "1:1", "geo": "DE", "language": "de"}
	if got := outcome(t, env.Client(t).Do("POST", list, create, bearer(tok.secret))); got != "403 action_forbidden" {
		t.Errorf("a viewer's token creating: got %s, want 403 action_forbidden", got)
	}
	execDepositSQL(t, env, "DELETE FROM memberships WHERE user_id = $1", user)
	if got := outcome(t, env.Client(t).Do("GET", list, nil, bearer(tok.secret))); got != "404 not_found" {
		t.Errorf("after removal: got %s, want 404 not_found", got)
	}
}

// TestTokenAndCookieTogetherAreRefused: the server does not guess which
// credential acts, on any operation that needs one.
func TestTokenAndCookieTogetherAreRefused(t *testing.T) {
	t.Parallel()
	spec, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	d := newMatrixDesk(t)
	tok := d.token(t, d.users[acmeAdmin], "creatives:write")
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Security != nil && len(*op.Security) == 0 {
				continue // open to anyone
			}
			if strings.HasPrefix(path, "/api/v1/guest/") {
				continue // takes neither: a token there is 401 invalid_token (guest_review_test.go)
			}
			t.Run(op.OperationID, func(t *testing.T) {
				p, body := d.call(t, op.OperationID, path)
				r := d.client(t, acmeAdmin).Do(method, p, body, bearer(tok.secret))
				if got := outcome(t, r); got != "400 ambiguous_credentials" {
					t.Errorf("got %s, want 400 ambiguous_credentials", got)
				}
			})
		}
	}
}

// TestTokenCreationBounds: the operator scope is for operators, and a
// token lives at most a year.
func TestTokenCreationBounds(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{})
	user, _ := env.DB.User(t, "member")
	s := env.SessionFor(t, user)
	for name, body := range map[string]map[string]any{
		"operator scope":  {"name": "x", "scopes": []string{"operator"}},
		"beyond a year":   {"name": "x", "scopes": []string{"creatives:read"}, "expiresAt": time.Now().Add(366 * 24 * time.Hour).Format(time.RFC3339)},
		"already expired": {"name": "x", "scopes": []string{"creatives:read"}, "expiresAt": time.Now().Add(-time.Hour).Format(time.RFC3339)},
	} {
		if got := outcome(t, s.Do("POST", "/api/v1/me/tokens", body)); got != "422 invalid_request" {
			t.Errorf("%s: got %s, want 422 invalid_request", name, got)
		}
	}
	r := s.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "default", "scopes": []string{"deposits:read"}})
	var tok api.CreatedAccessToken
	r.JSON(t, &tok)
	if d := tok.ExpiresAt.Sub(tok.CreatedAt); d < 89*24*time.Hour || d > 91*24*time.Hour {
		t.Errorf("default lifetime %v, want 90 days", d)
	}
}

// TestTokenRequestCostsWhatACookieRequestCosts: a deposit create with a
// token takes the cookie request's round trips (TestCreateDeposit_RoundTrips:
// 3), plus the lastUsedAt write on its first use only (at most once a
// minute); the cookie request itself is unchanged by tokens.
func TestTokenRequestCostsWhatACookieRequestCosts(t *testing.T) {
	t.Parallel()
	tracer := &testenv.RoundTrips{}
	env := testenv.New(t, testenv.Options{Tracer: tracer})
	c, _ := env.SignedIn(t, "Tom Token")
	made := c.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "rt", "scopes": []string{"deposits:write"}})
	var tok api.CreatedAccessToken
	made.JSON(t, &tok)
	for _, tt := range []struct {
		name   string
		client *testenv.Client
		header []testenv.Header
		want   int
	}{
		{"cookie", c, nil, 3},
		{"token, first use", env.Client(t), []testenv.Header{bearer(tok.Token)}, 4},
		{"token, used a moment ago", env.Client(t), []testenv.Header{bearer(tok.Token)}, 3},
	} {
		var status int
		sql := tracer.Record(func() {
			status = tt.client.Do(http.MethodPost, depositsPath, depositRequest("10000000"), tt.header...).Status
		})
		if status != http.StatusCreated {
			t.Fatalf("%s: status %d", tt.name, status)
		}
		if len(sql) != tt.want {
			t.Errorf("%s: %d round trips, want %d:\n%s", tt.name, len(sql), tt.want, strings.Join(sql, "\n"))
		}
	}
}

// TestTokensAreManagedWithTheSessionsCSRFToken: making and revoking a
// token are a session's unsafe requests like any other (403 without the
// CSRF token), and a token id is a UUID (422).
func TestTokensAreManagedWithTheSessionsCSRFToken(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{})
	user, _ := env.DB.User(t, "careful")
	s := env.SessionFor(t, user)
	csrf := s.CSRFToken
	s.CSRFToken = ""
	if got := outcome(t, s.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "x", "scopes": []string{"creatives:read"}})); got != "403 csrf_failed" {
		t.Errorf("create without CSRF: got %s, want 403 csrf_failed", got)
	}
	if got := outcome(t, s.Do("DELETE", "/api/v1/me/tokens/"+uuid.NewString(), nil)); got != "403 csrf_failed" {
		t.Errorf("revoke without CSRF: got %s, want 403 csrf_failed", got)
	}
	s.CSRFToken = csrf
	if got := outcome(t, s.Do("DELETE", "/api/v1/me/tokens/not-a-uuid", nil)); got != "422 invalid_request" {
		t.Errorf("revoke of a malformed id: got %s, want 422 invalid_request", got)
	}
}

// TestBearer401sCarryRFC6750Challenges: a refused bearer token's 401
// names the error and describes it (RFC 6750 §3), a request without any
// credentials gets no error attribute (§3.1), and a token lacking the
// operation's scope is 403 insufficient_scope naming the scope.
func TestBearer401sCarryRFC6750Challenges(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{})
	d := &matrixDesk{env: env, org: env.DB.Org(t, "Acme Ads")}
	user, _ := env.DB.User(t, "owner")
	env.DB.Member(t, d.org, user, "admin")
	list := "/api/v1/organizations/" + d.org.String() + "/creatives"
	readOnly := d.token(t, user, "deposits:read")
	expired := d.token(t, user, "creatives:read")
	execDepositSQL(t, env, "UPDATE access_tokens SET expires_at = now() - interval '1 second' WHERE id = $1", uuid.MustParse(expired.id))
	for _, tc := range []struct {
		name, method, path string
		headers            []testenv.Header
		want               string
	}{
		{"no credentials", "GET", list, nil, `Cookie realm="creativeapi"`},
		{"an unknown token", "GET", list, []testenv.Header{bearer("cat_" + strings.Repeat("0", 49))},
			`Bearer realm="creativeapi", error="invalid_token", error_description="The token is unknown, expired or revoked."`},
		{"an expired token", "GET", list, []testenv.Header{bearer(expired.secret)},
			`Bearer realm="creativeapi", error="invalid_token", error_description="The token is unknown, expired or revoked."`},
		{"a token on a session-only operation", "GET", "/api/v1/me/tokens", []testenv.Header{bearer(readOnly.secret)},
			`Bearer realm="creativeapi", error="invalid_token", error_description="This operation takes a session, not a token."`},
		{"a token on a guest path", "GET", guestCreativesPath, []testenv.Header{bearer(readOnly.secret)},
			`Bearer realm="creativeapi", error="invalid_token", error_description="A token opens no guest path."`},
		{"a token without the scope", "GET", list, []testenv.Header{bearer(readOnly.secret)},
			`Bearer realm="creativeapi", error="insufficient_scope", scope="creatives:read"`},
	} {
		r := env.Client(t).Do(tc.method, tc.path, nil, tc.headers...)
		if got := r.Header.Get("WWW-Authenticate"); got != tc.want || (r.Status != http.StatusUnauthorized && r.Status != http.StatusForbidden) {
			t.Errorf("%s: %d WWW-Authenticate %q, want %q", tc.name, r.Status, got, tc.want)
		}
	}
}
