package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"creativeapi/gen/api"
	"creativeapi/internal/approval"
)

const approvalUsage = `usage:
  creativeapi approval verify --jwks URL|FILE RECORD [FILE...]

verify checks an approval record (docs/review.md, "An approval anyone can
verify") without the API's database or a session:
  --jwks   the signer's public keys: the URL of /.well-known/jwks.json, or
           a file holding that key set
  RECORD   a file holding the compact JWS, or the whole answer of
           GET .../approval ({"record": ..., "jws": ...})
  FILE     files in hand: each is named by the asset whose SHA-256 it has
It prints what the record states, then one line per file, and fails
(exit 1) when the signature does not verify or a file is no asset of the
approved version.
`

var errApprovalUnverified = errors.New("approval: not verified")

func cmdApproval(ctx context.Context, e env, args []string) error {
	_, rest, err := subcommand("approval", args, "verify")
	if err != nil {
		return err
	}
	fs := newFlags("approval verify")
	jwks := fs.String("jwks", "", "the signer's key set: a URL or a file")
	if err := fs.Parse(rest); err != nil {
		return usagef("approval verify: %v (see creativeapi approval --help)", err)
	}
	if *jwks == "" || fs.NArg() == 0 {
		return usagef("approval verify: --jwks and a RECORD are required (see creativeapi approval --help)")
	}
	set, err := readKeySet(ctx, *jwks)
	if err != nil {
		return err
	}
	jws, err := readJWS(fs.Arg(0))
	if err != nil {
		return err
	}
	payload, err := approval.Verify(jws, set)
	if err != nil {
		fmt.Fprintf(e.stdout, "signature: NOT VERIFIED (%v)\n", err)
		return errApprovalUnverified
	}
	var rec api.ApprovalRecord
	if err := json.Unmarshal(payload, &rec); err != nil {
		return fmt.Errorf("approval: the signed payload is no approval record: %w", err)
	}
	fmt.Fprintf(e.stdout, "signature: verified\n%s %q version %d approved %s (%d resolved, %d open threads)\n",
		rec.Number, rec.Title, rec.VersionNumber, rec.ApprovedAt.Format(time.RFC3339), rec.ResolvedThreads, rec.OpenThreads)
	for _, d := range rec.Decisions {
		fmt.Fprintf(e.stdout, "  %s by %s (%s) at %s\n", d.Decision, d.Reviewer.Name, d.Reviewer.Id, d.At.Format(time.RFC3339))
	}
	failed := false
	for _, name := range fs.Args()[1:] {
		sum, err := fileSHA256(name)
		if err != nil {
			return err
		}
		asset := assetBySHA256(rec.Assets, sum)
		if asset == nil {
			failed = true
			fmt.Fprintf(e.stdout, "%s: NOT an asset of the approved version (sha256 %s)\n", name, sum)
			continue
		}
		fmt.Fprintf(e.stdout, "%s: asset %s %q (sha256 %s)\n", name, asset.Id, asset.FileName, sum)
	}
	if failed {
		return errApprovalUnverified
	}
	return nil
}

func assetBySHA256(assets []api.ApprovalAsset, sum string) *api.ApprovalAsset {
	for i := range assets {
		if assets[i].Sha256 == sum {
			return &assets[i]
		}
	}
	return nil
}

// readKeySet reads a JWKS from a URL or a file.
func readKeySet(ctx context.Context, from string) (jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	var body []byte
	if strings.HasPrefix(from, "http://") || strings.HasPrefix(from, "https://") {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, from, nil)
		if err != nil {
			return set, err
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return set, fmt.Errorf("approval: read the key set: %w", err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return set, fmt.Errorf("approval: read the key set: %s answered %s", from, res.Status)
		}
		if body, err = io.ReadAll(io.LimitReader(res.Body, 1<<20)); err != nil {
			return set, err
		}
	} else {
		var err error
		if body, err = os.ReadFile(from); err != nil {
			return set, fmt.Errorf("approval: %w", err)
		}
	}
	if err := json.Unmarshal(body, &set); err != nil || len(set.Keys) == 0 {
		return set, fmt.Errorf("approval: %s holds no JSON Web Key Set (%v)", from, err)
	}
	return set, nil
}

// readJWS reads a compact JWS from a file holding it, or holding the
// answer of GET .../approval.
func readJWS(name string) (string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("approval: %w", err)
	}
	text := strings.TrimSpace(string(b))
	if strings.HasPrefix(text, "{") {
		var answer struct{ Jws string }
		if err := json.Unmarshal(b, &answer); err != nil || answer.Jws == "" {
			return "", fmt.Errorf("approval: %s is JSON without a jws", name)
		}
		return answer.Jws, nil
	}
	return text, nil
}

func fileSHA256(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", fmt.Errorf("approval: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("approval: read %s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
