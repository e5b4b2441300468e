package contract_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"creativeapi/internal/httpapi"
)

// notPeople are the schemas shaped like a person reference (an id and a
// name) that name something else, with the reason.
var notPeople = map[string]string{
	"NamedRef":           "an organization, a client or a task",
	"NullableNamedRef":   "a NamedRef or null",
	"SettlementOperator": "an operator as the command line named them: id null when the name is not a user's",
}

// TestSpec_EveryUserRefHasARequiredKind walks every schema of openapi.yaml
// (components, the events' payloads among them, and the inline request and
// response schemas) and fails on a person reference whose `kind` is not
// required: every UserRef the API writes carries `kind` (`user` or
// `guest`), in every answer and event (docs/shares.md), so a client tells
// a member from a guest without guessing. A person reference is an object
// whose properties are an id and a name and no more than `kind` and
// `verified` besides; the few of that shape that name something else are
// listed in notPeople with their reason.
func TestSpec_EveryUserRefHasARequiredKind(t *testing.T) {
	doc, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	w := &personWalker{seen: map[*openapi3.Schema]bool{}}
	for name := range notPeople {
		if ref := doc.Components.Schemas[name]; ref != nil {
			w.seen[ref.Value] = true
		}
	}
	found := 0
	for _, name := range []string{"UserRef", "NullableUserRef"} {
		if isPersonRef(doc.Components.Schemas[name].Value) {
			found++
		}
	}
	if found != 2 {
		t.Fatalf("UserRef and NullableUserRef are not person references as this test reads them (%d of 2)", found)
	}
	for name, ref := range doc.Components.Schemas {
		w.walk("#/components/schemas/"+name, ref)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			at := fmt.Sprintf("%s %s", method, path)
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for ct, mt := range op.RequestBody.Value.Content {
					w.walk(at+" request "+ct, mt.Schema)
				}
			}
			for status, r := range op.Responses.Map() {
				if r.Value == nil {
					continue
				}
				for ct, mt := range r.Value.Content {
					w.walk(at+" "+status+" "+ct, mt.Schema)
				}
			}
		}
	}
	if w.people < 2 {
		t.Fatalf("found %d person references, want at least UserRef and NullableUserRef", w.people)
	}
	sort.Strings(w.problems)
	if len(w.problems) > 0 {
		t.Errorf("person references without a required kind (user | guest):\n  %s", strings.Join(w.problems, "\n  "))
	}
}

type personWalker struct {
	seen     map[*openapi3.Schema]bool
	people   int
	problems []string
}

// isPersonRef reports whether s is shaped like a person reference: an id
// and a name, and nothing but kind and verified besides.
func isPersonRef(s *openapi3.Schema) bool {
	if s == nil || s.Properties["id"] == nil || s.Properties["name"] == nil {
		return false
	}
	for name := range s.Properties {
		if !slices.Contains([]string{"id", "name", "kind", "verified"}, name) {
			return false
		}
	}
	return true
}

// kindIsUserOrGuest reports whether s requires a kind of user or guest.
func kindIsUserOrGuest(s *openapi3.Schema) bool {
	k := s.Properties["kind"]
	if !slices.Contains(s.Required, "kind") || k == nil || k.Value == nil {
		return false
	}
	var enum []string
	for _, v := range k.Value.Enum {
		enum = append(enum, fmt.Sprint(v))
	}
	sort.Strings(enum)
	return slices.Equal(enum, []string{"guest", "user"})
}

func (w *personWalker) walk(at string, ref *openapi3.SchemaRef) {
	if ref == nil || ref.Value == nil {
		return
	}
	s := ref.Value
	if w.seen[s] {
		return
	}
	w.seen[s] = true
	if isPersonRef(s) {
		w.people++
		if !kindIsUserOrGuest(s) {
			w.problems = append(w.problems, at)
		}
	}
	for name, p := range s.Properties {
		w.walk(at+"."+name, p)
	}
	w.walk(at+"[]", s.Items)
	if s.AdditionalProperties.Schema != nil {
		w.walk(at+".*", s.AdditionalProperties.Schema)
	}
	for _, list := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for i, m := range list {
			w.walk(fmt.Sprintf("%s/%d", at, i), m)
		}
	}
}
