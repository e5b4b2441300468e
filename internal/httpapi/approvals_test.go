package httpapi_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/approval"
	"creativeapi/internal/testenv"
)

// The approval record (openapi.yaml getCreativeApproval, getApprovalKeys;
// docs/review.md, "An approval anyone can verify").

func approvalURL(org, id uuid.UUID) string { return creativeURL(org, id) + "/approval" }

// approvedCreative takes a creative through the API from draft to
// approved: two image assets, a request for changes in the first round, a
// thread resolved and one left open, then the approval.
func (d *reviewDesk) approvedCreative(t *testing.T) (uuid.UUID, api.CreativeDetail) {
	t.Helper()
	c := d.create(t, "author", newCreativeBody("Signed off"))
	if r := d.patch("admin", c.Id, map[string]any{"reviewerId": d.users["reviewer"]}); r.Status != http.StatusOK {
		t.Fatalf("assign the reviewer: %d %s", r.Status, r.Body)
	}
	one, two := pngAsset("hero.png"), pngAsset("end-card.png")
	two["sha256"] = strings.Repeat("cd", 32)
	if r := d.addVersion("author", c.Id, versionBody(one, two)); r.Status != http.StatusCreated {
		t.Fatalf("version: %d %s", r.Status, r.Body)
	}
	act := func(who, action string, extra map[string]any) {
		t.Helper()
		in := map[string]any{"action": action, "expectedVersion": d.get(t, who, c.Id).Version}
		for k, v := range extra {
			in[k] = v
		}
		if r := d.act(who, c.Id, in); r.Status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", who, action, r.Status, r.Body)
		}
	}
	act("author", "submit", nil)
	resolved := d.mustComment(t, "reviewer", c.Id, map[string]any{"body": "Logo too small."})
	d.mustComment(t, "reviewer", c.Id, map[string]any{"body": "Consider a darker end card."})
	act("reviewer", "request_changes", map[string]any{"comment": "See the comments."})
	if r := d.clients["reviewer"].Do(http.MethodPatch, commentsURL(d.org, c.Id)+"/"+resolved.Id.String(), map[string]any{"resolved": true}); r.Status != http.StatusOK {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
	// The darker end card stays an open thread: submitted past it.
	act("author", "submit", map[string]any{"acknowledgeOpenThreads": true})
	act("reviewer", "approve", nil)
	return c.Id, d.get(t, "viewer", c.Id)
}

// jwksOf reads the server's key set as anyone does: without a session.
func jwksOf(t *testing.T, env *testenv.Env) jose.JSONWebKeySet {
	t.Helper()
	r := env.Client(t).Do(http.MethodGet, "/.well-known/jwks.json", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("jwks: %d %s", r.Status, r.Body)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(r.Body, &set); err != nil {
		t.Fatalf("jwks: %v\n%s", err, r.Body)
	}
	return set
}

// verifyByHand checks a compact EdDSA JWS without go-jose: the signing
// input is header.payload, the signature Ed25519 over it (RFC 8037), the
// key the JWKS entry whose kid the header names. It is the independent
// implementation the record is checked with.
func verifyByHand(jws string, keys []json.RawMessage) ([]byte, bool) {
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return nil, false
	}
	header, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	payload, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	var h struct{ Alg, Kid string }
	if err1 != nil || err2 != nil || err3 != nil || json.Unmarshal(header, &h) != nil || h.Alg != "EdDSA" {
		return nil, false
	}
	for _, raw := range keys {
		var k struct{ Kty, Crv, X, Kid string }
		if json.Unmarshal(raw, &k) != nil || k.Kid != h.Kid || k.Kty != "OKP" || k.Crv != "Ed25519" {
			continue
		}
		pub, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(pub) != ed25519.PublicKeySize {
			return nil, false
		}
		return payload, ed25519.Verify(pub, []byte(parts[0]+"."+parts[1]), sig)
	}
	return nil, false
}

func rawKeys(t *testing.T, env *testenv.Env) []json.RawMessage {
	t.Helper()
	var set struct{ Keys []json.RawMessage }
	if err := json.Unmarshal(env.Client(t).Do(http.MethodGet, "/.well-known/jwks.json", nil).Body, &set); err != nil {
		t.Fatal(err)
	}
	return set.Keys
}

func TestAnApprovalRecordIsSignedAndAnyoneVerifiesIt(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id, detail := d.approvedCreative(t)
	r := d.clients["viewer"].Do(http.MethodGet, approvalURL(d.org, id), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("approval: %d %s", r.Status, r.Body)
	}
	var got api.CreativeApproval
	r.JSON(t, &got)

	t.Run("the record states the approved version, its decisions and threads", func(t *testing.T) {
		rec := got.Record
		approved, _ := detail.ApprovedVersion.Get()
		if rec.CreativeId != id || rec.OrganizationId != d.org || rec.Number != detail.Number || rec.Title != "Signed off" ||
			rec.VersionNumber != approved.Number || len(rec.Assets) != 2 {
			t.Fatalf("record %+v", rec)
		}
		for i, a := range approved.Assets {
			if rec.Assets[i].Id != a.Id || rec.Assets[i].Sha256 != a.Sha256 || rec.Assets[i].FileName != a.FileName || rec.Assets[i].SizeBytes != a.SizeBytes {
				t.Errorf("asset %d: %+v, want %+v", i, rec.Assets[i], a)
			}
		}
		if len(rec.Decisions) != 1 || rec.Decisions[0].Decision != api.ApprovalDecisionDecisionApprove ||
			rec.Decisions[0].Reviewer.Id != d.users["reviewer"] || rec.Decisions[0].Reviewer.Kind != api.ApprovalPersonKindUser ||
			!rec.Decisions[0].At.Equal(rec.ApprovedAt) {
			t.Errorf("decisions of the approving round %+v; want the reviewer's approve alone", rec.Decisions)
		}
		if rec.ResolvedThreads != 1 || rec.OpenThreads != 1 {
			t.Errorf("threads resolved %d, open %d; want 1 and 1", rec.ResolvedThreads, rec.OpenThreads)
		}
	})
	t.Run("the JWS is the canonical record, verified by an independent implementation", func(t *testing.T) {
		payload, ok := verifyByHand(got.Jws, rawKeys(t, d.env))
		if !ok {
			t.Fatalf("the JWS does not verify by hand: %s", got.Jws)
		}
		record, _ := json.Marshal(got.Record)
		canonical, err := approval.Canonicalize(record)
		if err != nil || !bytes.Equal(payload, canonical) {
			t.Fatalf("payload %s\nis not the answer's record in canonical JSON %s", payload, canonical)
		}
		if _, err := approval.Verify(got.Jws, jwksOf(t, d.env)); err != nil {
			t.Fatalf("go-jose: %v", err)
		}
	})
	t.Run("one changed byte of the record or of an asset's hash fails", func(t *testing.T) {
		parts := strings.Split(got.Jws, ".")
		payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
		for name, changed := range map[string][]byte{
			"one byte of the title": bytes.Replace(payload, []byte("Signed off"), []byte("Signed of!"), 1),
			"one asset hash":        bytes.Replace(payload, []byte(strings.Repeat("ab", 32)), []byte("ba"+strings.Repeat("ab", 31)), 1),
		} {
			if bytes.Equal(changed, payload) {
				t.Fatalf("%s: nothing changed", name)
			}
			forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString(changed) + "." + parts[2]
			if _, ok := verifyByHand(forged, rawKeys(t, d.env)); ok {
				t.Errorf("%s: the forged record verifies by hand", name)
			}
			if _, err := approval.Verify(forged, jwksOf(t, d.env)); err == nil {
				t.Errorf("%s: the forged record verifies with go-jose", name)
			}
		}
	})
	t.Run("the same record signs to the same JWS", func(t *testing.T) {
		var again api.CreativeApproval
		d.clients["admin"].Do(http.MethodGet, approvalURL(d.org, id), nil).JSON(t, &again)
		if again.Jws != got.Jws {
			t.Fatalf("a second read signed another JWS")
		}
	})
	t.Run("a malformed creative id is 422", func(t *testing.T) {
		r := d.clients["viewer"].Do(http.MethodGet, creativesURL(d.org)+"/not-a-uuid/approval", nil)
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
	t.Run("a creative never approved and an outsider are 404", func(t *testing.T) {
		draft := d.create(t, "author", newCreativeBody("Not yet"))
		for who, creative := range map[string]uuid.UUID{"viewer": draft.Id, "outsider": id} {
			r := d.clients[who].Do(http.MethodGet, approvalURL(d.org, creative), nil)
			if r.Status != http.StatusNotFound || r.Problem(t).Code != "not_found" {
				t.Errorf("%s: %d %s", who, r.Status, r.Body)
			}
		}
	})
}

// TestARotatedKeyKeepsOldRecordsVerifiable: after the signing key changes
// and the old one is configured as previous, the JWKS lists both, an old
// JWS still verifies, and new records are signed with the new key's kid.
func TestARotatedKeyKeepsOldRecordsVerifiable(t *testing.T) {
	t.Parallel()
	oldPEM, _ := approval.GenerateKey()
	newPEM, _ := approval.GenerateKey()
	oldKeys, err := approval.ParseKeys(oldPEM, nil)
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := approval.ParseKeys(newPEM, oldPEM)
	if err != nil {
		t.Fatal(err)
	}
	d := newReviewDesk(t, testenv.Options{Approvals: oldKeys})
	id, _ := d.approvedCreative(t)
	var before api.CreativeApproval
	d.clients["viewer"].Do(http.MethodGet, approvalURL(d.org, id), nil).JSON(t, &before)

	after := testenv.NewOn(t, d.env.DB, testenv.Options{Approvals: rotated})
	set := jwksOf(t, after)
	if len(set.Keys) != 2 || set.Keys[1].KeyID != oldKeys.JWKS().Keys[0].KeyID {
		t.Fatalf("keys after the rotation: %+v", set.Keys)
	}
	if _, err := approval.Verify(before.Jws, set); err != nil {
		t.Fatalf("the record signed before the rotation: %v", err)
	}
	if _, ok := verifyByHand(before.Jws, rawKeys(t, after)); !ok {
		t.Fatal("the record signed before the rotation does not verify by hand")
	}
	var now api.CreativeApproval
	after.SessionFor(t, d.users["viewer"]).Do(http.MethodGet, approvalURL(d.org, id), nil).JSON(t, &now)
	if _, err := approval.Verify(now.Jws, set); err != nil || now.Jws == before.Jws {
		t.Fatalf("the record after the rotation: %v (same JWS: %v)", err, now.Jws == before.Jws)
	}
	oldOnly := oldKeys.JWKS()
	if _, err := approval.Verify(now.Jws, oldOnly); err == nil {
		t.Fatal("a record signed with the new key verifies with the old key alone")
	}
}
