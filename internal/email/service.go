package email

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"creativeapi/gen/db"
	"creativeapi/internal/share"
	"creativeapi/internal/store"
)

// Queue is the River queue of the email jobs.
const Queue = "email"

// maxAttempts bounds the tries of one notification: River's backoff
// (attempt⁴ seconds, jittered) spreads 12 over about 11 hours: an SMTP
// outage of an evening is survived.
const maxAttempts = 12

// Config configures the notifications.
type Config struct {
	// AppURL is the frontend links point under; APIURL the API's public
	// base URL (the unsubscribe link). Neither has a trailing slash.
	AppURL, APIURL string
	// Secret signs the unsubscribe tokens.
	Secret string
	// DigestHour is the daily digest's hour, UTC.
	DigestHour int
	// Workers is how many emails one replica sends at once (default 4).
	Workers int
	// OnQueued, OnSent and OnFailed, when set, hear each notification
	// queued, each email sent and each failed attempt, by kind (metrics).
	OnQueued, OnSent func(kind string)
	OnFailed         func(kind string, permanent bool)
}

// Service makes notifications from published events and sends them.
type Service struct {
	cfg    Config
	st     *store.Store
	sender *Sender
	log    *slog.Logger
	tokens Tokens
	// inserter inserts jobs; the workers run on the replica's one River
	// client (Register adds them to it).
	inserter *river.Client[pgx.Tx]
	msgHost  string
	// invitations opens the share tokens sealed for invitation emails
	// (share.Sealer, the same secret's key as the server's).
	invitations *share.Sealer
}

// NewService makes the service; sender sends every email.
func NewService(st *store.Store, sender *Sender, cfg Config, log *slog.Logger) (*Service, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	inserter, err := river.NewClient(riverpgxv5.New(st.Pool), &river.Config{Schema: store.RiverSchema, Logger: log})
	if err != nil {
		return nil, err
	}
	host := "creativeapi"
	if u, err := url.Parse(cfg.APIURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	invitations, err := share.NewSealer(cfg.Secret)
	if err != nil {
		return nil, err
	}
	return &Service{cfg: cfg, st: st, sender: sender, log: log, tokens: NewTokens(cfg.Secret), inserter: inserter, msgHost: host,
		invitations: invitations}, nil
}

// Tokens are the service's unsubscribe tokens.
func (s *Service) Tokens() Tokens { return s.tokens }

// notificationArgs is the job of one notification: all its attempts.
type notificationArgs struct {
	NotificationID uuid.UUID `json:"notificationId"`
}

func (notificationArgs) Kind() string { return "email_notification" }

// digestArgs is the daily digest run.
type digestArgs struct{}

func (digestArgs) Kind() string { return "email_digest" }

// Register adds the service's workers and the daily digest to a River
// client's workers; the client must work Queue.
func (s *Service) Register(workers *river.Workers) ([]*river.PeriodicJob, error) {
	if err := river.AddWorkerSafely(workers, &notificationWorker{s: s}); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(workers, &addressWorker{s: s}); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(workers, &digestWorker{s: s}); err != nil {
		return nil, err
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(dailyAt(s.cfg.DigestHour),
		func() (river.JobArgs, *river.InsertOpts) { return digestArgs{}, &river.InsertOpts{Queue: Queue} }, nil)}, nil
}

// QueueConfig is the River queue the workers need.
func (s *Service) QueueConfig() river.QueueConfig {
	return river.QueueConfig{MaxWorkers: s.cfg.Workers}
}

// Fanout makes the notifications of published events and their jobs in
// the publishing transaction (events.Fanout): an event's change and its
// event commit together, and its publication and its notifications'
// jobs, so each notification is queued exactly once.
func (s *Service) Fanout(ctx context.Context, tx pgx.Tx, q *db.Queries, published []db.OutboxPublishRow) error {
	ids := make([]int64, 0, len(published))
	for _, e := range published {
		if notifiable(e.Type) {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	made, err := q.NotificationsCreate(ctx, ids)
	if err != nil || len(made) == 0 {
		return err
	}
	jobs := make([]river.InsertManyParams, len(made))
	for i, n := range made {
		// A notification to an address (a guest) has its own job.
		var args river.JobArgs = notificationArgs{NotificationID: n.ID}
		if n.ToAddress {
			args = addressArgs{NotificationID: n.ID}
		}
		jobs[i] = river.InsertManyParams{Args: args, InsertOpts: &river.InsertOpts{Queue: Queue, MaxAttempts: maxAttempts}}
	}
	if _, err := s.inserter.InsertManyFastTx(ctx, tx, jobs); err != nil {
		return err
	}
	if s.cfg.OnQueued != nil {
		for _, n := range made {
			s.cfg.OnQueued(n.Kind)
		}
	}
	return nil
}

// notifiable reports whether events of type t may notify someone
// (NotificationsCreate decides who).
func notifiable(t string) bool {
	switch t {
	case "creative.comment_added", "creative.approved", "creative.changes_requested", "creative.submitted",
		"creative.updated", "creative.stage_approved", "creative.stage_due_soon", "creative.stage_overdue",
		"deposit.credited", "deposit.under_review", "deposit.refunded", "share.created":
		return true
	}
	return false
}

// The states of a notification (the notifications table).
const (
	stateQueued   = "queued"
	stateSent     = "sent"
	stateDigest   = "digest"
	stateDropped  = "dropped"
	stateFailed   = "failed"
	settingOff    = "off"
	settingDaily  = "daily"
	sendTimeLimit = sendTimeout + 10*time.Second
)

type notificationWorker struct {
	river.WorkerDefaults[notificationArgs]
	s *Service
}

func (w *notificationWorker) Timeout(*river.Job[notificationArgs]) time.Duration {
	return sendTimeLimit
}

// Work sends one notification, or drops it: to someone who turned its
// kind or email off, or who can no longer see what it is about. A daily
// reader's notification waits for the digest. A permanent refusal is
// logged once and cancels the job; any other failure is retried.
func (w *notificationWorker) Work(ctx context.Context, job *river.Job[notificationArgs]) error {
	s := w.s
	n, err := s.st.Q.NotificationGet(ctx, job.Args.NotificationID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // its user or resource was deleted
	}
	if err != nil {
		return err
	}
	if n.State != stateQueued {
		return nil
	}
	switch {
	case !n.HasAccess || !n.KindOn || n.Setting == settingOff:
		return s.setState(ctx, n.ID, stateDropped)
	case n.Setting == settingDaily:
		return s.setState(ctx, n.ID, stateDigest)
	}
	it, err := describe(n, s.cfg.AppURL)
	if err != nil {
		return river.JobCancel(err)
	}
	var d detail
	_ = json.Unmarshal(n.Detail, &d)
	m, err := s.message(n.ID.String(), n.Email, subjectOf(it, d), n.UserID, n.Kind, []item{it})
	if err != nil {
		return river.JobCancel(err)
	}
	return s.send(ctx, n.Kind, m, s.marker(n.ID))
}

// send sends m and records the outcome with mark (nil: a digest, whose
// notifications are already marked).
func (s *Service) send(ctx context.Context, kind string, m Message, mark func(context.Context, string) error) error {
	err := s.sender.Send(ctx, m)
	if err == nil {
		if s.cfg.OnSent != nil {
			s.cfg.OnSent(kind)
		}
		if mark == nil {
			return nil
		}
		return mark(ctx, stateSent)
	}
	permanent := errors.Is(err, ErrPermanent)
	if s.cfg.OnFailed != nil {
		s.cfg.OnFailed(kind, permanent)
	}
	if !permanent {
		return err
	}
	s.log.Error("email refused for good: not retried", "kind", kind, "message_id", m.ID, "error", err)
	if mark != nil {
		if serr := mark(ctx, stateFailed); serr != nil {
			return serr
		}
	}
	return river.JobCancel(err)
}

func (s *Service) setState(ctx context.Context, id uuid.UUID, state string) error {
	return s.st.Q.NotificationStateSet(ctx, db.NotificationStateSetParams{ID: id, State: state})
}

// marker is mark of send for notification id.
func (s *Service) marker(id uuid.UUID) func(context.Context, string) error {
	return func(ctx context.Context, state string) error { return s.setState(ctx, id, state) }
}

// message builds an email to one person; unsubscribe names the kind its
// one-click link turns off.
func (s *Service) message(id, to, subject string, user uuid.UUID, unsubscribe string, items []item) (Message, error) {
	unsub := s.cfg.APIURL + "/api/v1/unsubscribe?token=" + url.QueryEscape(s.tokens.Sign(user, unsubscribe))
	text, html, err := render(page{Title: subject, Items: items, Unsubscribe: unsub, Settings: s.cfg.AppURL + "/settings/notifications"})
	if err != nil {
		return Message{}, err
	}
	return Message{ID: id + "@" + s.msgHost, To: to, Subject: subject, Text: text, HTML: html, Unsubscribe: unsub}, nil
}

type digestWorker struct {
	river.WorkerDefaults[digestArgs]
	s *Service
}

func (w *digestWorker) Timeout(*river.Job[digestArgs]) time.Duration { return 30 * time.Minute }

// Work sends each daily reader one email listing their waiting
// notifications; nobody with nothing waiting gets one.
func (w *digestWorker) Work(ctx context.Context, job *river.Job[digestArgs]) error {
	return w.s.SendDigests(ctx, time.Now())
}

// SendDigests sends the digests due at now. A person's notifications are
// marked digested after their email is sent, and its Message-ID is derived
// from the first of them, so a digest sent again after a crash between the
// two is the same mail.
func (s *Service) SendDigests(ctx context.Context, now time.Time) error {
	users, err := s.st.Q.NotificationsDigestUsers(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, user := range users {
		if err := s.digest(ctx, user); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Service) digest(ctx context.Context, user uuid.UUID) error {
	ids, err := s.st.Q.NotificationsDigestList(ctx, user)
	if err != nil || len(ids) == 0 {
		return err
	}
	var items []item
	var to string
	for _, id := range ids {
		n, err := s.st.Q.NotificationGet(ctx, id)
		if err != nil {
			return err
		}
		if !n.HasAccess || !n.KindOn || n.Setting == settingOff {
			continue
		}
		it, err := describe(n, s.cfg.AppURL)
		if err != nil {
			return err
		}
		items, to = append(items, it), n.Email
	}
	if len(items) > 0 {
		subject := fmt.Sprintf("Your daily summary: %d notification", len(items))
		if len(items) > 1 {
			subject += "s"
		}
		m, err := s.message("digest-"+ids[0].String(), to, subject, user, KindDigest, items)
		if err != nil {
			return err
		}
		if err := s.send(ctx, KindDigest, m, nil); err != nil && !errors.Is(err, ErrPermanent) {
			return err
		}
	}
	return s.st.Q.NotificationsDigested(ctx, ids)
}

// dailyAt is River's schedule of the digest: every day at hour:00 UTC.
type dailyAt int

func (h dailyAt) Next(t time.Time) time.Time {
	t = t.UTC()
	next := time.Date(t.Year(), t.Month(), t.Day(), int(h), 0, 0, 0, time.UTC)
	if !next.After(t) {
		next = next.AddDate(0, 0, 1)
	}
	return next
}
