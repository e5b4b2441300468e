package httpapi

import (
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestEveryKeyedCommandDecidesReplayThroughTheOneRule: every operation
// of the spec with an Idempotency-Key header parameter has its replay
// rule, and command refuses to run a handler that passes no replay check
// where its rule asks for one. The list of keyed operations is read from
// the spec here, independently of the gate's.
func TestEveryKeyedCommandDecidesReplayThroughTheOneRule(t *testing.T) {
	spec, err := Spec()
	if err != nil {
		t.Fatal(err)
	}
	var keyed []string
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			for _, p := range op.Parameters {
				if p.Value != nil && p.Value.In == openapi3.ParameterInHeader && p.Value.Name == "Idempotency-Key" {
					keyed = append(keyed, op.OperationID)
				}
			}
		}
	}
	slices.Sort(keyed)
	if len(keyed) == 0 {
		t.Fatal("the spec has no keyed operation")
	}
	if got := SpecGate(t).KeyedOperations(); !slices.Equal(got, keyed) {
		t.Fatalf("the gate's keyed operations %v, the spec's %v", got, keyed)
	}
	if err := checkReplayRules(keyed); err != nil {
		t.Fatal(err)
	}
	if err := checkReplayRules(append(slices.Clone(keyed), "aNewCommand")); err == nil {
		t.Fatal("a keyed operation without a rule passed")
	}
	for _, op := range keyed {
		switch replayRules[op] {
		case replayWhileAllowed:
			if checkReplayRule(op, false) == nil || checkReplayRule(op, true) != nil {
				t.Errorf("%s: a handler without a replay check must not run, one with it must", op)
			}
		case replayToOwner:
			if checkReplayRule(op, false) != nil || checkReplayRule(op, true) == nil {
				t.Errorf("%s: a handler of a command replayed to its owner passes no check", op)
			}
		default:
			t.Errorf("%s: rule %d", op, replayRules[op])
		}
	}
	if checkReplayRule("", true) == nil {
		t.Error("a command run outside a keyed operation passed")
	}
}
