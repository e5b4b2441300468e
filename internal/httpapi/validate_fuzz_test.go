package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"creativeapi/internal/httpapi"
	"creativeapi/internal/problem"
)

func newValidator(tb testing.TB) *httpapi.Validator {
	tb.Helper()
	spec, err := httpapi.Spec()
	if err != nil {
		tb.Fatal(err)
	}
	v, err := httpapi.NewValidator(spec, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// validate runs the spec part of the gate on one request.
func validate(v *httpapi.Validator, method, path, contentType, key string, body []byte) error {
	req := httptest.NewRequest(method, path, nil)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	route, params, err := v.Route(req)
	if err != nil {
		return err
	}
	_, err = v.Validate(context.Background(), req, route, params, body)
	return err
}

// FuzzCommandValidation feeds arbitrary bodies and Idempotency-Keys to both
// commands: the validator answers nil or a 4xx Problem, never anything
// else, and names only fields the request has.
func FuzzCommandValidation(f *testing.F) {
	v := newValidator(f)
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
		for _, path := range []string{
			"/api/v1/me/balance/deposits",
			"/api/v1/organizations/8d3c6f0e-2f7b-4c59-9a47-2f5d1f3b6a10/creatives/3f2b8c1a-6d4e-4f8a-9b7c-1e2d3c4b5a69/actions",
		} {
			err := validate(v, http.MethodPost, path, contentType, key, body)
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

// BenchmarkValidateDeposit measures the gate's spec work for one valid
// deposit request: route lookup and request validation.
func BenchmarkValidateDeposit(b *testing.B) {
	v := newValidator(b)
	body := []byte(`{"amount":{"amountMinor":"100000000","currency":"USDT","scale":6}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := validate(v, http.MethodPost, "/api/v1/me/balance/deposits", "application/json", "5b3d8a2e-8f1c-4d7e-9a6b-2c4e6f8a0b1d", body); err != nil {
			b.Fatal(err)
		}
	}
}
