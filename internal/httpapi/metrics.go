package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"creativeapi/internal/gate"
	"creativeapi/internal/metrics"
)

// The operation label of a request is the spec's operationId of the
// operation it matched, else one of these fixed values: a request's path
// never becomes a label, so no client can add a series.
const (
	// labelDocs: the routes outside the spec (the spec itself, /docs and
	// the changelog).
	labelDocs = "docs"
	// labelPreflight: an OPTIONS request to /api/ (a CORS preflight),
	// answered before routing.
	labelPreflight = "preflight"
	// labelUnmatched: everything else (404, 405).
	labelUnmatched = "unmatched"
)

// operationKey is where the gate leaves the matched operationId in the
// echo.Context: the gate routes /api/ requests on the spec, so the label is
// the operation the answer came from.
const operationKey = "operation"

// routeKey is a route as Echo matched it (method and path template).
type routeKey struct{ method, path string }

// measure records every request's operation, status and duration. It runs
// first, so it sees the status the Problem writer set and the time of the
// whole middleware chain. Requests outside /api/ are labelled from Echo's
// own route, through labels (filled by labelRoutes once every route is
// registered).
//
// A long-lived stream (a route in streams, filled by labelRoutes) is
// measured apart (metrics.StreamDone): in the request series it would be
// minutes of latency and a request always in flight.
func measure(m *metrics.Metrics, labels map[routeKey]string, streams map[routeKey]string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			if op, ok := streams[routeKey{c.Request().Method, c.Path()}]; ok {
				err := next(c)
				m.StreamDone(op, c.Response().Status, time.Since(start))
				return err
			}
			m.RequestStarted()
			err := next(c)
			op, _ := c.Get(operationKey).(string)
			if op == "" {
				req := c.Request()
				switch {
				case strings.HasPrefix(req.URL.Path, "/api/") && req.Method == http.MethodOptions:
					op = labelPreflight
				case strings.HasPrefix(req.URL.Path, "/api/"):
					op = labelUnmatched
				default:
					if op = labels[routeKey{req.Method, c.Path()}]; op == "" {
						op = labelUnmatched
					}
				}
			}
			m.RequestDone(op, c.Response().Status, time.Since(start))
			return err
		}
	}
}

// streamOperations are the operations whose success answer is a stream
// (text/event-stream), by operationId.
func streamOperations(spec *openapi3.T) map[string]bool {
	out := map[string]bool{}
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			if r := op.Responses.Status(http.StatusOK); r != nil && r.Value != nil && r.Value.Content.Get("text/event-stream") != nil {
				out[op.OperationID] = true
			}
		}
	}
	return out
}

// labelRoutes labels the routes registered on e outside /api/: a spec
// operation (the probes) by its operationId, any other route as docs.
//
// It also puts the routes of the operations that answer a stream
// (text/event-stream, streamOps) in streams.
func labelRoutes(labels map[routeKey]string, streams map[routeKey]string, streamOps map[string]bool, e *echo.Echo, g *gate.Gate) {
	for _, r := range e.Routes() {
		if strings.HasPrefix(r.Path, "/api/") {
			if op := g.Operation(r.Method, r.Path); op != nil && streamOps[op.ID] {
				streams[routeKey{r.Method, r.Path}] = op.ID
			}
			continue
		}
		labels[routeKey{r.Method, r.Path}] = labelDocs
		if op := g.Operation(r.Method, r.Path); op != nil {
			labels[routeKey{r.Method, r.Path}] = op.ID
		}
	}
}
