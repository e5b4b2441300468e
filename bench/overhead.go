package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// scrapeInterval is how often the metrics overhead runs scrape the server
// with metrics on: much more often than Prometheus would (15 s by
// default), so the cost of the scrapes themselves is in the figures.
const scrapeInterval = time.Second

// overheadResult is one scenario's runs with metrics off and on.
type overheadResult struct {
	scenario string
	clients  int
	off, on  []metrics
	scrapes  int64
}

// metricsOverhead runs each scenario on two servers of the same build and
// database, one without METRICS_ADDR and one with it (scraped every
// scrapeInterval), in pairs ordered off, on, on, off, … so a drift of the
// machine during the runs weighs on both alike.
func (b *bench) metricsOverhead(ctx context.Context, dbURL string) error {
	step(fmt.Sprintf("metrics overhead: METRICS_ADDR off vs on, %d pairs per scenario at %d clients", b.opts.metricsRounds, b.opts.metricsClients))
	metricsAddr, err := freeAddr()
	if err != nil {
		return err
	}
	on, err := startServer(ctx, b.bin, dbURL, b.logf, append(b.opts.serverEnv, "METRICS_ADDR="+metricsAddr))
	if err != nil {
		return err
	}
	defer on.stop()
	off := b.srv
	defer func() { b.srv = off }()

	var scrapes, scrapeErrors atomic.Int64
	scrapeCtx, stopScraping := context.WithCancel(ctx)
	defer stopScraping()
	go scrape(scrapeCtx, "http://"+metricsAddr+"/metrics", &scrapes, &scrapeErrors)

	for _, sc := range b.opts.scenarios {
		r := overheadResult{scenario: sc, clients: b.opts.metricsClients}
		before := scrapes.Load()
		for i := range 2 * b.opts.metricsRounds {
			// off, on, on, off, off, on, …
			metricsOn := i%4 == 1 || i%4 == 2
			b.srv = off
			if metricsOn {
				b.srv = on
			}
			cfg, err := b.loadConfig(ctx, sc, b.opts.metricsClients)
			if err != nil {
				return err
			}
			if _, err := waitQuiet(ctx, b.opts.quietWait); err != nil {
				return err
			}
			m, err := b.runLoad(ctx, cfg)
			if err != nil {
				return fmt.Errorf("metrics overhead, %s: %w", sc, err)
			}
			label := "off"
			if metricsOn {
				label = "on "
				r.on = append(r.on, m)
			} else {
				r.off = append(r.off, m)
			}
			fmt.Fprintf(os.Stderr, "  %-8s metrics %s %3d clients  %s\n", sc, label, b.opts.metricsClients, m.line())
		}
		r.scrapes = scrapes.Load() - before
		b.report.overhead = append(b.report.overhead, r)
	}
	if n := scrapeErrors.Load(); n > 0 {
		return fmt.Errorf("metrics overhead: %d of %d scrapes failed", n, scrapes.Load()+n)
	}
	return nil
}

// scrape fetches url every scrapeInterval until ctx ends, as Prometheus would.
func scrape(ctx context.Context, url string, ok, failed *atomic.Int64) {
	t := time.NewTicker(scrapeInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				failed.Add(1)
			}
			continue
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			failed.Add(1)
			continue
		}
		ok.Add(1)
	}
}

// mean averages the runs' rate and server CPU per request.
func mean(ms []metrics) (rate float64, cpu time.Duration) {
	for _, m := range ms {
		rate += m.Rate
		cpu += m.ServerCPU
	}
	n := max(len(ms), 1)
	return rate / float64(n), cpu / time.Duration(n)
}
