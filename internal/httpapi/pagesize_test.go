package httpapi

import "testing"

func TestTheDefaultPageSizeIsTheSpecs(t *testing.T) {
	t.Parallel()
	spec, err := Spec()
	if err != nil {
		t.Fatal(err)
	}
	limit := spec.Components.Parameters["Limit"].Value.Schema.Value
	if d, ok := limit.Default.(float64); !ok || int(d) != defaultPageSize {
		t.Fatalf("the spec's Limit default is %v, the handlers use %d", limit.Default, defaultPageSize)
	}
}
