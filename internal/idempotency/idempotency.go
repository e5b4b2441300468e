// Package idempotency makes the API's commands exactly-once under retries:
// the key, the command's effect and its stored answer commit in one
// transaction, so no crash can leave one without the other.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"creativeapi/gen/db"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/store"
)

// Response is a command's answer as sent, and as replayed byte for byte.
type Response struct {
	Status   int
	Body     []byte
	Location string
}

// Request identifies one command call.
type Request struct {
	UserID uuid.UUID
	// Key is the Idempotency-Key header as sent; "" runs without one.
	Key string
	// Fingerprint identifies the request (see Fingerprint).
	Fingerprint []byte
}

// Command runs a command's effect on q and returns its answer. A refusal is
// returned as a *problem.Error before the command's first write, so storing
// a 4xx never stores a partial effect alongside it.
type Command func(ctx context.Context, q *db.Queries) (Response, error)

// Runner runs commands under their idempotency keys.
type Runner struct {
	store   *store.Store
	ttl     time.Duration
	baseURL string
	// afterCommand, when set, runs after the command inside its transaction.
	afterCommand atomic.Pointer[func(ctx context.Context) error]
}

// SetAfterCommand installs a hook that runs after every command inside its
// transaction; an error aborts the transaction. Tests use it to simulate a
// crash between the effect and the commit.
func (r *Runner) SetAfterCommand(hook func(ctx context.Context) error) {
	r.afterCommand.Store(&hook)
}

// NewRunner returns a Runner keeping outcomes for ttl; baseURL is the
// {base_url} of the Problem bodies it stores.
func NewRunner(s *store.Store, ttl time.Duration, baseURL string) *Runner {
	return &Runner{store: s, ttl: ttl, baseURL: baseURL}
}

// retryAfterSeconds is the Retry-After of idempotency_key_in_use.
const retryAfterSeconds = 1

// Run executes cmd once per (user, key). A repeat of a finished request gets
// the stored answer (replayed true); a repeat while the first runs waits
// for it (bounded by the database's lock_timeout, then 409); a different
// request under the same key gets 422 idempotency_key_reused. 2xx and 4xx
// answers are stored, errors (5xx) are not.
//
// A replay costs one read outside any transaction. A first execution costs
// that read plus, in the command's transaction, the claim (sent with BEGIN)
// and the stored answer (sent with COMMIT): one round trip more than
// claiming first, but a replay then needs no transaction at all, which
// keeps it several times cheaper than a first execution.
func (r *Runner) Run(ctx context.Context, req Request, cmd Command) (Response, bool, error) {
	key := NormalizeKey(req.Key)
	if key != "" {
		row, err := r.store.Q.IdempotencyKeyGet(ctx, db.IdempotencyKeyGetParams{UserID: req.UserID, Key: key})
		switch err = store.Translate(err); {
		case err == nil:
			resp, err := storedAnswer(req, row.Fingerprint, row.StatusCode, row.ResponseBody, row.ResponseLocation)
			return resp, err == nil, err
		case !errors.Is(err, store.ErrNotFound):
			return Response{}, false, err
		}
	}
	var resp Response
	err := r.store.InTx(ctx, func(q *db.Queries) error {
		if key != "" {
			stored, claimed, err := r.claim(ctx, q, req, key)
			if err != nil {
				return err
			}
			if !claimed {
				return replayed{stored}
			}
		}
		var err error
		resp, err = cmd(ctx, q)
		var perr *problem.Error
		if errors.As(err, &perr) && perr.Status < 500 {
			resp = Response{Status: perr.Status, Body: problem.Marshal(r.baseURL, requestctx.TraceID(ctx), perr)}
		} else if err != nil {
			return err
		}
		if hook := r.afterCommand.Load(); hook != nil && *hook != nil {
			if err := (*hook)(ctx); err != nil {
				return err
			}
		}
		if key == "" {
			return nil
		}
		status := int32(resp.Status)
		var location *string
		if resp.Location != "" {
			location = &resp.Location
		}
		// Nothing reads the stored answer before the commit: it travels
		// with COMMIT.
		return q.IdempotencyKeySetResponse(store.WithNext(ctx), db.IdempotencyKeySetResponseParams{
			UserID: req.UserID, Key: key, StatusCode: &status, ResponseBody: resp.Body, ResponseLocation: location,
		})
	})
	var replay replayed
	if errors.As(err, &replay) {
		return replay.resp, true, nil
	}
	return resp, false, err
}

// replayed ends a transaction that found a stored answer instead of a claim.
type replayed struct{ resp Response }

func (replayed) Error() string { return "replayed" }

// claim takes key for this transaction (claimed true) or returns the answer
// stored under it. An expired answer is taken over; an answer committed
// while the claim waited for it is read with a fresh snapshot.
func (r *Runner) claim(ctx context.Context, q *db.Queries, req Request, key string) (Response, bool, error) {
	row, err := q.IdempotencyKeyClaimOrGet(ctx, db.IdempotencyKeyClaimOrGetParams{
		UserID: req.UserID, Key: key, Fingerprint: req.Fingerprint, TtlSeconds: int32(r.ttl / time.Second),
	})
	if err != nil {
		return Response{}, false, claimError(err)
	}
	switch {
	case row.Claimed:
		return Response{}, true, nil
	case row.Fingerprint == nil:
		// Committed by another request while the claim waited for it.
	case row.Expired:
		n, err := q.IdempotencyKeyClaim(ctx, db.IdempotencyKeyClaimParams{
			UserID: req.UserID, Key: key, Fingerprint: req.Fingerprint, TtlSeconds: int32(r.ttl / time.Second),
		})
		if err != nil {
			return Response{}, false, claimError(err)
		}
		if n == 1 {
			return Response{}, true, nil
		}
		// Another request took the expired key over first.
	default:
		resp, err := storedAnswer(req, row.Fingerprint, row.StatusCode, row.ResponseBody, row.ResponseLocation)
		return resp, false, err
	}
	stored, err := q.IdempotencyKeyGet(ctx, db.IdempotencyKeyGetParams{UserID: req.UserID, Key: key})
	if err != nil {
		if err = store.Translate(err); errors.Is(err, store.ErrNotFound) {
			return Response{}, false, errors.New("idempotency key neither claimed nor stored")
		}
		return Response{}, false, err
	}
	resp, err := storedAnswer(req, stored.Fingerprint, stored.StatusCode, stored.ResponseBody, stored.ResponseLocation)
	return resp, false, err
}

// storedAnswer is the answer stored under a key, or 422 when the key was
// used for a different request.
func storedAnswer(req Request, fingerprint []byte, status *int32, body []byte, location *string) (Response, error) {
	if !bytes.Equal(fingerprint, req.Fingerprint) {
		return Response{}, problem.New(http.StatusUnprocessableEntity, problem.IdempotencyKeyReused,
			"This Idempotency-Key was used for a different request. Use a new key for a new request.")
	}
	if status == nil {
		// Committed rows always carry their answer; a row without one is a bug.
		return Response{}, errors.New("idempotency key stored without a response")
	}
	resp := Response{Status: int(*status), Body: body}
	if location != nil {
		resp.Location = *location
	}
	return resp, nil
}

// claimError turns a lock wait that ran out into 409 idempotency_key_in_use.
func claimError(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.LockNotAvailable {
		return &problem.Error{
			Status: http.StatusConflict, Code: problem.IdempotencyKeyInUse, RetryAfter: retryAfterSeconds,
			Detail: "A request with this Idempotency-Key is still running. Retry with the same key shortly.",
		}
	}
	return err
}

// NormalizeKey strips the quotes of the structured-field string form, so
// "abc" (quoted) and abc are the same key. The spec's pattern has already
// checked the characters and the length.
func NormalizeKey(raw string) string {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		return raw[1 : len(raw)-1]
	}
	return raw
}

// Fingerprint identifies a request by its target (method and canonical
// path) and its body re-encoded canonically, so whitespace and field order
// do not make two equal requests differ.
func Fingerprint(target string, body any) []byte {
	b, err := json.Marshal(body)
	if err != nil {
		// Bodies are generated request types: marshalling cannot fail.
		panic(err)
	}
	h := sha256.New()
	h.Write([]byte(target))
	h.Write([]byte{0})
	h.Write(b)
	return h.Sum(nil)
}

// Purge deletes expired keys; safe to run on several replicas at once.
func Purge(ctx context.Context, s *store.Store, log *slog.Logger) error {
	n, err := s.Q.IdempotencyKeyDeleteExpired(ctx)
	if err != nil {
		return store.Translate(err)
	}
	if n > 0 {
		log.Info("idempotency keys purged", "count", n)
	}
	return nil
}
