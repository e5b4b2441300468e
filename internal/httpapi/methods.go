package httpapi

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// methodOrder is the order Allow lists methods in.
var methodOrder = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions,
}

// headKey marks, in a request's context, a HEAD that is handled as a GET.
type headKey struct{}

// Handler is the server's whole HTTP handler: e, answering HEAD wherever
// it answers GET (RFC 9110 §9.3.2). The request is routed and handled as a
// GET; net/http, which keeps the HEAD it received, sends the headers (with
// the GET's Content-Length) and drops the body. Echo routes the request it
// was given before any middleware runs, so this cannot be one.
func Handler(e *echo.Echo) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			r = r.WithContext(context.WithValue(r.Context(), headKey{}, true))
			r.Method = http.MethodGet
		}
		e.ServeHTTP(w, r)
	})
}

// allowHead makes every Allow header list HEAD beside GET, and OPTIONS:
// Echo's own (on /docs, say) list neither.
func allowHead(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		res := c.Response()
		res.Before(func() {
			if allow := res.Header().Get("Allow"); allow != "" {
				res.Header().Set("Allow", allowList(strings.Split(allow, ",")))
			}
		})
		return next(c)
	}
}

// allowList is the Allow header of a path serving methods: with HEAD
// beside GET, and OPTIONS, in methodOrder (others after, sorted).
func allowList(methods []string) string {
	set := map[string]bool{http.MethodOptions: true}
	for _, m := range methods {
		if m = strings.ToUpper(strings.TrimSpace(m)); m != "" {
			set[m] = true
		}
	}
	if set[http.MethodGet] {
		set[http.MethodHead] = true
	}
	var out, others []string
	for _, m := range methodOrder {
		if set[m] {
			out = append(out, m)
			delete(set, m)
		}
	}
	for m := range set {
		others = append(others, m)
	}
	slices.Sort(others)
	return strings.Join(append(out, others...), ", ")
}

// requestMethod is the method the client sent (HEAD, where Handler made
// the request a GET).
func requestMethod(c echo.Context) string {
	if head, _ := c.Request().Context().Value(headKey{}).(bool); head {
		return http.MethodHead
	}
	return c.Request().Method
}
