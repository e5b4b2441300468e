package testenv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"creativeapi"
	"creativeapi/internal/approval"
	"creativeapi/internal/auth"
	"creativeapi/internal/config"
	"creativeapi/internal/docs"
	"creativeapi/internal/email"
	"creativeapi/internal/events"
	"creativeapi/internal/gate"
	"creativeapi/internal/httpapi"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/mailserver"
	"creativeapi/internal/metrics"
	"creativeapi/internal/objectstore"
	"creativeapi/internal/ratelimit"
	"creativeapi/internal/store"
	"creativeapi/internal/stream"
	"creativeapi/internal/tron"
)

// Options tune New.
type Options struct {
	// Env overrides configuration variables (as the environment would).
	Env map[string]string
	// Tracer sees every query of the server's pool.
	Tracer pgx.QueryTracer
	// MaxConns sizes the server's pool.
	MaxConns int32
	// LockTimeout bounds the pool's lock waits (default 5s).
	LockTimeout time.Duration
	// Metrics, when set, measures the server as METRICS_ADDR would.
	Metrics *metrics.Metrics
	// Events runs the replica's event machinery as serve does, without
	// webhooks: the LISTEN connection, the outbox publisher and the stream
	// hub. Without it events stay unpublished and streams get no live events.
	Events bool
	// Objects gives the server a bucket of its own on the test binary's
	// S3-compatible store (Env.Objects); without it uploads answer 503.
	Objects bool
	// ObjectStore, when set, is the server's store instead (a test that
	// stops its store makes one of its own: NewPrivateObjectStore).
	ObjectStore *objectstore.Store
	// Approvals signs approval records; nil: the test binary's own key.
	Approvals *approval.Keys
	// Mail makes and sends email notifications as serve does, to the test
	// binary's Mailpit (Env.Mail): the publisher (it implies Events) hands
	// events to the email service, whose jobs run on a River client of
	// the test's own.
	Mail bool
	// MailWorkersOff leaves the email jobs queued: the test starts the
	// workers itself (StartEmailWorkers), as a replica that restarts.
	MailWorkersOff bool
	// Log, when set, receives every line the server logs (JSON, every
	// level), for tests of what reaches the log. It must be safe for
	// concurrent writes.
	Log io.Writer
}

// Env is a real server (the production Echo instance, middleware included)
// on its own database.
type Env struct {
	DB     *DB
	Config config.Config
	Server *httptest.Server
	// Echo is the server's handler, for tests that add a route of their own.
	Echo        *echo.Echo
	Auth        *auth.Service
	Idempotency *idempotency.Runner
	// Streams is the server's stream hub.
	Streams *stream.Hub
	// Objects is the server's object store (Options.Objects), else nil.
	Objects *objectstore.Store
	// Approvals signs the server's approval records.
	Approvals *approval.Keys
	// Limits is the server's rate limiter (off unless Options.Env sets
	// the RATE_LIMIT_* variables).
	Limits *ratelimit.Limiter
	// Mail is the Mailpit the server sends to (Options.Mail), else nil;
	// Email its notification service.
	Mail  *mailserver.Server
	Email *email.Service
}

// approvalKeys is the test binary's approval signing key, made once.
var approvalKeys = sync.OnceValues(func() (*approval.Keys, error) {
	key, err := approval.GenerateKey()
	if err != nil {
		return nil, err
	}
	return approval.ParseKeys(key, nil)
})

// TestEnv are the configuration defaults of test servers: a development
// server (DEV_MODE) on plain http (so no Secure cookie) with deposits
// enabled on the development treasury.
var TestEnv = map[string]string{
	"DEV_MODE":         "true",
	"COOKIE_SECURE":    "false",
	"TREASURY_ADDRESS": tron.DevTreasuryAddress,
	"PUBLIC_BASE_URL":  "http://api.test",
	"LOG_LEVEL":        "error",
	// Tests send many requests as one user in a moment: the rate limits
	// are off unless a test's Options.Env turns them on.
	"RATE_LIMIT_READS_PER_MINUTE":    "0",
	"RATE_LIMIT_COMMANDS_PER_MINUTE": "0",
}

// New starts a server on a fresh database, stopped when the test ends.
func New(t testing.TB, opts ...Options) *Env {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	d := NewDB(t, PoolOptions{Tracer: o.Tracer, MaxConns: o.MaxConns, LockTimeout: o.LockTimeout})
	return NewOn(t, d, o)
}

// Replica starts another server on e's database with a pool of its own
// (maxConns connections), as a second replica of the service runs: what
// it shares with e is the database only.
func (e *Env) Replica(t testing.TB, maxConns int32, o Options) *Env {
	t.Helper()
	pool, err := openPool(context.Background(), e.DB.URL, PoolOptions{MaxConns: maxConns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return NewOn(t, &DB{URL: e.DB.URL, Pool: pool, Store: store.New(pool)}, o)
}

// NewOn starts a server on an existing database: two servers on one
// database stand for two replicas.
func NewOn(t testing.TB, d *DB, o Options) *Env {
	t.Helper()
	cfg, err := config.Load(func(k string) string {
		if v, ok := o.Env[k]; ok {
			return v
		}
		return TestEnv[k]
	})
	if err != nil {
		t.Fatalf("test config: %v", err)
	}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if o.Log != nil {
		log = slog.New(slog.NewJSONHandler(o.Log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	authSvc := auth.NewService(d.Store, auth.SessionConfig{
		CookieSecure: cfg.CookieSecure, IdleTTL: cfg.SessionIdleTTL, AbsoluteTTL: cfg.SessionAbsoluteTTL,
	}, log)
	idem := idempotency.NewRunner(d.Store, cfg.IdempotencyTTL, cfg.PublicBaseURL)
	if o.Metrics != nil {
		idem.OnOutcome = o.Metrics.IdempotentOutcome
	}
	hub := stream.NewHub(d.Store, stream.Config{
		Heartbeat: cfg.StreamHeartbeat, MaxPerUser: cfg.StreamMaxPerUser, MaxTotal: cfg.StreamMax,
	}, log)
	objects := o.ObjectStore
	if o.Objects && objects == nil {
		objects = NewObjectStore(t, cfg.AllowedOrigins...)
	}
	approvals := o.Approvals
	if approvals == nil {
		var err error
		if approvals, err = approvalKeys(); err != nil {
			t.Fatalf("approval key: %v", err)
		}
	}
	limits := ratelimit.New(cfg.RateLimitReadsPerMinute, cfg.RateLimitCommandsPerMinute)
	var sender *email.Sender
	if o.Mail {
		if sender, err = email.NewSender(NewMailServer(t).SMTPURL, cfg.MailFrom); err != nil {
			t.Fatal(err)
		}
	}
	h, err := httpapi.New(httpapi.Deps{
		Config: cfg, Store: d.Store, Log: log, Auth: authSvc, Idempotency: idem,
		SpecYAML: creativeapi.OpenAPIYAML, DocsHTML: docs.HTML,
		Changelog: creativeapi.APIChangelog, Metrics: o.Metrics, Streams: hub, Objects: objects, Approvals: approvals,
		Limits: limits, Mail: sender,
	})
	if err != nil {
		t.Fatalf("build server: %v", err)
	}
	srv := httptest.NewServer(httpapi.Handler(h))
	t.Cleanup(srv.Close)
	// Cleanups run last first: the streams end before the server waits
	// for its requests.
	t.Cleanup(hub.Close)
	env := &Env{DB: d, Config: cfg, Server: srv, Echo: h, Auth: authSvc, Idempotency: idem, Streams: hub, Objects: objects, Approvals: approvals, Limits: limits}
	var fanout events.Fanout
	if o.Mail {
		env.Mail, env.Email = NewMailServer(t), NewEmailService(t, d, cfg, log, o.Metrics)
		fanout = env.Email.Fanout
		if !o.MailWorkersOff {
			StartEmailWorkers(t, d, env.Email, log)
		}
	}
	if o.Events || o.Mail {
		runEvents(t, d, cfg, hub, log, fanout)
	}
	return env
}

// runEvents runs the listener, the publisher and the stream hub of one
// replica until the test ends.
func runEvents(t testing.TB, d *DB, cfg config.Config, hub *stream.Hub, log *slog.Logger, fanout events.Fanout) {
	ctx, cancel := context.WithCancel(context.Background())
	listener := stream.NewListener(d.Pool.Config().ConnConfig, log)
	published, revoked := listener.Wake(stream.ChannelPublished), listener.Wake(stream.ChannelSessionsRevoked)
	publisher := events.NewPublisher(d.Store, events.PublisherConfig{PollInterval: cfg.EventsPollInterval}, fanout, log)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); listener.Run(ctx) }()
	go func() { defer wg.Done(); publisher.Run(ctx) }()
	go func() { defer wg.Done(); hub.Run(ctx, published, revoked) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// Client is a browser-like API client: it keeps cookies, sends the CSRF
// token after sign-in, and validates every response against the spec.
type Client struct {
	t    testing.TB
	base string
	http *http.Client
	// CSRFToken is sent as X-CSRF-Token on unsafe requests when set;
	// GuestCSRFToken, a guest session's, in its place on the guest paths
	// (/api/v1/guest/…), as a browser app holding both would.
	CSRFToken, GuestCSRFToken string
}

// guestPrefix is the paths a guest session opens.
const guestPrefix = "/api/v1/guest/"

// Client returns a new anonymous client of the server.
func (e *Env) Client(t testing.TB) *Client {
	jar, _ := cookiejar.New(nil)
	// A redirect is an answer of the API (getAssetContent's 302), checked
	// against the spec like any other; it is not followed.
	return &Client{t: t, base: e.Server.URL, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Response is a read response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, or marks the test failed and leaves v as it
// was. It uses Errorf, not Fatalf, so it is safe in goroutines the test
// spawns.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Errorf("decode %s: %v", r.Body, err)
	}
}

// Problem is the decoded Problem body.
type Problem struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Status      int    `json:"status"`
	Code        string `json:"code"`
	Detail      string `json:"detail"`
	TraceID     string `json:"traceId"`
	FieldErrors []struct {
		Field   string `json:"field"`
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"fieldErrors"`
}

// Problem decodes a Problem body.
func (r *Response) Problem(t testing.TB) Problem {
	t.Helper()
	var p Problem
	r.JSON(t, &p)
	return p
}

// Header is one request header, for Do.
type Header struct{ Name, Value string }

// Do sends a request. body is JSON-encoded unless it is a string or []byte
// (sent as is). The response is validated against openapi.yaml. A request
// that gets no response marks the test failed (Errorf, so Do is safe in
// goroutines the test spawns) and answers status 0.
func (c *Client) Do(method, path string, body any, headers ...Header) *Response {
	c.t.Helper()
	failed := &Response{Header: http.Header{}}
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.t.Errorf("encode body: %v", err)
			return failed
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Errorf("new request: %v", err)
		return failed
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if csrf := c.csrfFor(path); csrf != "" && method != http.MethodGet {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	for _, h := range headers {
		if h.Value == "" {
			req.Header.Del(h.Name)
		} else {
			req.Header.Set(h.Name, h.Value)
		}
	}
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Errorf("%s %s: %v", method, path, err)
		return failed
	}
	defer res.Body.Close()
	var b []byte
	if isEventStream(res.Header) {
		// A live stream never ends by itself: Do reads its first message
		// (the retry line it starts with) and hangs up. Client.Stream
		// reads one for longer.
		b, err = readMessage(bufio.NewReader(res.Body))
	} else {
		b, err = io.ReadAll(res.Body)
	}
	if err != nil {
		c.t.Errorf("read body: %v", err)
		return failed
	}
	resp := &Response{Status: res.StatusCode, Header: res.Header, Body: b}
	if err := CheckResponse(req, resp, c.t.Name()); err != nil {
		c.t.Errorf("%s %s → %d does not match openapi.yaml: %v\nbody: %s", method, path, resp.Status, err, b)
	}
	return resp
}

// SignIn signs in and keeps the session's CSRF token.
func (c *Client) SignIn(email, password string) *Response {
	c.t.Helper()
	r := c.Do(http.MethodPost, "/api/v1/auth/sign-in", map[string]string{"email": email, "password": password})
	if r.Status == http.StatusOK {
		var s struct {
			CSRFToken string `json:"csrfToken"`
		}
		r.JSON(c.t, &s)
		c.CSRFToken = s.CSRFToken
	}
	return r
}

var spec struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	// options check the spec's formats as the server's gate does.
	options []openapi3.SchemaValidationOption
	err     error
}

func specRouter() (*openapi3.T, routers.Router, error) {
	spec.once.Do(func() {
		doc, err := httpapi.Spec()
		if err != nil {
			spec.err = err
			return
		}
		doc.Servers = nil
		spec.doc, spec.options = doc, gate.SchemaOptions(doc)
		openapi3filter.RegisterBodyDecoder(eventStreamType, eventStreamDecoder(doc, spec.options))
		spec.router, spec.err = gorillamux.NewRouter(doc)
	})
	return spec.doc, spec.router, spec.err
}

// CheckResponse validates a response against the spec: the status must be
// declared by the operation and the body and headers must match it. Answers
// outside any operation (unknown paths, wrong methods) must be Problems, a
// 405 with Allow. HEAD must answer as GET does, without a body, and OPTIONS
// with 204 and Allow (openapi.yaml's "Methods"). provedBy names the tests
// credited with the pair in the contract report.
func CheckResponse(req *http.Request, resp *Response, provedBy ...string) error {
	doc, router, err := specRouter()
	if err != nil {
		return err
	}
	if !strings.HasPrefix(req.URL.Path, "/api/") && !strings.HasPrefix(req.URL.Path, "/.well-known/") &&
		req.URL.Path != "/healthz" && req.URL.Path != "/readyz" {
		return nil
	}
	switch {
	case req.Method == http.MethodHead:
		return checkHead(router, req, resp)
	case req.Method == http.MethodOptions && resp.Status == http.StatusNoContent:
		if resp.Header.Get("Access-Control-Allow-Origin") == "" && resp.Header.Get("Allow") == "" {
			return errors.New("OPTIONS answered 204 without Allow")
		}
		if len(resp.Body) > 0 {
			return fmt.Errorf("OPTIONS answered a body: %q", resp.Body)
		}
		return nil
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		if resp.Status != http.StatusNotFound && resp.Status != http.StatusMethodNotAllowed {
			return fmt.Errorf("no operation for the request, yet status %d", resp.Status)
		}
		if resp.Status == http.StatusMethodNotAllowed && resp.Header.Get("Allow") == "" {
			return errors.New("405 without Allow")
		}
		return checkProblem(doc, resp)
	}
	if err := checkUndeclaredHeaders(route.Operation, resp); err != nil {
		return err
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") && ct != eventStreamType && len(resp.Body) > 0 {
		return fmt.Errorf("content type %q", resp.Header.Get("Content-Type"))
	}
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 resp.Status,
		Header:                 resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(resp.Body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, SchemaValidationOptions: spec.options},
	})
	if err != nil {
		return err
	}
	if resp.Status >= 400 {
		if err := checkProblem(doc, resp); err != nil {
			return err
		}
	}
	recordProven(route.Operation.OperationID, resp.Status, provedBy)
	return nil
}

// checkHead checks a HEAD answer as its GET's: a status and headers the GET
// operation declares, and no body.
func checkHead(router routers.Router, req *http.Request, resp *Response) error {
	if len(resp.Body) > 0 {
		return fmt.Errorf("HEAD answered a body: %q", resp.Body)
	}
	get := req.Clone(req.Context())
	get.Method = http.MethodGet
	route, params, err := router.FindRoute(get)
	if err != nil {
		if resp.Status != http.StatusNotFound && resp.Status != http.StatusMethodNotAllowed {
			return fmt.Errorf("HEAD without a GET operation, yet status %d", resp.Status)
		}
		return nil
	}
	return openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: get, PathParams: params, Route: route},
		Status:                 resp.Status,
		Header:                 resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(nil)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: true, SchemaValidationOptions: spec.options},
	})
}

// undeclaredChecked are the headers kin-openapi would let through
// undeclared (it checks only the headers a response declares) that every
// answer carrying them must declare: the rate-limit step's.
var undeclaredChecked = []string{"RateLimit", "RateLimit-Policy"}

// checkUndeclaredHeaders fails when resp carries one of undeclaredChecked
// that op's response for its status does not declare.
func checkUndeclaredHeaders(op *openapi3.Operation, resp *Response) error {
	r := op.Responses.Status(resp.Status)
	if r == nil {
		r = op.Responses.Default()
	}
	for _, name := range undeclaredChecked {
		if resp.Header.Get(name) == "" {
			continue
		}
		if r == nil || r.Value == nil || r.Value.Headers[name] == nil {
			return fmt.Errorf("%s %d carries %s, which its response does not declare", op.OperationID, resp.Status, name)
		}
	}
	return nil
}

func checkProblem(doc *openapi3.T, resp *Response) error {
	var v any
	if err := json.Unmarshal(resp.Body, &v); err != nil {
		return fmt.Errorf("problem body is not JSON: %w", err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		return fmt.Errorf("problem content type %q", ct)
	}
	return doc.Components.Schemas["Problem"].Value.VisitJSON(v)
}

var proven struct {
	sync.Mutex
	pairs map[string]map[string]bool // "operationId status" → test names
}

// recordProven notes that the suite produced and validated this
// (operation, status) pair, and by which tests; the contract test reads the
// union.
func recordProven(operationID string, status int, tests []string) {
	proven.Lock()
	defer proven.Unlock()
	if proven.pairs == nil {
		proven.pairs = map[string]map[string]bool{}
	}
	key := fmt.Sprintf("%s %d", operationID, status)
	if proven.pairs[key] == nil {
		proven.pairs[key] = map[string]bool{}
	}
	for _, name := range tests {
		proven.pairs[key][name] = true
	}
}

// writeProven appends the pairs this test binary proved to
// $CONTRACT_PROVEN_DIR/<package>.txt, for the contract coverage check.
func writeProven() error {
	dir := os.Getenv("CONTRACT_PROVEN_DIR")
	if dir == "" {
		return nil
	}
	proven.Lock()
	defer proven.Unlock()
	lines := make([]string, 0, len(proven.pairs))
	for p, tests := range proven.pairs {
		names := make([]string, 0, len(tests))
		for name := range tests {
			names = append(names, name)
		}
		sort.Strings(names)
		lines = append(lines, strings.Join(append([]string{p}, names...), " "))
	}
	sort.Strings(lines)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "proven-"+randomName()+".txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// csrfFor is the CSRF token the client sends to path.
func (c *Client) csrfFor(path string) string {
	if strings.HasPrefix(path, guestPrefix) && c.GuestCSRFToken != "" {
		return c.GuestCSRFToken
	}
	return c.CSRFToken
}

// OpenShare opens a guest session on the share of token as email (POST
// /api/v1/guest/sessions) and keeps its CSRF token for the guest paths.
func (c *Client) OpenShare(token, email string) *Response {
	c.t.Helper()
	return c.OpenShareWith(map[string]string{"token": token, "name": "Guest " + email, "email": email})
}

// OpenShareWith opens a guest session with body, as OpenShare does.
func (c *Client) OpenShareWith(body map[string]string) *Response {
	c.t.Helper()
	r := c.Do(http.MethodPost, guestPrefix+"sessions", body)
	if r.Status == http.StatusCreated {
		var s struct {
			CSRFToken string `json:"csrfToken"`
		}
		r.JSON(c.t, &s)
		c.GuestCSRFToken = s.CSRFToken
	}
	return r
}

// SetCookie puts a session cookie with token into the client's jar.
func (c *Client) SetCookie(cfg config.Config, token string) {
	u, _ := url.Parse(c.base)
	name := auth.SessionConfig{CookieSecure: cfg.CookieSecure}.CookieName()
	c.http.Jar.SetCookies(u, []*http.Cookie{{Name: name, Value: token, Path: "/"}})
}

// CopySession makes c use other's session (the same browser talking to
// another replica).
func (c *Client) CopySession(other *Client) {
	o, _ := url.Parse(other.base)
	u, _ := url.Parse(c.base)
	c.http.Jar.SetCookies(u, other.http.Jar.Cookies(o))
	c.CSRFToken, c.GuestCSRFToken = other.CSRFToken, other.GuestCSRFToken
}

// CopyCookies adds other's cookies to c's jar and takes other's guest
// CSRF token, keeping c's own: one browser holding a user's session and a
// guest's.
func (c *Client) CopyCookies(other *Client) {
	o, _ := url.Parse(other.base)
	u, _ := url.Parse(c.base)
	c.http.Jar.SetCookies(u, other.http.Jar.Cookies(o))
	c.GuestCSRFToken = other.GuestCSRFToken
}

// At returns a client of another server on the same host (another
// listener of the same handler) holding c's session: cookies ignore ports.
func (c *Client) At(base string) *Client {
	return &Client{t: c.t, base: base, http: c.http, CSRFToken: c.CSRFToken, GuestCSRFToken: c.GuestCSRFToken}
}
