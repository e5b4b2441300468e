package email

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/google/uuid"
)

// KindDigest is the unsubscribe kind of the daily digest: it turns all
// email off.
const KindDigest = "digest"

// Kinds are the notification kinds a person may switch off
// (docs/email.md).
var Kinds = []string{"mention", "review_requested", "decision", "due", "deposit"}

// Tokens signs and reads one-click unsubscribe tokens: a user id and a
// kind, with an HMAC-SHA256 under the server's secret, so nobody can make
// one for another person or another kind.
type Tokens struct{ key []byte }

// NewTokens uses secret (UNSUBSCRIBE_SECRET) as the key.
func NewTokens(secret string) Tokens { return Tokens{key: []byte(secret)} }

var enc = base64.RawURLEncoding

// Sign returns the token of user and kind.
func (t Tokens) Sign(user uuid.UUID, kind string) string {
	payload := user.String() + "." + kind
	return enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(t.mac(payload))
}

func (t Tokens) mac(payload string) []byte {
	h := hmac.New(sha256.New, t.key)
	h.Write([]byte("unsubscribe:" + payload))
	return h.Sum(nil)
}

// ErrBadToken is any token this server did not sign.
var ErrBadToken = errors.New("email: not a valid unsubscribe token")

// Verify returns the user and kind a token names.
// Without a secret (email off) no token is valid: one signed with the
// empty key would be anyone's to make.
func (t Tokens) Verify(token string) (uuid.UUID, string, error) {
	p, m, ok := strings.Cut(token, ".")
	if !ok || len(t.key) == 0 {
		return uuid.Nil, "", ErrBadToken
	}
	payload, err := enc.DecodeString(p)
	if err != nil {
		return uuid.Nil, "", ErrBadToken
	}
	mac, err := enc.DecodeString(m)
	if err != nil || !hmac.Equal(mac, t.mac(string(payload))) {
		return uuid.Nil, "", ErrBadToken
	}
	id, kind, ok := strings.Cut(string(payload), ".")
	user, err := uuid.Parse(id)
	if !ok || err != nil {
		return uuid.Nil, "", ErrBadToken
	}
	return user, kind, nil
}
