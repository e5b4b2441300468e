package contract_test

import (
	"fmt"
	"sort"
	"testing"

	"creativeapi/internal/httpapi"
)

// TestSecurityListsBearerExactlyWhereXScopeIs holds the two readings of
// who may call an operation to one answer. The gate admits a personal
// access token from `x-scope` alone (docs/tokens.md), while Prism, the
// generated clients and the reference read `security`: an operation with
// an `x-scope` must list `bearer` in its security (else Prism refuses a
// token the server takes), and one without must not (else the server
// answers a token 401 `invalid_token` that the spec promised to take).
func TestSecurityListsBearerExactlyWhereXScopeIs(t *testing.T) {
	doc, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var wrong []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			security := doc.Security
			if op.Security != nil {
				security = *op.Security
			}
			bearer := false
			for _, req := range security {
				if _, ok := req["bearer"]; ok {
					if len(req) != 1 {
						wrong = append(wrong, fmt.Sprintf("%s (%s %s): `bearer` must be a requirement of its own (`- bearer: []`), not combined with %v", op.OperationID, method, path, req))
					}
					bearer = true
				}
			}
			scope, _ := op.Extensions["x-scope"].(string)
			switch {
			case scope != "" && !bearer:
				wrong = append(wrong, fmt.Sprintf("%s (%s %s) has x-scope %q but its security does not list bearer: add `- bearer: []` to its security, or remove the x-scope if tokens may not call it", op.OperationID, method, path, scope))
			case scope == "" && bearer:
				wrong = append(wrong, fmt.Sprintf("%s (%s %s) lists bearer in its security (its own or the document's) but has no x-scope, so the server answers a token 401: give it an `x-scope`, or an explicit `security:` without bearer (`- sessionCookie: []`)", op.OperationID, method, path))
			}
		}
	}
	sort.Strings(wrong)
	for _, w := range wrong {
		t.Error(w)
	}
}
