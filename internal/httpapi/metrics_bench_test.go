package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"creativeapi/internal/metrics"
	"creativeapi/internal/ratelimit"
)

// BenchmarkMeasure is what the metrics middleware adds to a request: Echo
// with a handler that answers at once, without and with measure (and the
// gate's c.Set of the operation, which the request log line uses too).
func BenchmarkMeasure(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			e := echo.New()
			if on {
				e.Use(measure(metrics.New(), map[routeKey]string{}, map[routeKey]string{}))
			}
			e.GET("/api/v1/me", func(c echo.Context) error {
				c.Set(operationKey, "getMe")
				return c.NoContent(http.StatusNoContent)
			})
			req := httptest.NewRequest(http.MethodGet, "/api/v1/me", nil)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				e.ServeHTTP(w, req)
			}
		})
	}
}

// BenchmarkRateLimit is what the rate limit step adds to a request: Echo
// with a handler that answers at once, without and with rateLimit (a
// signed-in caller's read, under a budget it stays within). Against a
// request's 70 µs (a replay) to 400 µs of server CPU in bench/, the
// difference is the limiter's share (docs/performance.md).
func BenchmarkRateLimit(b *testing.B) {
	limits := ratelimit.New(1_000_000_000, 1_000_000_000)
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			e := echo.New()
			if on {
				e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
					return func(c echo.Context) error {
						if err := rateLimit(c, limits, "user:6a1f7e4c-0a3b-4f2e-8d9c-5b7a2e1f0c3d", false, true); err != nil {
							return err
						}
						return next(c)
					}
				})
			}
			e.GET("/api/v1/me", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
			req := httptest.NewRequest(http.MethodGet, "/api/v1/me", nil)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				e.ServeHTTP(w, req)
			}
		})
	}
}
