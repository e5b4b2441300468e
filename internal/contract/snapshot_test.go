package contract_test

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"creativeapi/internal/httpapi"
)

// TestCreativeSnapshotIsCreativeDetailWithoutTheCallersView keeps the two
// creative schemas of openapi.yaml one definition in effect: an event's
// creative (CreativeSnapshot) is the answer's (CreativeDetail) without what
// depends on the caller. (Written as allOf, the released CreativeDetail
// would change shape for the API diff.)
func TestCreativeSnapshotIsCreativeDetailWithoutTheCallersView(t *testing.T) {
	doc, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	detail, snapshot := doc.Components.Schemas["CreativeDetail"].Value, doc.Components.Schemas["CreativeSnapshot"].Value
	callers := []string{"availableActions", "permissions"}
	want := maps.Clone(detail.Properties)
	for _, name := range callers {
		delete(want, name)
	}
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(snapshot.Properties)
	if string(wantJSON) != string(gotJSON) {
		t.Errorf("CreativeSnapshot's properties differ from CreativeDetail's without %v:\n snapshot: %s\n detail:   %s", callers, gotJSON, wantJSON)
	}
	wantRequired := slices.DeleteFunc(slices.Clone(detail.Required), func(n string) bool { return slices.Contains(callers, n) })
	if !slices.Equal(snapshot.Required, wantRequired) {
		t.Errorf("required %v; want %v", snapshot.Required, wantRequired)
	}
}
