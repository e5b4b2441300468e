package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/testenv"
)

// actionPath is a syntactically valid action URL: validation answers before
// the organization is looked up.
var actionPath = "/api/v1/organizations/" + uuid.NewString() + "/creatives/" + uuid.NewString() + "/actions"

func TestEveryErrorIsAProblem(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Vera Validator")
	tests := []struct {
		name    string
		method  string
		path    string
		body    any
		headers []testenv.Header
		status  int
		code    string
	}{
		{"unknown route is 404 not_found", "GET", "/api/v1/nope", nil, nil, 404, "not_found"},
		{"unknown route outside the API is 404 not_found", "GET", "/nope", nil, nil, 404, "not_found"},
		{"wrong method is 405 method_not_allowed", "DELETE", "/api/v1/me", nil, nil, 405, "method_not_allowed"},
		{"wrong media type is 415", "POST", actionPath, `action=submit`, []testenv.Header{{Name: "Content-Type", Value: "application/x-www-form-urlencoded"}}, 415, "unsupported_media_type"},
		{"missing media type is 415", "POST", actionPath, `{"action":"submit"}`, []testenv.Header{{Name: "Content-Type", Value: ""}}, 415, "unsupported_media_type"},
		{"malformed JSON is 400", "POST", actionPath, `{"action":`, nil, 400, "malformed_json"},
		{"empty body is 400", "POST", actionPath, ``, []testenv.Header{{Name: "Content-Type", Value: "application/json"}}, 400, "malformed_json"},
		{"invalid body is 422", "POST", actionPath, `{}`, nil, 422, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.Do(tt.method, tt.path, tt.body, tt.headers...)
			p := r.Problem(t)
			if r.Status != tt.status || p.Code != tt.code {
				t.Fatalf("got %d %s, want %d %s: %s", r.Status, p.Code, tt.status, tt.code, r.Body)
			}
			if p.Type != "http://api.test/problems/"+tt.code || p.Status != tt.status || len(p.TraceID) != 32 {
				t.Errorf("problem fields: %+v", p)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

func TestFieldErrorsNameEveryFailingField(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Vera Validator")
	long := strings.Repeat("x", 2001)
	type want struct{ field, code string }
	tests := []struct {
		name    string
		path    string
		body    string
		headers []testenv.Header
		want    []want
	}{
		{"a missing field is required", actionPath, `{}`, nil, []want{{"action", "required"}}},
		{"a wrong JSON type is invalid_type", actionPath, `{"action":"submit","expectedVersion":"3"}`, nil, []want{{"expectedVersion", "invalid_type"}}},
		{"a value outside the enum is invalid_value", actionPath, `{"action":"publish"}`, nil, []want{{"action", "invalid_value"}}},
		{"a number below its minimum is out_of_range", actionPath, `{"action":"submit","expectedVersion":0}`, nil, []want{{"expectedVersion", "out_of_range"}}},
		{"an empty string is too_short", actionPath, `{"action":"submit","comment":""}`, nil, []want{{"comment", "too_short"}}},
		{"a long string is too_long", actionPath, `{"action":"submit","comment":"` + long + `"}`, nil, []want{{"comment", "too_long"}}},
		{"an unknown property is unknown_field", actionPath, `{"action":"submit","bogus":1}`, nil, []want{{"bogus", "unknown_field"}}},
		{"an unknown nested property is named by its path", "/api/v1/me/balance/deposits", `{"amount":{"amountMinor":"10000000","currency":"USDT","scale":6,"extra":true}}`, nil, []want{{"amount.extra", "unknown_field"}}},
		{"a nested field has a dotted path", "/api/v1/me/balance/deposits", `{"amount":{"amountMinor":"1.5","currency":"USDT","scale":6}}`, nil, []want{{"amount.amountMinor", "invalid_format"}}},
		{"a path parameter that is not a UUID is invalid_format", "/api/v1/organizations/not-a-uuid/creatives/" + uuid.NewString() + "/actions", `{"action":"submit"}`, nil, []want{{"organizationId", "invalid_format"}}},
		{"a bad Idempotency-Key is named by the header", actionPath, `{"action":"submit"}`, []testenv.Header{{Name: "Idempotency-Key", Value: "has space"}}, []want{{"Idempotency-Key", "invalid_format"}}},
		{"a too long Idempotency-Key is too_long", actionPath, `{"action":"submit"}`, []testenv.Header{{Name: "Idempotency-Key", Value: strings.Repeat("k", 300)}}, []want{{"Idempotency-Key", "too_long"}}},
		{"every failing field is reported at once", "/api/v1/me/balance/deposits", `{"amount":{"amountMinor":"x","currency":"EUR","scale":2},"more":1}`, nil,
			[]want{{"amount.amountMinor", "invalid_format"}, {"amount.currency", "invalid_value"}, {"amount.scale", "invalid_value"}, {"more", "unknown_field"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.Do("POST", tt.path, tt.body, tt.headers...)
			if r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			p := r.Problem(t)
			got := map[want]bool{}
			for _, f := range p.FieldErrors {
				got[want{f.Field, f.Code}] = true
				if f.Message == "" {
					t.Errorf("field %s has no message", f.Field)
				}
			}
			for _, w := range tt.want {
				if !got[w] {
					t.Errorf("missing field error %v in %s", w, r.Body)
				}
			}
			if len(p.FieldErrors) != len(tt.want) {
				t.Errorf("got %d field errors, want %d: %s", len(p.FieldErrors), len(tt.want), r.Body)
			}
		})
	}
}

func TestAnonymousCallersLearnNothingAboutTheRequestShape(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	r := env.Client(t).Do("POST", actionPath, `{"bogus":`)
	if r.Status != http.StatusUnauthorized || r.Problem(t).Code != "unauthenticated" {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
}

func TestMissingCSRFTokenIsRefusedBeforeValidation(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Cora CSRF")
	c.CSRFToken = ""
	r := c.Do("POST", actionPath, `{}`)
	if r.Status != http.StatusForbidden || r.Problem(t).Code != "csrf_failed" {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
}

func TestTraceIDComesFromTraceparent(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	r := env.Client(t).Do("GET", "/api/v1/me", nil, testenv.Header{Name: "traceparent", Value: "00-" + trace + "-00f067aa0ba902b7-01"})
	if got := r.Problem(t).TraceID; got != trace {
		t.Fatalf("traceId %q, want %q", got, trace)
	}
	r = env.Client(t).Do("GET", "/api/v1/me", nil, testenv.Header{Name: "traceparent", Value: "garbage"})
	if got := r.Problem(t).TraceID; len(got) != 32 || got == trace {
		t.Fatalf("traceId %q for a bad traceparent", got)
	}
}

func TestProbes(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c := env.Client(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		if r := c.Do("GET", path, nil); r.Status != http.StatusOK {
			t.Errorf("%s: %d %s", path, r.Status, r.Body)
		}
	}
	if r := c.Do("GET", "/openapi.yaml", nil); r.Status != 200 || !strings.Contains(string(r.Body), "executeCreativeAction") {
		t.Errorf("/openapi.yaml: %d", r.Status)
	}
	if r := c.Do("GET", "/docs", nil); r.Status != 200 || !strings.Contains(r.Header.Get("Content-Type"), "text/html") {
		t.Errorf("/docs: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
}
