package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"creativeapi/internal/gate"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/requestctx"
)

// deprecate marks the operation operationID of spec deprecated with the
// given extensions (nil values are left out).
func deprecate(t *testing.T, spec *openapi3.T, operationID string, ext map[string]any) {
	t.Helper()
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			if op.OperationID == operationID {
				op.Deprecated = true
				if op.Extensions == nil {
					op.Extensions = map[string]any{}
				}
				for k, v := range ext {
					if v != nil {
						op.Extensions[k] = v
					}
				}
				return
			}
		}
	}
	t.Fatalf("no operation %s in openapi.yaml", operationID)
}

func dates(at, sunset any) map[string]any {
	return map[string]any{extDeprecatedAt: at, extSunset: sunset}
}

// TestDeprecatedOperationNeedsItsDates: a deprecated operation without its
// dates, or with less notice than the policy's 180 days, stops the server
// from starting, so no client gets fewer days than promised.
func TestDeprecatedOperationNeedsItsDates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		ext     map[string]any
		wantErr string
	}{
		{"dates 180 days apart", dates("2027-01-01", "2027-06-30"), ""},
		{"date-times", dates("2027-01-01T00:00:00Z", "2028-01-01T12:00:00Z"), ""},
		{"no x-sunset", dates("2027-01-01", nil), "x-sunset is missing"},
		{"no x-deprecated-at", dates(nil, "2027-12-31"), "x-deprecated-at is missing"},
		{"less than 180 days of notice", dates("2027-01-01", "2027-06-29"), "less than 180 days after"},
		{"not a date", dates("2027-01-01", "soon"), `x-sunset "soon" is not a date`},
		{"not a string", dates("2027-01-01", 2028), "want a quoted date"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec, err := Spec()
			if err != nil {
				t.Fatal(err)
			}
			deprecate(t, spec, "getMe", tc.ext)
			_, err = deprecations(spec)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("want an error with %q, got %v", tc.wantErr, err)
			}
		})
	}
}

// noSession authenticates nobody: every secured request is a 401.
type noSession struct{}

func (noSession) Authenticate(*http.Request, string) (requestctx.Caller, *idempotency.Stored, bool, error) {
	return requestctx.Caller{}, nil, false, nil
}

func (noSession) AuthenticateGuest(*http.Request) (requestctx.Caller, bool, error) {
	return requestctx.Caller{}, false, nil
}

// TestEveryAnswerOfADeprecatedOperationSaysSo runs the gate and the Problem
// writer over HTTP with signIn and getMe deprecated: each of their answers,
// success or refusal, carries Deprecation (RFC 9745) and Sunset (RFC 8594)
// from the spec's dates; other operations' answers carry neither.
func TestEveryAnswerOfADeprecatedOperationSaysSo(t *testing.T) {
	t.Parallel()
	spec, err := Spec()
	if err != nil {
		t.Fatal(err)
	}
	deprecate(t, spec, "signIn", dates("2027-01-01", "2027-07-01"))
	deprecate(t, spec, "getMe", dates("2027-01-01", "2027-07-01"))
	deprecated, err := deprecations(spec)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := admitting(admit(g, deprecated, noSession{}, newOriginPolicy("http://api.test", nil), nil))
	noContent := func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }
	e.POST("/api/v1/auth/sign-in", noContent)
	e.GET("/api/v1/me", noContent)
	e.GET("/api/v1/me/balance", noContent)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)

	const (
		deprecation = "@1798761600"                   // 2027-01-01T00:00:00Z
		sunset      = "Thu, 01 Jul 2027 00:00:00 GMT" // 2027-07-01
	)
	signIn := `{"email":"author@acme.test","password":"demo-password-1"}`
	for _, tc := range []struct {
		name       string
		method     string
		path       string
		body       string
		status     int
		deprecated bool
	}{
		{"a deprecated operation's success", http.MethodPost, "/api/v1/auth/sign-in", signIn, http.StatusNoContent, true},
		{"a deprecated operation's 422", http.MethodPost, "/api/v1/auth/sign-in", `{"email":"author@acme.test"}`, http.StatusUnprocessableEntity, true},
		{"a deprecated operation's 401", http.MethodGet, "/api/v1/me", "", http.StatusUnauthorized, true},
		{"another operation", http.MethodGet, "/api/v1/me/balance", "", http.StatusUnauthorized, false},
		{"no operation", http.MethodGet, "/api/v1/nowhere", "", http.StatusNotFound, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequestWithContext(t.Context(), tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
			want := [2]string{}
			if tc.deprecated {
				want = [2]string{deprecation, sunset}
			}
			if got := [2]string{res.Header.Get("Deprecation"), res.Header.Get("Sunset")}; got != want {
				t.Fatalf("Deprecation, Sunset = %q, want %q", got, want)
			}
		})
	}
}
