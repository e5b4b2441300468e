package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"creativeapi/internal/gate"
	"creativeapi/internal/httpapi"
	"creativeapi/internal/problem"
)

// fuzzedCommand is a command path as Echo routes it.
type fuzzedCommand struct {
	route, path string
	params      map[string]string
}

// validate runs the gate's checks on one request Echo routed to c.
func validate(g *gate.Gate, c fuzzedCommand, contentType, key string, body []byte) error {
	req := httptest.NewRequest(http.MethodPost, c.path, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	_, _, err := g.Check(context.Background(), httptest.NewRecorder(), req, g.Operation(http.MethodPost, c.route), c.params, nil)
	return err
}

// FuzzCommandValidation feeds arbitrary bodies and Idempotency-Keys to both
// commands: the validator answers nil or a 4xx Problem, never anything
// else, and names only fields the request has.
func FuzzCommandValidation(f *testing.F) {
	g := httpapi.SpecGate(f)
	org, creative := "8d3c6f0e-2f7b-4c59-9a47-2f5d1f3b6a10", "3f2b8c1a-6d4e-4f8a-9b7c-1e2d3c4b5a69"
	commands := []fuzzedCommand{
		{"/api/v1/me/balance/deposits", "/api/v1/me/balance/deposits", nil},
		{"/api/v1/organizations/:organizationId/creatives/:creativeId/actions", "/api/v1/organizations/" + org + "/creatives/" + creative + "/actions",
			map[string]string{"organizationId": org, "creativeId": creative}},
	}
	seeds := []string{
		`{"amount":{"amountMinor":"100000000","currency":"USDT","scale":6}}`,
		`{"amount":{"amountMinor":"-1","currency":"usdt","scale":6.5}}`,
		`{"amount":null}`, `{"amount":[]}`, `[]`, `null`, `"x"`, `{`, ``, `{"a":` + strings.Repeat("[", 200),
		`{"action":"approve","expectedVersion":1e400}`,
		`{"action":"request_changes","comment":"\u0000\ud800"}`,
		`{"action":"submit","action":"archive"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), "application/json", "key-1")
	}
	f.Add([]byte(`{}`), "text/plain", `"quoted"`)
	f.Add([]byte(`{}`), "application/json; charset=utf-8", "")
	f.Fuzz(func(t *testing.T, body []byte, contentType, key string) {
		for _, c := range commands {
			err := validate(g, c, contentType, key, body)
			if err == nil {
				continue
			}
			var perr *problem.Error
			if !errors.As(err, &perr) || perr.Status < 400 || perr.Status >= 500 {
				t.Fatalf("body %q key %q: %v is not a 4xx Problem", body, key, err)
			}
			if perr.Status == http.StatusUnprocessableEntity && len(perr.FieldErrors) == 0 {
				t.Fatalf("422 without field errors for body %q", body)
			}
			for _, f := range perr.FieldErrors {
				if !fieldInRequest(body, key, f.Field, string(f.Code)) {
					t.Fatalf("body %q key %q: the field error %s %s names no field of the request", body, key, f.Field, f.Code)
				}
			}
		}
	})
}
