package testenv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
)

// eventStreamType is the media type of the live stream (streamMyEvents).
const eventStreamType = "text/event-stream"

func isEventStream(h http.Header) bool { return h.Get("Content-Type") == eventStreamType }

// Message is one message of an event stream: an event (ID, Event, Data),
// the retry line, or a comment (a heartbeat).
type Message struct {
	ID, Event, Data, Retry string
	Comments               []string
}

// readMessage reads up to the blank line that ends a message.
func readMessage(r *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		line, err := r.ReadBytes('\n')
		out = append(out, line...)
		if err != nil {
			return out, err
		}
		if len(line) == 1 {
			return out, nil
		}
	}
}

// parseMessage reads one message's lines (the WHATWG format, without the
// CR line ends the server never sends).
func parseMessage(raw []byte) (Message, error) {
	var m Message
	for _, line := range strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n") {
		if strings.HasPrefix(line, ":") {
			m.Comments = append(m.Comments, strings.TrimSpace(line[1:]))
			continue
		}
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "id":
			m.ID = value
		case "event":
			m.Event = value
		case "data":
			if m.Data != "" {
				return m, fmt.Errorf("a message with two data lines: %q", raw)
			}
			m.Data = value
		case "retry":
			m.Retry = value
		default:
			return m, fmt.Errorf("unknown field %q in %q", name, raw)
		}
	}
	return m, nil
}

// eventStreamDecoder checks a stream's body as openapi.yaml describes it
// for kin-openapi's response validation: every message is a retry line, a
// comment or an event whose id is a growing integer, whose event is its
// data's type and whose data is an EventPayload.
func eventStreamDecoder(doc *openapi3.T, options []openapi3.SchemaValidationOption) openapi3filter.BodyDecoder {
	payload := doc.Components.Schemas["EventPayload"].Value
	return func(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		raw, err := io.ReadAll(body)
		if err != nil {
			return nil, err
		}
		r := bufio.NewReader(bytes.NewReader(raw))
		last := int64(-1)
		for {
			msg, err := readMessage(r)
			if len(msg) > 0 && err == nil {
				if err := checkMessage(payload, options, msg, &last); err != nil {
					return nil, err
				}
			}
			if err == io.EOF {
				// A stream cut off mid-message (the reader hung up) is
				// judged by its whole messages.
				return string(raw), nil
			}
			if err != nil {
				return nil, err
			}
		}
	}
}

func checkMessage(payload *openapi3.Schema, options []openapi3.SchemaValidationOption, raw []byte, last *int64) error {
	m, err := parseMessage(raw)
	if err != nil {
		return err
	}
	if m.Retry != "" {
		if _, err := strconv.Atoi(m.Retry); err != nil {
			return fmt.Errorf("retry %q", m.Retry)
		}
	}
	if m.Data == "" && m.ID == "" && m.Event == "" {
		return nil
	}
	id, err := strconv.ParseInt(m.ID, 10, 64)
	if err != nil || id <= *last {
		return fmt.Errorf("event id %q after %d: want a growing integer", m.ID, *last)
	}
	*last = id
	var v any
	if err := json.Unmarshal([]byte(m.Data), &v); err != nil {
		return fmt.Errorf("event %s data is not JSON: %w", m.ID, err)
	}
	if err := payload.VisitJSON(v, options...); err != nil {
		return fmt.Errorf("event %s data is not an EventPayload: %w", m.ID, err)
	}
	if typ, _ := v.(map[string]any)["type"].(string); typ != m.Event {
		return fmt.Errorf("event %s: event %q, data type %q", m.ID, m.Event, typ)
	}
	return nil
}

// Stream is an open live stream, read message by message.
type Stream struct {
	t        testing.TB
	req      *http.Request
	res      *http.Response
	messages chan Message
	mu       sync.Mutex
	raw      []byte
	done     chan struct{}
	quit     chan struct{}
	once     sync.Once
}

// StreamWait bounds how long Next waits for a message.
const StreamWait = 15 * time.Second

// Stream opens path as an event stream; the answer must be a 200 stream
// (use Do for refusals). Its messages are checked against openapi.yaml when
// it is closed (Close, or the test's end).
func (c *Client) Stream(path string, headers ...Header) *Stream {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.base+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", eventStreamType)
	for _, h := range headers {
		req.Header.Set(h.Name, h.Value)
	}
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("GET %s: %v", path, err)
	}
	if res.StatusCode != http.StatusOK || !isEventStream(res.Header) {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		c.t.Fatalf("GET %s: %d %s %s, want a stream", path, res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	s := &Stream{t: c.t, req: req, res: res, messages: make(chan Message, 1024), done: make(chan struct{}), quit: make(chan struct{})}
	go s.read()
	c.t.Cleanup(s.Close)
	return s
}

func (s *Stream) read() {
	defer close(s.done)
	defer close(s.messages)
	r := bufio.NewReader(s.res.Body)
	for {
		raw, err := readMessage(r)
		if err != nil {
			return
		}
		s.mu.Lock()
		s.raw = append(s.raw, raw...)
		s.mu.Unlock()
		m, err := parseMessage(raw)
		if err != nil {
			s.t.Errorf("stream: %v", err)
			return
		}
		select {
		case s.messages <- m:
		case <-s.quit:
			return
		}
	}
}

// Next returns the next message; ok is false when the stream ended. It
// fails the test after StreamWait.
func (s *Stream) Next() (m Message, ok bool) {
	s.t.Helper()
	select {
	case m, ok = <-s.messages:
		return m, ok
	case <-time.After(StreamWait):
		s.t.Fatalf("no message from the stream within %s", StreamWait)
		return Message{}, false
	}
}

// NextEvent skips the retry line and heartbeats and returns the next event;
// ok is false when the stream ended first.
func (s *Stream) NextEvent() (m Message, ok bool) {
	s.t.Helper()
	for {
		if m, ok = s.Next(); !ok || m.ID != "" {
			return m, ok
		}
	}
}

// Ended waits for the server to end the stream, skipping what comes
// before; it fails the test after StreamWait.
func (s *Stream) Ended() {
	s.t.Helper()
	select {
	case <-s.done:
	case <-time.After(StreamWait):
		s.t.Fatalf("the stream did not end within %s", StreamWait)
	}
}

// Header is the stream's answer headers.
func (s *Stream) Header() http.Header { return s.res.Header }

// Close hangs up and checks what was read against openapi.yaml.
func (s *Stream) Close() {
	s.once.Do(func() {
		close(s.quit)
		s.res.Body.Close()
		<-s.done
		s.mu.Lock()
		raw := s.raw
		s.mu.Unlock()
		resp := &Response{Status: s.res.StatusCode, Header: s.res.Header, Body: raw}
		if err := CheckResponse(s.req, resp, s.t.Name()); err != nil {
			s.t.Errorf("GET %s → %d does not match openapi.yaml: %v\nbody: %s", s.req.URL.Path, resp.Status, err, raw)
		}
	})
}
