package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"hash/crc32"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/store"
)

// Personal access tokens (docs/tokens.md): TokenPrefix, 43 base62
// characters of 32 random bytes, then 6 base62 characters of the CRC32 of
// those 43. The fixed prefix and the checksum let a secret scanner
// recognise a token, and let the server refuse a mistyped one without a
// database read.
const (
	TokenPrefix     = "cat_"
	tokenRandomLen  = 43
	tokenCheckLen   = 6
	tokenLen        = len(TokenPrefix) + tokenRandomLen + tokenCheckLen
	DefaultTokenTTL = 90 * 24 * time.Hour
	MaxTokenTTL     = 365 * 24 * time.Hour
	// MaxActiveTokens bounds a user's tokens that still work: each is a
	// principal with a rate budget of its own (docs/tokens.md).
	MaxActiveTokens = 50
)

var (
	// ErrTooManyTokens: the user already holds MaxActiveTokens tokens that
	// still work.
	ErrTooManyTokens = errors.New("auth: too many access tokens")
	// ErrInvalidToken: the bearer token is malformed, unknown, expired or
	// revoked (RFC 6750 invalid_token).
	ErrInvalidToken = errors.New("auth: invalid bearer token")
	// ErrAmbiguousCredentials: a request sent both a session cookie and a
	// bearer token.
	ErrAmbiguousCredentials = errors.New("auth: both a session cookie and a bearer token")
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// encodeBase62 writes n in base62, left-padded with '0' to width.
func encodeBase62(n *big.Int, width int) string {
	out := make([]byte, width)
	for i := range out {
		out[i] = '0'
	}
	v := new(big.Int).Set(n)
	mod := new(big.Int)
	b := big.NewInt(62)
	for i := width - 1; i >= 0 && v.Sign() > 0; i-- {
		v.DivMod(v, b, mod)
		out[i] = base62[mod.Int64()]
	}
	return string(out)
}

func tokenChecksum(random string) string {
	return encodeBase62(new(big.Int).SetUint64(uint64(crc32.ChecksumIEEE([]byte(random)))), tokenCheckLen)
}

// NewAccessToken returns a fresh personal access token.
func NewAccessToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	random := encodeBase62(new(big.Int).SetBytes(b[:]), tokenRandomLen)
	return TokenPrefix + random + tokenChecksum(random)
}

// WellFormedAccessToken reports whether s has a token's shape and a
// matching checksum.
func WellFormedAccessToken(s string) bool {
	if len(s) != tokenLen || !strings.HasPrefix(s, TokenPrefix) {
		return false
	}
	random := s[len(TokenPrefix) : len(TokenPrefix)+tokenRandomLen]
	for i := 0; i < len(random); i++ {
		if strings.IndexByte(base62, random[i]) < 0 {
			return false
		}
	}
	return s[len(TokenPrefix)+tokenRandomLen:] == tokenChecksum(random)
}

// bearerToken is the token of an Authorization: Bearer header; ok false
// when the request sends no Authorization header.
func bearerToken(r *http.Request) (token string, ok bool) {
	h, ok := r.Header["Authorization"]
	if !ok {
		return "", false
	}
	if len(h) != 1 {
		return "", true
	}
	scheme, token, _ := strings.Cut(h[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	return strings.TrimLeft(token, " "), true
}

// authenticateBearer finds the live token of a bearer request, as
// Authenticate finds a session (and the answer stored under
// idempotencyKey in the same statement). It writes lastUsedAt at most once
// a minute per token: the row read says when it was last written.
func (s *Service) authenticateBearer(ctx context.Context, token, idempotencyKey string) (requestctx.Caller, *idempotency.Stored, error) {
	if !WellFormedAccessToken(token) {
		return requestctx.Caller{}, nil, ErrInvalidToken
	}
	row, err := s.store.Q.AccessTokenGet(ctx, db.AccessTokenGetParams{TokenHash: HashToken(token), IdempotencyKey: idempotencyKey})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return requestctx.Caller{}, nil, ErrInvalidToken
		}
		return requestctx.Caller{}, nil, err
	}
	if row.LastUsedAt == nil || time.Since(*row.LastUsedAt) > touchEvery {
		if err := s.store.Q.AccessTokenTouch(ctx, row.ID); err != nil {
			// The token is valid; a failed touch only leaves lastUsedAt older.
			s.log.WarnContext(ctx, "token touch failed", "error", err, "trace_id", requestctx.TraceID(ctx))
		}
	}
	var stored *idempotency.Stored
	if row.StoredFingerprint != nil {
		stored = &idempotency.Stored{
			Fingerprint: row.StoredFingerprint, StatusCode: row.StoredStatusCode,
			Body: row.StoredResponseBody, Location: row.StoredResponseLocation,
		}
	}
	return requestctx.Caller{
		UserID: row.UserID, TokenID: row.ID, Scopes: strings.Join(row.Scopes, " "), Email: row.Email, Name: row.Name, Operator: row.Operator,
	}, stored, nil
}

// TokenGrant is what a new token may do and until when.
type TokenGrant struct {
	Name      string
	Scopes    []string
	ExpiresAt time.Time
}

// CreateAccessToken stores a new token of user (its hash only) and
// returns its row and the secret, which is never stored.
func (s *Service) CreateAccessToken(ctx context.Context, user uuid.UUID, g TokenGrant) (db.AccessTokenCreateRow, string, error) {
	token := NewAccessToken()
	var row db.AccessTokenCreateRow
	err := s.store.InTx(ctx, func(q store.Tx) error {
		if err := q.AccessTokenOwnerLock(ctx, user); err != nil {
			return err
		}
		var err error
		row, err = q.AccessTokenCreate(ctx, db.AccessTokenCreateParams{
			UserID: user, Name: g.Name, Scopes: g.Scopes, TokenHash: HashToken(token), ExpiresAt: g.ExpiresAt,
			MaxActive: MaxActiveTokens,
		})
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return db.AccessTokenCreateRow{}, "", ErrTooManyTokens
	}
	return row, token, err
}

// TokenPosition is where a page of tokens ends: the last token's creation
// time and id.
type TokenPosition struct {
	At time.Time
	ID uuid.UUID
}

// AccessTokens is a page of at most limit of user's live tokens, newest
// first, after the position after (nil: from the newest), and the position
// of the next page (nil on the last).
func (s *Service) AccessTokens(ctx context.Context, user uuid.UUID, after *TokenPosition, limit int) ([]db.AccessTokenPageRow, *TokenPosition, error) {
	params := db.AccessTokenPageParams{UserID: user, RowLimit: int32(limit) + 1}
	if after != nil {
		params.CursorCreatedAt, params.CursorID = &after.At, &after.ID
	}
	rows, err := s.store.Q.AccessTokenPage(ctx, params)
	if err != nil || len(rows) <= limit {
		return rows, nil, err
	}
	rows = rows[:limit]
	last := rows[limit-1]
	return rows, &TokenPosition{At: last.CreatedAt, ID: last.ID}, nil
}

// RevokeAccessToken revokes user's token id: store.ErrNotFound when user
// has no such live token.
func (s *Service) RevokeAccessToken(ctx context.Context, user, id uuid.UUID) error {
	n, err := s.store.Q.AccessTokenRevoke(ctx, db.AccessTokenRevokeParams{ID: id, UserID: user})
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}
