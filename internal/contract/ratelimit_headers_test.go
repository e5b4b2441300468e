package contract_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"creativeapi/internal/httpapi"
)

// rateLimitHeaders are the headers the rate-limit step of the gate
// (rateLimit in internal/httpapi/middleware.go) writes, with the one shared
// component each response references.
var rateLimitHeaders = map[string]string{
	"RateLimit":        "#/components/headers/RateLimit",
	"RateLimit-Policy": "#/components/headers/RateLimitPolicy",
}

// TestResponsesDeclareTheRateLimitHeadersTheGateSends holds the spec to
// the middleware: the gate (admit) writes RateLimit and RateLimit-Policy on
// every answer of an operation under /api/, refusals included, once the
// operation is known; a 431 is refused before that (observe), and
// /healthz, /readyz and /.well-known/jwks.json never pass the gate. So
// every other response of an /api/ operation references both shared
// headers, and none of the others declares them. The harness
// (testenv.CheckResponse) also fails on an answer that carries them where
// its response does not declare them.
func TestResponsesDeclareTheRateLimitHeadersTheGateSends(t *testing.T) {
	doc, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var wrong []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, r := range op.Responses.Map() {
				if r.Value == nil {
					continue
				}
				at := fmt.Sprintf("%s (%s %s) %s", op.OperationID, method, path, status)
				if r.Ref != "" {
					at += " (" + r.Ref + ")"
				}
				sent := strings.HasPrefix(path, "/api/") && status != "431"
				for name, ref := range rateLimitHeaders {
					h, declared := r.Value.Headers[name]
					switch {
					case sent && !declared:
						wrong = append(wrong, fmt.Sprintf("%s: the gate sends %s; add to the response's headers:\n  %s:\n    $ref: '%s'", at, name, name, ref))
					case sent && h.Ref != ref:
						wrong = append(wrong, fmt.Sprintf("%s: %s must be `$ref: '%s'`, not %q", at, name, ref, h.Ref))
					case !sent && declared:
						wrong = append(wrong, fmt.Sprintf("%s declares %s, which this answer never carries (not an /api/ operation, or a 431): remove it", at, name))
					}
				}
			}
		}
	}
	sort.Strings(wrong)
	for _, w := range wrong {
		t.Error(w)
	}
}
