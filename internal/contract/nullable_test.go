package contract_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"creativeapi/internal/httpapi"
)

// TestSpecAvoidsNullablePatternsToolsReadDifferently walks every schema of
// openapi.yaml and rejects the two nullable spellings on which our tools
// disagree, since the Prism run of the client test is only worth something
// if Prism reads the spec as the server's validator does:
//   - `nullable: true` with an `enum` that lists null: Prism skips request
//     validation for it (stoplightio/prism#1931);
//   - `nullable: true` next to `allOf`/`anyOf`/`oneOf` members that declare a
//     type: under OpenAPI 3.0.3 the members still refuse null, so Prism (and
//     any strict validator) rejects the null that kin-openapi and the
//     generators accept. Reference a schema that is itself nullable instead.
func TestSpecAvoidsNullablePatternsToolsReadDifferently(t *testing.T) {
	doc, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	w := &schemaWalker{seen: map[*openapi3.Schema]bool{}}
	for name, ref := range doc.Components.Schemas {
		w.walk("#/components/schemas/"+name, ref)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			at := fmt.Sprintf("%s %s", method, path)
			for _, p := range append(item.Parameters, op.Parameters...) {
				if p.Value != nil {
					w.walk(at+" parameter "+p.Value.Name, p.Value.Schema)
				}
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for ct, mt := range op.RequestBody.Value.Content {
					w.walk(at+" request "+ct, mt.Schema)
				}
			}
			for status, r := range op.Responses.Map() {
				if r.Value == nil {
					continue
				}
				for name, h := range r.Value.Headers {
					if h.Value != nil {
						w.walk(at+" "+status+" header "+name, h.Value.Schema)
					}
				}
				for ct, mt := range r.Value.Content {
					w.walk(at+" "+status+" "+ct, mt.Schema)
				}
			}
		}
	}
	sort.Strings(w.problems)
	if len(w.problems) > 0 {
		t.Errorf("openapi.yaml uses nullable patterns that Prism and our validator read differently:\n  %s",
			strings.Join(w.problems, "\n  "))
	}
}

// schemaWalker visits every schema once and collects the offending ones.
type schemaWalker struct {
	seen     map[*openapi3.Schema]bool
	problems []string
}

func (w *schemaWalker) walk(at string, ref *openapi3.SchemaRef) {
	if ref == nil || ref.Value == nil {
		return
	}
	s := ref.Value
	if w.seen[s] {
		return
	}
	w.seen[s] = true

	if s.Nullable {
		for _, v := range s.Enum {
			if v == nil {
				w.problems = append(w.problems, at+": nullable with null in enum (stoplightio/prism#1931)")
				break
			}
		}
		for kind, members := range map[string]openapi3.SchemaRefs{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf} {
			for _, m := range members {
				if m.Value != nil && m.Value.Type != nil && len(m.Value.Type.Slice()) > 0 && !m.Value.Nullable {
					w.problems = append(w.problems, fmt.Sprintf("%s: nullable next to %s member %s of type %v, which refuses null",
						at, kind, memberName(m), m.Value.Type.Slice()))
				}
			}
		}
	}

	for name, p := range s.Properties {
		w.walk(at+"."+name, p)
	}
	w.walk(at+"[]", s.Items)
	if s.AdditionalProperties.Schema != nil {
		w.walk(at+".*", s.AdditionalProperties.Schema)
	}
	w.walk(at+" not", s.Not)
	for _, list := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for i, m := range list {
			w.walk(fmt.Sprintf("%s/%d", at, i), m)
		}
	}
}

func memberName(m *openapi3.SchemaRef) string {
	if m.Ref != "" {
		return m.Ref
	}
	return "(inline)"
}

// TestNullableCopiesMatchTheirSchema keeps every NullableX component equal to
// X except for `nullable`: they exist only because OpenAPI 3.0 cannot mark a
// reference nullable, and a drifted copy would let the nullable spelling of a
// field accept what the plain one refuses. A NullableX without an X (no
// answer holds the value non-null, so X would be an unreferenced
// duplicate) is the only spelling and has nothing to drift from.
func TestNullableCopiesMatchTheirSchema(t *testing.T) {
	doc, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	schemas := doc.Components.Schemas
	for name, ref := range schemas {
		base, ok := strings.CutPrefix(name, "Nullable")
		if !ok {
			continue
		}
		if !ref.Value.Nullable {
			t.Errorf("%s is not nullable", name)
		}
		orig, ok := schemas[base]
		if !ok {
			continue
		}
		copied := *ref.Value
		copied.Nullable, copied.Description, copied.Extensions = orig.Value.Nullable, orig.Value.Description, orig.Value.Extensions
		a, _ := json.Marshal(&copied)
		b, _ := json.Marshal(orig.Value)
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from %s beyond nullable:\n  %s\n  %s", name, base, a, b)
		}
	}
}
