package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"creativeapi/gen/api"
	"creativeapi/internal/directory"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/store"
	"creativeapi/internal/stream"
)

// streamRoute is the live stream's route: it lives as long as the client
// keeps it, so the request deadline (REQUEST_TIMEOUT) does not apply to it
// (observe).
const streamRoute = "/api/v1/me/events"

// streamRetryMillis is the reconnection delay the stream asks of
// EventSource (its first line, "retry:").
const streamRetryMillis = 2000

// streamWriteTimeout bounds each write of a stream: a client that reads
// nothing for this long is cut off (and resumes with Last-Event-ID).
const streamWriteTimeout = 10 * time.Second

// StreamMyEvents serves the caller's live stream (openapi.yaml,
// streamMyEvents; docs/events.md, "The live stream").
//
// It returns the generated StreamMyEvents200TexteventStreamResponse, whose
// Visit copies its Body to the client and flushes after every read: the
// Body is a pipe that pumpStream writes the events into, so the answer on
// the wire is the generated one (its Content-Type, its status), and the
// tests validate it against the spec like any other (internal/testenv
// parses the events and checks each data line against EventPayload). What
// the generated code cannot know is that this answer outlives the server's
// read and write timeouts: eventStream gives it a writer with a deadline
// per write instead.
func (s *Server) StreamMyEvents(ctx context.Context, r api.StreamMyEventsRequestObject) (api.StreamMyEventsResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	after, resume := resumeAfter(r.Params)
	orgs, err := directory.OrganizationIDs(ctx, s.store.Q, caller.UserID)
	if err != nil {
		return nil, err
	}
	sub, err := s.streams.Subscribe(ctx, caller.UserID, caller.SessionID, orgs)
	switch {
	case errors.Is(err, stream.ErrTooManyForUser):
		return nil, &problem.Error{Status: http.StatusTooManyRequests, Code: problem.TooManyStreams, RetryAfter: 30,
			Detail: fmt.Sprintf("You have %d open event streams on this server; close one first.", s.streams.Config().MaxPerUser)}
	case errors.Is(err, stream.ErrTooMany), errors.Is(err, stream.ErrClosed):
		return nil, fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	case err != nil:
		return nil, err
	}
	// The first page of a resume is read before the answer starts, so a
	// failing database is still a Problem.
	var backlog []stream.Event
	if resume {
		if backlog, err = s.streams.Backlog(ctx, sub, after); err != nil {
			sub.Close()
			return nil, err
		}
	}
	if head, _ := ctx.Value(headKey{}).(bool); head {
		// HEAD: the headers of the stream, and no stream.
		sub.Close()
		return api.StreamMyEvents200TexteventStreamResponse{Body: strings.NewReader("")}, nil
	}
	pr, pw := io.Pipe()
	go s.pumpStream(ctx, sub, pw, after, backlog)
	return eventStream{StreamMyEvents200TexteventStreamResponse: api.StreamMyEvents200TexteventStreamResponse{Body: pr}}, nil
}

// resumeAfter is the seq the stream resumes after: Last-Event-ID, else the
// lastEventId parameter (the validator checked both are digits).
func resumeAfter(p api.StreamMyEventsParams) (after int64, ok bool) {
	id := p.LastEventID
	if id == nil {
		id = p.LastEventId
	}
	if id == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(*id, 10, 64)
	return n, err == nil
}

// pumpStream writes the stream into w until it ends: the retry line, the
// events the caller missed after after (backlog is their first page), the
// live events, and a heartbeat comment every Heartbeat. It ends when the
// client goes (ctx, or a failed write), when the hub ends the
// subscription, or when the database fails while catching up (the
// client's reconnect resumes where the stream stopped).
func (s *Server) pumpStream(ctx context.Context, sub *stream.Sub, w *io.PipeWriter, after int64, backlog []stream.Event) {
	defer sub.Close()
	defer w.Close()
	last := after
	send := func(ev stream.Event) error {
		if ev.Seq <= last {
			return nil // already sent (a resume's page and the live events meet)
		}
		last = ev.Seq
		_, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, oneLine(ev.Payload))
		return err
	}
	if _, err := fmt.Fprintf(w, "retry: %d\n\n", streamRetryMillis); err != nil {
		return
	}
	for len(backlog) > 0 {
		for _, ev := range backlog {
			if err := send(ev); err != nil {
				return
			}
		}
		if len(backlog) < int(s.streams.Config().Batch) {
			break
		}
		var err error
		if backlog, err = s.streams.Backlog(ctx, sub, last); err != nil {
			s.log.WarnContext(ctx, "stream: reading the backlog failed", "error", err, "trace_id", requestctx.TraceID(ctx))
			return
		}
	}
	heartbeat := time.NewTicker(s.streams.Config().Heartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sub.Done():
			return
		case ev := <-sub.Events():
			if err := send(ev); err != nil {
				return
			}
		case <-heartbeat.C:
			if _, err := io.WriteString(w, ": heartbeat\n\n"); err != nil {
				return
			}
		}
	}
}

// eventStream is the generated 200 answer of the stream, written through a
// writer that keeps the connection's deadlines per write: the server's
// ReadTimeout would otherwise cancel the request (net/http's background
// read fails when it passes) and its WriteTimeout cut the stream off.
type eventStream struct {
	api.StreamMyEvents200TexteventStreamResponse
}

// VisitStreamMyEventsResponse streams until the pipe ends. An error after
// the answer started (the client went away) is not the client's problem
// and has nowhere to go: the stream just ends.
func (e eventStream) VisitStreamMyEventsResponse(w http.ResponseWriter) error {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	// Proxies such as nginx must pass each event on at once.
	w.Header().Set("X-Accel-Buffering", "no")
	_ = e.StreamMyEvents200TexteventStreamResponse.VisitStreamMyEventsResponse(&deadlineWriter{ResponseWriter: w, rc: rc})
	// The connection may serve another request: net/http sets its own
	// deadlines for it where the server has timeouts, none where it has not.
	_ = rc.SetWriteDeadline(time.Time{})
	return nil
}

// deadlineWriter gives each write streamWriteTimeout.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	_ = d.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	return d.ResponseWriter.Write(p)
}

func (d *deadlineWriter) Flush() { _ = d.rc.Flush() }

// oneLine is a payload fit for one data line. Payloads are stored as
// written (json, docs/events.md) and ours are written compact; a line break
// (only possible between tokens, JSON strings escape theirs) would end the
// data line, so such a payload is compacted.
func oneLine(payload []byte) []byte {
	if !bytes.ContainsAny(payload, "\r\n") {
		return payload
	}
	var b bytes.Buffer
	if err := json.Compact(&b, payload); err != nil {
		// Not reached: the column accepts only valid JSON.
		return bytes.ReplaceAll(bytes.ReplaceAll(payload, []byte("\r"), nil), []byte("\n"), nil)
	}
	return b.Bytes()
}
