package events

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// ChannelWritten is notified when events were written: the publishers wake.
const ChannelWritten = "outbox_events"

// Listener holds one connection of its own (outside the request pool)
// LISTENing on the event channels, and wakes whoever waits on a channel.
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
	if _, err := conn.Exec(ctx, "LISTEN "+ChannelWritten); err != nil {
		return err
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
