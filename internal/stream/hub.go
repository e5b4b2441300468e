// Package stream serves the live event streams of signed-in users
// (docs/events.md, "The live stream"): one Hub per replica reads the
// published outbox once for all of its streams and hands each stream the
// events its caller may see.
package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/events"
	"creativeapi/internal/store"
)

// ChannelSessionsRevoked is notified when a session ended (sign-out): every
// hub rechecks its streams' sessions at once.
const ChannelSessionsRevoked = "sessions_revoked"

// Errors of Subscribe.
var (
	// ErrTooManyForUser: the user holds Config.MaxPerUser streams on this replica.
	ErrTooManyForUser = errors.New("stream: too many streams for this user")
	// ErrTooMany: this replica serves Config.MaxTotal streams.
	ErrTooMany = errors.New("stream: too many streams on this replica")
	// ErrClosed: the hub stopped (the server is shutting down).
	ErrClosed = errors.New("stream: the hub is closed")
)

// Config tunes a Hub; zero fields take defaults.
type Config struct {
	// Heartbeat is how often a stream sends a comment line, and how often
	// the hub rechecks its streams' sessions and memberships (default 15 s).
	Heartbeat time.Duration
	// MaxPerUser bounds one user's streams on this replica (default 10).
	MaxPerUser int
	// MaxTotal bounds the streams of this replica (default 1000).
	MaxTotal int
	// PollInterval is how often the hub reads the outbox without being
	// woken (default 1 s): a lost notice delays events by at most this.
	PollInterval time.Duration
	// Buffer is how many events wait for a slow stream before the hub ends
	// it; the client's reconnect resumes where it stopped (default 256).
	Buffer int
	// Batch bounds the events one read takes (default 500).
	Batch int32
}

func (c Config) withDefaults() Config {
	if c.Heartbeat <= 0 {
		c.Heartbeat = 15 * time.Second
	}
	if c.MaxPerUser <= 0 {
		c.MaxPerUser = 10
	}
	if c.MaxTotal <= 0 {
		c.MaxTotal = 1000
	}
	if c.PollInterval <= 0 {
		c.PollInterval = time.Second
	}
	if c.Buffer <= 0 {
		c.Buffer = 256
	}
	if c.Batch <= 0 {
		c.Batch = 500
	}
	return c
}

// Event is one published event as a stream sends it.
type Event struct {
	Seq     int64
	Type    string
	Payload []byte
}

// eventOf converts an outbox row read by seq (so seq is set).
func eventOf(r db.OutboxEvent) Event {
	var seq int64
	if r.Seq != nil {
		seq = *r.Seq
	}
	return Event{Seq: seq, Type: r.Type, Payload: r.Payload}
}

// Hub reads newly published events for every stream of its replica, so a
// replica costs one read per publication, not one per stream, and rechecks
// the streams' sessions and memberships in one statement per Heartbeat.
type Hub struct {
	st  *store.Store
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	started bool  // last is read from the outbox
	last    int64 // the last seq handed to the streams
	closed  bool
	subs    map[*Sub]struct{}
	byUser  map[uuid.UUID]map[*Sub]struct{}
	byOrg   map[uuid.UUID]map[*Sub]struct{}
}

// NewHub makes a hub; Run makes it deliver.
func NewHub(st *store.Store, cfg Config, log *slog.Logger) *Hub {
	return &Hub{
		st: st, cfg: cfg.withDefaults(), log: log,
		subs: map[*Sub]struct{}{}, byUser: map[uuid.UUID]map[*Sub]struct{}{}, byOrg: map[uuid.UUID]map[*Sub]struct{}{},
	}
}

// Config is the hub's configuration with its defaults.
func (h *Hub) Config() Config { return h.cfg }

// Open is how many streams the hub serves now.
func (h *Hub) Open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Sub is one open stream: the events its caller may see arrive on Events
// from seq From+1 on, until Done closes.
type Sub struct {
	hub       *Hub
	userID    uuid.UUID
	sessionID uuid.UUID
	orgs      []uuid.UUID
	// From is the last seq the hub had handed on when the stream
	// subscribed: older events are the stream's to read (a resume), newer
	// ones arrive on Events.
	From   int64
	events chan Event
	done   chan struct{}
	ended  bool
}

// Events delivers the stream's live events in seq order.
func (s *Sub) Events() <-chan Event { return s.events }

// Done closes when the hub ends the stream: the session ended, the
// memberships changed, the stream fell Buffer events behind, or the hub
// closed.
func (s *Sub) Done() <-chan struct{} { return s.done }

// Organizations are the organizations whose events the stream carries.
func (s *Sub) Organizations() []uuid.UUID { return s.orgs }

// Close ends the stream's subscription; closing twice is harmless.
func (s *Sub) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.end(s)
}

// Subscribe opens a stream for a session's user, carrying the user's
// deposit events and the creative events of orgs (the user's memberships,
// as read now).
func (h *Hub) Subscribe(ctx context.Context, userID, sessionID uuid.UUID, orgs []uuid.UUID) (*Sub, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return nil, ErrClosed
	case len(h.subs) >= h.cfg.MaxTotal:
		return nil, ErrTooMany
	case len(h.byUser[userID]) >= h.cfg.MaxPerUser:
		return nil, ErrTooManyForUser
	}
	if err := h.startLocked(ctx); err != nil {
		return nil, err
	}
	s := &Sub{
		hub: h, userID: userID, sessionID: sessionID, orgs: slices.Clone(orgs), From: h.last,
		events: make(chan Event, h.cfg.Buffer), done: make(chan struct{}),
	}
	slices.SortFunc(s.orgs, compareUUID)
	h.subs[s] = struct{}{}
	add(h.byUser, userID, s)
	for _, o := range s.orgs {
		add(h.byOrg, o, s)
	}
	return s, nil
}

// startLocked reads where the outbox stands, once: streams start there.
func (h *Hub) startLocked(ctx context.Context) error {
	if h.started {
		return nil
	}
	last, err := h.st.Q.OutboxSeqLast(ctx)
	if err != nil {
		return err
	}
	h.last, h.started = last, true
	return nil
}

// end removes s and closes its Done; h.mu is held.
func (h *Hub) end(s *Sub) {
	if s.ended {
		return
	}
	s.ended = true
	close(s.done)
	delete(h.subs, s)
	remove(h.byUser, s.userID, s)
	for _, o := range s.orgs {
		remove(h.byOrg, o, s)
	}
}

func add(m map[uuid.UUID]map[*Sub]struct{}, k uuid.UUID, s *Sub) {
	if m[k] == nil {
		m[k] = map[*Sub]struct{}{}
	}
	m[k][s] = struct{}{}
}

func remove(m map[uuid.UUID]map[*Sub]struct{}, k uuid.UUID, s *Sub) {
	delete(m[k], s)
	if len(m[k]) == 0 {
		delete(m, k)
	}
}

func compareUUID(a, b uuid.UUID) int {
	for i := range a {
		if a[i] != b[i] {
			return int(a[i]) - int(b[i])
		}
	}
	return 0
}

// Run delivers until ctx ends, then closes the hub: it reads the outbox
// whenever published says events were published and every PollInterval,
// and rechecks the streams whenever revoked says a session ended and every
// Heartbeat.
func (h *Hub) Run(ctx context.Context, published, revoked <-chan struct{}) {
	defer h.Close()
	poll := time.NewTicker(h.cfg.PollInterval)
	defer poll.Stop()
	check := time.NewTicker(h.cfg.Heartbeat)
	defer check.Stop()
	for {
		if err := h.read(ctx); err != nil && ctx.Err() == nil {
			h.log.WarnContext(ctx, "stream hub: reading the outbox failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-published:
		case <-poll.C:
		case <-revoked:
			h.checkLogged(ctx)
		case <-check.C:
			h.checkLogged(ctx)
		}
	}
}

// Close ends every stream and refuses new ones (server shutdown: open
// streams must not hold the graceful drain).
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		h.end(s)
	}
}

// read hands every event published since the last read to the streams
// that may see it. Only read moves last once started, so events reach a
// stream exactly in seq order, each once.
func (h *Hub) read(ctx context.Context) error {
	h.mu.Lock()
	err := h.startLocked(ctx)
	after := h.last
	h.mu.Unlock()
	if err != nil {
		return err
	}
	for {
		rows, err := h.st.Q.OutboxStreamAfter(ctx, db.OutboxStreamAfterParams{After: after, BatchSize: h.cfg.Batch})
		if err != nil || len(rows) == 0 {
			return err
		}
		h.mu.Lock()
		for _, r := range rows {
			ev := eventOf(r)
			var to map[*Sub]struct{}
			switch {
			case r.UserID != nil:
				to = h.byUser[*r.UserID]
			case r.OrganizationID != nil && events.MembersStream(events.Type(r.Type)):
				to = h.byOrg[*r.OrganizationID]
			}
			for s := range to {
				select {
				case s.events <- ev:
				default:
					// Behind by Buffer events: the stream ends and its
					// reconnect resumes from the outbox.
					h.end(s)
				}
			}
			h.last = ev.Seq
		}
		after = h.last
		h.mu.Unlock()
		if len(rows) < int(h.cfg.Batch) {
			return nil
		}
	}
}

func (h *Hub) checkLogged(ctx context.Context) {
	if err := h.check(ctx); err != nil && ctx.Err() == nil {
		h.log.WarnContext(ctx, "stream hub: rechecking sessions failed", "error", err)
	}
}

// check ends the streams whose session ended or whose user's memberships
// changed since they opened (their reconnect answers 401, or resumes with
// the new organizations).
func (h *Hub) check(ctx context.Context) error {
	h.mu.Lock()
	sessions := map[uuid.UUID]bool{}
	for s := range h.subs {
		sessions[s.sessionID] = true
	}
	h.mu.Unlock()
	if len(sessions) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, 0, len(sessions))
	for id := range sessions {
		ids = append(ids, id)
	}
	rows, err := h.st.Q.StreamAccessGet(ctx, ids)
	if err != nil {
		return fmt.Errorf("stream access: %w", err)
	}
	live := make(map[uuid.UUID][]uuid.UUID, len(rows))
	for _, r := range rows {
		live[r.ID] = r.OrganizationIds
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if !sessions[s.sessionID] {
			continue // opened after the read
		}
		orgs, ok := live[s.sessionID]
		if !ok || !slices.Equal(orgs, s.orgs) {
			h.end(s)
		}
	}
	return nil
}

// Backlog reads what a resumed stream missed: the caller's events after
// seq after, up to the stream's From, in order, at most Batch of them
// (call again from the last one while a full batch comes back).
func (h *Hub) Backlog(ctx context.Context, s *Sub, after int64) ([]Event, error) {
	rows, err := h.st.Q.OutboxStreamForUser(ctx, db.OutboxStreamForUserParams{
		After: after, Until: s.From, UserID: s.userID, OrganizationIds: s.orgs, BatchSize: h.cfg.Batch,
	})
	if err != nil {
		return nil, err
	}
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = eventOf(r)
	}
	return out, nil
}

// SessionEnded tells every replica's hub that a session ended (sign-out),
// so its streams end now rather than at the next check.
func (h *Hub) SessionEnded(ctx context.Context) error {
	return h.st.Q.SessionRevokedNotify(ctx)
}
