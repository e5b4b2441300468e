package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"creativeapi/internal/metrics"
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
