package gate_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"creativeapi"
	"creativeapi/internal/gate"
	"creativeapi/internal/problem"
)

const (
	org      = "8d3c6f0e-2f7b-4c59-9a47-2f5d1f3b6a10"
	creative = "3f2b8c1a-6d4e-4f8a-9b7c-1e2d3c4b5a69"
)

// A request as Echo routed it: the route path and its parameters.
type routed struct {
	method, route, path string
	params              map[string]string
}

var (
	deposit = routed{http.MethodPost, "/api/v1/me/balance/deposits", "/api/v1/me/balance/deposits", nil}
	action  = routed{http.MethodPost, "/api/v1/organizations/:organizationId/creatives/:creativeId/actions",
		"/api/v1/organizations/" + org + "/creatives/" + creative + "/actions",
		map[string]string{"organizationId": org, "creativeId": creative}}
	signIn    = routed{http.MethodPost, "/api/v1/auth/sign-in", "/api/v1/auth/sign-in", nil}
	creatives = routed{http.MethodGet, "/api/v1/organizations/:organizationId/creatives", "/api/v1/organizations/" + org + "/creatives",
		map[string]string{"organizationId": org}}
)

// commentRequired is a BodyCheck: request_changes needs a comment.
func commentRequired(body any) []problem.FieldError {
	if m, _ := body.(map[string]any); m["action"] == "request_changes" && m["comment"] == nil {
		return []problem.FieldError{{Field: "comment", Code: problem.Required, Message: "Is required."}}
	}
	return nil
}

func newGate(t testing.TB) *gate.Gate {
	t.Helper()
	spec, err := openapi3.NewLoader().LoadFromData(creativeapi.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(spec, map[string]gate.BodyCheck{"executeCreativeAction": commentRequired})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

type request struct {
	to      routed
	query   string
	body    string
	headers map[string]string
	// stored is the fingerprint stored under the request's key (a replay).
	stored []byte
}

// anotherRequest is a stored fingerprint no request of these tests has.
var anotherRequest = []byte("another request's fingerprint")

func (r request) check(t *testing.T, g *gate.Gate) (*http.Request, []byte, error) {
	t.Helper()
	req, body, _, err := r.checkFingerprint(t, g)
	return req, body, err
}

func (r request) checkFingerprint(t *testing.T, g *gate.Gate) (*http.Request, []byte, []byte, error) {
	t.Helper()
	path := r.to.path
	if r.query != "" {
		path += "?" + r.query
	}
	req := httptest.NewRequest(r.to.method, path, strings.NewReader(r.body))
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for name, value := range r.headers {
		req.Header.Set(name, value)
	}
	op := g.Operation(r.to.method, r.to.route)
	if op == nil {
		t.Fatalf("no operation for %s %s", r.to.method, r.to.route)
	}
	body, fingerprint, err := g.Check(context.Background(), httptest.NewRecorder(), req, op, r.to.params, r.stored)
	return req, body, fingerprint, err
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	type field struct{ name, code string }
	for _, tc := range []struct {
		name   string
		req    request
		status int
		code   problem.Code
		fields []field
	}{
		{"a body over the limit is a 413", request{to: signIn, body: `{"email":"` + strings.Repeat("a", gate.MaxBodyBytes) + `"}`},
			413, problem.RequestTooLarge, nil},
		{"an encoded body is a 415", request{to: signIn, body: `{}`, headers: map[string]string{"Content-Encoding": "gzip"}},
			415, problem.UnsupportedMediaType, nil},
		{"a body that is not application/json is a 415", request{to: signIn, body: `{}`, headers: map[string]string{"Content-Type": "text/plain"}},
			415, problem.UnsupportedMediaType, nil},
		{"a body declared in another charset than UTF-8 is a 415", request{to: signIn, body: `{}`, headers: map[string]string{"Content-Type": "application/json; charset=utf-16"}},
			415, problem.UnsupportedMediaType, nil},
		{"a body declared in ISO-8859-1 is a 415", request{to: signIn, body: `{}`, headers: map[string]string{"Content-Type": "application/json;charset=iso-8859-1"}},
			415, problem.UnsupportedMediaType, nil},
		{"an empty body is malformed", request{to: signIn, headers: map[string]string{"Content-Type": "application/json"}},
			400, problem.MalformedJSON, nil},
		{"a body that is not JSON is malformed", request{to: signIn, body: `{"email":`}, 400, problem.MalformedJSON, nil},
		{"a body with data after its value is malformed", request{to: signIn, body: `{} {}`}, 400, problem.MalformedJSON, nil},
		{"an object that repeats a member is malformed", request{to: action, body: `{"action":"submit","action":"archive"}`},
			400, problem.MalformedJSON, nil},
		{"a member repeated under another spelling is malformed", request{to: action, body: `{"action":"submit","\u0061ction":"archive"}`},
			400, problem.MalformedJSON, nil},
		{"a missing member is required", request{to: action, body: `{}`}, 422, problem.InvalidRequest, []field{{"action", "required"}}},
		{"an unknown member is named, not its object", request{to: deposit, body: `{"amount":{"amountMinor":"1","currency":"USDT","scale":6,"b":1,"a":2}}`},
			422, problem.InvalidRequest, []field{{"amount.a", "unknown_field"}, {"amount.b", "unknown_field"}}},
		{"a nested member has a dotted path", request{to: deposit, body: `{"amount":{"amountMinor":"1.5","currency":"USDT","scale":6}}`},
			422, problem.InvalidRequest, []field{{"amount.amountMinor", "invalid_format"}}},
		{"a body that is no object is named body", request{to: action, body: `[]`}, 422, problem.InvalidRequest, []field{{"body", "invalid_type"}}},
		{"a NUL character in any string is refused", request{to: action, body: `{"action":"submit","comment":"a\u0000b"}`},
			422, problem.InvalidRequest, []field{{"comment", "invalid_format"}}},
		{"a lone surrogate is refused by field, not stored as U+FFFD", request{to: action, body: `{"action":"submit","comment":"a\ud800b"}`},
			422, problem.InvalidRequest, []field{{"comment", "invalid_format"}}},
		{"a lone low surrogate is refused too", request{to: signIn, body: `{"email":"a@example.test","password":"\udc00"}`},
			422, problem.InvalidRequest, []field{{"password", "invalid_format"}}},
		{"a control character in single-line text is refused", request{to: signIn, body: `{"email":"a\nb@example.test","password":"p"}`},
			422, problem.InvalidRequest, []field{{"email", "invalid_format"}}},
		{"a path parameter that is no UUID is invalid_format", request{to: routed{action.method, action.route, action.path,
			map[string]string{"organizationId": "not-a-uuid", "creativeId": creative}}, body: `{"action":"submit"}`},
			422, problem.InvalidRequest, []field{{"organizationId", "invalid_format"}}},
		{"a malformed Idempotency-Key is named by its header", request{to: action, body: `{"action":"submit"}`, headers: map[string]string{"Idempotency-Key": "has space"}},
			422, problem.InvalidRequest, []field{{"Idempotency-Key", "invalid_format"}}},
		{"a query parameter sent twice is refused", request{to: creatives, query: "limit=5&limit=6"},
			422, problem.InvalidRequest, []field{{"limit", "invalid_value"}}},
		{"a query parameter that is not UTF-8 text is invalid_format", request{to: creatives, query: "q=a%ffb"},
			422, problem.InvalidRequest, []field{{"q", "invalid_format"}}},
		{"an overlong or surrogate encoding is not UTF-8 text either", request{to: creatives, query: "q=%c0%af&cursor=%ed%a0%80"},
			422, problem.InvalidRequest, []field{{"q", "invalid_format"}, {"cursor", "invalid_format"}}},
		{"a header that is not UTF-8 text is invalid_format", request{to: action, body: `{"action":"submit"}`, headers: map[string]string{"Idempotency-Key": "k\xff"}},
			422, problem.InvalidRequest, []field{{"Idempotency-Key", "invalid_format"}}},
		{"a path parameter that is not UTF-8 text is invalid_format", request{to: routed{action.method, action.route, action.path,
			map[string]string{"organizationId": org, "creativeId": "\xff"}}, body: `{"action":"submit"}`},
			422, problem.InvalidRequest, []field{{"creativeId", "invalid_format"}}},
		{"an integer query parameter too large to read is out of range", request{to: creatives, query: "limit=99999999999999999999"},
			422, problem.InvalidRequest, []field{{"limit", "out_of_range"}}},
		{"the rules beyond the schema are reported with the schema's", request{to: action, body: `{"action":"request_changes","expectedVersion":0}`},
			422, problem.InvalidRequest, []field{{"expectedVersion", "out_of_range"}, {"comment", "required"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := tc.req.check(t, g)
			var perr *problem.Error
			if !errors.As(err, &perr) {
				t.Fatalf("got %v, want a Problem", err)
			}
			if perr.Status != tc.status || perr.Code != tc.code {
				t.Fatalf("got %d %s, want %d %s: %v", perr.Status, perr.Code, tc.status, tc.code, perr)
			}
			var got []field
			for _, f := range perr.FieldErrors {
				got = append(got, field{f.Field, string(f.Code)})
			}
			if len(got) != len(tc.fields) {
				t.Fatalf("field errors %v, want %v", got, tc.fields)
			}
			for i := range got {
				if got[i] != tc.fields[i] {
					t.Fatalf("field errors %v, want %v", got, tc.fields)
				}
			}
		})
	}
}

func TestAcceptedBodies(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	for _, tc := range []struct {
		name string
		req  request
		want string
	}{
		{"the handler reads the body compact with its members sorted", request{to: action, body: "{ \"expectedVersion\": 3,\n \"action\": \"submit\" }"},
			`{"action":"submit","expectedVersion":3}`},
		{"an integer written otherwise is written as an integer", request{to: action, body: `{"action":"submit","expectedVersion":3.0}`},
			`{"action":"submit","expectedVersion":3}`},
		{"escapes are written once", request{to: action, body: `{"action":"subm\u0069t","comment":"caf\u00e9"}`},
			`{"action":"submit","comment":"café"}`},
		{"a surrogate pair is one character", request{to: action, body: `{"action":"submit","comment":"\ud834\udd1e \\ud800"}`},
			`{"action":"submit","comment":"𝄞 \\ud800"}`},
		{"the media type is read whatever its case and parameters", request{to: action, body: `{"action":"submit"}`,
			headers: map[string]string{"Content-Type": "Application/JSON; charset=utf-8"}}, `{"action":"submit"}`},
		{"a replay skips the rules beyond the schema", request{to: action, body: `{"action":"request_changes"}`, stored: anotherRequest},
			`{"action":"request_changes"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, body, err := tc.req.check(t, g)
			if err != nil {
				t.Fatal(err)
			}
			if string(body) != tc.want {
				t.Fatalf("body %s, want %s", body, tc.want)
			}
			if read, err := io.ReadAll(req.Body); err != nil || string(read) != tc.want {
				t.Fatalf("the handler reads %q (%v), want %s", read, err, tc.want)
			}
			if ct := req.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q for the handler's binder", ct)
			}
		})
	}
}

func TestOperationIsLookedUpByEchosRoute(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	for _, tc := range []struct {
		method, route, want string
	}{
		{http.MethodPost, action.route, "executeCreativeAction"},
		{http.MethodGet, "/api/v1/me/balance/deposits/:depositId", "getAccountDeposit"},
		{http.MethodGet, "/healthz", "getHealth"},
		{http.MethodDelete, action.route, ""},
		{http.MethodPost, "/api/v1/organizations/{organizationId}/creatives/{creativeId}/actions", ""},
	} {
		op, got := g.Operation(tc.method, tc.route), ""
		if op != nil {
			got = op.ID
		}
		if got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.method, tc.route, got, tc.want)
		}
	}
	if op := g.Operation(http.MethodPost, signIn.route); op == nil || op.Secured {
		t.Errorf("signIn: %+v, want an operation without a session", op)
	}
	if op := g.Operation(http.MethodPost, action.route); op == nil || !op.Secured {
		t.Errorf("executeCreativeAction: %+v, want an operation with a session", op)
	}
}

func TestFieldMessagesWriteIntegersAsIntegers(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	for _, tc := range []struct {
		req     request
		field   string
		message string
	}{
		{request{to: action, body: `{"action":"submit","expectedVersion":0}`}, "expectedVersion", "Must be between 1 and 2147483647."},
		{request{to: creatives, query: "limit=0"}, "limit", "Must be between 1 and 100."},
	} {
		_, _, err := tc.req.check(t, g)
		var perr *problem.Error
		if !errors.As(err, &perr) || len(perr.FieldErrors) != 1 || perr.FieldErrors[0].Field != tc.field || perr.FieldErrors[0].Message != tc.message {
			t.Errorf("%v, want %s: %q", err, tc.field, tc.message)
		}
	}
}

func TestABodyWithTwoContentTypesIsA415(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	req := httptest.NewRequest(signIn.method, signIn.path, strings.NewReader(`{"email":"a@example.test","password":"p"}`))
	req.Header.Add("Content-Type", "application/json")
	req.Header.Add("Content-Type", "text/plain")
	_, _, err := g.Check(context.Background(), httptest.NewRecorder(), req, g.Operation(signIn.method, signIn.route), nil, nil)
	var perr *problem.Error
	if !errors.As(err, &perr) || perr.Status != http.StatusUnsupportedMediaType {
		t.Fatalf("%v, want a 415", err)
	}
}
