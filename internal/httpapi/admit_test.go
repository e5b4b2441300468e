package httpapi

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"creativeapi/internal/gate"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
)

// The tests of admit's steps, one each, then of their order: a request
// that fails several steps is answered by the first (docs/review.md, "The
// order of refusals").

const (
	depositsRoute = "/api/v1/me/balance/deposits"
	depositRoute  = "/api/v1/me/balance/deposits/:depositId"
	testCSRF      = "csrf-token"
)

// oneSession authenticates the cookie "session=ok" as caller, with the
// stored answer stored under every key, and refuses the rest; err, when
// set, is its failure.
type oneSession struct {
	caller requestctx.Caller
	stored *idempotency.Stored
	err    error
	// keys are the Idempotency-Keys it was asked to read.
	keys *[]string
}

// AuthenticateGuest knows no guest: the gate's guest steps are proven
// against real guest sessions (guests_test.go).
func (s oneSession) AuthenticateGuest(*http.Request) (requestctx.Caller, bool, error) {
	return requestctx.Caller{}, false, nil
}

func (s oneSession) Authenticate(r *http.Request, key string) (requestctx.Caller, *idempotency.Stored, bool, error) {
	if s.keys != nil {
		*s.keys = append(*s.keys, key)
	}
	if s.err != nil {
		return requestctx.Caller{}, nil, false, s.err
	}
	if c, err := r.Cookie("session"); err != nil || c.Value != "ok" {
		return requestctx.Caller{}, nil, false, nil
	}
	return s.caller, s.stored, true, nil
}

// SpecGate is the gate of the committed spec without body rules, for the
// tests of this package and of httpapi_test.
func SpecGate(tb testing.TB) *gate.Gate {
	tb.Helper()
	spec, err := Spec()
	if err != nil {
		tb.Fatal(err)
	}
	g, err := gate.New(spec, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// admitting is an Echo instance that admits with admit and answers
// refusals with the Problem writer, as New builds it.
func admitting(admission echo.MiddlewareFunc) *echo.Echo {
	e := echo.New()
	e.HTTPErrorHandler = (&problemWriter{baseURL: "http://api.test", log: slog.New(slog.DiscardHandler)}).handle
	e.Use(admission)
	return e
}

// routed is an Echo context of a request routed to route.
func routed(method, target, route string, body io.Reader) echo.Context {
	req := httptest.NewRequest(method, target, body)
	c := echo.New().NewContext(req, httptest.NewRecorder())
	c.SetPath(route)
	return c
}

func wantProblem(t *testing.T, err error, status int, code problem.Code) {
	t.Helper()
	var perr *problem.Error
	if !errors.As(err, &perr) || perr.Status != status || perr.Code != code {
		t.Fatalf("got %v, want %d %s", err, status, code)
	}
}

func TestWholeSegmentsRefusesAParameterRunningOverASlash(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, path, route string
		refused           bool
	}{
		{"one segment per parameter", "/api/v1/me/balance/deposits/abc", depositRoute, false},
		{"a parameter over two segments", "/api/v1/me/balance/deposits/a/b", depositRoute, true},
		{"no route", "/api/v1/nowhere/a/b", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := wholeSegments(routed(http.MethodGet, tc.path, tc.route, nil))
			if refused := errors.Is(err, echo.ErrNotFound); refused != tc.refused || (err != nil && !refused) {
				t.Fatalf("wholeSegments = %v, want refused %v", err, tc.refused)
			}
		})
	}
}

func TestOperationNamesTheRequestOrLeavesItToTheRouter(t *testing.T) {
	t.Parallel()
	g := SpecGate(t)
	c := routed(http.MethodPost, depositsRoute, depositsRoute, nil)
	op := operation(g, c)
	if op == nil || op.ID != "createAccountDeposit" || c.Get(operationKey) != "createAccountDeposit" {
		t.Fatalf("operation = %+v, operationKey %v", op, c.Get(operationKey))
	}
	c = routed(http.MethodDelete, depositsRoute, depositsRoute, nil)
	if op := operation(g, c); op != nil || c.Get(operationKey) != nil {
		t.Fatalf("a method the spec does not declare: %+v, operationKey %v", op, c.Get(operationKey))
	}
}

func TestAnnounceDeprecationOnlyForADeprecatedOperation(t *testing.T) {
	t.Parallel()
	deprecated := map[string]deprecationHeaders{"getMe": {deprecation: "@1798761600", sunset: "Thu, 01 Jul 2027 00:00:00 GMT"}}
	h := http.Header{}
	announceDeprecation(h, deprecated, "getMe")
	if h.Get("Deprecation") != "@1798761600" || h.Get("Sunset") != "Thu, 01 Jul 2027 00:00:00 GMT" {
		t.Fatalf("deprecated: %v", h)
	}
	h = http.Header{}
	announceDeprecation(h, deprecated, "getAccountBalance")
	if len(h) != 0 {
		t.Fatalf("not deprecated: %v", h)
	}
}

func TestIsUnsafeForEveryMethodButGetHeadOptions(t *testing.T) {
	t.Parallel()
	for method, want := range map[string]bool{
		http.MethodGet: false, http.MethodHead: false, http.MethodOptions: false,
		http.MethodPost: true, http.MethodPut: true, http.MethodPatch: true, http.MethodDelete: true,
	} {
		if got := isUnsafe(method); got != want {
			t.Errorf("isUnsafe(%s) = %v, want %v", method, got, want)
		}
	}
}

func TestAuthenticateReadsTheSessionAndACommandsStoredAnswer(t *testing.T) {
	t.Parallel()
	g := SpecGate(t)
	create := g.Operation(http.MethodPost, depositsRoute)
	balance := g.Operation(http.MethodGet, "/api/v1/me/balance")
	caller := requestctx.Caller{UserID: uuid.New(), CSRFToken: testCSRF}
	stored := &idempotency.Stored{Fingerprint: []byte("f")}
	request := func(cookie string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, depositsRoute, nil)
		req.Header.Set("Idempotency-Key", `"key-1"`)
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: "session", Value: cookie})
		}
		return req
	}

	t.Run("a command's key is read with the session", func(t *testing.T) {
		t.Parallel()
		var keys []string
		a, err := authenticate(oneSession{caller: caller, stored: stored, keys: &keys}, request("ok"), create)
		if err != nil || a.caller != caller || a.stored != stored || a.key != idempotency.LookupKey(`"key-1"`) || a.key == "" {
			t.Fatalf("authenticate = %+v, %v", a, err)
		}
		if len(keys) != 1 || keys[0] != a.key {
			t.Fatalf("asked for keys %q", keys)
		}
	})
	t.Run("an operation without a key reads none", func(t *testing.T) {
		t.Parallel()
		var keys []string
		a, err := authenticate(oneSession{caller: caller, keys: &keys}, request("ok"), balance)
		if err != nil || a.key != "" || len(keys) != 1 || keys[0] != "" {
			t.Fatalf("authenticate = %+v, %v; asked for %q", a, err, keys)
		}
	})
	t.Run("no session is a 401", func(t *testing.T) {
		t.Parallel()
		_, err := authenticate(oneSession{caller: caller}, request("expired"), create)
		wantProblem(t, err, http.StatusUnauthorized, problem.Unauthenticated)
	})
	t.Run("a failed lookup is its own error, not a 401", func(t *testing.T) {
		t.Parallel()
		down := errors.New("database down")
		if _, err := authenticate(oneSession{err: down}, request("ok"), create); !errors.Is(err, down) {
			t.Fatalf("got %v", err)
		}
	})
}

// TestTheForgeryChecksRefuseOnlyUnsafeRequests covers checkCSRF (the
// session's token in X-CSRF-Token) and checkOrigin (the server's own
// origin or a trusted one), each a 403 csrf_failed.
func TestTheForgeryChecksRefuseOnlyUnsafeRequests(t *testing.T) {
	t.Parallel()
	caller := requestctx.Caller{CSRFToken: testCSRF}
	origins := newOriginPolicy("http://api.test", []string{"http://app.test"})
	csrf := func(req *http.Request, unsafe bool) error { return checkCSRF(req, unsafe, caller) }
	origin := func(req *http.Request, unsafe bool) error { return checkOrigin(req, unsafe, origins) }
	for _, tc := range []struct {
		name          string
		check         func(req *http.Request, unsafe bool) error
		header, value string
		unsafe        bool
		refused       bool
	}{
		{"checkCSRF: the session's token", csrf, "X-CSRF-Token", testCSRF, true, false},
		{"checkCSRF: another token", csrf, "X-CSRF-Token", "other", true, true},
		{"checkCSRF: no token", csrf, "X-CSRF-Token", "", true, true},
		{"checkCSRF: a safe request needs none", csrf, "X-CSRF-Token", "", false, false},
		{"checkOrigin: the server's own", origin, "Origin", "http://api.test", true, false},
		{"checkOrigin: a trusted one", origin, "Origin", "http://app.test", true, false},
		{"checkOrigin: another", origin, "Origin", "http://evil.test", true, true},
		{"checkOrigin: a safe request from another", origin, "Origin", "http://evil.test", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodPost, depositsRoute, nil)
			if tc.value != "" {
				req.Header.Set(tc.header, tc.value)
			}
			err := tc.check(req, tc.unsafe)
			if !tc.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantProblem(t, err, http.StatusForbidden, problem.CSRFFailed)
		})
	}
}

func TestValidateChecksTheRequestAndFingerprintsACommand(t *testing.T) {
	t.Parallel()
	g := SpecGate(t)
	op := g.Operation(http.MethodPost, depositsRoute)
	post := func(body string) echo.Context {
		c := routed(http.MethodPost, depositsRoute, depositsRoute, strings.NewReader(body))
		c.Request().Header.Set("Content-Type", "application/json")
		return c
	}
	c := post(`{"amount":{"currency":"USDT","amountMinor":"25000000","scale":6}}`)
	in, err := validate(c.Request().Context(), c, g, op, nil)
	if err != nil || len(in.body) == 0 || len(in.fingerprint) == 0 {
		t.Fatalf("validate = %+v, %v", in, err)
	}
	c = post(`{"amount":{"currency":"USDT"}}`)
	_, err = validate(c.Request().Context(), c, g, op, nil)
	wantProblem(t, err, http.StatusUnprocessableEntity, problem.InvalidRequest)
}

func TestHandOnLeavesTheCallerAndTheGatesReadForTheHandler(t *testing.T) {
	t.Parallel()
	caller := requestctx.Caller{UserID: uuid.New()}
	stored := &idempotency.Stored{Fingerprint: []byte("f")}
	c := routed(http.MethodPost, depositsRoute, depositsRoute, nil)
	ctx := requestctx.WithCaller(c.Request().Context(), caller)
	handOn(ctx, c, admitted{caller: caller, key: "key-1", stored: stored}, gated{body: []byte("{}"), fingerprint: []byte("f")})
	got := c.Request().Context()
	if who, ok := requestctx.CallerFrom(got); !ok || who != caller {
		t.Fatalf("caller %+v, %v", who, ok)
	}
	in := gatedFrom(got)
	if string(in.body) != "{}" || string(in.fingerprint) != "f" || in.prefetched == nil ||
		*in.prefetched != (idempotency.Prefetched{UserID: caller.UserID, Key: "key-1", Stored: stored}) {
		t.Fatalf("gated %+v", in)
	}

	// A request without body or key changes nothing.
	c = routed(http.MethodGet, "/api/v1/me/balance", "/api/v1/me/balance", nil)
	before := c.Request()
	handOn(before.Context(), c, admitted{}, gated{})
	if c.Request() != before {
		t.Fatal("a copy of the request for nothing")
	}
}

// TestAdmitRefusesInTheDocumentedOrder sends requests failing every step
// from some point on: each is answered by its first failing step.
func TestAdmitRefusesInTheDocumentedOrder(t *testing.T) {
	t.Parallel()
	g := SpecGate(t)
	caller := requestctx.Caller{UserID: uuid.New(), CSRFToken: testCSRF}
	e := admitting(admit(g, nil, oneSession{caller: caller}, newOriginPolicy("http://api.test", nil), nil))
	e.POST(depositsRoute, func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	e.GET(depositRoute, func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)

	const valid, invalid = `{"amount":{"currency":"USDT","amountMinor":"25000000","scale":6}}`, `{"amount":{}}`
	type request struct {
		path, session, csrf, origin, body string
	}
	for _, tc := range []struct {
		name   string
		req    request
		status int
		detail string
	}{
		{"a path over two segments: 404 first", request{depositsRoute + "/a/b", "", "", "", ""}, http.StatusNotFound, ""},
		{"no session: 401 before everything else", request{depositsRoute, "", "", "http://evil.test", invalid}, http.StatusUnauthorized, "Sign in"},
		{"no CSRF token: 403 before the origin and the body", request{depositsRoute, "ok", "", "http://evil.test", invalid}, http.StatusForbidden, "csrfToken"},
		{"another origin: 403 before the body", request{depositsRoute, "ok", testCSRF, "http://evil.test", invalid}, http.StatusForbidden, "Cross-origin"},
		{"an invalid body: 422", request{depositsRoute, "ok", testCSRF, "http://api.test", invalid}, http.StatusUnprocessableEntity, ""},
		{"admitted", request{depositsRoute, "ok", testCSRF, "http://api.test", valid}, http.StatusNoContent, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			method := http.MethodPost
			if strings.HasSuffix(tc.req.path, "/b") {
				method = http.MethodGet
			}
			req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+tc.req.path, strings.NewReader(tc.req.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			if tc.req.session != "" {
				req.AddCookie(&http.Cookie{Name: "session", Value: tc.req.session})
			}
			if tc.req.csrf != "" {
				req.Header.Set("X-CSRF-Token", tc.req.csrf)
			}
			if tc.req.origin != "" {
				req.Header.Set("Origin", tc.req.origin)
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status || !strings.Contains(string(body), tc.detail) {
				t.Fatalf("%d %s, want %d with %q", res.StatusCode, body, tc.status, tc.detail)
			}
		})
	}
}
