package apicompat_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"creativeapi/internal/httpapi"
)

// policyHeading starts the change policy in openapi.yaml's description.
const policyHeading = "## Versions, changes and deprecation"

// policy returns the change policy section of the spec's description.
func policy(t *testing.T) string {
	t.Helper()
	spec, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	desc := spec.Info.Description
	start := strings.Index(desc, policyHeading)
	if start < 0 {
		t.Fatalf("openapi.yaml's description has no %q section", policyHeading)
	}
	section := desc[start+len(policyHeading):]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	return section
}

// TestPolicyNamesEveryEnumThatMayGrow: answers' enums may grow (the gate
// lets a new value through), so the policy must name each one for clients
// to prepare. A new enum in the spec fails this test until it is named.
func TestPolicyNamesEveryEnumThatMayGrow(t *testing.T) {
	t.Parallel()
	spec, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var enums []string
	for name, ref := range spec.Components.Schemas {
		s := ref.Value
		if len(s.Enum) > 0 {
			enums = append(enums, name)
		}
		for prop, p := range s.Properties {
			if p.Ref != "" {
				continue
			}
			if len(p.Value.Enum) > 0 || p.Value.Items != nil && p.Value.Items.Ref == "" && len(p.Value.Items.Value.Enum) > 0 {
				enums = append(enums, name+"."+prop)
			}
		}
	}
	slices.Sort(enums)
	if len(enums) == 0 {
		t.Fatal("found no enum in openapi.yaml: the walk is broken")
	}
	text := policy(t)
	for _, e := range enums {
		if !strings.Contains(text, "`"+e+"`") {
			t.Errorf("the change policy (%q in openapi.yaml) does not name the enum `%s` among those that may grow", policyHeading, e)
		}
	}
	t.Logf("enums named: %s", strings.Join(enums, ", "))
}

// TestPolicyStatesTheSunsetPeriodTheServerEnforces: the notice the policy
// promises is the one the server refuses to start without.
func TestPolicyStatesTheSunsetPeriodTheServerEnforces(t *testing.T) {
	t.Parallel()
	days := int(httpapi.MinSunsetPeriod.Hours() / 24)
	if want := fmt.Sprintf("at least %d days", days); !strings.Contains(strings.Join(strings.Fields(policy(t)), " "), want) {
		t.Fatalf("the change policy does not say %q (httpapi.MinSunsetPeriod)", want)
	}
}
