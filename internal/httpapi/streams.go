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
	"creativeapi/internal/creative"
	"creativeapi/internal/directory"
	"creativeapi/internal/events"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/store"
	"creativeapi/internal/stream"
)

// streamRoutes are the live streams' routes (a member's, a guest's): a
// stream lives as long as the client keeps it, so the request deadline
// (REQUEST_TIMEOUT) does not apply to it (observe).
var streamRoutes = map[string]bool{"/api/v1/me/events": true, "/api/v1/guest/events": true}

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
	orgs, err := directory.OrganizationIDs(ctx, s.store.Q, caller.UserID)
	if err != nil {
		return nil, err
	}
	body, err := s.openStream(ctx, resumeAfter(r.Params.LastEventID, r.Params.LastEventId), nil, func() (*stream.Sub, error) {
		return s.streams.Subscribe(ctx, caller.UserID, caller.SessionID, orgs)
	})
	if err != nil {
		return nil, err
	}
	return eventStream{body}, nil
}

// StreamGuestEvents serves a guest's live stream (openapi.yaml,
// streamGuestEvents; docs/shares.md, "The guest stream"): the member's
// stream with the hub's guest filter (stream.SubscribeGuest), and each
// creative event's data read again as the guest sees the creative.
func (s *Server) StreamGuestEvents(ctx context.Context, r api.StreamGuestEventsRequestObject) (api.StreamGuestEventsResponseObject, error) {
	g := guestOf(ctx)
	caller, _ := requestctx.CallerFrom(ctx)
	ids, err := s.store.Q.ShareCreativeIDs(ctx, g.ShareID)
	if err != nil {
		return nil, err
	}
	view := func(ctx context.Context, ev stream.Event) (stream.Event, error) {
		payload, err := creative.GuestEventPayload(ctx, s.store.Q, g, events.Type(ev.Type), ev.Payload)
		return stream.Event{Seq: ev.Seq, Type: ev.Type, Payload: payload}, err
	}
	body, err := s.openStream(ctx, resumeAfter(r.Params.LastEventID, r.Params.LastEventId), view, func() (*stream.Sub, error) {
		return s.streams.SubscribeGuest(ctx, g.ID, caller.SessionID, g.OrganizationID, ids)
	})
	if err != nil {
		return nil, err
	}
	return guestEventStream{body}, nil
}

// resumePoint is where a stream resumes: after the seq After, when Resume.
type resumePoint struct {
	After  int64
	Resume bool
}

// streamView turns an event as stored into the event a stream sends (a
// guest's creative events: the creative as the guest sees it).
type streamView func(context.Context, stream.Event) (stream.Event, error)

// openStream opens a stream from subscribe and answers its body: a pipe
// that pumpStream writes the events into. The stream's first page of a
// resume is read before the answer starts, so a failing database is still
// a Problem.
func (s *Server) openStream(ctx context.Context, from resumePoint, view streamView, subscribe func() (*stream.Sub, error)) (io.Reader, error) {
	sub, err := subscribe()
	switch {
	case errors.Is(err, stream.ErrTooManyForUser):
		return nil, &problem.Error{Status: http.StatusTooManyRequests, Code: problem.TooManyStreams, RetryAfter: 30,
			Detail: fmt.Sprintf("You have %d open event streams on this server; close one first.", s.streams.Config().MaxPerUser)}
	case errors.Is(err, stream.ErrTooMany), errors.Is(err, stream.ErrClosed):
		return nil, fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	case err != nil:
		return nil, err
	}
	var backlog stream.Page
	if from.Resume {
		if backlog, err = s.streams.Backlog(ctx, sub, from.After); err != nil {
			sub.Close()
			return nil, err
		}
	}
	if head, _ := ctx.Value(headKey{}).(bool); head {
		// HEAD: the headers of the stream, and no stream.
		sub.Close()
		return strings.NewReader(""), nil
	}
	pr, pw := io.Pipe()
	go s.pumpStream(ctx, sub, pw, from.After, backlog, view)
	return pr, nil
}

// resumeAfter is the seq the stream resumes after: Last-Event-ID, else the
// lastEventId parameter (the validator checked both are digits).
func resumeAfter(header, query *string) resumePoint {
	id := header
	if id == nil {
		id = query
	}
	if id == nil {
		return resumePoint{}
	}
	n, err := strconv.ParseInt(*id, 10, 64)
	return resumePoint{After: n, Resume: err == nil}
}

// pumpStream writes the stream into w until it ends: the retry line, the
// events the caller missed after after (backlog is their first page), the
// live events, and a heartbeat comment every Heartbeat. It ends when the
// client goes (ctx, or a failed write), when the hub ends the
// subscription, or when the database fails while catching up or reading
// an event's view (the client's reconnect resumes where the stream
// stopped). view, when set, turns each event into the one sent.
func (s *Server) pumpStream(ctx context.Context, sub *stream.Sub, w *io.PipeWriter, after int64, backlog stream.Page, view streamView) {
	defer sub.Close()
	defer w.Close()
	last := after
	send := func(ev stream.Event) error {
		if ev.Seq <= last {
			return nil // already sent (a resume's page and the live events meet)
		}
		if view != nil {
			var err error
			if ev, err = view(ctx, ev); err != nil {
				s.log.WarnContext(ctx, "stream: reading an event's view failed", "error", err, "trace_id", requestctx.TraceID(ctx))
				return err
			}
		}
		last = ev.Seq
		_, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, oneLine(ev.Payload))
		return err
	}
	if _, err := fmt.Fprintf(w, "retry: %d\n\n", streamRetryMillis); err != nil {
		return
	}
	for {
		for _, ev := range backlog.Events {
			if err := send(ev); err != nil {
				return
			}
		}
		if !backlog.More {
			break
		}
		var err error
		if backlog, err = s.streams.Backlog(ctx, sub, backlog.Last); err != nil {
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

// eventStream is the generated 200 answer of the member's stream, its
// body written through a writer that keeps the connection's deadlines per
// write (visitStream); guestEventStream is the guest's.
type eventStream struct{ body io.Reader }

// VisitStreamMyEventsResponse streams until the pipe ends.
func (e eventStream) VisitStreamMyEventsResponse(w http.ResponseWriter) error {
	return visitStream(w, func(w http.ResponseWriter) error {
		return api.StreamMyEvents200TexteventStreamResponse{Body: e.body}.VisitStreamMyEventsResponse(w)
	})
}

type guestEventStream struct{ body io.Reader }

// VisitStreamGuestEventsResponse streams until the pipe ends.
func (e guestEventStream) VisitStreamGuestEventsResponse(w http.ResponseWriter) error {
	return visitStream(w, func(w http.ResponseWriter) error {
		return api.StreamGuestEvents200TexteventStreamResponse{Body: e.body}.VisitStreamGuestEventsResponse(w)
	})
}

// visitStream writes a stream's generated answer (visit) through a writer
// that keeps the connection's deadlines per write: the server's
// ReadTimeout would otherwise cancel the request (net/http's background
// read fails when it passes) and its WriteTimeout cut the stream off. An
// error after the answer started (the client went away) is not the
// client's problem and has nowhere to go: the stream just ends.
func visitStream(w http.ResponseWriter, visit func(http.ResponseWriter) error) error {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	// Proxies such as nginx must pass each event on at once.
	w.Header().Set("X-Accel-Buffering", "no")
	_ = visit(&deadlineWriter{ResponseWriter: w, rc: rc})
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
