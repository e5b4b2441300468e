package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"creativeapi/gen/db"
	"creativeapi/internal/clientip"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
)

// maxBodyBytes bounds every request body; commands are a few hundred bytes.
const maxBodyBytes = 64 << 10

// maxHeaderBytes bounds a request's header fields (names and values), so a
// cookie or key of any size is refused with a Problem. net/http reads up to
// serverMaxHeaderBytes before a handler runs.
const maxHeaderBytes = 32 << 10

// observe gives every request its trace id, client address and deadline,
// refuses oversized headers, recovers panics into 500 Problems and writes
// one log line per request. The deadline (requestTimeout) cancels the
// request's database calls, so no request waits on an unreachable database
// for longer.
func observe(log *slog.Logger, requestTimeout time.Duration, clients clientip.Resolver) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			start := time.Now()
			req := c.Request()
			traceID := traceIDFrom(req.Header.Get("traceparent"))
			ctx := requestctx.WithTraceID(req.Context(), traceID)
			if requestTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, requestTimeout)
				defer cancel()
			}
			if ip := clients.Of(req.RemoteAddr, req.Header.Values("X-Forwarded-For")); ip != "" {
				ctx = requestctx.WithClientIP(ctx, ip)
			}
			c.SetRequest(req.WithContext(ctx))
			h := c.Response().Header()
			h.Set("X-Content-Type-Options", "nosniff")
			// No answer is meant to be shown in a frame (clickjacking).
			h.Set("X-Frame-Options", "DENY")
			h.Set("Trace-Id", traceID)
			defer func() {
				if r := recover(); r != nil {
					log.ErrorContext(ctx, "panic", "panic", fmt.Sprint(r), "stack", string(debug.Stack()), "trace_id", traceID)
					err = fmt.Errorf("panic: %v", r)
				}
				if err != nil {
					c.Error(err)
					err = nil
				}
				// Typed attributes: the line is written for every request.
				attrs := make([]slog.Attr, 0, 8)
				attrs = append(attrs,
					slog.String("method", requestMethod(c)), slog.String("route", c.Path()), slog.String("path", req.URL.Path),
					slog.Int("status", c.Response().Status), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
					slog.String("trace_id", traceID),
				)
				// The operation the metrics count the request under.
				if op, ok := c.Get(operationKey).(string); ok {
					attrs = append(attrs, slog.String("operation", op))
				}
				if caller, ok := requestctx.CallerFrom(c.Request().Context()); ok {
					attrs = append(attrs, slog.String("user_id", caller.UserID.String()))
				}
				log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
			}()
			if n := headerBytes(req.Header); n > maxHeaderBytes {
				return problem.New(http.StatusRequestHeaderFieldsTooLarge, problem.RequestTooLarge,
					"The request headers are %d bytes; at most %d are accepted.", n, maxHeaderBytes)
			}
			return next(c)
		}
	}
}

// headerBytes is the size of the header fields as sent ("Name: value\r\n").
func headerBytes(h http.Header) int {
	n := 0
	for name, values := range h {
		for _, v := range values {
			n += len(name) + len(v) + 4
		}
	}
	return n
}

// traceIDFrom takes the trace id of a valid W3C traceparent, else makes one.
func traceIDFrom(traceparent string) string {
	parts := strings.Split(traceparent, "-")
	if len(parts) == 4 && len(parts[0]) == 2 && len(parts[1]) == 32 && isLowerHex(parts[1]) && strings.Trim(parts[1], "0") != "" {
		return parts[1]
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// Authenticator identifies the caller of a request from its session cookie.
type Authenticator interface {
	// Authenticate returns the caller, or ok false when the request carries
	// no valid session. With a non-empty idempotencyKey it also returns, from
	// the same read, the live answer stored under it for the caller (nil:
	// none).
	Authenticate(r *http.Request, idempotencyKey string) (caller requestctx.Caller, stored *db.IdempotencyKey, ok bool, err error)
}

// gate answers, in docs/errors.md's order, everything decided before a handler
// runs: the route (404/405), authentication (401), request forgery (403),
// then the body and parameters (400/415/422). Only /api/ paths pass it.
func gate(v *Validator, auth Authenticator, origins originPolicy) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if !strings.HasPrefix(req.URL.Path, "/api/") {
				return next(c)
			}
			c.Response().Header().Set("Cache-Control", "no-store")
			route, params, err := v.Route(req)
			if perr := (*problem.Error)(nil); errors.As(err, &perr) && perr.Status == http.StatusMethodNotAllowed {
				if req.Method == http.MethodOptions {
					// OPTIONS is answered on every path (a CORS preflight of
					// a trusted origin was answered before): what it serves.
					c.Response().Header().Set("Allow", perr.Allow)
					return c.NoContent(http.StatusNoContent)
				}
				// Route saw the method Echo routes (GET for a HEAD); the
				// answer names the one the client sent.
				perr.Detail = methodNotAllowed(requestMethod(c), req.URL.Path).Detail
			}
			if err != nil {
				return err
			}
			c.Set(operationKey, route.Operation.OperationID)
			// Every answer of a deprecated operation says so, refusals too.
			if d, ok := v.deprecated[route.Operation]; ok {
				d.set(c.Response().Header())
			}
			security := route.Operation.Security
			if security == nil {
				security = &route.Spec.Security
			}
			unsafe := req.Method != http.MethodGet && req.Method != http.MethodHead && req.Method != http.MethodOptions
			// stored is the answer already stored under the request's
			// Idempotency-Key, if any.
			var stored *idempotency.Stored
			if len(*security) > 0 {
				// A command's stored answer comes with the session: a
				// replay needs no other read.
				key := ""
				if unsafe {
					key = idempotency.LookupKey(req.Header.Get("Idempotency-Key"))
				}
				caller, row, ok, err := auth.Authenticate(req, key)
				stored = idempotency.StoredFrom(row)
				if err != nil {
					return err
				}
				if !ok {
					return problem.New(http.StatusUnauthorized, problem.Unauthenticated, "Sign in to continue.")
				}
				if unsafe && subtle.ConstantTimeCompare([]byte(req.Header.Get("X-CSRF-Token")), []byte(caller.CSRFToken)) != 1 {
					return problem.New(http.StatusForbidden, problem.CSRFFailed, "Send the session's csrfToken in the X-CSRF-Token header.")
				}
				ctx := requestctx.WithCaller(req.Context(), caller)
				if key != "" {
					ctx = withPrefetched(ctx, &idempotency.Prefetched{UserID: caller.UserID, Key: key, Stored: stored})
				}
				req = req.WithContext(ctx)
				c.SetRequest(req)
			}
			if unsafe && !origins.allows(req) {
				return problem.New(http.StatusForbidden, problem.CSRFFailed, "Cross-origin requests from this origin are not allowed.")
			}
			// Only an operation with a body reads one; any other body is left
			// to net/http, which discards or drops it.
			var body []byte
			if route.Operation.RequestBody != nil {
				if body, err = readBody(c.Response(), req); err != nil {
					return err
				}
			}
			validate := v.Validate
			if stored != nil {
				validate = v.ValidateReplay
			}
			if body, err = validate(req.Context(), req, route, params, body); err != nil {
				return err
			}
			req.Body = newBodyReader(body)
			if body != nil {
				// Media types are case-insensitive, Echo's binder is not: it
				// gets the one spelling it knows once the validator accepted.
				req.Header.Set("Content-Type", echo.MIMEApplicationJSON)
			}
			return next(c)
		}
	}
}

// readBody reads at most maxBodyBytes; a larger body is a 413 Problem,
// refused before reading when Content-Length says so. http.MaxBytesReader
// makes net/http close the connection after the answer instead of reading
// the rest of a body nobody wants. A body that stops arriving (ReadTimeout)
// is a 400.
func readBody(w http.ResponseWriter, req *http.Request) ([]byte, error) {
	tooLarge := problem.New(http.StatusRequestEntityTooLarge, problem.RequestTooLarge, "The request body is larger than %d bytes.", maxBodyBytes)
	if req.ContentLength > maxBodyBytes {
		return nil, tooLarge
	}
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBodyBytes))
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		return nil, tooLarge
	case err != nil:
		return nil, problem.New(http.StatusBadRequest, problem.MalformedJSON, "The request body could not be read.")
	}
	return body, nil
}

func newBodyReader(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

type prefetchedKey struct{}

// withPrefetched carries the session lookup's read of the Idempotency-Key
// from the gate to the command's handler, which hands it to the runner as
// idempotency.Request.Prefetched: request-scoped data crossing the strict
// handler's boundary, like the caller.
func withPrefetched(ctx context.Context, p *idempotency.Prefetched) context.Context {
	return context.WithValue(ctx, prefetchedKey{}, p)
}

// prefetched is what withPrefetched carried; nil when nothing was read.
func prefetched(ctx context.Context) *idempotency.Prefetched {
	p, _ := ctx.Value(prefetchedKey{}).(*idempotency.Prefetched)
	return p
}
