package problem

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"creativeapi"
)

// specCodes are the codes openapi.yaml's Problem.code documents.
func specCodes(t *testing.T) []string {
	t.Helper()
	spec := string(creativeapi.OpenAPIYAML)
	start := strings.Index(spec, "The machine-readable kind of problem:")
	end := strings.Index(spec[max(start, 0):], "New codes may be added")
	if start < 0 || end < 0 {
		t.Fatal("openapi.yaml: Problem.code's list of codes not found")
	}
	var codes []string
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(spec[start:start+end], -1) {
		codes = append(codes, m[1])
	}
	sort.Strings(codes)
	return codes
}

func TestEveryCodeHasAPageAndASpecEntry(t *testing.T) {
	var inCode, inPages []string
	for c := range titles {
		inCode = append(inCode, string(c))
	}
	sort.Strings(inCode)
	for _, c := range Codes() {
		inPages = append(inPages, string(c))
	}
	inSpec := specCodes(t)
	if !slices.Equal(inCode, inPages) || !slices.Equal(inCode, inSpec) || len(inCode) < 20 {
		t.Errorf("the codes differ:\n code (titles): %v\n pages:         %v\n openapi.yaml:  %v", inCode, inPages, inSpec)
	}
	for c, p := range Pages {
		if p.Status < 400 || p.Status > 599 || p.Means == "" || p.When == "" || p.Do == "" {
			t.Errorf("the page of %s is incomplete: %+v", c, p)
		}
	}
}
