// Package approval signs approval records so that anyone can verify them
// without the API (docs/review.md, "An approval anyone can verify"): the
// record in RFC 8785 canonical JSON (Canonicalize), signed as a compact
// JWS with Ed25519 by go-jose, the public keys published as a JWKS.
package approval

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-jose/go-jose/v4"
)

// Keys signs with the current key and publishes it with the earlier ones.
type Keys struct {
	signer jose.Signer
	set    jose.JSONWebKeySet
}

// ParseKeys reads the current Ed25519 private key (PEM, PKCS #8) and the
// earlier ones (PEM blocks one after another, public or private: only
// their public halves are kept), whose records must stay verifiable.
func ParseKeys(current, previous []byte) (*Keys, error) {
	keys, err := privateKeys(current)
	if err != nil {
		return nil, fmt.Errorf("APPROVAL_SIGNING_KEY: %w", err)
	}
	if len(keys) != 1 {
		return nil, fmt.Errorf("APPROVAL_SIGNING_KEY: want one Ed25519 private key (PEM), found %d", len(keys))
	}
	earlier, err := publicKeys(previous)
	if err != nil {
		return nil, fmt.Errorf("APPROVAL_SIGNING_KEY_PREVIOUS: %w", err)
	}
	k := &Keys{}
	for i, pub := range append([]ed25519.PublicKey{keys[0].Public().(ed25519.PublicKey)}, earlier...) {
		jwk := jose.JSONWebKey{Key: pub, Algorithm: string(jose.EdDSA), Use: "sig"}
		thumb, err := jwk.Thumbprint(crypto.SHA256)
		if err != nil {
			return nil, err
		}
		jwk.KeyID = base64.RawURLEncoding.EncodeToString(thumb)
		if i > 0 && jwk.KeyID == k.set.Keys[0].KeyID {
			continue // the current key listed as previous too
		}
		k.set.Keys = append(k.set.Keys, jwk)
	}
	opts := (&jose.SignerOptions{}).WithHeader("kid", k.set.Keys[0].KeyID)
	if k.signer, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: keys[0]}, opts); err != nil {
		return nil, err
	}
	return k, nil
}

// Sign returns record as canonical JSON and the compact JWS over it.
func (k *Keys) Sign(record any) (payload []byte, jws string, err error) {
	text, err := json.Marshal(record)
	if err != nil {
		return nil, "", err
	}
	if payload, err = Canonicalize(text); err != nil {
		return nil, "", err
	}
	sig, err := k.signer.Sign(payload)
	if err != nil {
		return nil, "", err
	}
	jws, err = sig.CompactSerialize()
	return payload, jws, err
}

// JWKS is the public key set, the current key first.
func (k *Keys) JWKS() jose.JSONWebKeySet { return k.set }

// Verify checks jws against the keys of set (the one its kid names) and
// returns its payload, which must be canonical JSON: a record that was
// re-encoded after signing is not the record that was signed.
func Verify(jws string, set jose.JSONWebKeySet) ([]byte, error) {
	sig, err := jose.ParseSignedCompact(jws, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		return nil, fmt.Errorf("not a compact EdDSA JWS: %w", err)
	}
	if len(sig.Signatures) != 1 {
		return nil, errors.New("want one signature")
	}
	kid := sig.Signatures[0].Header.KeyID
	keys := set.Key(kid)
	if len(keys) == 0 {
		return nil, fmt.Errorf("no key %q in the key set", kid)
	}
	payload, err := sig.Verify(keys[0].Key)
	if err != nil {
		return nil, fmt.Errorf("the signature does not verify with key %q: %w", kid, err)
	}
	canonical, err := Canonicalize(payload)
	if err != nil || !bytes.Equal(canonical, payload) {
		return nil, errors.New("the payload is not canonical JSON")
	}
	return payload, nil
}

// GenerateKey returns a new Ed25519 private key as PEM (PKCS #8).
func GenerateKey() ([]byte, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// DevKey is the development server's key at path, generated there (mode
// 0600) the first time, so records signed by make run stay verifiable
// across restarts.
func DevKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return b, err
	}
	if b, err = GenerateKey(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return b, os.WriteFile(path, b, 0o600)
}

func privateKeys(b []byte) ([]ed25519.PrivateKey, error) {
	var keys []ed25519.PrivateKey
	for block, rest := pem.Decode(b); block != nil; block, rest = pem.Decode(rest) {
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("a PEM block of type %q is no PKCS #8 private key: %w", block.Type, err)
		}
		ed, ok := k.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("a %T, want an Ed25519 key", k)
		}
		keys = append(keys, ed)
	}
	return keys, nil
}

func publicKeys(b []byte) ([]ed25519.PublicKey, error) {
	var keys []ed25519.PublicKey
	for block, rest := pem.Decode(b); block != nil; block, rest = pem.Decode(rest) {
		var k any
		var err error
		if block.Type == "PUBLIC KEY" {
			k, err = x509.ParsePKIXPublicKey(block.Bytes)
		} else {
			k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		}
		if err != nil {
			return nil, fmt.Errorf("a PEM block of type %q: %w", block.Type, err)
		}
		switch key := k.(type) {
		case ed25519.PublicKey:
			keys = append(keys, key)
		case ed25519.PrivateKey:
			keys = append(keys, key.Public().(ed25519.PublicKey))
		default:
			return nil, fmt.Errorf("a %T, want an Ed25519 key", k)
		}
	}
	if len(keys) == 0 && len(bytes.TrimSpace(b)) > 0 {
		return nil, errors.New("no PEM block")
	}
	return keys, nil
}
