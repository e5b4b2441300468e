package share

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"strings"

	"github.com/google/uuid"
)

// Sealer seals a new share's token for each invitation email, so the job
// that sends the email can rebuild the link while nothing in the database
// holds the token itself (docs/shares.md, "Invitation emails"): AES-256-GCM
// under a key derived from the server's mail secret, with the share's id
// and the invited address as associated data, so a sealed token opens only
// for the invitation it was made for.
type Sealer struct{ aead cipher.AEAD }

// sealLabel separates the sealing key from the other uses of the secret
// (the unsubscribe tokens' HMAC key).
const sealLabel = "creativeapi share invitation seal v1"

// NewSealer derives the key from secret (UNSUBSCRIBE_SECRET, at least 32
// bytes when email is on). An empty secret is no Sealer (nil): with email
// off no invitation is sealed, and none is sent.
func NewSealer(secret string) (*Sealer, error) {
	if secret == "" {
		return nil, nil
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(sealLabel))
	block, err := aes.NewCipher(mac.Sum(nil))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

func sealData(share uuid.UUID, email string) []byte {
	return append(share[:], email...)
}

// Seal returns token sealed for the invitation of email to share: a
// random nonce followed by the ciphertext.
func (s *Sealer) Seal(share uuid.UUID, email, token string) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(token)+s.aead.Overhead())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24)
	return s.aead.Seal(nonce, nonce, []byte(token), sealData(share, email))
}

// ErrSealed is a sealed token that does not open: another invitation's,
// altered, or sealed under another secret.
var ErrSealed = errors.New("share: the sealed token does not open")

// Open returns the token Seal sealed for the invitation of email to share.
func (s *Sealer) Open(share uuid.UUID, email string, sealed []byte) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", ErrSealed
	}
	token, err := s.aead.Open(nil, sealed[:n], sealed[n:], sealData(share, email))
	if err != nil {
		return "", ErrSealed
	}
	return string(token), nil
}

// LinkTokens are the two tokens of an invitation's link: the share's and
// the invitation's own. They are sealed together, one string.
type LinkTokens struct{ Share, Invitation string }

// String joins the tokens with a space, which base64url never holds.
func (l LinkTokens) String() string {
	if l.Invitation == "" {
		return l.Share
	}
	return l.Share + " " + l.Invitation
}

// ParseLinkTokens reads what String wrote; a seal made before
// invitations had tokens holds the share's token alone.
func ParseLinkTokens(s string) LinkTokens {
	share, invitation, _ := strings.Cut(s, " ")
	return LinkTokens{Share: share, Invitation: invitation}
}

// Path is the link's path and fragment under APP_URL:
// /share/{token}#invitation={invitation}. The fragment never reaches a
// server, so the invitation's token stays out of every access log.
func (l LinkTokens) Path() string {
	if l.Invitation == "" {
		return "/share/" + l.Share
	}
	return "/share/" + l.Share + "#invitation=" + l.Invitation
}
