package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/crypto/argon2"
)

// PasswordParams are argon2id's cost parameters; they are stored in each
// hash (PHC string format), so raising them affects only new hashes.
type PasswordParams struct {
	Memory  uint32 // KiB
	Time    uint32
	Threads uint8
}

// DefaultPasswordParams are the least memory of OWASP's argon2id settings,
// which it rates equally strong (7 MiB and 5 passes, against 19 MiB and 2):
// a check holds its memory while it runs, so this keeps a sign-in from
// raising the server's memory by more than the rest of a request's life.
// Hashes made with other settings still verify (each names its own).
var DefaultPasswordParams = PasswordParams{Memory: 7 * 1024, Time: 5, Threads: 1}

// passwordWork bounds the argon2id runs in flight to the CPUs: they only
// compute, so more at once would finish no sooner and a burst of sign-ins
// would hold a block of memory each.
var passwordWork = make(chan struct{}, runtime.GOMAXPROCS(0))

// idKey is argon2.IDKey, run when a CPU is free for it.
func idKey(password, salt []byte, p PasswordParams, n uint32) []byte {
	passwordWork <- struct{}{}
	defer func() { <-passwordWork }()
	return argon2.IDKey(password, salt, p.Time, p.Memory, p.Threads, n)
}

const (
	saltLen = 16
	keyLen  = 32
)

// HashPassword returns the argon2id PHC string of password.
func HashPassword(password string, p PasswordParams) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := idKey([]byte(password), salt, p, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

var errBadHash = errors.New("not an argon2id hash")

// VerifyPassword reports whether password matches encoded, comparing in
// constant time.
func VerifyPassword(encoded, password string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var p PasswordParams
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return false, errBadHash
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, errBadHash
	}
	got := idKey([]byte(password), salt, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
