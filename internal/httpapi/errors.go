package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"creativeapi/internal/directory"
	"creativeapi/internal/objectstore"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
)

// problemWriter is the single place an error becomes an HTTP answer: it is
// Echo's HTTPErrorHandler, so middleware errors, body-binding errors of the
// strict handlers and unexpected errors all arrive here.
type problemWriter struct {
	baseURL string
	log     *slog.Logger
}

func (p *problemWriter) handle(err error, c echo.Context) {
	if c.Response().Committed {
		p.log.ErrorContext(c.Request().Context(), "error after the response was sent", "error", err, "trace_id", requestctx.TraceID(c.Request().Context()))
		return
	}
	perr := p.classify(c, err)
	writeProblem(c.Response(), p.baseURL, requestctx.TraceID(c.Request().Context()), perr)
}

// classify turns any error into a Problem without leaking internals.
func (p *problemWriter) classify(c echo.Context, err error) *problem.Error {
	var perr *problem.Error
	if errors.As(err, &perr) {
		return perr
	}
	var herr *echo.HTTPError
	if errors.Is(err, store.ErrNotFound) || errors.As(err, &herr) && herr.Code == http.StatusNotFound {
		return problem.New(http.StatusNotFound, problem.NotFound, "The requested resource does not exist.")
	}
	if errors.As(err, &herr) {
		switch herr.Code {
		case http.StatusMethodNotAllowed:
			// Echo's router has set Allow to the path's methods.
			return problem.New(http.StatusMethodNotAllowed, problem.MethodNotAllowed, "%s is not allowed on %s.", requestMethod(c), c.Request().URL.Path)
		case http.StatusUnsupportedMediaType:
			return problem.New(http.StatusUnsupportedMediaType, problem.UnsupportedMediaType, "Send the body as application/json.")
		case http.StatusRequestEntityTooLarge:
			return problem.New(http.StatusRequestEntityTooLarge, problem.RequestTooLarge, "The request body is too large.")
		case http.StatusBadRequest:
			return problem.New(http.StatusBadRequest, problem.MalformedJSON, "The request could not be read as JSON.")
		}
		if herr.Code >= 400 && herr.Code < 500 {
			return problem.New(herr.Code, problem.InvalidRequest, "%s", http.StatusText(herr.Code))
		}
	}
	ctx := c.Request().Context()
	switch {
	// The object store first: a store call cut by the request's deadline
	// is the store's (objectstore marks it), not the database's.
	case errors.Is(err, objectstore.ErrUnavailable):
		p.log.WarnContext(ctx, "object store unavailable", "error", err, "trace_id", requestctx.TraceID(ctx))
		return &problem.Error{Status: http.StatusServiceUnavailable, Code: problem.StorageUnavailable, RetryAfter: 5,
			Detail: "The file store is temporarily unavailable. Retry later."}
	case errors.Is(err, store.ErrUnavailable):
		p.log.WarnContext(ctx, "database unavailable", "error", err, "trace_id", requestctx.TraceID(ctx))
		return serviceUnavailable()
	// A request past its deadline (REQUEST_TIMEOUT) that no service
	// claimed: what it waited on is not known, so it is not called a
	// database outage, but a retry may well succeed.
	case errors.Is(err, context.DeadlineExceeded):
		p.log.WarnContext(ctx, "request timed out", "error", err, "trace_id", requestctx.TraceID(ctx))
		return serviceUnavailable()
	}
	p.log.ErrorContext(ctx, "unexpected error", "error", err, "trace_id", requestctx.TraceID(ctx))
	return problem.New(http.StatusInternalServerError, problem.InternalError, "Something went wrong on our side. Quote the traceId when you report it.")
}

func serviceUnavailable() *problem.Error {
	return &problem.Error{Status: http.StatusServiceUnavailable, Code: problem.ServiceUnavailable, RetryAfter: 2,
		Detail: "The service is temporarily unavailable. Retry later."}
}

// organizationProblem turns the refusals every resource of an organization
// shares into Problems: the caller is not a member (directory.MemberRole),
// or their role may not (the rights of internal/review). Anything else
// passes on. Each resource's handlers map their own refusals first
// (creativeProblem, commentProblem, webhookProblem), then call this.
func organizationProblem(err error) error {
	var refusal *review.Refusal
	switch {
	// A caller who is not a member gets exactly the 404 of an id that does
	// not exist, so another workspace's ids reveal nothing.
	case errors.Is(err, directory.ErrOrganizationNotVisible):
		return problem.New(http.StatusNotFound, problem.NotFound, "No organization with this id is visible to you.")
	case errors.As(err, &refusal):
		status := http.StatusConflict
		if refusal.Reason == review.Forbidden {
			status = http.StatusForbidden
		}
		p := problem.New(status, problem.Code(refusal.Reason), "%s", refusal.Detail)
		p.OpenThreadIds = refusal.Threads
		return p
	}
	return err
}

// wwwAuthenticate is the challenge of every 401 (RFC 9110 §11.6.1 asks for
// one): the API authenticates with its session cookie, which sign-in sets.
const wwwAuthenticate = `Cookie realm="creativeapi"`

// writeProblem sends e as application/json.
func writeProblem(w http.ResponseWriter, baseURL, traceID string, e *problem.Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	switch {
	case e.Challenge != "":
		h.Set("WWW-Authenticate", e.Challenge)
	case e.Status == http.StatusUnauthorized:
		h.Set("WWW-Authenticate", wwwAuthenticate)
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(problem.Marshal(baseURL, traceID, e))
}
