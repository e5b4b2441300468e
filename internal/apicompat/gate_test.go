package apicompat_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// released is the spec every edit below applies to. A released snapshot
// never changes, so these edits stay valid whatever openapi.yaml becomes.
const released = "api/released/openapi-1.0.0.yaml"

// edit replaces old, which must occur exactly once in the released spec.
type edit struct{ old, new string }

var (
	removeResponseField = []edit{
		{"required: [id, address, network, networkLabel, requestedAmount,", "required: [id, address, network, requestedAmount,"},
		{"        networkLabel:\n          type: string\n          example: TRON (TRC20)\n", ""},
	}
	removeOptionalResponseField = []edit{
		{"        fieldErrors:\n          type: array\n          description: Every failing field, present on validation failures (422 `invalid_request`).\n          items:\n            $ref: '#/components/schemas/FieldError'\n", ""},
	}
	narrowRequestEnum = []edit{
		{"enum: [submit, request_changes, approve, archive]", "enum: [submit, request_changes, approve]"},
	}
	requireOptionalRequestField = []edit{
		{"      additionalProperties: false\n      required: [action]\n", "      additionalProperties: false\n      required: [action, expectedVersion]\n"},
	}
	// boundRequestField is the hardening of a request field the server
	// already refused beyond int32: a bug fix of the spec, breaking on paper.
	boundRequestField = []edit{
		{"        expectedVersion:\n          type: integer\n          minimum: 1\n", "        expectedVersion:\n          type: integer\n          format: int32\n          minimum: 1\n          maximum: 2147483647\n"},
	}
	additive = []edit{
		// A new optional answer field, a new value of an enum that may grow
		// and a new optional request field.
		{"        networkLabel:\n          type: string\n          example: TRON (TRC20)\n", "        networkLabel:\n          type: string\n          example: TRON (TRC20)\n        transactionId:\n          type: string\n          nullable: true\n"},
		{"enum: [draft, in_review, changes_requested, approved, archived]", "enum: [draft, in_review, changes_requested, approved, archived, rejected]"},
		{"          description: A note for the event history; required for `request_changes`.\n", "          description: A note for the event history; required for `request_changes`.\n        notifyAuthor:\n          type: boolean\n"},
	}
)

func version(v string) edit { return edit{"\n  version: 1.0.0\n", "\n  version: " + v + "\n"} }

func with(edits []edit, more ...edit) []edit { return append(append([]edit{}, edits...), more...) }

// TestGateRefusesBreakingChangesWithinAMajorVersion runs the gate on the
// released spec and an edited copy: each edit can break a client written
// against the release, so it fails, naming oasdiff's finding.
func TestGateRefusesBreakingChangesWithinAMajorVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		edits   []edit
		finding string
	}{
		{"removing a response field", removeResponseField, "[response-required-property-removed]"},
		{"removing an optional response field", removeOptionalResponseField, "[response-optional-property-removed]"},
		{"narrowing an enum a request sends", narrowRequestEnum, "[request-property-enum-value-removed]"},
		{"making an optional request field required", requireOptionalRequestField, "[request-property-became-required]"},
		{"bounding a request field", boundRequestField, "[request-property-max-set]"},
		{"a breaking change in a minor version", with(removeResponseField, version("1.1.0")), "[response-required-property-removed]"},
		{"a lower version", with(additive, version("0.9.0")), "lower than the released 1.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := runGate(t, editedSpec(t, tc.edits), "")
			if err == nil {
				t.Fatalf("the gate passed:\n%s", out)
			}
			if !strings.Contains(out, tc.finding) {
				t.Fatalf("the gate failed without %q:\n%s", tc.finding, out)
			}
		})
	}
}

// TestGateAllowsWhatBreaksNoClient: additive changes pass, and so does any
// change in a new major version.
func TestGateAllowsWhatBreaksNoClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		edits []edit
	}{
		{"no change", nil},
		{"additive changes", additive},
		{"a breaking change in a new major version", with(removeResponseField, narrowRequestEnum[0], version("2.0.0"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if out, err := runGate(t, editedSpec(t, tc.edits), ""); err != nil {
				t.Fatalf("the gate failed: %v\n%s", err, out)
			}
		})
	}
}

// TestGateAcceptsABugFixWithItsReason follows the documented way to accept
// a breaking bug fix of the spec: the failing gate prints the line to
// accept; with a reason it passes, without one it still fails.
func TestGateAcceptsABugFixWithItsReason(t *testing.T) {
	t.Parallel()
	spec := editedSpec(t, boundRequestField)
	out, err := runGate(t, spec, "")
	if err == nil {
		t.Fatalf("the gate passed a bound on a request field:\n%s", out)
	}
	var suggested []string
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasSuffix(line, " -- reason: ") {
			suggested = append(suggested, line)
		}
	}
	if len(suggested) == 0 {
		t.Fatalf("the failing gate suggested no line to accept:\n%s", out)
	}
	for _, line := range suggested {
		if !strings.HasPrefix(line, "POST /api/v1/organizations/{organizationId}/creatives/{creativeId}/actions ") {
			t.Fatalf("suggested line %q is not about executeCreativeAction:\n%s", line, out)
		}
	}

	unexplained := strings.Join(suggested, "\n") + "\n"
	if out, err := runGate(t, spec, unexplained); err == nil || !strings.Contains(out, "needs \" -- reason: ") {
		t.Fatalf("lines without their reason were accepted (err %v):\n%s", err, out)
	}
	accepted := "# A comment is not a line to accept.\n\n"
	for _, line := range suggested {
		accepted += line + "the server always refused versions beyond int32 with 422; the spec now says so\n"
	}
	if out, err := runGate(t, spec, accepted); err != nil {
		t.Fatalf("the accepted bug fix still fails the gate: %v\n%s", err, out)
	}
	// The acceptance is for that finding only.
	if out, err := runGate(t, editedSpec(t, with(boundRequestField, removeResponseField...)), accepted); err == nil {
		t.Fatalf("an accepted finding let another breaking change through:\n%s", out)
	}
}

// repoRoot is the module root, where scripts/ and api/ live.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// editedSpec writes the released spec with edits applied to a temporary
// file and returns its path.
func editedSpec(t *testing.T, edits []edit) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), released))
	if err != nil {
		t.Fatal(err)
	}
	spec := string(b)
	for _, e := range edits {
		if n := strings.Count(spec, e.old); n != 1 {
			t.Fatalf("the edit's text occurs %d times in %s, want once: %q", n, released, e.old)
		}
		spec = strings.Replace(spec, e.old, e.new, 1)
	}
	path := filepath.Join(t.TempDir(), "openapi.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runGate runs scripts/api-diff.sh, with the real oasdiff, on the released
// spec and revision, with accepted as the list of accepted breaking
// changes. It returns the combined output and the exit error.
func runGate(t *testing.T, revision, accepted string) (string, error) {
	t.Helper()
	root := repoRoot(t)
	acceptedFile := filepath.Join(t.TempDir(), "accepted.txt")
	if err := os.WriteFile(acceptedFile, []byte(accepted), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", filepath.Join(root, "scripts", "api-diff.sh"), filepath.Join(root, released), revision)
	cmd.Env = append(os.Environ(), "ACCEPTED="+acceptedFile)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the gate did not finish: %v\n%s", ctx.Err(), out)
	}
	return string(out), err
}
