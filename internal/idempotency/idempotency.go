// Package idempotency makes the API's commands exactly-once under retries:
// the key, the command's effect and its stored answer commit in one
// transaction, so no crash can leave one without the other.
package idempotency

import (
	"bytes"
	"context"
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

// JSON is the answer of a command that answers v, as JSON, with status
// (and, for a creation, the new resource's Location).
func JSON(status int, v any, location string) (Response, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return Response{}, err
	}
	return Response{Status: status, Body: body, Location: location}, nil
}

// Request identifies one command call.
type Request struct {
	UserID uuid.UUID
	// Key is the Idempotency-Key header as sent; "" runs without one.
	Key string
	// Fingerprint identifies the request: the gate computes it from the
	// method, the path and the body as it checked them (internal/gate).
	Fingerprint []byte
	// Prefetched, when set, is what an earlier read found under the key
	// (the session lookup reads it in the same statement), so Run spends no
	// round trip of its own on it.
	Prefetched *Prefetched
	// MayReplay, when set, refuses a caller who may no longer run the
	// command (not a member any more, or a role that may not): it runs
	// before a stored success is replayed, so a replay goes only to
	// someone the command itself would not refuse for who they are. Its
	// error is the answer, in the command's refusal order (404, then 403).
	// It reads outside the command's transaction.
	MayReplay func(ctx context.Context) error
}

// Prefetched is the live answer stored under UserID's Key as a read found
// it; Stored nil: there was none.
type Prefetched struct {
	UserID uuid.UUID
	Key    string
	Stored *Stored
}

// Command runs a command's effect on q and returns its answer. A refusal is
// returned as a *problem.Error before the command's first write, so storing
// a 4xx never stores a partial effect alongside it.
type Command func(ctx context.Context, q store.Tx) (Response, error)

// Runner runs commands under their idempotency keys.
type Runner struct {
	store   *store.Store
	ttl     time.Duration
	baseURL string
	// afterCommand, when set, runs after the command inside its transaction.
	afterCommand atomic.Pointer[func(ctx context.Context) error]
	// OnOutcome, when set, sees what Run did with each keyed command (for
	// metrics). Set it before the first Run.
	OnOutcome func(Outcome)
}

// Outcome is what Run did with a command sent with a key.
type Outcome string

// Outcomes of keyed commands; a command that failed (5xx) has none.
const (
	// Executed: the command ran and its answer was stored.
	Executed Outcome = "executed"
	// Replayed: the answer stored under the key was sent again.
	Replayed Outcome = "replayed"
	// KeyReused: the key was used for a different request (422).
	KeyReused Outcome = "key_reused"
	// KeyInUse: the key's first request was still running (409).
	KeyInUse Outcome = "key_in_use"
)

// outcome is what a Run with a key that answered (replayed, err) did; ok
// is false for a failure.
func outcome(replayed bool, err error) (o Outcome, ok bool) {
	var perr *problem.Error
	switch {
	case replayed:
		return Replayed, true
	case err == nil:
		return Executed, true
	case errors.As(err, &perr) && perr.Code == problem.IdempotencyKeyReused:
		return KeyReused, true
	case errors.As(err, &perr) && perr.Code == problem.IdempotencyKeyInUse:
		return KeyInUse, true
	}
	return "", false
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

// Stored is an answer stored under a key, as read before a command.
type Stored struct {
	Fingerprint []byte
	StatusCode  *int32
	Body        []byte
	Location    *string
}

// Run executes cmd once per (user, key). A repeat of a finished request gets
// the stored answer (replayed true); a repeat while the first runs waits
// for it (bounded by the database's lock_timeout, then 409); a different
// request under the same key gets 422 idempotency_key_reused. What is
// stored is decided by Stores.
//
// A replay costs one read outside any transaction, none when the session
// lookup brought the answer along (Request.Prefetched). A first execution
// sends its claim with BEGIN and the command's first statement, and the
// stored answer with COMMIT: keys cost it no round trip in the
// transaction. Only when the claim finds the key taken (a repeat committed
// since the read, or an expired key not yet purged) does the command run
// again, after a claim that reads what is stored.
func (r *Runner) Run(ctx context.Context, req Request, cmd Command) (resp Response, replayed bool, err error) {
	key := NormalizeKey(req.Key)
	if key != "" && r.OnOutcome != nil {
		defer func() {
			if o, ok := outcome(replayed, err); ok {
				r.OnOutcome(o)
			}
		}()
	}
	if key != "" {
		stored, err := r.lookup(ctx, req, key)
		if err != nil {
			return Response{}, false, err
		}
		if stored != nil {
			resp, err := storedAnswer(req, *stored)
			if err == nil {
				err = r.mayReplay(ctx, req, resp)
			}
			if err != nil {
				return Response{}, false, err
			}
			return resp, true, nil
		}
	}
	resp, replayed, err = r.run(ctx, req, key, cmd, r.claimAhead)
	if errors.Is(err, errKeyTaken) {
		resp, replayed, err = r.run(ctx, req, key, cmd, r.claim)
	}
	return resp, replayed, err
}

// lookup returns the live answer stored under user's key, nil when none.
func (r *Runner) lookup(ctx context.Context, req Request, key string) (*Stored, error) {
	if p := req.Prefetched; p != nil && p.UserID == req.UserID && p.Key == key {
		return p.Stored, nil
	}
	row, err := r.store.Q.IdempotencyKeyGet(ctx, db.IdempotencyKeyGetParams{UserID: req.UserID, Key: key})
	switch {
	case err == nil:
		stored := storedRow(row)
		return &stored, nil
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	default:
		return nil, err
	}
}

// claimFunc claims key in the transaction q (claimed true), or returns the
// answer stored under it.
type claimFunc func(ctx context.Context, q store.Tx, req Request, key string) (stored Response, claimed bool, err error)

// run is one transaction of Run: the claim, the command, the stored answer.
func (r *Runner) run(ctx context.Context, req Request, key string, cmd Command, claim claimFunc) (Response, bool, error) {
	var resp Response
	err := r.store.InTx(ctx, func(q store.Tx) error {
		if key != "" {
			stored, claimed, err := claim(ctx, q, req, key)
			if err != nil {
				return err
			}
			if !claimed {
				return replayed{stored}
			}
		}
		var err error
		resp, err = cmd(ctx, q)
		if err != nil {
			// errors.As's targets live on the heap: declared here, only a
			// failed command pays for them.
			var perr *problem.Error
			var failed claimFailed
			switch {
			case errors.As(err, &failed):
				// The claim sent ahead failed: the transaction is aborted.
				return failed
			case errors.As(err, &perr) && Stores(perr.Status):
				resp = Response{Status: perr.Status, Body: problem.Marshal(r.baseURL, requestctx.TraceID(ctx), perr)}
			default:
				// Not stored: the transaction rolls back with the claim, so the
				// key is free for a retry.
				return err
			}
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
		return q.Next().IdempotencyKeySetResponse(ctx, db.IdempotencyKeySetResponseParams{
			UserID: req.UserID, Key: key, StatusCode: &status, ResponseBody: resp.Body, ResponseLocation: location,
		})
	})
	if err == nil {
		return resp, false, nil
	}
	var replay replayed
	var failed claimFailed
	switch {
	case errors.As(err, &replay):
		if err := r.mayReplay(ctx, req, replay.resp); err != nil {
			return Response{}, false, err
		}
		return replay.resp, true, nil
	case errors.As(err, &failed):
		return Response{}, false, failed.err
	}
	return resp, false, err
}

// mayReplay runs req's MayReplay, if any, outside the command's
// transaction, before stored, an answer of success, is replayed. A stored
// refusal (403, 404, 422) comes back as it is: it is final, and tells the
// caller nothing they were not told the first time.
func (r *Runner) mayReplay(ctx context.Context, req Request, stored Response) error {
	if req.MayReplay == nil || stored.Status >= 400 {
		return nil
	}
	return req.MayReplay(ctx)
}

// Stores reports whether a command's refusal with status is stored under
// its key, to be replayed: a 4xx is final (the same request would always
// get it), except 409, a conflict with the current state of what the
// command acts on (a version, a state, a limit of open deposits), which
// changes, and 429, a ceiling that passes (email_quota_exceeded, with its
// Retry-After); a retry is then judged afresh. A 5xx is never stored. (A
// command's success is always stored.)
func Stores(status int) bool {
	return status >= 400 && status < 500 && status != http.StatusConflict && status != http.StatusTooManyRequests
}

// replayed ends a transaction that found a stored answer instead of a claim.
type replayed struct{ resp Response }

func (replayed) Error() string { return "replayed" }

// errKeyTaken: the claim sent ahead found the key taken.
var errKeyTaken = errors.New("idempotency key taken since it was read")

// claimFailed carries the failure of a claim sent ahead through the
// command that sent it: it does not unwrap, so the command's own error
// handling passes it on untouched, and run unpacks it.
type claimFailed struct{ err error }

func (e claimFailed) Error() string { return "idempotency key claim: " + e.err.Error() }

// claimAhead claims key with no round trip of its own: the insert goes with
// BEGIN and the command's first statement (or its COMMIT), and its failure
// comes back from there as claimFailed: errKeyTaken when the key exists,
// 409 idempotency_key_in_use when the lock wait ran out.
func (r *Runner) claimAhead(ctx context.Context, q store.Tx, req Request, key string) (Response, bool, error) {
	err := q.NextWrapped(wrapClaimAhead).IdempotencyKeyInsert(ctx, db.IdempotencyKeyInsertParams{
		UserID: req.UserID, Key: key, Fingerprint: req.Fingerprint, TtlSeconds: int32(r.ttl / time.Second),
	})
	return Response{}, err == nil, err
}

// wrapClaimAhead is where a failed claim sent ahead gets its meaning; the
// command that sent it passes it on without looking. The store translated
// err already (503 when the database is unavailable, as anywhere), keeping
// PostgreSQL's error in the chain.
func wrapClaimAhead(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UniqueViolation {
		return claimFailed{errKeyTaken}
	}
	return claimFailed{claimError(err)}
}

// claim takes key for this transaction (claimed true) or returns the answer
// stored under it. An expired answer is taken over; an answer committed
// while the claim waited for it is read with a fresh snapshot.
func (r *Runner) claim(ctx context.Context, q store.Tx, req Request, key string) (Response, bool, error) {
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
		resp, err := storedAnswer(req, Stored{Fingerprint: row.Fingerprint, StatusCode: row.StatusCode, Body: row.ResponseBody, Location: row.ResponseLocation})
		return resp, false, err
	}
	stored, err := q.IdempotencyKeyGet(ctx, db.IdempotencyKeyGetParams{UserID: req.UserID, Key: key})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Response{}, false, errors.New("idempotency key neither claimed nor stored")
		}
		return Response{}, false, err
	}
	resp, err := storedAnswer(req, storedRow(stored))
	return resp, false, err
}

// storedRow is the answer an IdempotencyKeyGet read.
func storedRow(row db.IdempotencyKeyGetRow) Stored {
	return Stored{Fingerprint: row.Fingerprint, StatusCode: row.StatusCode, Body: row.ResponseBody, Location: row.ResponseLocation}
}

// storedAnswer is the answer stored under a key, or 422 when the key was
// used for a different request.
func storedAnswer(req Request, s Stored) (Response, error) {
	if !bytes.Equal(s.Fingerprint, req.Fingerprint) {
		return Response{}, problem.New(http.StatusUnprocessableEntity, problem.IdempotencyKeyReused,
			"This Idempotency-Key was used for a different request. Use a new key for a new request.")
	}
	if s.StatusCode == nil {
		// Committed rows always carry their answer; a row without one is a bug.
		return Response{}, errors.New("idempotency key stored without a response")
	}
	resp := Response{Status: int(*s.StatusCode), Body: s.Body}
	if s.Location != nil {
		resp.Location = *s.Location
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

// LookupKey is raw normalized when it is a well-formed key, 1 to 255
// visible ASCII characters as openapi.yaml's pattern says, and "" when it
// is not. The session lookup reads the stored answer before validation
// runs: a key validation will refuse (one that is not even UTF-8, say)
// must not reach the database first.
func LookupKey(raw string) string {
	if !ValidKey(raw) {
		return ""
	}
	return NormalizeKey(raw)
}

// ValidKey is the Idempotency-Key format, openapi.yaml's pattern
// ^(?:[\x21-\x7E]{1,255}|"[\x21-\x7E]{1,255}")$ said in Go: 1 to 255
// visible ASCII characters, or that quoted (docs/idempotency.md). The
// validator uses it for that pattern, which Go's regexp runs slowly.
func ValidKey(raw string) bool {
	for i := range len(raw) {
		if raw[i] < 0x21 || raw[i] > 0x7E {
			return false
		}
	}
	n := len(raw)
	return n >= 1 && n <= 255 || n >= 3 && n <= 257 && raw[0] == '"' && raw[n-1] == '"'
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

// Purge deletes expired keys; safe to run on several replicas at once.
func Purge(ctx context.Context, s *store.Store, log *slog.Logger) error {
	n, err := s.Q.IdempotencyKeyDeleteExpired(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		log.Info("idempotency keys purged", "count", n)
	}
	return nil
}
