package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"creativeapi"
	"creativeapi/internal/auth"
	"creativeapi/internal/config"
	"creativeapi/internal/deposit"
	"creativeapi/internal/docs"
	"creativeapi/internal/events"
	"creativeapi/internal/httpapi"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/logbuffer"
	"creativeapi/internal/metrics"
	"creativeapi/internal/seed"
	"creativeapi/internal/store"
	"creativeapi/internal/stream"
	"creativeapi/internal/sweeper"
	"creativeapi/internal/webhooks"
)

// errDemoDataInProduction refuses the demo data outside development mode:
// its users share a published password.
var errDemoDataInProduction = errors.New("the demo data (users with the published password " + seed.DemoPassword + ") is for development only: set DEV_MODE=true")

// errDevchainInProduction refuses the chain simulator outside development
// mode: a production server must watch the real chain.
var errDevchainInProduction = errors.New("--devchain watches a simulated chain and is for development only: set DEV_MODE=true")

func cmdServe(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	migrate := fs.Bool("migrate", false, "apply migrations before serving")
	seedData := fs.Bool("seed", false, "load the demo data before serving")
	devchainOn := fs.Bool("devchain", false, "development: watch a local chain simulator (DEVCHAIN_ADDR) instead of TRON_API_URL")
	if err := fs.Parse(args); err != nil {
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
	// The request log writes a line per request: buffered, they cost a
	// write per batch instead of per line. Deferred first, Close runs last,
	// after every other line of a clean shutdown.
	logw := logbuffer.New(e.stdout, logBufferSize, logFlushInterval)
	defer logw.Close()
	log := newLogger(logw, cfg.LogLevel)
	pool, closeDB, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeDB()
	st := store.New(pool)
	if *migrate {
		if _, err := store.Migrate(ctx, pool, log); err != nil {
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
	if cfg.TreasuryAddress == "" {
		log.Warn("TREASURY_ADDRESS is not set: deposit requests answer 503 deposits_unavailable")
	}
	chainLine := ""
	if *devchainOn {
		url, stopChain, err := startDevchain(cfg, log)
		if err != nil {
			return err
		}
		defer stopChain()
		cfg.TronAPIURLs = []string{url}
		chainLine = fmt.Sprintf("  Chain %s (simulator; pay a deposit: ./bin/creativeapi devchain pay --amount <requestedAmount>)\n", url)
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
	handler, err := httpapi.New(httpapi.Deps{
		Config: cfg, Store: st, Log: log, Auth: authSvc, Idempotency: idem,
		SpecYAML: creativeapi.OpenAPIYAML, DocsHTML: docs.HTML,
		Changelog: creativeapi.APIChangelog, Metrics: m, Streams: hub,
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
	if cfg.PprofAddr != "" {
		go servePprof(cfg.PprofAddr, log)
	}

	sweepCtx, stopSweep := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSweep()
	go sweeper.Run(sweepCtx, cfg.SweepInterval, log, bounded(cfg.SweepInterval, sweepJobs(st, log, m))...)
	if cfg.TreasuryAddress != "" {
		watched, err := startWatcher(sweepCtx, cfg, st, log, m)
		if err != nil {
			return err
		}
		defer func() { stopSweep(); <-watched }()
	}

	stopEvents, err := startEvents(sweepCtx, cfg, st, hub, log, m)
	if err != nil {
		return err
	}
	defer stopEvents()

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	log.Info("serving", "api", base+"/api/v1", "docs", base+"/docs", "spec", base+"/openapi.yaml")
	fmt.Fprintf(e.stderr, "\n  API   %s/api/v1\n  Docs  %s/docs\n%s%s", base, base, chainLine, metricsLine)
	if *seedData {
		fmt.Fprintf(e.stderr, "  Demo logins (password %s): %s\n", seed.DemoPassword, strings.Join(seed.DemoEmails(), ", "))
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

// The server's log buffer: a request line is about 300 bytes, so 64 KiB
// holds a couple of hundred; a held line waits at most logFlushInterval
// (a crash loses at most that much of the log, a clean shutdown nothing).
const (
	logBufferSize    = 64 << 10
	logFlushInterval = 100 * time.Millisecond
)

// Garbage collection defaults of the server, where the environment sets
// none: a request allocates 20 to 30 KB over a live heap of a few MiB, so
// with Go's GOGC=100 the collector ran hundreds of times a second under
// load (its mark workers alone were 6% of a replay's CPU profile). GOGC=200
// collects half as often. The soft limit GOMEMLIMIT=40MiB makes it collect
// sooner should the heap near that, keeping the process under 60 MiB: the
// limit counts the memory the Go runtime manages, not the executable's own
// pages, and about 18 MiB of those are resident (its code and tables,
// measured in /proc/PID/smaps under load). With 48 MiB, peaks reached
// 61.8 MiB. (GOGC=300 ran at the limit, where the collector works hardest.)
const (
	defaultGCPercent   = 200
	defaultMemoryLimit = 40 << 20
)

func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}

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
		{Name: "sign-in failures", Run: func(ctx context.Context) error { return auth.PurgeSignInFailures(ctx, st, log) }},
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
func startEvents(ctx context.Context, cfg config.Config, st *store.Store, hub *stream.Hub, log *slog.Logger, m *metrics.Metrics) (func(), error) {
	hooks, err := webhooks.New(st, webhooks.Config{
		Workers: cfg.WebhookWorkers, Timeout: cfg.WebhookTimeout, AllowPrivate: cfg.DevMode, Retention: cfg.EventsRetention,
		OnAttempt: m.WebhookAttempt,
	}, log)
	if err != nil {
		return nil, err
	}
	if err := hooks.Start(ctx); err != nil {
		return nil, fmt.Errorf("start the webhook workers (run migrate first?): %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	publisher := events.NewPublisher(st, events.PublisherConfig{
		PollInterval: cfg.EventsPollInterval, OnPublished: m.EventsPublished,
	}, hooks.Fanout, log)
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
	url = "http://" + ln.Addr().String() + "/metrics"
	log.Info("metrics listening", "url", url)
	return url, func() { _ = srv.Close() }, nil
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

func cmdMigrate(ctx context.Context, e env, args []string) error {
	cfg, err := config.Load(e.getenv)
	if err != nil {
		return err
	}
	tuneGC(e.getenv)
	log := newLogger(e.stdout, cfg.LogLevel)
	pool, closeDB, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeDB()
	n, err := store.Migrate(ctx, pool, log)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "migrations: %d applied\n", n)
	return nil
}

func cmdSeed(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	creatives := fs.Int("creatives", 0, "add this many extra draft creatives (benchmarks)")
	if err := fs.Parse(args); err != nil {
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
	pool, closeDB, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeDB()
	return seed.Run(ctx, store.New(pool), log, seed.Options{Creatives: *creatives})
}
