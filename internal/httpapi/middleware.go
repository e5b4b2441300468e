package httpapi

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	authpkg "creativeapi/internal/auth"
	"creativeapi/internal/clientip"
	"creativeapi/internal/gate"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/problem"
	"creativeapi/internal/ratelimit"
	"creativeapi/internal/requestctx"
)

// maxHeaderBytes bounds a request's header fields (names and values), so a
// cookie or key of any size is refused with a Problem. net/http reads up to
// serverMaxHeaderBytes before a handler runs.
const maxHeaderBytes = 32 << 10

// observe gives every request its trace id, client address and deadline,
// refuses oversized headers, recovers panics into 500 Problems and writes
// one log line per request. The deadline (requestTimeout) cancels the
// request's database calls, so no request waits on an unreachable database
// for longer; the live stream has none (its statements are bounded by the
// database's statement timeout).
func observe(log *slog.Logger, requestTimeout time.Duration, clients clientip.Resolver) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			start := time.Now()
			req := c.Request()
			traceID := traceIDFrom(req.Header.Get("traceparent"))
			ctx := requestctx.WithTraceID(req.Context(), traceID)
			// The live stream lasts as long as its client keeps it.
			if requestTimeout > 0 && !streamRoutes[c.Path()] {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, requestTimeout)
				defer cancel()
			}
			if ip := clients.Of(req.RemoteAddr, req.Header.Values("X-Forwarded-For")); ip != "" {
				ctx = requestctx.WithClientIP(ctx, ip)
			}
			c.SetRequest(req.WithContext(ctx))
			h := c.Response().Header()
			h["X-Content-Type-Options"] = nosniff
			// No answer is meant to be shown in a frame (clickjacking).
			h["X-Frame-Options"] = deny
			// A link in an answer (a share's, an upload's) never hands this
			// URL, or a token in it, to the next site.
			h["Referrer-Policy"] = noReferrer
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
				// The duration is whole microseconds: slog's JSON handler
				// writes a float through json.Marshal (reflection and an
				// encoder per line), and the line as a whole profiled at
				// about a tenth of a replay's server CPU.
				attrs := make([]slog.Attr, 0, 9)
				attrs = append(attrs,
					slog.String("method", requestMethod(c)), slog.String("route", c.Path()), slog.String("path", logPath(req.URL.Path)),
					slog.Int("status", c.Response().Status), slog.Int64("duration_us", time.Since(start).Microseconds()),
					slog.String("trace_id", traceID),
				)
				// No token, code or secret reaches the log (logredact.go).
				if req.URL.RawQuery != "" {
					attrs = append(attrs, slog.String("query", logQuery(req.URL.RawQuery)))
				}
				// The operation the metrics count the request under.
				if op, ok := c.Get(operationKey).(string); ok {
					attrs = append(attrs, slog.String("operation", op))
				}
				if caller, ok := requestctx.CallerFrom(ctx); ok && caller.IsGuest() {
					attrs = append(attrs, slog.String("guest_id", caller.Guest.ID.String()))
				} else if ok {
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

// Header values every answer (or every /api/ answer) carries, shared: a
// Header.Set allocates the value's slice per request. Their capacity is
// their length, so an Add on the same name copies instead of writing into
// them.
var (
	nosniff = []string{"nosniff"}[:1:1]
	deny    = []string{"DENY"}[:1:1]
	// noReferrer is Referrer-Policy's value (docs/reliability.md).
	noReferrer = []string{"no-referrer"}[:1:1]
	noStore    = []string{"no-store"}[:1:1]
)

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
	// version-traceid-parentid-flags, read without splitting (a slice per
	// request).
	version, rest, _ := strings.Cut(traceparent, "-")
	id, rest, ok := strings.Cut(rest, "-")
	_, flags, ok2 := strings.Cut(rest, "-")
	if ok && ok2 && !strings.Contains(flags, "-") && len(version) == 2 && len(id) == 32 && isLowerHex(id) && strings.Trim(id, "0") != "" {
		return id
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	var id32 [32]byte
	hex.Encode(id32[:], b[:])
	return string(id32[:])
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
	Authenticate(r *http.Request, idempotencyKey string) (caller requestctx.Caller, stored *idempotency.Stored, ok bool, err error)
	// AuthenticateGuest returns the guest of the request's guest session,
	// or ok false without a live one (a user session is none);
	// auth.ErrInvalidToken for a request with a bearer token.
	AuthenticateGuest(r *http.Request) (caller requestctx.Caller, ok bool, err error)
}

// admit answers, in the refusal order of docs/errors.md and
// docs/review.md, everything decided before a handler runs. Each step is
// one function below, called in that order; the first refusal is the
// answer. Only /api/ paths pass it; a path the spec does not declare is
// Echo's router's to answer (404, 405, OPTIONS).
func admit(g *gate.Gate, deprecated map[string]deprecationHeaders, auth Authenticator, origins originPolicy, limits *ratelimit.Limiter) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if !strings.HasPrefix(req.URL.Path, "/api/") {
				return next(c)
			}
			op, err := apiOperation(c, g, deprecated) // 404
			if err != nil {
				return err
			}
			if op == nil {
				return next(c) // Echo's 404, 405 or OPTIONS
			}
			unsafe := isUnsafe(req.Method)
			ctx := req.Context()
			var a admitted
			if op.Secured {
				if ctx, a, err = admitCaller(ctx, auth, req, op, unsafe); err != nil { // 401, 404, 403
					rateLimit(c, limits, anonymous(ctx), unsafe, false)
					return err
				}
			}
			if err := rateLimit(c, limits, principal(ctx, a), unsafe, true); err != nil { // 429
				return err
			}
			if err := checkOrigin(req, unsafe, origins); err != nil { // 403
				return err
			}
			in, err := validate(ctx, c, g, op, a.stored) // 400, 413, 415, 422
			if err != nil {
				return err
			}
			handOn(ctx, c, a, in)
			return next(c)
		}
	}
}

// apiOperation is the spec's operation of an /api/ request (nil when the
// spec declares none: Echo's router answers), its answer marked not to be
// stored and, for a deprecated operation, announced as such.
func apiOperation(c echo.Context, g *gate.Gate, deprecated map[string]deprecationHeaders) (*gate.Operation, error) {
	c.Response().Header()["Cache-Control"] = noStore
	if err := wholeSegments(c); err != nil { // 404
		return nil, err
	}
	op := operation(g, c)
	if op != nil {
		announceDeprecation(c.Response().Header(), deprecated, op.ID)
	}
	return op, nil
}

// admitCaller is a secured operation's steps: who calls (401); whether
// the operation exists for them (the operator API is, for anyone else, the
// 404 of an unknown path, before anything of the request is read); and an
// unsafe request's CSRF token, or a token's scope (403). From the caller on, even a refusal is
// logged under the caller: the context returned carries it.
func admitCaller(ctx context.Context, auth Authenticator, req *http.Request, op *gate.Operation, unsafe bool) (context.Context, admitted, error) {
	a, err := authenticate(auth, req, op)
	if err != nil {
		return ctx, admitted{}, err
	}
	ctx = requestctx.WithCaller(ctx, a.caller)
	if op.OperatorOnly && !a.caller.Operator {
		return ctx, admitted{}, echo.ErrNotFound
	}
	if a.caller.Bearer() {
		// A token is sent on purpose, never by a browser on its own: it
		// needs its scope, not a CSRF token.
		if err := checkScope(op, a.caller); err != nil {
			return ctx, admitted{}, err
		}
	} else if err := checkCSRF(req, unsafe, a.caller); err != nil {
		return ctx, admitted{}, err
	}
	return ctx, a, nil
}

// rateLimit counts the request against principal's budget of its class
// (count false: only reads it, for a request refused before it counts)
// and writes the RateLimit headers; over the budget it refuses with 429.
func rateLimit(c echo.Context, limits *ratelimit.Limiter, principal string, unsafe, count bool) error {
	class := ratelimit.Reads
	if unsafe {
		class = ratelimit.Commands
	}
	if !limits.Enabled(class) {
		return nil
	}
	var d ratelimit.Decision
	if count {
		d = limits.Allow(principal, class)
	} else {
		d = limits.Peek(principal, class)
	}
	h := c.Response().Header()
	h["Ratelimit-Policy"] = []string{d.PolicyHeader()}
	h["Ratelimit"] = []string{d.Header()}
	if count && !d.Allowed {
		return &problem.Error{Status: http.StatusTooManyRequests, Code: problem.RateLimited, RetryAfter: d.RetryAfterSeconds(),
			Detail: fmt.Sprintf("Too many %s in the last minute (at most %d). Retry after Retry-After seconds.", class.Name(), d.Limit)}
	}
	return nil
}

// principal is whom a request's budget belongs to: its caller (a user,
// a token or a guest), or its client address when it has none.
func principal(ctx context.Context, a admitted) string {
	if a.caller.IsGuest() {
		return "guest:" + a.caller.Guest.ID.String()
	}
	if a.caller.Bearer() {
		return "token:" + a.caller.TokenID.String()
	}
	if a.caller.UserID != uuid.Nil {
		return "user:" + a.caller.UserID.String()
	}
	return anonymous(ctx)
}

// anonymous is the budget of requests without a caller: their client
// address's.
func anonymous(ctx context.Context) string { return "addr:" + requestctx.ClientIP(ctx) }

// wholeSegments refuses with 404 a path whose last segment Echo let a
// route's last parameter take over "/" (…/deposits/a/b matches
// :depositId): no path of the spec does that.
func wholeSegments(c echo.Context) error {
	if route := c.Path(); route != "" && strings.Count(route, "/") != strings.Count(echo.GetPath(c.Request()), "/") {
		return echo.ErrNotFound
	}
	return nil
}

// operation is the spec's operation Echo routed the request to, nil when
// the spec declares none there; its id names the request in the metrics
// and the log.
func operation(g *gate.Gate, c echo.Context) *gate.Operation {
	op := g.Operation(c.Request().Method, c.Path())
	if op != nil {
		c.Set(operationKey, op.ID)
	}
	return op
}

// announceDeprecation sets the Deprecation and Sunset headers of a
// deprecated operation: every answer says so, refusals too.
func announceDeprecation(h http.Header, deprecated map[string]deprecationHeaders, opID string) {
	if d, ok := deprecated[opID]; ok {
		d.set(h)
	}
}

// isUnsafe reports whether a request with method may change something,
// and so needs the CSRF token and an allowed origin.
func isUnsafe(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// admitted is what authentication learnt of a secured request.
type admitted struct {
	caller requestctx.Caller
	// key is the Idempotency-Key of a command ("" for none), stored the
	// answer already stored under it for the caller (nil: none), read with
	// the session: a replay needs no other read.
	key    string
	stored *idempotency.Stored
}

// authenticate finds the request's session (401 without one) and, for a
// command, the answer stored under its Idempotency-Key. An operation of
// guests takes a guest session and nothing else; every other operation
// takes a user's session or token, never a guest's (docs/shares.md).
func authenticate(auth Authenticator, req *http.Request, op *gate.Operation) (admitted, error) {
	var a admitted
	if op.Keyed {
		a.key = idempotency.LookupKey(req.Header.Get("Idempotency-Key"))
	}
	if op.Guest {
		caller, ok, err := auth.AuthenticateGuest(req)
		switch {
		case errors.Is(err, authpkg.ErrInvalidToken):
			return admitted{}, invalidToken(tokenNotForGuests)
		case err != nil:
			return admitted{}, err
		case !ok:
			return admitted{}, problem.New(http.StatusUnauthorized, problem.Unauthenticated, "Open the share's link to continue.")
		}
		// The stored answer under the key is the runner's to read.
		a.caller = caller
		return a, nil
	}
	caller, stored, ok, err := auth.Authenticate(req, a.key)
	switch {
	case errors.Is(err, authpkg.ErrInvalidToken):
		return admitted{}, invalidToken(tokenNotLive)
	case errors.Is(err, authpkg.ErrAmbiguousCredentials):
		return admitted{}, problem.New(http.StatusBadRequest, problem.AmbiguousCredentials, "Send either the session cookie or a bearer token, not both.")
	case err != nil:
		return admitted{}, err
	}
	// An operation without a scope takes a session only: a token there
	// is as good as none.
	if ok && caller.Bearer() && op.Scope == "" {
		return admitted{}, invalidToken(tokenNotTaken)
	}
	if !ok {
		return admitted{}, problem.New(http.StatusUnauthorized, problem.Unauthenticated, "Sign in to continue.")
	}
	a.caller, a.stored = caller, stored
	return a, nil
}

// bearerRealm starts the RFC 6750 challenges of bearer refusals.
const bearerRealm = `Bearer realm="creativeapi"`

// Why a bearer token is refused, as the 401's detail and RFC 6750's
// error_description say it (openapi.yaml's WWWAuthenticate lists each
// challenge). A request without credentials gets no error attribute: it
// is answered with the cookie challenge (writeProblem).
const (
	tokenNotLive      = "The token is unknown, expired or revoked."
	tokenNotTaken     = "This operation takes a session, not a token."
	tokenNotForGuests = "A token opens no guest path."
)

// invalidToken is the 401 of a bearer token that is not live (why:
// tokenNotLive), or sent to an operation that takes none (tokenNotTaken,
// tokenNotForGuests), with RFC 6750 §3's challenge.
func invalidToken(why string) *problem.Error {
	p := problem.New(http.StatusUnauthorized, problem.InvalidToken, "%s", why)
	p.Challenge = bearerRealm + `, error="invalid_token", error_description="` + why + `"`
	return p
}

// checkScope refuses with 403 a bearer request whose token lacks the
// operation's scope (gate.Operation.Scope, the spec's x-scope). The
// user's rights still apply after it, in the handler: a scope never
// grants more than its user may do now.
func checkScope(op *gate.Operation, caller requestctx.Caller) error {
	for scope := range strings.FieldsSeq(caller.Scopes) {
		if scope == op.Scope {
			return nil
		}
	}
	p := problem.New(http.StatusForbidden, problem.InsufficientScope, "This token lacks the scope %s.", op.Scope)
	p.Challenge = bearerRealm + `, error="insufficient_scope", scope="` + op.Scope + `"`
	return p
}

// checkCSRF refuses with 403 an unsafe request without the session's CSRF
// token in X-CSRF-Token.
func checkCSRF(req *http.Request, unsafe bool, caller requestctx.Caller) error {
	if unsafe && subtle.ConstantTimeCompare([]byte(req.Header.Get("X-CSRF-Token")), []byte(caller.CSRFToken)) != 1 {
		return problem.New(http.StatusForbidden, problem.CSRFFailed, "Send the session's csrfToken in the X-CSRF-Token header.")
	}
	return nil
}

// checkOrigin refuses with 403 an unsafe request from an origin the
// policy does not allow.
func checkOrigin(req *http.Request, unsafe bool, origins originPolicy) error {
	if unsafe && !origins.allows(req) {
		return problem.New(http.StatusForbidden, problem.CSRFFailed, "Cross-origin requests from this origin are not allowed.")
	}
	return nil
}

// validate runs the gate over the request (internal/gate: body size,
// media type, JSON, the spec, the body rules) and returns the body as the
// gate wrote it again with, for a command, the request's fingerprint. A
// request whose fingerprint is the stored answer's is not validated again.
func validate(ctx context.Context, c echo.Context, g *gate.Gate, op *gate.Operation, stored *idempotency.Stored) (gated, error) {
	req := c.Request()
	var params map[string]string // none: no map to build
	if names, values := c.ParamNames(), c.ParamValues(); len(names) > 0 {
		params = make(map[string]string, len(names))
		for i, name := range names {
			params[name] = values[i]
		}
	}
	var storedFingerprint []byte
	if stored != nil {
		storedFingerprint = stored.Fingerprint
	}
	var in gated
	var err error
	if op.Keyed {
		in.operation = op.ID
	}
	in.body, in.fingerprint, err = g.Check(ctx, c.Response(), req, op, params, storedFingerprint)
	return in, err
}

// handOn leaves for the handler, in ctx (which holds the caller), what
// the gate read: the body and, for a command, its fingerprint and the
// session lookup's read of its key (see Server.command).
func handOn(ctx context.Context, c echo.Context, a admitted, in gated) {
	req := c.Request()
	if a.key != "" && !a.caller.IsGuest() {
		in.prefetched = &idempotency.Prefetched{UserID: a.caller.UserID, Key: a.key, Stored: a.stored}
	}
	if in.body != nil || in.prefetched != nil || in.operation != "" {
		ctx = context.WithValue(ctx, gatedKey{}, in)
	}
	if ctx != req.Context() {
		c.SetRequest(req.WithContext(ctx)) // one copy of the request for what admit learnt
	}
}

// gated is what the gate read that a command's handler hands on to the
// idempotency runner: request-scoped data crossing the strict handler's
// boundary, like the caller.
type gated struct {
	// operation is the id of a command's operation (one that takes an
	// Idempotency-Key), whose replay rule Server.command applies.
	operation string
	// body is the request body as the gate decoded and wrote it again
	// (gate.Check); fingerprint identifies the request of a command that
	// takes an Idempotency-Key.
	body, fingerprint []byte
	// prefetched is the session lookup's read of the Idempotency-Key.
	prefetched *idempotency.Prefetched
}

type gatedKey struct{}

// gatedFrom is what the gate left for the handler of ctx's request.
func gatedFrom(ctx context.Context) gated {
	in, _ := ctx.Value(gatedKey{}).(gated)
	return in
}
