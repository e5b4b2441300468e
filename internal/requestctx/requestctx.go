// Package requestctx carries per-request facts (trace id, the signed-in
// caller) through context.Context, because strict handlers receive the
// request's context and not echo.Context.
package requestctx

import (
	"context"

	"github.com/google/uuid"
)

type traceKey struct{}
type clientIPKey struct{}
type callerKey struct{}

// Caller is the signed-in user of a request and their session.
type Caller struct {
	UserID    uuid.UUID
	SessionID uuid.UUID
	Email     string
	Name      string
	CSRFToken string
}

// WithTraceID returns ctx carrying the request's trace id.
func WithTraceID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, traceKey{}, id)
}

// TraceID is the request's trace id, or "" outside a request.
func TraceID(ctx context.Context) string {
	id, _ := ctx.Value(traceKey{}).(string)
	return id
}

// WithCaller returns ctx carrying the signed-in caller.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom is the signed-in caller; ok is false on anonymous requests.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// WithClientIP returns ctx carrying the client's address (the peer's IP, or
// behind trusted proxies the address they forwarded; see clientip).
func WithClientIP(ctx context.Context, ip string) context.Context {
	return context.WithValue(ctx, clientIPKey{}, ip)
}

// ClientIP is the request's client address, or "" outside a request.
func ClientIP(ctx context.Context) string {
	ip, _ := ctx.Value(clientIPKey{}).(string)
	return ip
}
