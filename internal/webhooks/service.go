package webhooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"creativeapi/gen/db"
	"creativeapi/internal/store"
)

// DefaultSchedule is the wait before each retry: about three days in all
// (71 h 43 min), 15 attempts. Each wait is jittered by ±20 %.
var DefaultSchedule = []time.Duration{
	5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour,
	12 * time.Hour, 12 * time.Hour, 12 * time.Hour, 12 * time.Hour, 8 * time.Hour,
}

// The outcomes of an attempt, as the OnAttempt hook hears them.
const (
	OutcomeSucceeded = "succeeded"
	OutcomeRetrying  = "retrying"
	OutcomeFailed    = "failed"
	OutcomeGone      = "gone"
)

// maxRetryAfter bounds how long a receiver's Retry-After may push an
// attempt back.
const maxRetryAfter = 24 * time.Hour

// The defaults of Config. internal/config's variables (WEBHOOK_TIMEOUT,
// WEBHOOK_WORKERS, EVENTS_RETENTION) default to these too.
const (
	DefaultTimeout   = 15 * time.Second
	DefaultWorkers   = 50
	DefaultRetention = 7 * 24 * time.Hour
	// DefaultMaxInFlightPerEndpoint is docs/events.md's bound: at most 4
	// deliveries in flight per endpoint.
	DefaultMaxInFlightPerEndpoint = 4
	// DefaultBusyWait is short enough that a busy endpoint's next delivery
	// goes soon after a slot frees, long enough that waiting deliveries
	// cost a claim a second each. Under River's scheduler interval (5 s),
	// a waiting job is available again at once rather than on the
	// scheduler's next run.
	DefaultBusyWait = time.Second
)

// recordBound bounds each database step around an attempt: reading the
// delivery, logging the attempt.
const recordBound = 5 * time.Second

// purgeTimeout bounds one run of the retention purge (its own bound: the
// deliveries' is far too short for it).
const purgeTimeout = 15 * time.Minute

// Config tunes the delivery; zero fields take defaults.
type Config struct {
	// Timeout bounds one attempt, connection included (DefaultTimeout).
	// A delivery whose worker died (its process was killed) is attempted
	// again, with the same webhook-id, once it has run for Timeout plus
	// the bounds of its two database steps (docs/events.md).
	Timeout time.Duration
	// Schedule is the wait before each retry (default DefaultSchedule).
	Schedule []time.Duration
	// Jitter spreads a wait (default ±20 % at random); tests fix it.
	Jitter func(time.Duration) time.Duration
	// Workers is how many attempts run at once per replica
	// (DefaultWorkers): a slow endpoint holds one of them for at most
	// Timeout.
	Workers int
	// MaxInFlightPerEndpoint is how many attempts may be in flight to one
	// endpoint at once, on every replica together
	// (DefaultMaxInFlightPerEndpoint): a slow receiver holds no more
	// workers than that, and the others serve the other endpoints.
	MaxInFlightPerEndpoint int
	// BusyWait is how long a delivery whose endpoint has
	// MaxInFlightPerEndpoint attempts in flight waits before it tries again
	// (default DefaultBusyWait, jittered), its worker freed meanwhile.
	BusyWait time.Duration
	// AllowPrivate lets webhooks reach loopback and private addresses and
	// use http (DEV_MODE only).
	AllowPrivate bool
	// Retention is how long finished deliveries, their attempts and
	// published events are kept (DefaultRetention).
	Retention time.Duration
	// FetchPollInterval is how often River looks for due jobs without a
	// notice (default River's, 1 s); retries become due by this poll.
	FetchPollInterval time.Duration
	// OnAttempt, when set, hears every logged attempt's outcome and how
	// long its request took (a metrics hook).
	OnAttempt func(outcome string, took time.Duration)
	// MoreJobs, when set, adds the workers and periodic jobs of other
	// packages (the expiry of uploads) to this replica's one River client.
	MoreJobs func(*river.Workers) ([]*river.PeriodicJob, error)
	// MoreQueues, when set, are the queues those workers need.
	MoreQueues map[string]river.QueueConfig
}

func (c *Config) defaults() {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Schedule == nil {
		c.Schedule = DefaultSchedule
	}
	if c.Jitter == nil {
		c.Jitter = func(d time.Duration) time.Duration {
			return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
		}
	}
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.MaxInFlightPerEndpoint <= 0 {
		c.MaxInFlightPerEndpoint = DefaultMaxInFlightPerEndpoint
	}
	if c.BusyWait <= 0 {
		c.BusyWait = DefaultBusyWait
	}
	if c.Retention <= 0 {
		c.Retention = DefaultRetention
	}
}

// jobTimeout is how long one delivery job may run: the attempt and its
// two database steps. River rescues a job running longer (its process
// died), so this is also when a killed replica's attempt is made again.
func (c *Config) jobTimeout() time.Duration { return c.Timeout + 2*recordBound }

// deliveryArgs is the River job of one delivery: all its attempts.
type deliveryArgs struct {
	DeliveryID uuid.UUID `json:"deliveryId"`
}

func (deliveryArgs) Kind() string { return "webhook_delivery" }

// purgeArgs is the periodic retention job.
type purgeArgs struct{}

func (purgeArgs) Kind() string { return "events_purge" }

const queue = "webhooks"

// Service sends deliveries: a River client working the webhooks queue.
type Service struct {
	cfg    Config
	st     *store.Store
	log    *slog.Logger
	client *river.Client[pgx.Tx]
	http   *http.Client
	// retryAt holds, per job, when its next attempt is due, from Work to
	// NextRetry (River asks for it right after Work returns).
	retryAt sync.Map
}

// New makes the service; Start runs it.
func New(st *store.Store, cfg Config, log *slog.Logger) (*Service, error) {
	cfg.defaults()
	s := &Service{cfg: cfg, st: st, log: log}
	s.http = &http.Client{
		Timeout: cfg.Timeout,
		Transport: &http.Transport{
			Proxy:                 nil, // a proxy would dial for us, past the address check
			DialContext:           Dialer(cfg.Timeout, cfg.AllowPrivate).DialContext,
			TLSHandshakeTimeout:   cfg.Timeout,
			ResponseHeaderTimeout: cfg.Timeout,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
		},
		// A redirect is an answer, not a place to go: it could lead anywhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &deliveryWorker{s: s}); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(workers, &purgeWorker{s: s}); err != nil {
		return nil, err
	}
	periodic := []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
		func() (river.JobArgs, *river.InsertOpts) { return purgeArgs{}, nil }, &river.PeriodicJobOpts{RunOnStart: true})}
	if cfg.MoreJobs != nil {
		more, err := cfg.MoreJobs(workers)
		if err != nil {
			return nil, err
		}
		periodic = append(periodic, more...)
	}
	queues := map[string]river.QueueConfig{queue: {MaxWorkers: cfg.Workers}, river.QueueDefault: {MaxWorkers: 1}}
	for name, q := range cfg.MoreQueues {
		queues[name] = q
	}
	client, err := river.NewClient(riverpgxv5.New(st.Pool), &river.Config{
		Schema:  store.RiverSchema,
		Logger:  log,
		Queues:  queues,
		Workers: workers,
		// Each worker bounds its own jobs (Timeout methods): one client-wide
		// bound would cut the purge short.
		JobTimeout: -1,
		// A job is rescued once it ran longer than its worker's bound; this
		// is the shortest of those.
		RescueStuckJobsAfter: cfg.jobTimeout(),
		FetchPollInterval:    cfg.FetchPollInterval,
		FetchCooldown:        fetchCooldown(cfg.FetchPollInterval),
		PeriodicJobs:         periodic,
	})
	if err != nil {
		return nil, err
	}
	s.client = client
	return s, nil
}

// fetchCooldown is River's default (100 ms) unless the poll is shorter.
func fetchCooldown(poll time.Duration) time.Duration {
	if poll > 0 && poll < 100*time.Millisecond {
		return poll
	}
	return 0
}

// Start works deliveries until Stop.
func (s *Service) Start(ctx context.Context) error { return s.client.Start(ctx) }

// Stop takes no new deliveries, lets running attempts finish (each is
// bounded by Timeout) and returns once none runs. If ctx ends first, it
// cancels the attempts still running and waits for them to log themselves
// (at most recordBound more); an attempt cut short is retried with the
// same webhook-id.
func (s *Service) Stop(ctx context.Context) error {
	err := s.client.Stop(ctx)
	if err == nil {
		return nil
	}
	cancelCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordBound+time.Second)
	defer cancel()
	return errors.Join(err, s.client.StopAndCancel(cancelCtx))
}

// Fanout creates, in the publishing transaction, one delivery and its job
// for each endpoint subscribed to each published event (events.Fanout).
func (s *Service) Fanout(ctx context.Context, tx pgx.Tx, q *db.Queries, published []db.OutboxPublishRow) error {
	eventIDs := make([]int64, len(published))
	for i, e := range published {
		eventIDs[i] = e.ID
	}
	ids, err := q.WebhookDeliveriesCreate(ctx, eventIDs)
	if err != nil || len(ids) == 0 {
		return err
	}
	jobs := make([]river.InsertManyParams, len(ids))
	for i, id := range ids {
		jobs[i] = river.InsertManyParams{Args: deliveryArgs{DeliveryID: id}, InsertOpts: jobOpts(s.cfg.Schedule)}
	}
	_, err = s.client.InsertManyFastTx(ctx, tx, jobs)
	return err
}

type deliveryWorker struct {
	river.WorkerDefaults[deliveryArgs]
	s *Service
}

func (w *deliveryWorker) Timeout(*river.Job[deliveryArgs]) time.Duration {
	return w.s.cfg.jobTimeout()
}

// NextRetry is when Work said the next attempt is due: the schedule's
// wait, or the receiver's Retry-After when longer.
func (w *deliveryWorker) NextRetry(job *river.Job[deliveryArgs]) time.Time {
	now := time.Now()
	if at, ok := w.s.retryAt.LoadAndDelete(job.ID); ok {
		// River refuses a time already past (and falls back to its own
		// schedule): a wait shorter than recording the attempt took is due now.
		return later(at.(time.Time), now.Add(time.Millisecond))
	}
	return now.Add(w.s.wait(job.Attempt, 0))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// wait is the time before the retry after attempt n.
func (s *Service) wait(n int, retryAfter time.Duration) time.Duration {
	i := min(max(n-1, 0), len(s.cfg.Schedule)-1)
	d := s.cfg.Jitter(s.cfg.Schedule[i])
	return max(d, min(retryAfter, maxRetryAfter))
}

// errRetry makes River schedule the next attempt.
type errRetry struct{ reason string }

func (e errRetry) Error() string { return "webhook attempt failed: " + e.reason }

func (w *deliveryWorker) Work(ctx context.Context, job *river.Job[deliveryArgs]) error {
	s := w.s
	readCtx, cancelRead := context.WithTimeout(ctx, recordBound)
	defer cancelRead()
	d, err := s.st.Q.WebhookDeliveryForAttempt(readCtx, job.Args.DeliveryID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // its endpoint was deleted
	} else if err != nil {
		return err
	}
	if d.Status != "pending" {
		return nil
	}
	if !d.Enabled {
		return s.st.Q.WebhookDeliveryCancel(readCtx, d.ID)
	}
	// Fair across endpoints: an endpoint with its attempts in flight
	// already makes this one wait, its worker free for other endpoints.
	claimed, err := s.claim(readCtx, d.ID, d.EndpointID)
	if err != nil {
		return err
	}
	if !claimed {
		return river.JobSnooze(s.cfg.Jitter(s.cfg.BusyWait))
	}
	res := s.send(ctx, d)
	rec := db.WebhookAttemptRecordParams{
		DeliveryID: d.ID, Attempt: int32(job.Attempt), StartedAt: res.started,
		DurationMs: int32(res.duration.Milliseconds()), ResponseStatus: res.status, Error: res.err,
	}
	outcome := OutcomeRetrying
	var next time.Time
	switch {
	case res.status != nil && *res.status >= 200 && *res.status < 300:
		outcome, rec.Status = OutcomeSucceeded, "succeeded"
	case res.status != nil && *res.status == http.StatusGone:
		outcome, rec.Status = OutcomeGone, "failed"
	case job.Attempt >= job.MaxAttempts:
		outcome, rec.Status = OutcomeFailed, "failed"
	default:
		rec.Status = "pending"
		next = time.Now().Add(s.wait(job.Attempt, res.retryAfter))
		rec.NextAttemptAt = &next
	}
	// The attempt was made: it is logged even when the job's context ended
	// during it (Stop cancelled it).
	recordCtx, cancelRecord := context.WithTimeout(context.WithoutCancel(ctx), recordBound)
	defer cancelRecord()
	err = s.st.InTx(recordCtx, func(q store.Tx) error {
		if outcome == OutcomeGone {
			gone := "gone"
			if err := q.Next().WebhookEndpointDisable(recordCtx, db.WebhookEndpointDisableParams{ID: d.EndpointID, Reason: &gone}); err != nil {
				return err
			}
		}
		return q.WebhookAttemptRecord(recordCtx, rec)
	})
	if err != nil {
		// Attempted again, with the same webhook-id. Should this have been
		// the last attempt, the delivery stays pending with nothing to
		// finish it: the purge ends it (WebhookDeliveriesAbandon).
		return err
	}
	if s.cfg.OnAttempt != nil {
		s.cfg.OnAttempt(outcome, res.duration)
	}
	if outcome == OutcomeGone {
		s.log.WarnContext(ctx, "webhook endpoint answered 410 Gone; disabled", "endpoint", d.EndpointID.String())
	}
	if outcome != OutcomeRetrying {
		return nil
	}
	s.retryAt.Store(job.ID, next)
	reason := "no answer"
	if res.status != nil {
		reason = "status " + strconv.Itoa(int(*res.status))
	} else if res.err != nil {
		reason = *res.err
	}
	return errRetry{reason}
}

// claim marks delivery in flight if its endpoint has fewer than
// MaxInFlightPerEndpoint attempts in flight, on any replica: the claims of
// one endpoint take turns on its advisory lock, and the count is read
// after it. The claim is a lease as long as the job's bound: the attempt's
// record ends it, and a replica that dies lets it run out when River
// rescues the job.
func (s *Service) claim(ctx context.Context, delivery, endpoint uuid.UUID) (bool, error) {
	var n int64
	err := s.st.InTx(ctx, func(q store.Tx) error {
		if err := q.WebhookEndpointInFlightLock(ctx, endpoint); err != nil {
			return err
		}
		var err error
		n, err = q.WebhookDeliveryClaim(ctx, db.WebhookDeliveryClaimParams{
			LeaseSeconds: s.cfg.jobTimeout().Seconds(), DeliveryID: delivery, EndpointID: endpoint,
			MaxInFlight: int32(s.cfg.MaxInFlightPerEndpoint),
		})
		return err
	})
	return n == 1, err
}

// result is what one attempt saw.
type result struct {
	started    time.Time
	duration   time.Duration
	status     *int32
	err        *string
	retryAfter time.Duration
}

// send makes one signed attempt.
func (s *Service) send(ctx context.Context, d db.WebhookDeliveryForAttemptRow) result {
	res := result{started: time.Now()}
	fail := func(err error) result {
		// net/http's error names the URL, whose query may hold the
		// receiver's own token; River logs a failed job's error, and no
		// secret reaches a log (docs/events.md): the owner knows the URL.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = fmt.Errorf("%s: %w", uerr.Op, uerr.Err)
		}
		msg := err.Error()
		if len(msg) > 500 {
			msg = msg[:500]
		}
		res.err = &msg
		res.duration = time.Since(res.started)
		return res
	}
	id := d.MessageID.String() // the delivery's id, or a redelivery's message
	sig, err := Sign(d.Secret, id, res.started, d.Payload)
	if err != nil {
		return fail(err)
	}
	if d.PreviousSecret != nil && d.PreviousSecretUntil != nil && res.started.Before(*d.PreviousSecretUntil) {
		// After a rotation both secrets sign, space-separated, until the
		// previous one's overlap ends (RotateSecret).
		previous, err := Sign(*d.PreviousSecret, id, res.started, d.Payload)
		if err != nil {
			return fail(err)
		}
		sig += " " + previous
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Url, strings.NewReader(string(d.Payload)))
	if err != nil {
		return fail(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "creativeapi-webhooks/1")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(res.started.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := s.http.Do(req)
	if err != nil {
		return fail(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	res.duration = time.Since(res.started)
	code := int32(resp.StatusCode)
	res.status = &code
	res.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	return res
}

// parseRetryAfter reads seconds or an HTTP date; zero when absent or bad.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

type purgeWorker struct {
	river.WorkerDefaults[purgeArgs]
	s *Service
}

func (w *purgeWorker) Timeout(*river.Job[purgeArgs]) time.Duration { return purgeTimeout }

// Work deletes finished deliveries and published events older than the
// retention, in batches.
func (w *purgeWorker) Work(ctx context.Context, _ *river.Job[purgeArgs]) error {
	n, err := w.s.Purge(ctx, time.Now().Add(-w.s.cfg.Retention))
	if n > 0 {
		w.s.log.InfoContext(ctx, "events purged", "rows", n)
	}
	return err
}

// Purge ends abandoned deliveries, then deletes finished deliveries (with
// their attempts) and published events no delivery waits for, older than
// cutoff.
func (s *Service) Purge(ctx context.Context, cutoff time.Time) (int64, error) {
	const batch = 1000
	var total int64
	for _, step := range []func() (int64, error){
		func() (int64, error) {
			return s.st.Q.WebhookDeliveriesAbandon(ctx, db.WebhookDeliveriesAbandonParams{Cutoff: cutoff, BatchSize: batch})
		},
		func() (int64, error) {
			return s.st.Q.WebhookDeliveriesPurge(ctx, db.WebhookDeliveriesPurgeParams{Cutoff: cutoff, BatchSize: batch})
		},
		func() (int64, error) {
			return s.st.Q.OutboxPurge(ctx, db.OutboxPurgeParams{Cutoff: cutoff, BatchSize: batch})
		},
	} {
		for range 100 {
			n, err := step()
			if err != nil {
				return total, fmt.Errorf("purge: %w", err)
			}
			total += n
			if n < batch {
				break
			}
		}
	}
	return total, nil
}
