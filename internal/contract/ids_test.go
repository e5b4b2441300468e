package contract_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"creativeapi/internal/httpapi"
)

// notOurIDs are identifiers named like ours that another system gives,
// with the reason they are not UUIDs.
var notOurIDs = map[string]string{
	"transactionId":       "a TRON transaction's hash (64 hex characters), named by the chain",
	"refundTransactionId": "a TRON transaction's hash (64 hex characters), named by the chain",
	"traceId":             "a W3C trace context id (32 hex characters), what tracing tools read",
	// The event id is the stream's position (seq), ordered so a reader
	// resumes after it; released in 1.0.0, kept until a new major version.
	"eventId":     "an event's seq, the position a reader resumes after (released in 1.0.0)",
	"lastEventId": "the seq of the last event read (SSE's Last-Event-ID; released in 1.0.0)",
}

// TestSpec_EveryIDIsAUUIDString walks every schema of openapi.yaml
// (components, inline request, response and header schemas, parameters)
// and fails on a property or parameter named id or ending in Id that is
// not a `type: string, format: uuid`: one kind of id everywhere, which
// JavaScript holds without losing precision (issue 44). Identifiers that
// another system gives are listed in notOurIDs with their reason.
func TestSpec_EveryIDIsAUUIDString(t *testing.T) {
	doc, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	w := &idWalker{seen: map[*openapi3.Schema]bool{}}
	for name, ref := range doc.Components.Schemas {
		w.walk("#/components/schemas/"+name, ref)
	}
	for name, p := range doc.Components.Parameters {
		if p.Value != nil {
			w.check("#/components/parameters/"+name, p.Value.Name, p.Value.Schema)
			w.walk("#/components/parameters/"+name, p.Value.Schema)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			at := fmt.Sprintf("%s %s", method, path)
			for _, p := range append(item.Parameters, op.Parameters...) {
				if p.Value != nil {
					w.check(at+" parameter", p.Value.Name, p.Value.Schema)
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
		t.Errorf("identifiers that are not UUID strings:\n  %s", strings.Join(w.problems, "\n  "))
	}
}

type idWalker struct {
	seen     map[*openapi3.Schema]bool
	problems []string
}

// check records name at when it names an id and ref is not a UUID string.
func (w *idWalker) check(at, name string, ref *openapi3.SchemaRef) {
	if name != "id" && !strings.HasSuffix(name, "Id") {
		return
	}
	if _, ok := notOurIDs[name]; ok {
		return
	}
	if !isUUIDString(ref) {
		w.problems = append(w.problems, fmt.Sprintf("%s %s: %s", at, name, describe(ref)))
	}
}

// isUUIDString reports whether ref is a string of format uuid, directly or
// through its allOf members (a nullable reference).
func isUUIDString(ref *openapi3.SchemaRef) bool {
	if ref == nil || ref.Value == nil {
		return false
	}
	s := ref.Value
	if s.Type != nil && s.Type.Is(openapi3.TypeString) && s.Format == "uuid" {
		return true
	}
	for _, m := range s.AllOf {
		if isUUIDString(m) {
			return true
		}
	}
	return false
}

func describe(ref *openapi3.SchemaRef) string {
	if ref == nil || ref.Value == nil {
		return "no schema"
	}
	t := "no type"
	if ref.Value.Type != nil {
		t = strings.Join(ref.Value.Type.Slice(), ",")
	}
	return fmt.Sprintf("type %s, format %q", t, ref.Value.Format)
}

func (w *idWalker) walk(at string, ref *openapi3.SchemaRef) {
	if ref == nil || ref.Value == nil {
		return
	}
	s := ref.Value
	if w.seen[s] {
		return
	}
	w.seen[s] = true
	for name, p := range s.Properties {
		w.check(at, name, p)
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
