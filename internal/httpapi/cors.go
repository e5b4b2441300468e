package httpapi

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// cors is Echo's CORS middleware on /api/ paths: a browser app on one of
// ALLOWED_ORIGINS may call the API with the session cookie (credentials);
// any other origin gets no CORS headers at all, so the browser keeps its
// answers from that origin's scripts. Unsafe calls from other origins are
// refused by the gate (403 csrf_failed) in any case. An OPTIONS that is no
// preflight (no Access-Control-Request-Method) is Echo's router's to answer
// (204 with Allow, or 404 on an unknown path).
//
// A browser shows a refused origin only as a CORS error in its console, so
// warn logs each refused origin once (see originWarnings).
func cors(origins []string, publicBaseURL string, warn *originWarnings) echo.MiddlewareFunc {
	self := originOf(publicBaseURL)
	m := middleware.CORSWithConfig(middleware.CORSConfig{
		Skipper: func(c echo.Context) bool {
			req := c.Request()
			return !strings.HasPrefix(req.URL.Path, "/api/") ||
				req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") == ""
		},
		// Exact origins only: Echo's own matching also accepts subdomains
		// and wildcards.
		AllowOriginFunc:  func(origin string) (bool, error) { return slices.Contains(origins, origin), nil },
		AllowMethods:     []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete},
		AllowHeaders:     []string{"Content-Type", "X-CSRF-Token", "Idempotency-Key", "traceparent"},
		ExposeHeaders:    []string{"Location", "Idempotent-Replayed", "Retry-After", "Trace-Id", "Deprecation", "Sunset", "RateLimit", "RateLimit-Policy"},
		AllowCredentials: true,
		// A browser may reuse a preflight for ten minutes.
		MaxAge: 600,
	})
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		h := m(next)
		return func(c echo.Context) error {
			req := c.Request()
			if o := req.Header.Get("Origin"); o != "" && o != self && strings.HasPrefix(req.URL.Path, "/api/") && !slices.Contains(origins, o) {
				warn.refused(o)
			}
			return h(c)
		}
	}
}

// maxWarnedOrigins bounds the origins originWarnings remembers: any page
// may send any Origin, and the log and the memory must not grow with them.
const maxWarnedOrigins = 100

// originWarnings logs, once per origin, the two browser-side failures a
// developer cannot see from the server: an origin the API refuses CORS
// (the browser's console says only "CORS error"), and an allowed origin
// that is cross-site to the API, whose calls pass CORS but carry no
// session cookie (SameSite=Lax), so every call after sign-in is a 401.
type originWarnings struct {
	log  *slog.Logger
	mu   sync.Mutex
	seen map[string]bool
}

func newOriginWarnings(log *slog.Logger) *originWarnings {
	return &originWarnings{log: log, seen: map[string]bool{}}
}

// first reports whether origin is met for the first time (and remembers
// it while there is room).
func (w *originWarnings) first(origin string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen[origin] || len(w.seen) >= maxWarnedOrigins {
		return false
	}
	w.seen[origin] = true
	return true
}

// refused warns that a browser page on origin called the API without being
// allowed CORS.
func (w *originWarnings) refused(origin string) {
	if w.first(origin) {
		w.log.Warn(fmt.Sprintf("origin %s is not in ALLOWED_ORIGINS: browsers keep the API's answers from its pages (a CORS error), and refuse its commands", origin),
			"origin", origin)
	}
}

// crossSite warns, at start-up, of each allowed origin that is cross-site
// to the API at publicBaseURL.
func (w *originWarnings) crossSite(publicBaseURL string, origins []string) {
	for _, o := range origins {
		if !sameSite(o, publicBaseURL) && w.first("cross-site "+o) {
			w.log.Warn(fmt.Sprintf("allowed origin %s is cross-site to the API (%s): browsers send it no session cookie (SameSite=Lax), so calls after sign-in answer 401; use the same host name for both (localhost) or the dev server's proxy", o, publicBaseURL),
				"origin", o, "public_base_url", publicBaseURL)
		}
	}
}

// originOf is the origin (scheme://host[:port]) of a URL, or "".
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// sameSite reports whether browsers treat two URLs as the same site, for
// cookies: the same scheme and the same registrable domain, ports aside
// (localhost:5173 and localhost:8080 are one site; localhost and 127.0.0.1
// are two). The registrable domain is approximated by the last two labels
// of a host name (no public suffix list: a.co.uk and b.co.uk count as one
// site, so such a pair is not warned about); an IP address is its own site.
func sameSite(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errA != nil || errB != nil || ua.Scheme != ub.Scheme {
		return false
	}
	ha, hb := strings.ToLower(ua.Hostname()), strings.ToLower(ub.Hostname())
	if net.ParseIP(ha) != nil || net.ParseIP(hb) != nil {
		return ha == hb
	}
	return lastLabels(ha, 2) == lastLabels(hb, 2)
}

func lastLabels(host string, n int) string {
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	return strings.Join(labels[max(0, len(labels)-n):], ".")
}
