// Package webhooks delivers an organization's creative events to its
// endpoints by the Standard Webhooks specification (docs/events.md): signed,
// at least once, retried for about three days, each attempt logged.
package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// secretPrefix marks a signing secret, as Standard Webhooks' libraries expect.
const secretPrefix = "whsec_"

// NewSecret makes a signing secret: whsec_ and the base64 of 24 random bytes.
func NewSecret() string {
	key := make([]byte, 24)
	_, _ = rand.Read(key) // crypto/rand.Read never fails
	return secretPrefix + base64.StdEncoding.EncodeToString(key)
}

// Sign is the webhook-signature header of one attempt: "v1," and the
// base64 HMAC-SHA256, keyed by the secret's bytes, of id.timestamp.body.
func Sign(secret, id string, at time.Time, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil || len(key) == 0 {
		return "", errors.New("webhooks: malformed signing secret")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(at.Unix(), 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}
