package httpapi

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// CORS: a browser app on one of ALLOWED_ORIGINS may call the API with the
// session cookie (credentials); any other origin gets no CORS headers at all,
// so the browser keeps its answers from that origin's scripts. Unsafe calls
// from other origins are refused by the gate (403 csrf_failed) in any case.
const (
	corsAllowMethods  = "GET, POST, PATCH"
	corsAllowHeaders  = "Content-Type, X-CSRF-Token, Idempotency-Key, traceparent"
	corsExposeHeaders = "Location, Idempotent-Replayed, Retry-After, Trace-Id, Deprecation, Sunset"
	// corsMaxAge lets a browser reuse a preflight for ten minutes.
	corsMaxAge = "600"
)

// cors answers preflights and marks answers readable for the allowed
// origins, on /api/ paths only.
func cors(origins []string) echo.MiddlewareFunc {
	allowed := make(map[string]bool, len(origins))
	for _, o := range origins {
		allowed[o] = true
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if !strings.HasPrefix(req.URL.Path, "/api/") {
				return next(c)
			}
			h := c.Response().Header()
			// The answer depends on Origin even when it carries no CORS
			// header, so no cache may hand it to another origin.
			h.Add("Vary", "Origin")
			origin := req.Header.Get("Origin")
			if origin == "" || !allowed[origin] {
				return next(c)
			}
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			if req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != "" {
				h.Add("Vary", "Access-Control-Request-Method")
				h.Add("Vary", "Access-Control-Request-Headers")
				h.Set("Access-Control-Allow-Methods", corsAllowMethods)
				h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
				h.Set("Access-Control-Max-Age", corsMaxAge)
				return c.NoContent(http.StatusNoContent)
			}
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
			return next(c)
		}
	}
}
