package httpapi

import (
	"net/http"
	"slices"
	"strings"

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
func cors(origins []string) echo.MiddlewareFunc {
	return middleware.CORSWithConfig(middleware.CORSConfig{
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
		ExposeHeaders:    []string{"Location", "Idempotent-Replayed", "Retry-After", "Trace-Id", "Deprecation", "Sunset"},
		AllowCredentials: true,
		// A browser may reuse a preflight for ten minutes.
		MaxAge: 600,
	})
}
