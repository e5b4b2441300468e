package httpapi_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"testing"

	"creativeapi/internal/httpapi"
)

// TestEveryAnswerIsAProblemEvenOneNetHTTPWritesItself: a path with a bad
// percent-encoding is refused by net/http before any handler runs; the
// client still gets a Problem, not text/plain.
func TestEveryAnswerIsAProblemEvenOneNetHTTPWritesItself(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "a handler's own answer")
	})}
	go func() { _ = srv.Serve(httpapi.ProblemListener(ln, "http://api.test")) }()
	t.Cleanup(func() { _ = srv.Close() })
	send := func(request string) (*http.Response, []byte) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, request); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, body
	}
	for _, path := range []string{"/api/v1/organizations/%zz/creatives", "/api/v1/%", "/%e"} {
		resp, body := send("GET " + path + " HTTP/1.1\r\nHost: api.test\r\n\r\n")
		var p struct {
			Status int    `json:"status"`
			Code   string `json:"code"`
			Type   string `json:"type"`
		}
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" ||
			json.Unmarshal(body, &p) != nil || p.Status != 400 || p.Code != "invalid_request" || p.Type != "http://api.test/problems/invalid_request" {
			t.Errorf("%s: %d %s %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	// A handler's answer, even a text/plain 4xx that closes, goes out as written.
	if resp, body := send("GET /ok HTTP/1.1\r\nHost: api.test\r\n\r\n"); resp.StatusCode != http.StatusNotFound || string(body) != "a handler's own answer" {
		t.Errorf("the handler's answer: %d %s", resp.StatusCode, body)
	}
}
