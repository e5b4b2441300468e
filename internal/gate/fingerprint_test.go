package gate_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"creativeapi/internal/problem"
)

// sha256Of is the fingerprint as the handlers computed it before the gate
// did: keys stored then must still match.
func sha256Of(target, body string) []byte {
	sum := sha256.Sum256([]byte(target + "\x00" + body))
	return sum[:]
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	upper := map[string]string{"organizationId": strings.ToUpper(org), "creativeId": strings.ToUpper(creative)}
	for _, tc := range []struct {
		name   string
		method string
		route  string
		params map[string]string
		want   []byte
	}{
		{"a deposit is its method, its path and its body", deposit.method, deposit.route, nil,
			sha256Of("POST /api/v1/me/balance/deposits", `{"a":1}`)},
		{"a path's UUIDs are written as the handler reads them", action.method, action.route, upper,
			sha256Of("POST /api/v1/organizations/"+org+"/creatives/"+creative+"/actions", `{"a":1}`)},
		{"a webhook endpoint's target is its organization's", http.MethodPost, "/api/v1/organizations/:organizationId/webhooks",
			map[string]string{"organizationId": org}, sha256Of("POST /api/v1/organizations/"+org+"/webhooks", `{"a":1}`)},
		{"a parameter that is no UUID has none", action.method, action.route,
			map[string]string{"organizationId": org, "creativeId": "x"}, nil},
		{"an operation without an Idempotency-Key has none", signIn.method, signIn.route, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := g.Operation(tc.method, tc.route).Fingerprint(tc.params, []byte(`{"a":1}`)); !bytes.Equal(got, tc.want) {
				t.Fatalf("fingerprint %x, want %x", got, tc.want)
			}
		})
	}
}

func TestReplays(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	// A body the schema refuses (action is required), as if a key stored
	// it before a stricter spec was deployed.
	const refused = `{"comment":"x"}`
	stored := g.Operation(action.method, action.route).Fingerprint(action.params, []byte(refused))

	t.Run("the stored request is not validated again", func(t *testing.T) {
		t.Parallel()
		req := request{to: action, body: "{ \"comment\": \"x\" }", stored: stored}
		_, body, fingerprint, err := req.checkFingerprint(t, g)
		if err != nil {
			t.Fatal(err)
		}
		if string(body) != refused || !bytes.Equal(fingerprint, stored) {
			t.Fatalf("body %s, fingerprint %x: want %s, %x", body, fingerprint, refused, stored)
		}
	})
	t.Run("another request under the key is validated", func(t *testing.T) {
		t.Parallel()
		_, _, err := request{to: action, body: refused, stored: anotherRequest}.check(t, g)
		refusedField(t, err, "action")
	})
	t.Run("a request without a fingerprint is validated, whatever is stored", func(t *testing.T) {
		t.Parallel()
		noUUID := routed{action.method, action.route, "/api/v1/organizations/" + org + "/creatives/x/actions",
			map[string]string{"organizationId": org, "creativeId": "x"}}
		_, _, err := request{to: noUUID, body: `{"action":"submit"}`, stored: []byte{}}.check(t, g)
		refusedField(t, err, "creativeId")
	})
	t.Run("a parameter sent twice is refused even so", func(t *testing.T) {
		t.Parallel()
		req := httptest.NewRequest(action.method, action.path, strings.NewReader(refused))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Add("Idempotency-Key", "k")
		req.Header.Add("Idempotency-Key", "k")
		_, _, err := g.Check(context.Background(), httptest.NewRecorder(), req, g.Operation(action.method, action.route), action.params, stored)
		refusedField(t, err, "Idempotency-Key")
	})
}

// refusedField fails t unless err is a 422 whose first failing field is name.
func refusedField(t *testing.T, err error, name string) {
	t.Helper()
	var perr *problem.Error
	if !errors.As(err, &perr) || perr.Status != http.StatusUnprocessableEntity || len(perr.FieldErrors) == 0 || perr.FieldErrors[0].Field != name {
		t.Fatalf("got %v, want a 422 naming %s", err, name)
	}
}
