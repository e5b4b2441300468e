package contract_test

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"creativeapi"
)

// TestSpec_ValidatesWithItsExamples: kin-openapi, the library the gate is
// built on, validates openapi.yaml, every example against its schema
// included. The docs page and the mock server show the examples: an
// invalid one teaches every reader an answer the server never sends (the
// sign-in example lacked user.operator).
func TestSpec_ValidatesWithItsExamples(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(creativeapi.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(t.Context(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("openapi.yaml does not validate with its examples:\n%v", err)
	}
}
