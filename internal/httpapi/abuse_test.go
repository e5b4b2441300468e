package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/auth"
	"creativeapi/internal/httpapi"
	"creativeapi/internal/testenv"
)

// Input abuse: whatever a client sends, the answer is a 4xx Problem that
// openapi.yaml declares (testenv validates every answer against it).

const (
	// bodyLimit and headerLimit are the server's documented limits.
	bodyLimit   = 64 << 10
	headerLimit = 32 << 10
)

func depositBody(minor string) map[string]any {
	return map[string]any{"amount": map[string]any{"amountMinor": minor, "currency": "USDT", "scale": 6}}
}

// bodyCalls are the operations with a request body, called validly but for
// the body: a signed-in client passes the gate up to the body.
func bodyCalls(t *testing.T) []specCall {
	t.Helper()
	var out []specCall
	for _, call := range specCalls(t) {
		if call.body != nil {
			out = append(out, call)
		}
	}
	if len(out) != 26 {
		t.Fatalf("%d operations with a body, want 26 (signIn, a token's create, the three idempotent creates, the version upload, the two edits, the platform webhook's create and edit, the action, the review plan, a comment and its edit, the upload's create and complete, the deposit claim and refund address, the operator's settlement, the notification settings, a share's create and a guest session's, a guest's comment, its edit and decision, and a guest's code)", len(out))
	}
	return out
}

func TestABodyOverTheLimitIs413(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	// An operator: the operator API's body is read too (for anyone else
	// it is a 404 before the body).
	c, _ := signedInOperator(t, env, "Lena Large")
	env.AddGuest(t, c) // and a guest: the guest paths read bodies for guests only
	huge := `{"padding":"` + strings.Repeat("a", 1<<20) + `"}`
	for _, call := range bodyCalls(t) {
		t.Run(call.operationID, func(t *testing.T) {
			for _, size := range []int{bodyLimit + 1, len(huge)} {
				r := c.Do(call.method, call.path, huge[:size-2]+`"}`)
				if p := r.Problem(t); r.Status != http.StatusRequestEntityTooLarge || p.Code != "request_too_large" {
					t.Fatalf("%d bytes: got %d %s", size, r.Status, r.Body)
				}
			}
			// A body at the limit is read and judged on its content.
			atLimit := `{"padding":"` + strings.Repeat("a", bodyLimit-14) + `"}`
			if r := c.Do(call.method, call.path, atLimit); r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("a body of exactly %d bytes: %d %s", len(atLimit), r.Status, r.Body)
			}
		})
	}
	t.Run("a chunked body without Content-Length is cut at the limit", func(t *testing.T) {
		req, err := http.NewRequest("POST", env.Server.URL+"/api/v1/auth/sign-in", io.MultiReader(strings.NewReader(huge)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		res := send(t, req)
		if res.Status != http.StatusRequestEntityTooLarge || req.ContentLength != 0 {
			t.Fatalf("got %d %s (Content-Length %d)", res.Status, res.Body, req.ContentLength)
		}
	})
}

func TestDeeplyNestedJSONIsA4xx(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := signedInOperator(t, env, "Nico Nested")
	env.AddGuest(t, c)
	nest := func(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }
	for _, depth := range []int{64, 5_000, 9_999, 10_001, 30_000} {
		for _, call := range bodyCalls(t) {
			for _, body := range []string{nest(depth), `{"amount":` + nest(depth) + `}`, `{"action":` + nest(depth) + `}`} {
				r := c.Do(call.method, call.path, body)
				p := r.Problem(t)
				if r.Status != http.StatusBadRequest && r.Status != http.StatusUnprocessableEntity {
					t.Errorf("%s depth %d: %d %s", call.operationID, depth, r.Status, p.Code)
				}
			}
		}
	}
}

func TestHeadersOverTheLimitAre431OnEveryOperation(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Hugo Header")
	big := strings.Repeat("h", headerLimit)
	for _, call := range specCalls(t) {
		for _, h := range []testenv.Header{
			{Name: "X-Padding", Value: big},
			{Name: "Idempotency-Key", Value: big},
			{Name: "Cookie", Value: "session=" + big},
			{Name: "traceparent", Value: big},
		} {
			r := c.Do(call.method, call.path, call.body, h)
			if p := r.Problem(t); r.Status != http.StatusRequestHeaderFieldsTooLarge || p.Code != "request_too_large" {
				t.Errorf("%s with a %d-byte %s: %d %s", call.operationID, len(h.Value), h.Name, r.Status, r.Body)
			}
		}
	}
	t.Run("many small headers count together", func(t *testing.T) {
		req, _ := http.NewRequest("GET", env.Server.URL+"/healthz", nil)
		for i := range 2000 {
			req.Header.Add(fmt.Sprintf("X-H-%d", i), "0123456789")
		}
		if r := send(t, req); r.Status != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
	t.Run("headers just under the limit pass", func(t *testing.T) {
		if r := c.Do("GET", "/api/v1/me", nil, testenv.Header{Name: "X-Padding", Value: big[:headerLimit-2048]}); r.Status != http.StatusOK {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
}

func TestOddHeadersAreRefusedWithTheirProblem(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Ödön Ünicode")
	deposit := depositBody("25000000")
	tests := []struct {
		name   string
		method string
		path   string
		body   any
		header testenv.Header
		status int
		code   string
		// anonymous sends the request without the session.
		anonymous bool
	}{
		{"a non-ASCII Idempotency-Key is 422", "POST", "/api/v1/me/balance/deposits", deposit, testenv.Header{Name: "Idempotency-Key", Value: "ключ-1"}, 422, "invalid_request", false},
		{"an Idempotency-Key that is not UTF-8 is 422", "POST", "/api/v1/me/balance/deposits", deposit, testenv.Header{Name: "Idempotency-Key", Value: "key-\xff\xfe"}, 422, "invalid_request", false},
		{"an Idempotency-Key of 256 characters is 422", "POST", "/api/v1/me/balance/deposits", deposit, testenv.Header{Name: "Idempotency-Key", Value: strings.Repeat("k", 256)}, 422, "invalid_request", false},
		{"an Idempotency-Key of 8 KiB is 422", "POST", "/api/v1/me/balance/deposits", deposit, testenv.Header{Name: "Idempotency-Key", Value: strings.Repeat("k", 8<<10)}, 422, "invalid_request", false},
		{"an Idempotency-Key with a space is 422", "POST", "/api/v1/me/balance/deposits", deposit, testenv.Header{Name: "Idempotency-Key", Value: "a b"}, 422, "invalid_request", false},
		{"a non-ASCII CSRF token is 403", "POST", "/api/v1/me/balance/deposits", deposit, testenv.Header{Name: "X-CSRF-Token", Value: "tökén"}, 403, "csrf_failed", false},
		{"a non-ASCII session cookie is 401", "GET", "/api/v1/me", nil, testenv.Header{Name: "Cookie", Value: "session=sëssion"}, 401, "unauthenticated", true},
		{"a session cookie of 8 KiB is 401", "GET", "/api/v1/me", nil, testenv.Header{Name: "Cookie", Value: "session=" + strings.Repeat("s", 8<<10)}, 401, "unauthenticated", true},
		{"a non-ASCII Origin is 403", "POST", "/api/v1/me/balance/deposits", deposit, testenv.Header{Name: "Origin", Value: "https://exämple.test"}, 403, "csrf_failed", false},
		{"a non-ASCII Content-Type is 415", "POST", "/api/v1/me/balance/deposits", deposit, testenv.Header{Name: "Content-Type", Value: "application/jsön"}, 415, "unsupported_media_type", false},
		{"a non-ASCII traceparent is ignored", "GET", "/api/v1/me", nil, testenv.Header{Name: "traceparent", Value: "00-ä-b-01"}, 200, "", false},
		{"a non-ASCII header of our own is ignored", "GET", "/api/v1/me", nil, testenv.Header{Name: "X-Note", Value: "grüße 🎉"}, 200, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := c
			if tt.anonymous {
				client = env.Client(t)
			}
			r := client.Do(tt.method, tt.path, tt.body, tt.header)
			if r.Status != tt.status {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
			if tt.code != "" {
				if p := r.Problem(t); p.Code != tt.code {
					t.Fatalf("code %s: %s", p.Code, r.Body)
				}
			}
			if tt.header.Name == "Idempotency-Key" && tt.status == 422 {
				if p := r.Problem(t); len(p.FieldErrors) != 1 || p.FieldErrors[0].Field != "Idempotency-Key" {
					t.Fatalf("field errors: %s", r.Body)
				}
			}
		})
	}
	if n := count(t, env, "SELECT count(*) FROM deposits"); n != 0 {
		t.Fatalf("%d deposits were created by refused requests", n)
	}
}

// TestMalformedHeaderLinesNeverReachTheAPI documents the one refusal that is
// not a Problem: a header line HTTP itself forbids (a non-token name, a
// control character) is answered by net/http with a plain-text 400 before
// any handler runs, and the connection is closed.
func TestMalformedHeaderLinesNeverReachTheAPI(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	for _, line := range []string{"X-Nämé: 1", "X-Bell: \x07", "No colon here"} {
		status, _ := rawRequest(t, env.Server.Listener.Addr().String(), "GET /healthz HTTP/1.1\r\nHost: api.test\r\n"+line+"\r\n\r\n")
		if status != "HTTP/1.1 400 Bad Request" {
			t.Errorf("%q: %s", line, status)
		}
	}
}

func TestOddContentTypes(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Env: map[string]string{"DEPOSIT_MAX_OPEN_PER_USER": "100"}})
	c, _ := env.SignedIn(t, "Cora Content")
	tests := []struct {
		contentType string
		status      int
	}{
		{"application/json", 201},
		{"application/json; charset=utf-8", 201},
		{"Application/JSON", 201},
		{"application/json ; charset=UTF-8", 201},
		{"", 415},
		{"text/plain", 415},
		{"text/json", 415},
		{"application/x-www-form-urlencoded", 415},
		{"multipart/form-data; boundary=xyz", 415},
		{"application/merge-patch+json", 415},
		{"application/jsonx", 415},
		{"application/json;;", 415},
		{"application/json; charset", 415},
		{"*/*", 415},
		{"application/json, text/plain", 415},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.contentType), func(t *testing.T) {
			r := c.Do("POST", "/api/v1/me/balance/deposits", depositBody(fmt.Sprintf("%d0000", 2500+i)),
				testenv.Header{Name: "Content-Type", Value: tt.contentType})
			if r.Status != tt.status {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
			if tt.status == 415 && r.Problem(t).Code != "unsupported_media_type" {
				t.Fatalf("got %s", r.Body)
			}
		})
	}
}

func TestDuplicateJSONMembersAreMalformed(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, user := env.SignedIn(t, "Dupont Duplicate")
	org := env.DB.Org(t, "Dup Org")
	env.DB.Member(t, org, user, "author")
	creative := env.DB.DraftCreative(t, org, user)
	actions := fmt.Sprintf("/api/v1/organizations/%s/creatives/%s/actions", org, creative)
	deposits := "/api/v1/me/balance/deposits"
	tests := []struct {
		name, path, body, member string
	}{
		{"a repeated top-level member", actions, `{"action":"submit","action":"archive"}`, "action"},
		{"a repeated member with the same value", actions, `{"action":"submit","action":"submit"}`, "action"},
		{"a repeat spelled with an escape", actions, `{"action":"submit","\u0061ction":"archive"}`, "action"},
		{"a repeat after whitespace", actions, "{ \"action\" : \"submit\" ,\n\t\"comment\":\"a\", \"comment\" :\"b\"}", "comment"},
		{"a repeated nested member", deposits, `{"amount":{"amountMinor":"25000000","currency":"USDT","scale":6,"amountMinor":"99990000"}}`, "amountMinor"},
		{"a repeat in an unknown member's object", deposits, `{"amount":{"amountMinor":"25000000","currency":"USDT","scale":6},"x":[{"a":1,"a":2}]}`, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.Do("POST", tt.path, tt.body)
			p := r.Problem(t)
			if r.Status != http.StatusBadRequest || p.Code != "malformed_json" || !strings.Contains(p.Detail, `"`+tt.member+`"`) {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
		})
	}
	t.Run("the same name in different objects is no repeat", func(t *testing.T) {
		body := `{"amount":{"amountMinor":"25000000","currency":"USDT","scale":6},"x":[{"amount":1},{"amount":2}]}`
		if r := c.Do("POST", deposits, body); r.Status != http.StatusUnprocessableEntity || r.Problem(t).FieldErrors[0].Code != "unknown_field" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		body = `{"amount":{"amountMinor":"25000000","currency":"USDT","scale":6,"note":{"amountMinor":"1"}}}`
		if r := c.Do("POST", deposits, body); r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
	t.Run("an object of many members is checked whole", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(`{"action":"submit"`)
		for i := range 500 {
			fmt.Fprintf(&b, `,"m%d":%d`, i, i)
		}
		b.WriteString(`,"m250":0}`)
		r := c.Do("POST", actions, b.String())
		if p := r.Problem(t); r.Status != http.StatusBadRequest || !strings.Contains(p.Detail, `"m250"`) {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
	if n := count(t, env, "SELECT count(*) FROM creative_events"); n != 0 {
		t.Fatalf("%d events from refused requests", n)
	}
}

// TestSlowClientsAreCutOff runs the production server construction with
// short limits: a client that trickles its headers or body, or leaves a
// connection idle, is disconnected once its limit passes.
func TestSlowClientsAreCutOff(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	limits := httpapi.ServerLimits{
		ReadHeaderTimeout: 200 * time.Millisecond,
		ReadTimeout:       400 * time.Millisecond,
		WriteTimeout:      5 * time.Second,
		IdleTimeout:       300 * time.Millisecond,
	}
	addr := serve(t, httpapi.NewHTTPServer(env.Echo, limits, quietLog()))
	// bound is how long a test waits for the server to act: far beyond the
	// limits, so only a server that never cuts the client off fails.
	const bound = 10 * time.Second

	t.Run("headers sent too slowly: the connection is closed", func(t *testing.T) {
		conn := dial(t, addr, bound)
		write(t, conn, "GET /api/v1/me HTTP/1.1\r\nHost: api.test\r\nX-Slow: ")
		start := time.Now()
		n, err := conn.Read(make([]byte, 1))
		if !errors.Is(err, io.EOF) && !isReset(err) {
			t.Fatalf("read %d bytes, err %v after %s: the server kept the connection", n, err, time.Since(start))
		}
	})
	t.Run("a body sent too slowly: 400 Problem, then the connection is closed", func(t *testing.T) {
		token, csrf := rawSession(t, env)
		conn := dial(t, addr, bound)
		write(t, conn, "POST /api/v1/me/balance/deposits HTTP/1.1\r\nHost: api.test\r\nContent-Type: application/json\r\n"+
			"Content-Length: 200\r\nCookie: session="+token+"\r\nX-CSRF-Token: "+csrf+"\r\n\r\n{\"amount\":")
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		var p testenv.Problem
		if res.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &p) != nil || p.Code != "malformed_json" {
			t.Fatalf("got %d %s", res.StatusCode, body)
		}
		if !res.Close {
			t.Fatal("the connection stays open after a body that never arrived")
		}
		if n := count(t, env, "SELECT count(*) FROM deposits"); n != 0 {
			t.Fatalf("%d deposits from a body that never arrived", n)
		}
	})
	t.Run("an idle keep-alive connection is closed", func(t *testing.T) {
		conn := dial(t, addr, bound)
		write(t, conn, "GET /healthz HTTP/1.1\r\nHost: api.test\r\n\r\n")
		br := bufio.NewReader(conn)
		res, err := http.ReadResponse(br, nil)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("first request: %v %v", res, err)
		}
		_, _ = io.ReadAll(res.Body)
		if _, err := br.ReadByte(); !errors.Is(err, io.EOF) && !isReset(err) {
			t.Fatalf("idle connection: %v", err)
		}
	})
	t.Run("the production limits are set", func(t *testing.T) {
		l := httpapi.DefaultServerLimits(30 * time.Second)
		if l.ReadHeaderTimeout <= 0 || l.ReadTimeout <= 0 || l.IdleTimeout <= 0 || l.WriteTimeout <= 30*time.Second {
			t.Fatalf("limits %+v", l)
		}
		if s := httpapi.NewHTTPServer(env.Echo, l, quietLog()); s.MaxHeaderBytes <= headerLimit {
			t.Fatalf("net/http's header limit %d would answer before the API's %d", s.MaxHeaderBytes, headerLimit)
		}
	})
}

// send sends req with a plain client and validates the answer against the spec.
func send(t *testing.T, req *http.Request) *testenv.Response {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	r := &testenv.Response{Status: res.StatusCode, Header: res.Header, Body: body}
	if err := testenv.CheckResponse(req, r, t.Name()); err != nil {
		t.Errorf("%s %s → %d does not match openapi.yaml: %v", req.Method, req.URL.Path, r.Status, err)
	}
	return r
}

// rawSession inserts a session for a new user and returns its cookie value
// and CSRF token, for requests written by hand.
func rawSession(t testing.TB, env *testenv.Env) (token, csrf string) {
	t.Helper()
	user, _ := env.DB.User(t, "Raw Client")
	return sessionOf(t, env.DB, user)
}

// sessionOf inserts a session of user.
func sessionOf(t testing.TB, d *testenv.DB, user uuid.UUID) (token, csrf string) {
	t.Helper()
	token, csrf = auth.NewToken(), auth.NewToken()
	if _, err := d.Pool.Exec(context.Background(), `INSERT INTO sessions (user_id, token_hash, csrf_token, idle_expires_at, absolute_expires_at)
		VALUES ($1, $2, $3, now() + interval '1 hour', now() + interval '1 day')`, user, auth.HashToken(token), csrf); err != nil {
		t.Fatal(err)
	}
	return token, csrf
}

// serve runs srv on a loopback port until the test ends.
func serve(t *testing.T, srv *http.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

func dial(t *testing.T, addr string, bound time.Duration) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(bound))
	return conn
}

func write(t *testing.T, conn net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(conn, s); err != nil {
		t.Fatal(err)
	}
}

// rawRequest writes a request by hand and returns the status line and body.
func rawRequest(t *testing.T, addr, request string) (status string, body []byte) {
	t.Helper()
	conn := dial(t, addr, 10*time.Second)
	write(t, conn, request)
	all, _ := io.ReadAll(conn)
	head, rest, _ := bytes.Cut(all, []byte("\r\n\r\n"))
	line, _, _ := bytes.Cut(head, []byte("\r\n"))
	return string(line), rest
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}
