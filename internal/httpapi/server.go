// Package httpapi is the HTTP face of the service: the Echo instance, the
// middleware that answers everything decided before a handler runs, and the
// strict handlers that implement the generated interface.
package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"creativeapi"
	"creativeapi/gen/api"
	"creativeapi/internal/approval"
	"creativeapi/internal/auth"
	"creativeapi/internal/clientip"
	"creativeapi/internal/config"
	"creativeapi/internal/email"
	"creativeapi/internal/gate"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/metrics"
	"creativeapi/internal/objectstore"
	"creativeapi/internal/ratelimit"
	"creativeapi/internal/share"
	"creativeapi/internal/store"
	"creativeapi/internal/stream"
	"creativeapi/internal/webhooks"
)

// Deps are what the HTTP layer is built from.
type Deps struct {
	Config      config.Config
	Store       *store.Store
	Log         *slog.Logger
	Auth        *auth.Service
	Idempotency *idempotency.Runner
	// SpecYAML is served at /openapi.yaml, DocsHTML at /docs and
	// Changelog (markdown) at /docs/changelog.
	SpecYAML  []byte
	DocsHTML  []byte
	Changelog []byte
	// Metrics, when set, measures every request (nil: metrics are off).
	Metrics *metrics.Metrics
	// Streams serves the live streams; it delivers once its Run runs.
	Streams *stream.Hub
	// Objects is the store of uploaded files; nil answers upload requests
	// with 503.
	Objects *objectstore.Store
	// Approvals signs approval records and publishes their keys.
	Approvals *approval.Keys
	// Limits is the request budget per principal (nil: no limits).
	Limits *ratelimit.Limiter
	// Mail sends the emails a request sends itself (a guest's code; nil:
	// email is off, nothing is sent).
	Mail *email.Sender
}

// Server implements the generated strict server interface; each resource's
// handlers live in their own file.
type Server struct {
	cfg   config.Config
	store *store.Store
	log   *slog.Logger
	auth  *auth.Service
	idem  *idempotency.Runner
	// metrics counts the events handlers decide (nil: off).
	metrics *metrics.Metrics
	streams *stream.Hub
	objects *objectstore.Store
	// approvals signs approval records (docs/review.md).
	approvals *approval.Keys
	// invitations seals a new share's token for its invitation emails
	// (nil: email is off; docs/shares.md).
	invitations *share.Sealer
	// hooks queues the webhook tools' deliveries (test, redeliver).
	hooks *webhooks.Tools
	// mail sends a guest's code (nil: email is off); msgHost is its
	// Message-ID's host.
	mail    *email.Sender
	msgHost string
}

var _ api.StrictServerInterface = (*Server)(nil)

// New builds the Echo instance serving the whole API; serve it through
// Handler.
func New(d Deps) (*echo.Echo, error) {
	spec, err := Spec()
	if err != nil {
		return nil, err
	}
	docs := sync.OnceValue(func() docsPage { return docsFor(d.DocsHTML, spec, d.Config.PublicBaseURL) })
	srv := &Server{cfg: d.Config, store: d.Store, log: d.Log, auth: d.Auth, idem: d.Idempotency, metrics: d.Metrics, streams: d.Streams, objects: d.Objects, approvals: d.Approvals,
		mail: d.Mail, msgHost: messageHost(d.Config.PublicBaseURL)}
	if srv.streams == nil {
		return nil, errors.New("httpapi: Deps.Streams is required")
	}
	if srv.approvals == nil {
		return nil, errors.New("httpapi: Deps.Approvals is required")
	}
	if d.Config.EmailEnabled() {
		if srv.invitations, err = share.NewSealer(d.Config.UnsubscribeSecret); err != nil {
			return nil, err
		}
	}
	if srv.hooks, err = webhooks.NewTools(d.Store, d.Log); err != nil {
		return nil, err
	}
	deprecated, err := deprecations(spec)
	if err != nil {
		return nil, err
	}
	g, err := gate.New(spec, srv.bodyChecks())
	if err != nil {
		return nil, err
	}
	if err := checkReplayRules(g.KeyedOperations()); err != nil {
		return nil, err
	}
	origins := newOriginPolicy(d.Config.PublicBaseURL, d.Config.AllowedOrigins)

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	pw := &problemWriter{baseURL: d.Config.PublicBaseURL, log: d.Log}
	e.HTTPErrorHandler = pw.handle
	e.Pre(allowHead)
	routes, streamRoutes := map[routeKey]string{}, map[routeKey]string{}
	if d.Metrics != nil {
		e.Use(measure(d.Metrics, routes, streamRoutes))
		d.Metrics.WatchStreams(d.Streams.Open, d.Streams.Config().MaxTotal)
	}
	warnOrigins := newOriginWarnings(d.Log)
	warnOrigins.crossSite(d.Config.PublicBaseURL, d.Config.AllowedOrigins)
	e.Use(observe(d.Log, d.Config.RequestTimeout, clientip.New(d.Config.TrustedProxies)), cors(d.Config.AllowedOrigins, d.Config.PublicBaseURL, warnOrigins), admit(g, deprecated, d.Auth, origins, d.Limits))
	api.RegisterHandlers(e, api.NewStrictHandler(srv, nil))
	e.GET("/openapi.yaml", func(c echo.Context) error {
		return c.Blob(http.StatusOK, "application/yaml", d.SpecYAML)
	})
	e.GET("/docs", func(c echo.Context) error {
		c.Response().Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline' blob:; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; worker-src blob:; connect-src 'self'; frame-ancestors 'none'")
		return docs().serve(c)
	})
	e.GET("/docs/changelog", func(c echo.Context) error {
		// Markdown, shown as text: browsers display text/plain in the tab.
		return c.Blob(http.StatusOK, "text/plain; charset=utf-8", d.Changelog)
	})
	if err := registerProblemPages(e); err != nil {
		return nil, err
	}
	labelRoutes(routes, streamRoutes, streamOperations(spec), e, g)
	return e, nil
}

// messageHost is the host of the Message-IDs of the emails a request
// sends: the API's public host.
func messageHost(publicBaseURL string) string {
	if u, err := url.Parse(publicBaseURL); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "creativeapi"
}

// docsPage is the reference page as this server serves it: the spec's
// server URL (the development server's) becomes PUBLIC_BASE_URL, in the
// servers box and in the examples' Problem type URLs alike, which this
// server answers with that base. It is kept as the pieces of the embedded
// page between the URL's occurrences, written with the base between them:
// a copy with the URL replaced would hold 2.7 MB of the heap for the life
// of the process, and under the soft memory limit (cmd/creativeapi,
// tuneGC) every MiB the heap keeps is one less for garbage between two
// collections. The page is cut on the first request for it, not at start:
// the cut reads all of it, and the pages of the executable it reads stay
// in the process's resident memory, which would carry 2.7 MB for a page
// most processes never serve.
type docsPage struct {
	pieces [][]byte
	base   []byte
	size   int
}

func docsFor(page []byte, spec *openapi3.T, publicBaseURL string) docsPage {
	if len(spec.Servers) == 0 || spec.Servers[0].URL == "" || publicBaseURL == "" {
		return docsPage{pieces: [][]byte{page}, size: len(page)}
	}
	from := []byte(spec.Servers[0].URL)
	d := docsPage{base: []byte(publicBaseURL), size: len(page)}
	for {
		i := bytes.Index(page, from)
		if i < 0 {
			break
		}
		d.pieces = append(d.pieces, page[:i:i])
		d.size += len(d.base) - len(from)
		page = page[i+len(from):]
	}
	d.pieces = append(d.pieces, page)
	return d
}

// serve answers the page.
func (d docsPage) serve(c echo.Context) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	h.Set(echo.HeaderContentLength, strconv.Itoa(d.size))
	c.Response().WriteHeader(http.StatusOK)
	for i, p := range d.pieces {
		if i > 0 {
			if _, err := c.Response().Write(d.base); err != nil {
				return err
			}
		}
		if _, err := c.Response().Write(p); err != nil {
			return err
		}
	}
	return nil
}

// Spec parses openapi.yaml as committed and embedded in the binary. (The
// copy oapi-codegen embeds in gen/api renames operationIds to Go names.)
func Spec() (*openapi3.T, error) {
	spec, err := openapi3.NewLoader().LoadFromData(creativeapi.OpenAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("load openapi.yaml: %w", err)
	}
	return spec, nil
}

// bodyChecks are the body rules beyond the schema, by operationId.
func (s *Server) bodyChecks() map[string]gate.BodyCheck {
	checks := map[string]gate.BodyCheck{}
	for _, m := range []map[string]gate.BodyCheck{s.creativeBodyChecks(), s.depositBodyChecks(), s.webhookBodyChecks(), commentBodyChecks(), s.uploadBodyChecks()} {
		for op, check := range m {
			checks[op] = check
		}
	}
	return checks
}

// GetHealth answers while the process serves HTTP.
func (s *Server) GetHealth(ctx context.Context, _ api.GetHealthRequestObject) (api.GetHealthResponseObject, error) {
	return api.GetHealth200JSONResponse{Status: api.Ok}, nil
}

// GetReadiness answers 200 when the database answers.
func (s *Server) GetReadiness(ctx context.Context, _ api.GetReadinessRequestObject) (api.GetReadinessResponseObject, error) {
	if err := s.store.Pool.Ping(ctx); err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return api.GetReadiness200JSONResponse{Status: api.Ok}, nil
}
