package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"creativeapi/bench/internal/plan"
)

// The concurrency sweep runs deposit creates on the server and the floor,
// alternated, at each of -sweep's concurrencies, twice: with as many users
// as clients (no two requests of one user in flight) and with
// -sweep-few-users users (several creates of one user in flight, which the
// open-deposit limit serialises: docs/deposits.md). Each run signs with
// users no run used before, so every user starts with few open deposits
// (the limit's count reads them all; the benchmark's limit never binds).

// sweepPoint is one point of the sweep: its users and clients, and the
// server's and the floor's runs, alternated.
type sweepPoint struct {
	users, clients int
	rounds         [][2]metrics
}

// median is the median of f over side's runs (0 server, 1 floor).
func (p *sweepPoint) median(side int, f func(metrics) float64) float64 {
	v := make([]float64, len(p.rounds))
	for i, r := range p.rounds {
		v[i] = f(r[side])
	}
	return median(v)
}

func (p *sweepPoint) cpu(side int) float64 {
	return p.median(side, func(m metrics) float64 { return float64(m.ServerCPU) })
}

func (p *sweepPoint) rate(side int) float64 {
	return p.median(side, func(m metrics) float64 { return m.Rate })
}

func (p *sweepPoint) p99(side int) time.Duration {
	return time.Duration(p.median(side, func(m metrics) float64 { return float64(m.P99) }))
}

func (p *sweepPoint) rss() int64 {
	var peak int64
	for _, r := range p.rounds {
		peak = max(peak, r[0].PeakRSS)
	}
	return peak
}

// sweepUsers are the users of each point: as many as clients, then the
// few-users series (the point where both are the same runs once).
func (o options) sweepPoints() []sweepPoint {
	var ps []sweepPoint
	for _, c := range o.sweep {
		ps = append(ps, sweepPoint{users: c, clients: c})
	}
	if o.sweepFewUsers > 0 {
		for _, c := range o.sweep {
			if c != o.sweepFewUsers {
				ps = append(ps, sweepPoint{users: o.sweepFewUsers, clients: c})
			}
		}
	}
	return ps
}

// concurrencySweep runs every point, server then floor, floorRounds times,
// a round of every point at a time: each run adds its deposits to the
// tables, and the machine's other tenants come and go, so running a
// point's rounds together would lay both on the points unevenly (the
// last points would always meet the largest tables), where spreading
// them makes the points comparable with each other. Every other round
// runs the points in reverse order, so that of two neighbouring points
// neither always runs after the other.
func (b *bench) concurrencySweep(ctx context.Context) error {
	step(fmt.Sprintf("concurrency sweep: deposit creates at %v clients, server and floor alternated %d times, a round of every point at a time, every other round in reverse", b.opts.sweep, b.opts.floorRounds))
	points := b.opts.sweepPoints()
	for round := range b.opts.floorRounds {
		for k := range points {
			i := k
			if round%2 == 1 {
				i = len(points) - 1 - k
			}
			p := &points[i]
			var pair [2]metrics
			for side, srv := range []*server{b.srv, b.floor} {
				m, err := b.sweepRun(ctx, srv, p.users, p.clients)
				if err != nil {
					return fmt.Errorf("sweep at %d clients, %d users: %w", p.clients, p.users, err)
				}
				pair[side] = m
				fmt.Fprintf(os.Stderr, "  deposit %3d users %3d clients  %-6s %s  (round %d)\n", p.users, p.clients, [2]string{"server", "floor"}[side], m.line(), round+1)
				if m.FirstError != "" {
					fmt.Fprintf(os.Stderr, "    first error: %s\n", m.FirstError)
				}
			}
			p.rounds = append(p.rounds, pair)
		}
	}
	b.report.sweep = append(b.report.sweep, points...)
	return nil
}

// sweepRun is one deposit run on srv with users fresh users.
func (b *bench) sweepRun(ctx context.Context, srv *server, users, clients int) (metrics, error) {
	saved := b.srv
	b.srv = srv
	defer func() { b.srv = saved }()
	cfg, err := b.loadConfig(ctx, plan.Deposit, clients)
	if err != nil {
		return metrics{}, err
	}
	cfg.Users = b.freshUsers(users)
	if _, err := waitQuiet(ctx, b.opts.quietWait); err != nil {
		return metrics{}, err
	}
	var profiles sync.WaitGroup
	var profileErr error
	if b.opts.profile != "" && srv == saved && srv.pprofAddr != "" {
		var mu sync.Mutex
		keep := func(err error) {
			if err != nil {
				mu.Lock()
				profileErr = err
				mu.Unlock()
			}
		}
		name := func(kind, ext string) string {
			return filepath.Join(b.opts.profile, fmt.Sprintf("sweep-%s-%du-%dc.%s", kind, users, clients, ext))
		}
		for _, kind := range []string{"profile", "mutex", "block"} {
			profiles.Go(func() {
				time.Sleep(b.opts.warmup)
				keep(srv.profile(ctx, kind, b.opts.duration, name(kind, "pprof")))
			})
		}
		// In the middle of the run: the live heap (as of the last
		// collection: forcing one would add to the run's count), the
		// goroutines by stack, and the runtime's memory statistics
		// (stacks, heap, the heap's goal).
		profiles.Go(func() {
			time.Sleep(b.opts.warmup + b.opts.duration/2)
			keep(srv.pprof(ctx, "heap", name("heap", "pprof")))
			keep(srv.pprof(ctx, "goroutine?debug=1", name("goroutines", "txt")))
			keep(srv.pprof(ctx, "heap?debug=1", name("memstats", "txt")))
		})
	}
	m, err := b.runLoad(ctx, cfg)
	profiles.Wait()
	if err == nil && profileErr != nil {
		err = fmt.Errorf("profile: %w", profileErr)
	}
	return m, err
}

// freshUsers are the next n bench users, after the replay scenario's
// (round robin once all were used).
func (b *bench) freshUsers(n int) []plan.Session {
	all := b.fx.users[min(b.opts.replay, len(b.fx.users)-n):]
	if b.nextUser+n > len(all) {
		b.nextUser = 0
	}
	us := all[b.nextUser : b.nextUser+n]
	b.nextUser += n
	return us
}

// findSweep is the point of users and clients, nil when it did not run.
func (r *report) findSweep(users, clients int) *sweepPoint {
	for i := range r.sweep {
		if p := &r.sweep[i]; p.users == users && p.clients == clients {
			return p
		}
	}
	return nil
}

// sweepTargets are the sweep's rows of the targets table.
func (r *report) sweepTargets(b *strings.Builder) {
	o := r.opts
	if len(r.sweep) == 0 {
		return
	}
	first := o.sweep[0]
	base := r.findSweep(first, first)
	for _, c := range o.sweep {
		p := r.findSweep(c, c)
		if p == nil {
			continue
		}
		limit := 1.5
		ratio := p.cpu(0) / max(p.cpu(1), 1)
		fmt.Fprintf(b, "| sweep: deposit server CPU ≤ %.1f× the floor's, %d clients, %d users | %.2f× (%s vs %s) | %s |\n",
			limit, c, c, ratio, us(time.Duration(p.cpu(0))), us(time.Duration(p.cpu(1))), yes(ratio <= limit))
		if c == 8 {
			fmt.Fprintf(b, "| sweep: deposit server CPU ≤ 1.3× the floor's (the aim), 8 clients | %.2f× | %s |\n", ratio, yes(ratio <= 1.3))
		}
		if base != nil && c == 64 {
			self := p.cpu(0) / max(base.cpu(0), 1)
			fmt.Fprintf(b, "| sweep: deposit server CPU at 64 clients ≤ 1.15× its own at %d | %.2f× | %s |\n", first, self, yes(self <= 1.15))
		}
	}
	if few, many := r.findSweep(o.sweepFewUsers, 64), r.findSweep(64, 64); few != nil && many != nil {
		cpu, rate := few.cpu(0)/max(many.cpu(0), 1), few.rate(0)/max(many.rate(0), 1)
		fmt.Fprintf(b, "| sweep: %d users vs 64 users at 64 clients, server CPU ≤ 1.1× | %.2f× | %s |\n", o.sweepFewUsers, cpu, yes(cpu <= 1.1))
		fmt.Fprintf(b, "| sweep: %d users vs 64 users at 64 clients, server throughput ≥ 0.8× | %.2f× (%.0f vs %.0f /s) | %s |\n",
			o.sweepFewUsers, rate, few.rate(0), many.rate(0), yes(rate >= 0.8))
	}
	for _, series := range []string{"clients", "few"} {
		var prev *sweepPoint
		falls := []string{}
		for _, c := range o.sweep {
			if c < 32 {
				continue
			}
			users := c
			if series == "few" {
				users = o.sweepFewUsers
			}
			p := r.findSweep(users, c)
			if p == nil {
				continue
			}
			if prev != nil && p.rate(0) < prev.rate(0) {
				falls = append(falls, fmt.Sprintf("%d→%d: %.0f→%.0f /s (round by round %.2f×, the floor's %.2f×)",
					prev.clients, c, prev.rate(0), p.rate(0), median(stepRatios(prev, p, 0)), median(stepRatios(prev, p, 1))))
			}
			prev = p
		}
		if prev == nil || (series == "few" && o.sweepFewUsers == 0) {
			continue
		}
		label := "as many users as clients"
		if series == "few" {
			label = fmt.Sprintf("%d users", o.sweepFewUsers)
		}
		measured := "no fall"
		if len(falls) > 0 {
			measured = strings.Join(falls, ", ")
		}
		fmt.Fprintf(b, "| sweep: deposit server throughput never falls from 32 clients up, %s | %s | %s |\n", label, measured, yes(len(falls) == 0))
	}
}

// sweepTable is the sweep's section of the report.
func (r *report) sweepTable(b *strings.Builder) {
	if len(r.sweep) == 0 {
		return
	}
	o := r.opts
	fmt.Fprintf(b, "\n## Concurrency sweep: deposit creates\n\n")
	fmt.Fprintf(b, "Deposit creates on the server and on the floor, alternated %d times at each point (`-floor-rounds`), a round of every point at a time, every other round in reverse order (each run adds its deposits to the tables, and the machine's other tenants come and go: spread over the sweep, both weigh on every point alike); figures are medians over the rounds, CPU per request of the server's or the floor's process. "+
		"Users: as many as clients (one client a user), or %d (several creates of one user in flight, which the open-deposit limit lets run side by side up to 8 at once far below the limit, on the server and on the floor alike). "+
		"Each run signs with users no earlier run used. \"÷ own at %d\" is the server's CPU per request against its own with as many users as clients at %d clients; each round's server ÷ floor ratio and the server's throughput in each round show the noise. \"WAL per req\" is the write-ahead log PostgreSQL wrote per request (its position before and after the measured interval): the server and the floor send the same writes, so theirs should match. \"GCs per 1k req\" counts the server's garbage collections (its memory limit, GOMEMLIMIT, counts the stacks and buffers of every request in flight, so more clients leave the heap less room between collections). A † marks a point during which other processes used more than 10%% of the machine.\n\n",
		o.floorRounds, o.sweepFewUsers, o.sweep[0], o.sweep[0])
	fmt.Fprintf(b, "| users | clients | server CPU | floor CPU | ÷ floor | each round | ÷ own at %d | server req/s | each round | floor req/s | server p99 | floor p99 | DB CPU server | DB CPU floor | WAL per req server / floor | server GCs per 1k req | server peak RSS |\n", o.sweep[0])
	fmt.Fprintf(b, "| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	base := r.findSweep(o.sweep[0], o.sweep[0])
	for i := range r.sweep {
		p := &r.sweep[i]
		each, rates := make([]string, len(p.rounds)), make([]string, len(p.rounds))
		noise := ""
		for j, x := range p.rounds {
			each[j] = fmt.Sprintf("%.2f", float64(x[0].ServerCPU)/float64(max(x[1].ServerCPU, 1)))
			rates[j] = fmt.Sprintf("%.0f", x[0].Rate)
			if noisyAny(x[:]) != "" {
				noise = " †"
			}
		}
		self := "–"
		if base != nil {
			self = fmt.Sprintf("%.2f×", p.cpu(0)/max(base.cpu(0), 1))
		}
		dbCPU := func(side int) string {
			return us(time.Duration(p.median(side, func(m metrics) float64 { return float64(m.DBCPU) })))
		}
		wal := func(side int) float64 { return p.median(side, func(m metrics) float64 { return m.WAL }) / 1000 }
		gcs := p.median(0, func(m metrics) float64 { return m.GCs })
		fmt.Fprintf(b, "| %d | %d | %s | %s | %.2f× | %s | %s | %.0f%s | %s | %.0f | %s | %s | %s | %s | %.2f / %.2f kB | %.1f | %.1f MiB |\n", p.users, p.clients,
			us(time.Duration(p.cpu(0))), us(time.Duration(p.cpu(1))), p.cpu(0)/max(p.cpu(1), 1), strings.Join(each, ", "), self,
			p.rate(0), noise, strings.Join(rates, ", "), p.rate(1), us(p.p99(0)), us(p.p99(1)), dbCPU(0), dbCPU(1), wal(0), wal(1), gcs, mib(p.rss()))
	}
	if few, many := r.findSweep(o.sweepFewUsers, 64), r.findSweep(64, 64); few != nil && many != nil {
		fmt.Fprintf(b, "\nAt 64 clients, %d users against 64: the server's CPU per request %.2f×, its throughput %.2f× (the floor's: %.2f×, %.2f×).\n",
			o.sweepFewUsers, few.cpu(0)/max(many.cpu(0), 1), few.rate(0)/max(many.rate(0), 1), few.cpu(1)/max(many.cpu(1), 1), few.rate(1)/max(many.rate(1), 1))
	}
	r.sweepSteps(b)
}

// sweepSteps is the throughput from each point of a series to the next,
// round by round. Within a round the two points ran back to back, server
// and floor each, so a round's ratio leaves out what drifts on the machine
// over the sweep, which the ratio of the medians keeps. The floor is the
// control: a bare server's step on the same machine and PostgreSQL.
func (r *report) sweepSteps(b *strings.Builder) {
	o := r.opts
	type step struct {
		label    string
		from, to *sweepPoint
	}
	var steps []step
	for _, few := range []bool{false, true} {
		if few && o.sweepFewUsers == 0 {
			continue
		}
		var prev *sweepPoint
		for _, c := range o.sweep {
			users, label := c, "as many as clients"
			if few {
				users, label = o.sweepFewUsers, strconv.Itoa(o.sweepFewUsers)
			}
			p := r.findSweep(users, c)
			if c < 32 || p == nil {
				continue
			}
			if prev != nil {
				steps = append(steps, step{label, prev, p})
			}
			prev = p
		}
	}
	if len(steps) == 0 {
		return
	}
	fmt.Fprintf(b, "\nThroughput from one point to the next, round by round (each round's ratio of the two back-to-back runs; medians over the rounds; the floor is the control: a bare server's step on the same machine and PostgreSQL):\n\n")
	fmt.Fprintf(b, "| users | clients | server, each round | server | floor, each round | floor |\n")
	fmt.Fprintf(b, "| --- | --- | --- | ---: | --- | ---: |\n")
	for _, s := range steps {
		var cells [2]string
		var medians [2]float64
		for side := range 2 {
			ratios := stepRatios(s.from, s.to, side)
			each := make([]string, len(ratios))
			for j, x := range ratios {
				each[j] = fmt.Sprintf("%.2f", x)
			}
			cells[side], medians[side] = strings.Join(each, ", "), median(ratios)
		}
		fmt.Fprintf(b, "| %s | %d → %d | %s | %.2f× | %s | %.2f× |\n", s.label, s.from.clients, s.to.clients, cells[0], medians[0], cells[1], medians[1])
	}
}

// stepRatios are side's throughput at to against from, round by round
// (0 server, 1 floor).
func stepRatios(from, to *sweepPoint, side int) []float64 {
	ratios := make([]float64, min(len(from.rounds), len(to.rounds)))
	for j := range ratios {
		ratios[j] = to.rounds[j][side].Rate / max(from.rounds[j][side].Rate, 1)
	}
	return ratios
}
