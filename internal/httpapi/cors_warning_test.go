package httpapi

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

func TestARefusedOriginIsWarnedOnceAndAnAllowedOneNever(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	warn := newOriginWarnings(slog.New(slog.NewTextHandler(&logs, nil)))
	e := echo.New()
	e.Use(cors([]string{"http://localhost:5173"}, "http://localhost:8080", warn))
	e.GET("/api/v1/me", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	call := func(origin, path string) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Origin", origin)
		e.ServeHTTP(httptest.NewRecorder(), req)
	}
	for range 3 {
		call("http://127.0.0.1:5173", "/api/v1/me")
		call("http://localhost:5173", "/api/v1/me")
		call("http://localhost:8080", "/api/v1/me") // the API's own pages (/docs)
	}
	call("http://127.0.0.1:3000", "/docs") // not an API call
	want := "origin http://127.0.0.1:5173 is not in ALLOWED_ORIGINS"
	if n := strings.Count(logs.String(), want); n != 1 || strings.Count(logs.String(), "level=WARN") != 1 {
		t.Errorf("want one warning %q, got:\n%s", want, logs.String())
	}
}

func TestWarningsRememberABoundedNumberOfOrigins(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	warn := newOriginWarnings(slog.New(slog.NewTextHandler(&logs, nil)))
	for i := range 3 * maxWarnedOrigins {
		warn.refused("http://o" + strings.Repeat("x", i%7) + "-" + string(rune('a'+i%26)) + ".test:" + string(rune('0'+i%10)))
	}
	if n := strings.Count(logs.String(), "level=WARN"); n > maxWarnedOrigins || len(warn.seen) > maxWarnedOrigins {
		t.Errorf("%d warnings, %d remembered; want at most %d", n, len(warn.seen), maxWarnedOrigins)
	}
}

func TestAnAllowedOriginCrossSiteToTheAPIIsWarnedAtStartUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		origin, api string
		warned      bool
	}{
		{"http://localhost:5173", "http://localhost:8080", false},
		{"http://localhost:5173", "http://127.0.0.1:8080", true},
		{"http://127.0.0.1:5173", "http://127.0.0.1:8080", false},
		{"https://app.example.com", "https://api.example.com", false},
		{"https://app.example.com", "https://api.example.net", true},
		{"http://app.example.com", "https://api.example.com", true},
	}
	for _, tt := range tests {
		var logs bytes.Buffer
		newOriginWarnings(slog.New(slog.NewTextHandler(&logs, nil))).crossSite(tt.api, []string{tt.origin})
		if got := strings.Contains(logs.String(), "is cross-site to the API"); got != tt.warned {
			t.Errorf("origin %s, API %s: warned %v, want %v\n%s", tt.origin, tt.api, got, tt.warned, logs.String())
		}
	}
}
