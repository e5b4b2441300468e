// Package requestctx carries per-request facts (trace id, client address,
// the signed-in caller) through context.Context, because strict handlers
// receive the request's context and not echo.Context.
package requestctx

import (
	"context"

	"github.com/google/uuid"
)

type factsKey struct{}

// Caller is the signed-in user of a request and their session.
type Caller struct {
	UserID    uuid.UUID
	SessionID uuid.UUID
	Email     string
	Name      string
	CSRFToken string
	// Operator: the user is platform staff who settle chain transfers.
	Operator bool
	// TokenID is the personal access token the request came with (a
	// bearer request; SessionID and CSRFToken are then zero), Scopes what
	// it may do, space-separated as OAuth writes scopes (a string keeps
	// Caller comparable); the gate checks them against the operation's
	// x-scope.
	TokenID uuid.UUID
	Scopes  string
	// Guest is the guest of a guest session (docs/shares.md); UserID is
	// then zero and Email, Name, SessionID and CSRFToken are the guest's.
	Guest Guest
}

// Guest is a person outside the organization who opened a share: their
// own id, and the share they may see with its organization and
// permission (view, comment or decide).
type Guest struct {
	ID, ShareID, OrganizationID uuid.UUID
	Permission                  string
	// Invited and AccountID are what who decides reads
	// (review.guestDecider): the share invited the guest's email, and the
	// user whose email it is (uuid.Nil: nobody's).
	Invited   bool
	AccountID uuid.UUID
	// Verified: the session proved the guest's email (docs/shares.md).
	Verified bool
}

// IsGuest reports whether the caller came with a guest session.
func (c Caller) IsGuest() bool { return c.Guest.ID != uuid.Nil }

// PrincipalID is whom the caller's stored answers (Idempotency-Key)
// belong to: the user's id, or the guest's.
func (c Caller) PrincipalID() uuid.UUID {
	if c.IsGuest() {
		return c.Guest.ID
	}
	return c.UserID
}

// Bearer reports whether the caller came with a personal access token
// rather than a session.
func (c Caller) Bearer() bool { return c.TokenID != uuid.Nil }

// Facts are what the middleware learns about a request, held in its context
// once: one context value for all of them (a value per fact, each boxed,
// and a copy of the request for the caller cost a deposit create six
// allocations). WithTraceID starts them; WithClientIP and WithCaller
// complete them in place, before the handler runs, on the request's
// goroutine; they do not change afterwards.
type Facts struct {
	traceID  string
	clientIP string
	caller   Caller
	signedIn bool
}

// WithTraceID returns ctx carrying the facts of a request with its trace id.
func WithTraceID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, factsKey{}, &Facts{traceID: id})
}

// WithClientIP returns ctx carrying the client's address (the peer's IP, or
// behind trusted proxies the address they forwarded; see clientip): the
// request's facts completed in place, and ctx itself, when it has them.
func WithClientIP(ctx context.Context, ip string) context.Context {
	if f := factsOf(ctx); f != nil {
		f.clientIP = ip
		return ctx
	}
	return context.WithValue(ctx, factsKey{}, &Facts{clientIP: ip})
}

// WithCaller returns ctx carrying the signed-in caller: the request's facts
// completed in place, and ctx itself, when it has them (a request has one
// caller, recorded before its handler runs).
func WithCaller(ctx context.Context, c Caller) context.Context {
	if f := factsOf(ctx); f != nil {
		f.caller, f.signedIn = c, true
		return ctx
	}
	return context.WithValue(ctx, factsKey{}, &Facts{caller: c, signedIn: true})
}

func factsOf(ctx context.Context) *Facts {
	f, _ := ctx.Value(factsKey{}).(*Facts)
	return f
}

// TraceID is the request's trace id, or "" outside a request.
func TraceID(ctx context.Context) string {
	if f := factsOf(ctx); f != nil {
		return f.traceID
	}
	return ""
}

// ClientIP is the request's client address, or "" outside a request.
func ClientIP(ctx context.Context) string {
	if f := factsOf(ctx); f != nil {
		return f.clientIP
	}
	return ""
}

// CallerFrom is the signed-in caller; ok is false on anonymous requests.
func CallerFrom(ctx context.Context) (Caller, bool) {
	if f := factsOf(ctx); f != nil && f.signedIn {
		return f.caller, true
	}
	return Caller{}, false
}
