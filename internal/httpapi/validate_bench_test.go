package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"creativeapi/internal/config"
	"creativeapi/internal/gate"
	"creativeapi/internal/httpapi"
	"creativeapi/internal/testenv"
)

// BenchmarkValidateCommand measures what the gate costs one command
// request, as the server runs it once Echo has routed it: the operation's
// lookup, reading and decoding the body, parameters, the body against its
// schema, the body rules beyond the schema, and the body written again for
// the handler and the fingerprint.
func BenchmarkValidateCommand(b *testing.B) {
	spec, err := httpapi.Spec()
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	g, err := gate.New(spec, httpapi.BodyChecksFor(cfg))
	if err != nil {
		b.Fatal(err)
	}
	org, creative := "8d3c6f0e-2f7b-4c59-9a47-2f5d1f3b6a10", "3f2b8c1a-6d4e-4f8a-9b7c-1e2d3c4b5a69"
	for _, tc := range []struct {
		name, route, path string
		params            map[string]string
		body              string
	}{
		{"createAccountDeposit", "/api/v1/me/balance/deposits", "/api/v1/me/balance/deposits", nil,
			`{"amount":{"amountMinor":"100000000","currency":"USDT","scale":6}}`},
		{"executeCreativeAction", "/api/v1/organizations/:organizationId/creatives/:creativeId/actions",
			"/api/v1/organizations/" + org + "/creatives/" + creative + "/actions",
			map[string]string{"organizationId": org, "creativeId": creative},
			`{"action":"request_changes","comment":"The logo is cut off.","expectedVersion":3}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodPost, tc.path, nil)
			req.Header.Set("Idempotency-Key", "5b3d8a2e-8f1c-4d7e-9a6b-2c4e6f8a0b1d")
			w := httptest.NewRecorder()
			body := strings.NewReader(tc.body)
			ctx := context.Background()
			b.ReportAllocs()
			defer testenv.ReportCPU(b)()
			for b.Loop() {
				body.Reset(tc.body)
				req.Body, req.ContentLength = io.NopCloser(body), int64(len(tc.body))
				req.Header.Set("Content-Type", "application/json")
				op := g.Operation(http.MethodPost, tc.route)
				if op == nil {
					b.Fatal("no operation")
				}
				if _, _, err := g.Check(ctx, w, req, op, tc.params, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
