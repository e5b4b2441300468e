package webhooks_test

import (
	"slices"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/webhooks"
)

func TestApply_ChangesWhatIsSentAndReenablingClearsTheReason(t *testing.T) {
	t.Parallel()
	gone := "gone"
	on, off := true, false
	url := "https://hooks.example.test/v2"
	enabled := db.WebhookEndpoint{Url: "https://hooks.example.test/in", EventTypes: []string{"creative.approved"}, Enabled: true}
	disabledAsGone := enabled
	disabledAsGone.Enabled, disabledAsGone.DisabledReason = false, &gone
	for _, tc := range []struct {
		rule        string
		from        db.WebhookEndpoint
		patch       webhooks.Patch
		wantEnabled bool
		wantReason  *string
		wantChanged bool
	}{
		{"an empty patch changes nothing", enabled, webhooks.Patch{}, true, nil, false},
		{"the values it has change nothing", enabled, webhooks.Patch{URL: &enabled.Url, EventTypes: []string{"creative.approved"}, Enabled: &on}, true, nil, false},
		{"a new url is a change", enabled, webhooks.Patch{URL: &url}, true, nil, true},
		{"new event types are a change", enabled, webhooks.Patch{EventTypes: []string{"creative.created"}}, true, nil, true},
		{"an admin switching it off gives no reason", enabled, webhooks.Patch{Enabled: &off}, false, nil, true},
		{"re-enabling clears the service's reason", disabledAsGone, webhooks.Patch{Enabled: &on}, true, nil, true},
		{"switching it off again keeps the service's reason", disabledAsGone, webhooks.Patch{Enabled: &off}, false, &gone, false},
		{"a new url leaves it off, with its reason", disabledAsGone, webhooks.Patch{URL: &url}, false, &gone, true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, changed := webhooks.Apply(tc.from, tc.patch)
			if got.Enabled != tc.wantEnabled || (got.DisabledReason == nil) != (tc.wantReason == nil) || changed != tc.wantChanged {
				t.Fatalf("enabled %v reason %v changed %v; want %v %v %v", got.Enabled, got.DisabledReason, changed, tc.wantEnabled, tc.wantReason, tc.wantChanged)
			}
			if tc.patch.URL != nil && got.Url != *tc.patch.URL || tc.patch.EventTypes != nil && !slices.Equal(got.EventTypes, tc.patch.EventTypes) {
				t.Fatalf("got %+v after %+v", got, tc.patch)
			}
		})
	}
}

// TestOwnerEventTypes_PlatformTakesDepositTypesByShapeOrganizationsTheCreativeOnes:
// an organization's endpoint takes the creative events, the platform's
// any deposit type by its shape (a type added later included) or
// deposit.*, and neither takes the other's.
func TestOwnerEventTypes_PlatformTakesDepositTypesByShapeOrganizationsTheCreativeOnes(t *testing.T) {
	t.Parallel()
	org := webhooks.OrganizationOwner(uuid.New())
	for _, tc := range []struct {
		owner webhooks.Owner
		types []string
		ok    bool
	}{
		{org, []string{"creative.approved", "creative.comment_added"}, true},
		{org, []string{"deposit.*"}, false},
		{org, []string{"deposit.credited"}, false},
		{org, []string{"webhook.test"}, false},
		{org, nil, false},
		{webhooks.Platform(), []string{"deposit.*"}, true},
		{webhooks.Platform(), []string{"deposit.credited", "deposit.top_up_requested"}, true},
		{webhooks.Platform(), []string{"creative.approved"}, false},
		{webhooks.Platform(), []string{"deposit."}, false},
		{webhooks.Platform(), []string{"deposits.*"}, false},
		{webhooks.Platform(), []string{"webhook.test"}, false},
		{webhooks.Platform(), nil, false},
	} {
		if err := tc.owner.CheckEventTypes(tc.types); (err == nil) != tc.ok {
			t.Errorf("platform %v, %v: %v; want ok %v", tc.owner.IsPlatform(), tc.types, err, tc.ok)
		}
	}
}
