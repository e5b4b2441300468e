package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"creativeapi"
	"creativeapi/internal/approval"
	"creativeapi/internal/auth"
	"creativeapi/internal/config"
	"creativeapi/internal/creative"
	"creativeapi/internal/deposit"
	"creativeapi/internal/docs"
	"creativeapi/internal/email"
	"creativeapi/internal/emailcap"
	"creativeapi/internal/events"
	"creativeapi/internal/httpapi"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/metrics"
	"creativeapi/internal/objectstore"
	"creativeapi/internal/ratelimit"
	"creativeapi/internal/seed"
	"creativeapi/internal/store"
	"creativeapi/internal/stream"
	"creativeapi/internal/sweeper"
	"creativeapi/internal/upload"
	"creativeapi/internal/webhooks"
)

// errDemoDataInProduction refuses the demo data outside development mode:
// its users share a published password.
var errDemoDataInProduction = errors.New("the demo data (users with the published password " + seed.DemoPassword + ") is for development only: set DEV_MODE=true")

// errDevchainInProduction refuses the chain simulator outside development
// mode: a production server must watch the real chain.
var errDevchainInProduction = errors.New("--devchain watches a simulated chain and is for development only: set DEV_MODE=true")

// serveUsage is serve's usage: its flags, then every setting of the
// configuration with its default, from config.Settings, so the defaults
// are written once.
var serveUsage = serveUsageText()

func serveUsageText() string {
	var b strings.Builder
	b.WriteString(`usage: creativeapi serve [--migrate] [--seed] [--devchain]

Runs the HTTP server.
  --migrate    apply the database migrations first
  --seed       load the demo data first (DEV_MODE=true only)
  --devchain   watch a local chain simulator on DEVCHAIN_ADDR instead of
               TRON_API_URL (DEV_MODE=true only)

Environment (defaults are production's; docs/configuration.md says what
each means):
`)
	line := func(left, help string) {
		const column = 34
		if len(left) >= column-3 {
			fmt.Fprintf(&b, "  %s\n  %*s%s\n", left, column-2, "", help)
			return
		}
		fmt.Fprintf(&b, "  %-*s%s\n", column-2, left, help)
	}
	for _, s := range config.Settings() {
		left := s.Name
		if s.Default != "" {
			left += "=" + s.Default
		}
		line(left, s.Help)
	}
	line(fmt.Sprintf("GOGC=%d GOMEMLIMIT=%dMiB", defaultGCPercent, defaultMemoryLimit>>20), "the Go runtime's, set by serve when unset")
	return b.String()
}

func cmdServe(ctx context.Context, e env, args []string) error {
	fs := newFlags("serve")
	migrate := fs.Bool("migrate", false, "apply migrations before serving")
	seedData := fs.Bool("seed", false, "load the demo data before serving")
	devchainOn := fs.Bool("devchain", false, "development: watch a local chain simulator (DEVCHAIN_ADDR) instead of TRON_API_URL")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load(e.getenv)
	if err != nil {
		return err
	}
	if *seedData && !cfg.DevMode {
		return errDemoDataInProduction
	}
	if *devchainOn && !cfg.DevMode {
		return errDevchainInProduction
	}
	tuneGC(e.getenv)
	log := newLogger(e.stdout, cfg.LogLevel)
	pool, closeDB, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeDB()
	approvals, err := approvalKeys(cfg)
	if err != nil {
		return err
	}
	objects, storeLine, closeObjects, err := openObjectStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeObjects()
	sender, mailLine, closeMail, err := openMail(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeMail()
	st := store.New(pool)
	if *migrate {
		if _, err := store.Migrate(ctx, pool, log); err != nil {
			return err
		}
		// A database seeded before the mark existed is marked by its migration.
		if err := refuseDevelopmentDatabase(ctx, cfg, pool); err != nil {
			return err
		}
	}
	if *seedData {
		if err := seed.Run(ctx, st, log, seed.Options{}); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	if cfg.DevMode {
		log.Warn("DEV_MODE=true: development server; never run production with it")
	}
	if !cfg.CookieSecure {
		log.Warn("COOKIE_SECURE=false: the session cookie is not Secure; use this for plain-http local development only")
	}
	if cookieNeverComesBack(cfg) {
		log.Warn("COOKIE_SECURE=true but PUBLIC_BASE_URL is plain http: browsers send a Secure cookie only over https, so no session would last; serve over https or, for local development only, set COOKIE_SECURE=false")
	}
	if cfg.TreasuryAddress == "" {
		log.Warn("TREASURY_ADDRESS is not set: deposit requests answer 503 deposits_unavailable")
	}
	chainLine, chainURL, metricsURL := "", "", ""
	if *devchainOn {
		url, stopChain, err := startDevchain(cfg, log)
		if err != nil {
			return err
		}
		defer stopChain()
		cfg.TronAPIURLs, chainURL = []string{url}, url
		chainLine = fmt.Sprintf("  Chain %s (simulator; pay a deposit: ./bin/creativeapi devchain pay --amount-minor <amountMinor>)\n", url)
	}

	// m stays nil, and nothing is measured, without METRICS_ADDR.
	var m *metrics.Metrics
	metricsLine := ""
	if cfg.MetricsAddr != "" {
		m = metrics.New()
		m.Register(metrics.PoolCollector(pool), metrics.DatabaseCollector(st, log, cfg.TreasuryAddress, cfg.TronUSDTContract))
		url, stopMetrics, err := serveMetrics(cfg.MetricsAddr, m, log)
		if err != nil {
			return err
		}
		defer stopMetrics()
		metricsURL = url
		metricsLine = fmt.Sprintf("  Metrics %s\n", url)
	}

	authSvc := auth.NewService(st, auth.SessionConfig{
		CookieSecure: cfg.CookieSecure, IdleTTL: cfg.SessionIdleTTL, AbsoluteTTL: cfg.SessionAbsoluteTTL,
	}, log)
	idem := idempotency.NewRunner(st, cfg.IdempotencyTTL, cfg.PublicBaseURL)
	if m != nil {
		idem.OnOutcome = m.IdempotentOutcome
	}
	hub := stream.NewHub(st, stream.Config{
		Heartbeat: cfg.StreamHeartbeat, MaxPerUser: cfg.StreamMaxPerUser, MaxTotal: cfg.StreamMax,
	}, log)
	limits := ratelimit.New(cfg.RateLimitReadsPerMinute, cfg.RateLimitCommandsPerMinute)
	handler, err := httpapi.New(httpapi.Deps{
		Config: cfg, Store: st, Log: log, Auth: authSvc, Idempotency: idem,
		SpecYAML: creativeapi.OpenAPIYAML, DocsHTML: docs.HTML,
		Changelog: creativeapi.APIChangelog, Metrics: m, Streams: hub, Objects: objects, Approvals: approvals,
		Limits: limits, Mail: sender,
	})
	if err != nil {
		return err
	}
	srv := httpapi.NewHTTPServer(handler, httpapi.DefaultServerLimits(cfg.RequestTimeout), log)
	// Open streams never end by themselves: the drain ends them first.
	srv.RegisterOnShutdown(hub.Close)
	ln, err := apiListener(cfg)
	if err != nil {
		return fmt.Errorf("listen on ADDR=%s (or the LISTEN_FDS socket): %w", cfg.Addr, err)
	}
	// Even net/http's own refusals (a path with a bad %-encoding) are Problems.
	ln = httpapi.ProblemListener(ln, cfg.PublicBaseURL)
	if cfg.PprofAddr != "" {
		if cfg.PprofContention {
			runtime.SetMutexProfileFraction(contentionSampling)
			runtime.SetBlockProfileRate(int(blockSampling))
		}
		go servePprof(cfg.PprofAddr, log)
	}

	sweepCtx, stopSweep := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSweep()
	go sweeper.Run(sweepCtx, cfg.SweepInterval, log, bounded(cfg.SweepInterval, sweepJobs(st, log, m))...)
	if limits.Enabled(ratelimit.Reads) || limits.Enabled(ratelimit.Commands) {
		go ratelimit.NewRegistry(limits, st, log).Run(sweepCtx)
	}
	if cfg.TreasuryAddress != "" {
		watched, err := startWatcher(sweepCtx, cfg, st, log, m)
		if err != nil {
			return err
		}
		defer func() { stopSweep(); <-watched }()
	}

	stopEvents, err := startEvents(sweepCtx, cfg, st, hub, log, m, objects, sender)
	if err != nil {
		return err
	}
	defer stopEvents()

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	base := httpURL(ln.Addr())
	log.Info("serving", "api", base+"/api/v1", "docs", base+"/docs", "spec", base+"/openapi.yaml")
	fmt.Fprintf(e.stderr, "\n  API   %s/api/v1\n  Docs  %s/docs\n%s%s%s", base, base, chainLine, metricsLine, storeLine+mailLine)
	if *seedData {
		fmt.Fprintf(e.stderr, "  Demo logins (password %s): %s\n", seed.DemoPassword, strings.Join(seed.DemoEmails(), ", "))
	}
	if cfg.DevMode {
		s := runState{PID: os.Getpid(), API: base + "/api/v1", Docs: base + "/docs", Metrics: metricsURL, Devchain: chainURL}
		if cfg.DatabaseURL == "" {
			s.Database = pool.Config().ConnString()
		}
		removeState, err := writeRunState(cfg.DataDir, s)
		if err != nil {
			return fmt.Errorf("write %s: %w", runStateFile, err)
		}
		defer removeState()
		fmt.Fprintf(e.stderr, "  Operator commands use this server's database and simulator; ./bin/creativeapi dev status shows them\n")
	}
	fmt.Fprintln(e.stderr)

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: draining in-flight requests", "timeout", cfg.ShutdownTimeout.String())
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// Garbage collection defaults of the server, where the environment sets
// none: a request allocates 20 to 30 KB over a live heap of a few MiB, so
// with Go's GOGC=100 the collector ran hundreds of times a second under
// load (its mark workers alone were 6% of a replay's CPU profile). GOGC=200
// collects half as often. The soft limit GOMEMLIMIT=32MiB makes it collect
// sooner should the heap near that, keeping the process under 60 MiB: the
// limit counts the memory the Go runtime manages, not the executable's own
// pages, and 24 to 29 MiB of those are resident (its code and tables, in
// /proc/PID/smaps; 4.5 MB more than before uploads: the executable grew
// from 37 to 47 MB, aws-sdk-go-v2 3.2 MB of its symbols). Peaks under load
// (go run ./bench, get, create and deposit at 16 clients, two runs each):
// 63.2 to 65.1 MiB with 40 MiB, 61.6 to 62.1 with 36 (one run), 56.9 to
// 59.6 with 32; the server's CPU per request within the machine's noise
// (get 388-471 µs with 40, 404-530 with 32; create 1.73-2.05 ms and
// 1.79-2.33; deposit 618-759 µs and 586-688). (GOGC=300 ran at the
// limit, where the collector works hardest.)
//
// The limit binds when many requests are in flight: each holds goroutine
// stacks (its connection's, and the one net/http runs to watch the
// connection once the body is read: 3.1 MB of stacks at 64 clients, 4.6
// MB at 128) and buffers, all counted by the limit. In the deposit sweep
// (go run ./bench -compare -sweep-only -sweep 64,128, 2026-11-26, with
// the shared session lookups) the server collected 2.2 to 2.3 times per
// thousand requests at 64 clients and 3.3 to 4.1 at 128 with 32 MiB: its
// allocator's CPU per request went from 32 to 50 µs (the collector's
// assists), most of its step from 64 to 128 clients. With 40 MiB: 1.8 and
// 1.5, but a peak RSS of 62 MiB; 36 MiB already took the comment lists at
// 16 clients to 60.9 to 62.9 MiB. The RSS target is 60 MiB: the limit
// stays at 32 MiB.
const (
	defaultGCPercent   = 200
	defaultMemoryLimit = 32 << 20
)

func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}

// contentionSampling records one lock contention in so many, and
// blockSampling one blocking event per so much time blocked, with
// PPROF_CONTENTION: enough to rank the waits of a benchmark run.
const (
	contentionSampling = 10
	blockSampling      = 100 * time.Microsecond
)

func servePprof(addr string, log interface{ Info(string, ...any) }) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	log.Info("pprof listening", "addr", addr)
	_ = (&http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}).ListenAndServe()
}

// sweepJobs are the periodic housekeeping of the server.
func sweepJobs(st *store.Store, log *slog.Logger, m *metrics.Metrics) []sweeper.Job {
	return []sweeper.Job{
		{Name: "idempotency keys", Run: func(ctx context.Context) error { return idempotency.Purge(ctx, st, log) }},
		{Name: "expired sessions", Run: func(ctx context.Context) error { return auth.PurgeSessions(ctx, st, log) }},
		{Name: "ended guest sessions", Run: func(ctx context.Context) error { return auth.PurgeGuestSessions(ctx, st, log) }},
		{Name: "sign-in failures", Run: func(ctx context.Context) error { return auth.PurgeSignInFailures(ctx, st, log) }},
		{Name: "email sends", Run: func(ctx context.Context) error {
			n, err := emailcap.Purge(ctx, st.Q)
			if n > 0 {
				log.Info("email ceiling records purged", "count", n)
			}
			return err
		}},
		deposit.SweepJob(st, log, m.DepositsExpired),
	}
}

// startEvents runs this replica's share of the events (docs/events.md):
// the outbox publisher, looking for unpublished events every
// EVENTS_POLL_INTERVAL, the webhook workers on River, and the stream hub,
// woken through its own LISTEN connection when events are published or a
// session ends. The returned function stops them, letting running attempts
// finish: each is bounded by WEBHOOK_TIMEOUT, and logging it by a few
// seconds more.
func startEvents(ctx context.Context, cfg config.Config, st *store.Store, hub *stream.Hub, log *slog.Logger, m *metrics.Metrics, objects *objectstore.Store, sender *email.Sender) (func(), error) {
	var more []func(*river.Workers) ([]*river.PeriodicJob, error)
	if objects != nil {
		// Pending uploads past their expiry are aborted by a job of the
		// same River client.
		more = append(more, upload.Jobs(st, objects, upload.NewLimits(cfg.OrgStorageQuotaBytes, cfg.UploadMaxBytes, cfg.UploadTTL, cfg.UploadURLTTL), log))
	}
	// Review stages due soon or overdue are announced by a job of the same
	// River client.
	more = append(more, creative.DueJobs(st, log))
	// Email notifications are made as events are published and sent by
	// jobs of the same River client (docs/email.md).
	var mail *email.Service
	queues := map[string]river.QueueConfig{}
	if sender != nil {
		var err error
		mail, err = email.NewService(st, sender, email.Config{
			AppURL: cfg.AppURL, APIURL: cfg.PublicBaseURL, Secret: cfg.UnsubscribeSecret, DigestHour: cfg.DigestHour,
			OnQueued: m.EmailQueued, OnSent: m.EmailSent, OnFailed: m.EmailFailed,
		}, log)
		if err != nil {
			return nil, err
		}
		more = append(more, mail.Register)
		queues[email.Queue] = mail.QueueConfig()
	}
	hooks, err := webhooks.New(st, webhooks.Config{
		Workers: cfg.WebhookWorkers, Timeout: cfg.WebhookTimeout, AllowPrivate: cfg.DevMode, Retention: cfg.EventsRetention,
		OnAttempt: m.WebhookAttempt, MoreJobs: allJobs(more), MoreQueues: queues,
	}, log)
	if err != nil {
		return nil, err
	}
	if err := hooks.Start(ctx); err != nil {
		return nil, fmt.Errorf("start the webhook workers (run migrate first?): %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	fanout := hooks.Fanout
	if mail != nil {
		fanout = events.Fanouts(hooks.Fanout, mail.Fanout)
	}
	publisher := events.NewPublisher(st, events.PublisherConfig{
		PollInterval: cfg.EventsPollInterval, OnPublished: m.EventsPublished,
	}, fanout, log)
	listener := stream.NewListener(st.Pool.Config().ConnConfig, log)
	published, revoked := listener.Wake(stream.ChannelPublished), listener.Wake(stream.ChannelSessionsRevoked)
	done := make(chan struct{}, 3)
	go func() { publisher.Run(ctx); done <- struct{}{} }()
	go func() { listener.Run(ctx); done <- struct{}{} }()
	go func() { hub.Run(ctx, published, revoked); done <- struct{}{} }()
	return func() {
		stopCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), cfg.WebhookTimeout+5*time.Second)
		defer stop()
		if err := hooks.Stop(stopCtx); err != nil {
			log.Warn("webhook workers did not stop cleanly", "error", err)
		}
		cancel()
		<-done
		<-done
		<-done
	}, nil
}

// allJobs registers the workers and periodic jobs of each of more.
func allJobs(more []func(*river.Workers) ([]*river.PeriodicJob, error)) func(*river.Workers) ([]*river.PeriodicJob, error) {
	if len(more) == 0 {
		return nil
	}
	return func(w *river.Workers) ([]*river.PeriodicJob, error) {
		var all []*river.PeriodicJob
		for _, f := range more {
			jobs, err := f(w)
			if err != nil {
				return nil, err
			}
			all = append(all, jobs...)
		}
		return all, nil
	}
}

// apiListener is the socket handed over as file descriptor 3
// (LISTEN_FDS=1), or a new one on ADDR.
func apiListener(cfg config.Config) (net.Listener, error) {
	if !cfg.ListenFD {
		return net.Listen("tcp", cfg.Addr)
	}
	f := os.NewFile(3, "LISTEN_FDS socket")
	defer f.Close() // FileListener keeps a copy
	return net.FileListener(f)
}

// serveMetrics serves m at /metrics on addr (METRICS_ADDR), on a listener
// of its own so the API's clients never reach it. It returns the URL and
// a stop function.
func serveMetrics(addr string, m *metrics.Metrics, log *slog.Logger) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("listen on METRICS_ADDR=%s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	url = httpURL(ln.Addr()) + "/metrics"
	log.Info("metrics listening", "url", url)
	return url, func() { _ = srv.Close() }, nil
}

// httpURL is http://addr, with a loopback address named localhost: the
// one host name of every URL a development server prints (config's
// default PUBLIC_BASE_URL says why).
func httpURL(addr net.Addr) string {
	if a, ok := addr.(*net.TCPAddr); ok && a.IP.IsLoopback() {
		return "http://" + net.JoinHostPort("localhost", strconv.Itoa(a.Port))
	}
	return "http://" + addr.String()
}

// bounded gives each run of a job at most timeout, so a sweep stuck on an
// unreachable database gives its connection back by the next interval.
func bounded(timeout time.Duration, jobs []sweeper.Job) []sweeper.Job {
	out := make([]sweeper.Job, len(jobs))
	for i, j := range jobs {
		out[i] = sweeper.Job{Name: j.Name, Run: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			return j.Run(ctx)
		}}
	}
	return out
}

// cookieNeverComesBack reports whether the session cookie is Secure while
// the service's public address is plain http, where browsers never send
// it. Loopback is the exception: browsers count http://localhost as secure.
func cookieNeverComesBack(cfg config.Config) bool {
	u, err := url.Parse(cfg.PublicBaseURL)
	if err != nil || !cfg.CookieSecure || u.Scheme != "http" {
		return false
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil && ip.IsLoopback() {
		return false
	}
	return u.Hostname() != "localhost"
}

const migrateUsage = `usage: creativeapi migrate

Applies the database migrations to DATABASE_URL (or, with DEV_MODE=true
and no DATABASE_URL, to the private PostgreSQL under DATA_DIR).
`

func cmdMigrate(ctx context.Context, e env, args []string) error {
	if err := parse(newFlags("migrate"), args); err != nil {
		return err
	}
	cfg, err := config.Load(e.getenv)
	if err != nil {
		return err
	}
	tuneGC(e.getenv)
	log := newLogger(e.stdout, cfg.LogLevel)
	pool, closeDB, err := openCommandDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeDB()
	n, err := store.Migrate(ctx, pool, log)
	if err != nil {
		return err
	}
	if err := refuseDevelopmentDatabase(ctx, cfg, pool); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "migrations: %d applied\n", n)
	return nil
}

const seedUsage = `usage: creativeapi seed [--creatives N]

Loads the demo data (DEV_MODE=true only; re-runnable); --creatives N adds
N extra draft creatives (benchmarks).
`

func cmdSeed(ctx context.Context, e env, args []string) error {
	fs := newFlags("seed")
	creatives := fs.Int("creatives", 0, "add this many extra draft creatives (benchmarks)")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load(e.getenv)
	if err != nil {
		return err
	}
	if !cfg.DevMode {
		return errDemoDataInProduction
	}
	tuneGC(e.getenv)
	log := newLogger(e.stdout, cfg.LogLevel)
	pool, closeDB, err := openCommandDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeDB()
	return seed.Run(ctx, store.New(pool), log, seed.Options{Creatives: *creatives})
}

// errNoApprovalKey refuses a production server without the key that signs
// approval records: records signed by a key made up at start-up could not
// be verified after a restart.
var errNoApprovalKey = errors.New("APPROVAL_SIGNING_KEY is not set: approval records need an Ed25519 private key (PEM text or a file's path; `openssl genpkey -algorithm ed25519`)")

// approvalKeys are the keys that sign approval records: the configured
// ones, or in development a key of its own under DATA_DIR, made the first
// time, so records stay verifiable across restarts.
func approvalKeys(cfg config.Config) (*approval.Keys, error) {
	key := cfg.ApprovalSigningKey
	if len(key) == 0 {
		if !cfg.DevMode {
			return nil, errNoApprovalKey
		}
		var err error
		if key, err = approval.DevKey(filepath.Join(cfg.DataDir, "approval-signing-key.pem")); err != nil {
			return nil, fmt.Errorf("the development approval signing key: %w", err)
		}
	}
	return approval.ParseKeys(key, cfg.ApprovalSigningKeyPrevious)
}
