package stream

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// ChannelPublished is notified when a publisher gave events their seq (the
// payload is the last one), once per published batch, not per command:
// the stream hubs wake.
const ChannelPublished = "outbox_published"

// Listener holds one connection of its own (outside the request pool)
// LISTENing on every channel something waits on (the stream hub's), and
// wakes whoever waits on a channel.
// After a reconnect it wakes everyone, since notices may have been lost.
type Listener struct {
	cfg *pgx.ConnConfig
	log *slog.Logger

	mu    sync.Mutex
	wakes map[string][]chan struct{}
}

// NewListener listens with connections made from cfg.
func NewListener(cfg *pgx.ConnConfig, log *slog.Logger) *Listener {
	return &Listener{cfg: cfg, log: log, wakes: map[string][]chan struct{}{}}
}

// Wake returns a channel that receives (coalesced) when channel is notified.
// Call it before Run.
func (l *Listener) Wake(channel string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := make(chan struct{}, 1)
	l.wakes[channel] = append(l.wakes[channel], c)
	return c
}

func (l *Listener) notify(channel string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for name, cs := range l.wakes {
		if channel != "" && name != channel {
			continue
		}
		for _, c := range cs {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}
}

// Run listens until ctx ends, reconnecting after failures.
func (l *Listener) Run(ctx context.Context) {
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := l.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		l.log.WarnContext(ctx, "event listener lost its connection; reconnecting", "error", err, "in", wait.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, 10*time.Second)
	}
}

func (l *Listener) listen(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.cfg.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	l.mu.Lock()
	channels := slices.Sorted(maps.Keys(l.wakes))
	l.mu.Unlock()
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	l.notify("")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.notify(n.Channel)
	}
}
