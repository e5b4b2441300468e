// Package stream serves the live event streams of signed-in users and of
// guests (docs/events.md, "The live stream"; docs/shares.md): one Hub per
// replica reads the published outbox once for all of its streams and hands
// each stream the events its caller may see.
package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
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
	// byUser holds the streams of each user, and of each guest (a
	// guest's id owns no event: that key only counts their streams).
	byUser map[uuid.UUID]map[*Sub]struct{}
	byOrg  map[uuid.UUID]map[*Sub]struct{}
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
	// guest is the share a guest's stream is limited to; nil for a
	// member's stream.
	guest *guestScope
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
	return h.subscribe(ctx, userID, sessionID, orgs, nil)
}

// SubscribeGuest opens a stream for a guest session, carrying the events
// of the creatives of the guest's share that a guest may see (guestScope).
func (h *Hub) SubscribeGuest(ctx context.Context, guestID, sessionID, orgID uuid.UUID, creatives []uuid.UUID) (*Sub, error) {
	g := &guestScope{creatives: make(map[uuid.UUID]bool, len(creatives))}
	for _, id := range creatives {
		g.creatives[id] = true
	}
	return h.subscribe(ctx, guestID, sessionID, []uuid.UUID{orgID}, g)
}

func (h *Hub) subscribe(ctx context.Context, userID, sessionID uuid.UUID, orgs []uuid.UUID, guest *guestScope) (*Sub, error) {
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
		hub: h, userID: userID, sessionID: sessionID, orgs: slices.Clone(orgs), guest: guest, From: h.last,
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
			case r.OrganizationID != nil:
				to = h.byOrg[*r.OrganizationID]
			}
			var facts *eventFacts // read once, for the first guest's stream
			for s := range to {
				if !s.sees(ev, &facts) {
					continue
				}
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
	var members, guests []uuid.UUID
	for s := range h.subs {
		if sessions[s.sessionID] {
			continue
		}
		sessions[s.sessionID] = true
		if s.guest != nil {
			guests = append(guests, s.sessionID)
		} else {
			members = append(members, s.sessionID)
		}
	}
	h.mu.Unlock()
	live := make(map[uuid.UUID][]uuid.UUID, len(sessions))
	if len(members) > 0 {
		rows, err := h.st.Q.StreamAccessGet(ctx, members)
		if err != nil {
			return fmt.Errorf("stream access: %w", err)
		}
		for _, r := range rows {
			live[r.ID] = r.OrganizationIds
		}
	}
	if len(guests) > 0 {
		ids, err := h.st.Q.GuestStreamAccessGet(ctx, guests)
		if err != nil {
			return fmt.Errorf("guest stream access: %w", err)
		}
		for _, id := range ids {
			live[id] = nil
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if !sessions[s.sessionID] {
			continue // opened after the read
		}
		orgs, ok := live[s.sessionID]
		if !ok || (s.guest == nil && !slices.Equal(orgs, s.orgs)) {
			h.end(s)
		}
	}
	return nil
}

// Page is one page of a resumed stream's backlog: the events the caller
// may see, Last the seq the page read up to, More whether to read again
// after Last (the page was full; a guest's page may be full of events
// the guest may not see and hold none of them).
type Page struct {
	Events []Event
	Last   int64
	More   bool
}

// Backlog reads what a resumed stream missed: the caller's events after
// seq after, up to the stream's From, in order, one page of at most Batch
// events read.
func (h *Hub) Backlog(ctx context.Context, s *Sub, after int64) (Page, error) {
	owner := s.userID
	if s.guest != nil {
		owner = uuid.Nil // a guest owns no event
	}
	rows, err := h.st.Q.OutboxStreamForUser(ctx, db.OutboxStreamForUserParams{
		After: after, Until: s.From, UserID: owner, OrganizationIds: s.orgs, BatchSize: h.cfg.Batch,
	})
	if err != nil {
		return Page{}, err
	}
	p := Page{Events: make([]Event, 0, len(rows)), Last: after, More: len(rows) == int(h.cfg.Batch)}
	for _, r := range rows {
		ev := eventOf(r)
		p.Last = ev.Seq
		var facts *eventFacts
		if s.sees(ev, &facts) {
			p.Events = append(p.Events, ev)
		}
	}
	return p, nil
}

// Guest reports whether s is a guest's stream.
func (s *Sub) Guest() bool { return s.guest != nil }

// sees reports whether the stream's caller may see ev, an event of one of
// its organizations or of its user; facts holds ev's payload as read by
// the first guest's stream that asked (nil before).
func (s *Sub) sees(ev Event, facts **eventFacts) bool {
	if s.guest == nil {
		return events.MembersStream(events.Type(ev.Type))
	}
	if *facts == nil {
		*facts = readFacts(ev.Payload)
	}
	return s.guest.sees(events.Type(ev.Type), **facts)
}

// guestScope is what a guest's stream carries (docs/shares.md, "The
// guest stream"): the creative events of the share's creatives, without
// any comment marked internal, and nothing else (no share event, no
// member's own event).
type guestScope struct {
	creatives map[uuid.UUID]bool
}

func (g *guestScope) sees(t events.Type, f eventFacts) bool {
	switch {
	case !strings.HasPrefix(string(t), "creative.") || t == events.CreativeMentioned:
		return false
	case t == events.CreativeCommentAdded || t == events.CreativeCommentResolved:
		// A comment's visibility is checked by value: one that does not
		// say everyone is not a guest's.
		return f.Data.Visibility == api.Everyone && g.creatives[f.Data.CreativeID]
	default:
		return g.creatives[f.Data.ID]
	}
}

// eventFacts are the parts of a payload a guest's stream is filtered by:
// the creative's id (a creative event's data is the creative), or the
// comment's creative and visibility (a comment event's data is the
// comment).
type eventFacts struct {
	Data struct {
		ID         uuid.UUID             `json:"id"`
		CreativeID uuid.UUID             `json:"creativeId"`
		Visibility api.CommentVisibility `json:"visibility"`
	} `json:"data"`
}

// readFacts reads ev's facts; a payload that does not parse has none,
// which no guest sees.
func readFacts(payload []byte) *eventFacts {
	var f eventFacts
	if err := json.Unmarshal(payload, &f); err != nil {
		return &eventFacts{}
	}
	return &f
}

// SessionEnded tells every replica's hub that a session ended (sign-out),
// so its streams end now rather than at the next check.
func (h *Hub) SessionEnded(ctx context.Context) error {
	return h.st.Q.SessionRevokedNotify(ctx)
}
