package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/testenv"
)

// TestApprovalVerifyChecksTheSignatureAndNamesEachFile: `approval verify`
// reads the key set from a server's /.well-known/jwks.json (or a file),
// verifies a record, names the asset of each file in hand by its SHA-256,
// and fails (exit 1) on a file that is no asset or a forged record.
func TestApprovalVerifyChecksTheSignatureAndNamesEachFile(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	hero, other := write("hero.png", []byte("the approved hero image")), write("other.png", []byte("something else"))
	sum := sha256.Sum256([]byte("the approved hero image"))
	rec := api.ApprovalRecord{
		CreativeId: uuid.New(), OrganizationId: uuid.New(), Number: "CR-000042", Title: "Hero", VersionNumber: 2,
		Assets:    []api.ApprovalAsset{{Id: uuid.New(), FileName: "hero.png", MimeType: "image/png", SizeBytes: 23, Sha256: hex.EncodeToString(sum[:])}},
		Decisions: []api.ApprovalDecision{}, ApprovedAt: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC),
	}
	_, jws, err := env.Approvals.Sign(rec)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := json.Marshal(api.CreativeApproval{Record: rec, Jws: jws})
	record := write("approval.json", answer)
	keys, _ := json.Marshal(env.Approvals.JWKS())
	keyFile := write("jwks.json", keys)
	verify := func(args ...string) (string, error) {
		var out, errw bytes.Buffer
		err := run(context.Background(), append([]string{"approval", "verify"}, args...), envOf(nil), strings.NewReader(""), &out, &errw)
		return out.String(), err
	}

	for _, tc := range []struct {
		rule string
		args []string
		want []string
		code int
	}{
		{"a record and its file verify against the server's keys", []string{"--jwks", env.Server.URL + "/.well-known/jwks.json", record, hero},
			[]string{"signature: verified", `CR-000042 "Hero" version 2`, hero + ": asset " + rec.Assets[0].Id.String()}, 0},
		{"a key set in a file and a bare JWS do too", []string{"--jwks", keyFile, write("record.jws", []byte(jws+"\n")), hero},
			[]string{"signature: verified"}, 0},
		{"a file that is no asset fails", []string{"--jwks", keyFile, record, hero, other},
			[]string{other + ": NOT an asset"}, 1},
		{"a forged record fails", []string{"--jwks", keyFile, write("forged.jws", []byte(forge(t, jws)))},
			[]string{"signature: NOT VERIFIED"}, 1},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			out, err := verify(tc.args...)
			if exitCode(err) != tc.code {
				t.Fatalf("exit %d (%v), want %d:\n%s", exitCode(err), err, tc.code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// forge changes one byte of a JWS's payload, keeping its signature.
func forge(t *testing.T, jws string) string {
	t.Helper()
	parts := strings.Split(jws, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	payload = bytes.Replace(payload, []byte("Hero"), []byte("Herp"), 1)
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + parts[2]
}
