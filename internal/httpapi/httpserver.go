package httpapi

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// ServerLimits are the connection-level limits of the HTTP server. A client
// that sends its headers or body too slowly is cut off; an idle keep-alive
// connection is closed.
type ServerLimits struct {
	// ReadHeaderTimeout bounds the request line and headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the whole request, body included; a body that has
	// not arrived by then answers 400 malformed_json.
	ReadTimeout time.Duration
	// WriteTimeout bounds the answer; it exceeds the request deadline so a
	// request that ran out of time can still send its 503.
	WriteTimeout time.Duration
	// IdleTimeout closes keep-alive connections left unused this long.
	IdleTimeout time.Duration
}

// DefaultServerLimits are the limits of `creativeapi serve`, for requests
// bounded by requestTimeout (REQUEST_TIMEOUT).
func DefaultServerLimits(requestTimeout time.Duration) ServerLimits {
	return ServerLimits{
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      requestTimeout + 5*time.Second,
		IdleTimeout:       60 * time.Second,
	}
}

// serverMaxHeaderBytes is net/http's own header limit, far above
// maxHeaderBytes: headers between the two reach the first middleware and
// get a 431 Problem, where net/http would answer in plain text.
const serverMaxHeaderBytes = http.DefaultMaxHeaderBytes

// NewHTTPServer serves e (through Handler) with the limits l; net/http's own
// errors go to log.
func NewHTTPServer(e *echo.Echo, l ServerLimits, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           Handler(e),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    serverMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
