package httpapi

import (
	"bytes"
	"net"
	"net/http"
	"strconv"

	"creativeapi/internal/problem"
)

// netHTTPErrorHeaders are the headers of the answers net/http writes
// itself, before any handler runs, to a request it cannot read (a request
// line whose path has a bad percent-encoding, %zz; a malformed Host):
// "HTTP/1.1 400 Bad Request" in text/plain. A handler's answer always has
// a Date header, so it never starts this way.
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// ProblemListener wraps ln so that the answers net/http writes itself go
// out as Problems, like every other answer of the API. baseURL is the
// {base_url} of their type.
func ProblemListener(ln net.Listener, baseURL string) net.Listener {
	return problemListener{ln, baseURL}
}

type problemListener struct {
	net.Listener
	baseURL string
}

func (l problemListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &problemConn{Conn: c, baseURL: l.baseURL}, nil
}

type problemConn struct {
	net.Conn
	baseURL string
}

// Write sends p, or, when p is one of net/http's own plain-text refusals
// (written whole, in one call, on a connection it then closes), the same
// status as a Problem.
func (c *problemConn) Write(p []byte) (int, error) {
	status, ok := netHTTPRefusal(p)
	if !ok {
		return c.Conn.Write(p)
	}
	var e *problem.Error
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		e = problem.New(status, problem.RequestTooLarge, "The request headers are too large.")
	case http.StatusBadRequest:
		e = problem.New(status, problem.InvalidRequest, "The request line or headers could not be read: check the path's percent-encoding (%%XX, two hex digits) and the Host header.")
	default:
		e = problem.New(status, problem.InvalidRequest, "%s", http.StatusText(status))
	}
	body := problem.Marshal(c.baseURL, traceIDFrom(""), e)
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	b.WriteString("Content-Type: application/json\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n")
	b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	b.Write(body)
	if _, err := c.Conn.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite lets net/http half-close the connection after a refusal, as
// it does on the TCP connection this one wraps.
func (c *problemConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// netHTTPRefusal is the status of p when p is an answer net/http wrote
// itself: "HTTP/1.1 4xx ..." followed at once by netHTTPErrorHeaders.
func netHTTPRefusal(p []byte) (int, bool) {
	const prefix = "HTTP/1.1 "
	if len(p) < len(prefix)+3 || !bytes.HasPrefix(p, []byte(prefix)) || p[len(prefix)] != '4' {
		return 0, false
	}
	end := bytes.Index(p, []byte("\r\n"))
	if end < 0 || !bytes.HasPrefix(p[end:], []byte(netHTTPErrorHeaders)) {
		return 0, false
	}
	status, err := strconv.Atoi(string(p[len(prefix) : len(prefix)+3]))
	return status, err == nil
}
