package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"creativeapi/bench/internal/pgbench"
	"creativeapi/bench/internal/plan"
)

// result is one scenario at one size and concurrency.
type result struct {
	size     int
	scenario string
	clients  int
	server   metrics
	pgbench  *metrics
	// rounds are the server's and bench/floor's runs of the same load,
	// alternated (at the targets only); the first server run is server.
	rounds [][2]metrics
}

// medianCPU is the median CPU per request of side (0 server, 1 floor) over
// x's rounds.
func (x *result) medianCPU(side int) time.Duration {
	cpus := make([]time.Duration, len(x.rounds))
	for i, r := range x.rounds {
		cpus[i] = r[side].ServerCPU
	}
	return median(cpus)
}

// median is the middle of v (the mean of the two middle values when v has
// an even length); it sorts v.
func median[T ~int64 | ~float64](v []T) T {
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

type seedTime struct {
	size int
	d    time.Duration
}

type goBenchResult struct {
	name                  string
	nsPerOp, bytes, alloc float64
}

type report struct {
	start   time.Time
	elapsed time.Duration
	opts    options
	machine string
	// hugePages says where the shared buffers were (bench/hugepages.go).
	hugePages string
	results   []result
	seeded    []seedTime
	goBench   []goBenchResult
	scripts   map[string]pgbench.Script
	// overhead are the runs with metrics off and on.
	overhead []overheadResult
	// commentsSeeded are the comment sizes' seeding times.
	commentsSeeded []seedTime
	// sweep are the deposit concurrency sweep's points.
	sweep []sweepPoint
}

// rssLimit is the target for the server's peak RSS under load.
const rssLimit = 60 << 20

func (r *report) find(size int, scenario string, clients int) *result {
	for i := range r.results {
		x := &r.results[i]
		if x.size == size && x.scenario == scenario && x.clients == clients {
			return x
		}
	}
	return nil
}

func (r *report) markdown() string {
	var b strings.Builder
	o := r.opts
	first := o.sizes[0]
	fmt.Fprintf(&b, "# Benchmark results\n\n")
	fmt.Fprintf(&b, "- Machine: %s\n", r.machine)
	if r.hugePages != "" {
		fmt.Fprintf(&b, "- Shared buffers' huge pages: %s\n", r.hugePages)
	}
	fmt.Fprintf(&b, "- Command: `make bench` (`cd bench && go run . %s`), %s, total %s\n",
		strings.Join(argsOf(), " "), r.start.UTC().Format("2006-01-02 15:04 UTC"), r.elapsed.Round(time.Second))
	fmt.Fprintf(&b, "- Each run: %s warm-up, %s measured, closed loop. Server, load generator, PostgreSQL and pgbench share the machine's CPUs.\n", o.warmup, o.duration)
	fmt.Fprintf(&b, "- Commands send a fresh `Idempotency-Key` each; pgbench runs the same statements (`-M prepared`, as pgx sends them) at the same concurrency.\n")
	for _, s := range r.seeded {
		fmt.Fprintf(&b, "- Seeding %s creatives and deposits took %s.\n", rows(s.size), s.d.Round(time.Second))
	}
	for _, s := range r.commentsSeeded {
		fmt.Fprintf(&b, "- Seeding %s comments took %s.\n", rows(s.size), s.d.Round(time.Second))
	}

	fmt.Fprintf(&b, "\n## Targets\n\n| target | measured | met |\n| --- | --- | --- |\n")
	for _, sc := range floorScenarios {
		for _, c := range o.targets {
			if x := r.find(first, sc, c); x != nil && len(x.rounds) > 0 {
				ratio, limit := cpuRatio(x), floorLimit(sc)
				fmt.Fprintf(&b, "| %s: server CPU ≤ %.1f× the floor's, %d clients | %.2f× (%s vs %s per request, medians of %d) | %s |\n",
					sc, limit, c, ratio, us(x.medianCPU(0)), us(x.medianCPU(1)), len(x.rounds), yes(ratio <= limit))
			}
		}
	}
	for _, sc := range commands {
		for _, c := range o.targets {
			if x := r.find(first, sc, c); x != nil && x.pgbench != nil {
				ratio := x.server.Rate / x.pgbench.Rate
				fmt.Fprintf(&b, "| %s ≥ 0.8 × pgbench, %d clients | %.2f (%.0f vs %.0f /s) | %s |\n",
					sc, c, ratio, x.server.Rate, x.pgbench.Rate, yes(ratio >= 0.8))
			}
		}
	}
	for _, c := range o.targets {
		rep, dep := r.find(first, plan.Replay, c), r.find(first, plan.Deposit, c)
		if rep != nil && dep != nil {
			ratio := rep.server.Rate / dep.server.Rate
			fmt.Fprintf(&b, "| replay ≥ 3 × first execution (deposit), %d clients | %.1f× (%.0f vs %.0f /s) | %s |\n",
				c, ratio, rep.server.Rate, dep.server.Rate, yes(ratio >= 3))
		}
	}
	for _, sc := range commands {
		if s, ok := r.scripts[sc]; ok {
			tx := strings.Count(strings.Join(s.RoundTrips, " "), "begin")
			fmt.Fprintf(&b, "| %s: one transaction | %d statements in %d round trips, %d transaction | %s |\n",
				sc, s.Statements(), len(s.RoundTrips), tx, yes(tx == 1))
		}
	}
	r.sweepTargets(&b)
	r.sizeTargets(&b, o.scenarios, o.sizes)
	r.commentTargets(&b)
	var peak int64
	for _, x := range r.results {
		peak = max(peak, x.server.PeakRSS)
	}
	for i := range r.sweep {
		peak = max(peak, r.sweep[i].rss())
	}
	fmt.Fprintf(&b, "| server peak RSS under load ≤ 60 MiB | %.1f MiB | %s |\n", mib(peak), yes(peak <= rssLimit))
	for _, g := range r.goBench {
		if name, ok := strings.CutPrefix(g.name, "BenchmarkValidateCommand/"); ok {
			fmt.Fprintf(&b, "| validation ≤ 20 µs per request (%s: route, parameters, body, body rules) | %.1f µs, %.0f allocs | %s |\n",
				name, g.nsPerOp/1000, g.alloc, yes(g.nsPerOp <= 20_000))
		}
	}

	r.floorTable(&b)
	r.sweepTable(&b)

	fmt.Fprintf(&b, "\n## Scenarios at %s rows: concurrency sweep\n\n", rows(first))
	fmt.Fprintf(&b, "CPU columns are per request (pgbench: per transaction, one execution of the same statements): the server process, PostgreSQL (all its processes, so background work such as autovacuum lands on whichever run is active), and the client (load generator or pgbench). A † marks a run during which other processes used more than 10%% of the machine.\n\n")
	fmt.Fprintf(&b, "| scenario | clients | req/s | p50 | p99 | errors | server CPU | DB CPU | loadgen CPU | peak RSS | pgbench tx/s | pgbench p50 | pgbench p99 | pgbench DB CPU | server ÷ pgbench |\n")
	fmt.Fprintf(&b, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, sc := range o.scenarios {
		var xs []result
		for _, x := range r.results {
			if x.size == first && x.scenario == sc {
				xs = append(xs, x)
			}
		}
		slices.SortFunc(xs, func(a, b result) int { return a.clients - b.clients })
		for _, x := range xs {
			m := x.server
			fmt.Fprintf(&b, "| %s | %d | %.0f%s | %s | %s | %d | %s | %s | %s | %.1f MiB |", sc, x.clients, m.Rate, noisy(m), us(m.P50), us(m.P99),
				m.Errors, us(m.ServerCPU), us(m.DBCPU), us(m.ClientCPU), mib(m.PeakRSS))
			if p := x.pgbench; p != nil {
				fmt.Fprintf(&b, " %.0f%s | %s | %s | %s | %.2f |\n", p.Rate, noisy(*p), us(p.P50), us(p.P99), us(p.DBCPU), m.Rate/p.Rate)
			} else {
				fmt.Fprintf(&b, " | | | | |\n")
			}
		}
	}

	if len(o.sizes) > 1 {
		fmt.Fprintf(&b, "\n## Size sweep at %d clients\n\n", o.sizeClients)
		fmt.Fprintf(&b, "Rows: benchmark creatives and deposits in the tables before the runs (the runs add more).\n\n")
		r.sizeSweep(&b, o.scenarios, o.sizes)
	}
	if len(o.commentScenarios) > 0 {
		fmt.Fprintf(&b, "\n## Comment size sweep at %d clients\n\n", o.sizeClients)
		fmt.Fprintf(&b, "%s\n\n", commentSweepText)
		r.sizeSweep(&b, o.commentScenarios, o.commentSizes)
	}

	if len(r.overhead) > 0 {
		fmt.Fprintf(&b, "\n## Metrics overhead at %s rows\n\n", rows(first))
		fmt.Fprintf(&b, "Two servers of the same build on the same database, one with `METRICS_ADDR` set and scraped every %s (Prometheus's default is 15 s), one without; each scenario runs on them in turn (off, on, on, off per pair) at %d clients, %d runs each. Figures are the means; goal: throughput within 3%%.\n\n",
			scrapeInterval, o.metricsClients, o.metricsRounds)
		fmt.Fprintf(&b, "| scenario | req/s off | req/s on | throughput | server CPU off | server CPU on | CPU per request | scrapes | within 3%% |\n")
		fmt.Fprintf(&b, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
		for _, x := range r.overhead {
			offRate, offCPU := mean(x.off)
			onRate, onCPU := mean(x.on)
			change := onRate/offRate - 1
			fmt.Fprintf(&b, "| %s | %.0f%s | %.0f%s | %+.1f%% | %s | %s | %+.1f%% | %d | %s |\n", x.scenario, offRate, noisyAny(x.off), onRate, noisyAny(x.on),
				100*change, us(offCPU), us(onCPU), 100*(float64(onCPU)/float64(max(offCPU, 1))-1), x.scrapes, yes(change >= -0.03))
		}
	}

	fmt.Fprintf(&b, "\n## Statements per request\n\nThe round trips of one request (the pgbench script sends the same; a test checks them against the server's own).\n\n")
	fmt.Fprintf(&b, "| scenario | statements | round trips | round trips in order (a+b: one pipeline) |\n| --- | ---: | ---: | --- |\n")
	for _, sc := range allScenarios {
		if s, ok := r.scripts[sc]; ok {
			fmt.Fprintf(&b, "| %s | %d | %d | %s |\n", sc, s.Statements(), len(s.RoundTrips), strings.Join(s.RoundTrips, ", "))
		}
	}

	if len(r.goBench) > 0 {
		fmt.Fprintf(&b, "\n## Go benchmarks\n\n`go test -run '^$' -bench '%s' -benchmem -benchtime 3s ./internal/httpapi` and `cd bench && go test -run '^$' -bench %s -benchmem -benchtime 3s ./floor` (the deposit and review action benchmarks go through the real HTTP server, the floor's through bench/floor, %d requests in flight per CPU, on a throwaway PostgreSQL with fsync off).\n\n", goBenchPattern, floorBenchmark, 4)
		fmt.Fprintf(&b, "| benchmark | ns/op | B/op | allocs/op |\n| --- | ---: | ---: | ---: |\n")
		for _, g := range r.goBench {
			fmt.Fprintf(&b, "| %s | %.0f | %.0f | %.0f |\n", g.name, g.nsPerOp, g.bytes, g.alloc)
		}
		var first, replay, firstAllocs, clientAllocs, floorAllocs float64
		for _, g := range r.goBench {
			switch g.name {
			case "BenchmarkDepositCreateFirst":
				first, firstAllocs = g.nsPerOp, g.alloc
			case "BenchmarkDepositCreateReplay":
				replay = g.nsPerOp
			case "BenchmarkDepositCreateClient":
				clientAllocs = g.alloc
			case floorBenchmark:
				floorAllocs = g.alloc
			}
		}
		if first > 0 && replay > 0 {
			fmt.Fprintf(&b, "\nA replay costs %.1f× less than a first execution.\n", first/replay)
		}
		if firstAllocs > 0 && clientAllocs > 0 {
			fmt.Fprintf(&b, "\nAllocations per deposit create: %.0f, of which the benchmark's HTTP client makes %.0f (BenchmarkDepositCreateClient): %.0f are the server's. Target: at most 218 (half of the 435 of the first performance issue's report).\n",
				firstAllocs, clientAllocs, firstAllocs-clientAllocs)
		}
		if firstAllocs > 0 && floorAllocs > 0 {
			fmt.Fprintf(&b, "\nThe floor's deposit create, sent by the same client, makes %.0f (%s: net/http, pgx and the same statements, nothing else): the server makes %.2f× the floor's allocations.\n",
				floorAllocs, floorBenchmark, firstAllocs/floorAllocs)
		}
	}
	return b.String()
}

// floorLimit is the target ratio of the server's CPU per request to the
// floor's: commands (deposit, action) within 1.3×, the rest within 1.5×.
func floorLimit(scenario string) float64 {
	if scenario == plan.Deposit || scenario == plan.Action {
		return 1.3
	}
	return 1.5
}

// cpuRatio is the ratio of the medians of the server's and the floor's CPU
// per request.
func cpuRatio(x *result) float64 {
	return float64(x.medianCPU(0)) / float64(max(x.medianCPU(1), 1))
}

// floorTable compares the server with the floor and pgbench, run one after
// the other at each target concurrency.
func (r *report) floorTable(b *strings.Builder) {
	first := r.opts.sizes[0]
	var xs []*result
	for _, sc := range floorScenarios {
		for _, c := range r.opts.targets {
			if x := r.find(first, sc, c); x != nil && len(x.rounds) > 0 {
				xs = append(xs, x)
			}
		}
	}
	if len(xs) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## Server vs floor at %s rows\n\n", rows(first))
	fmt.Fprintf(b, "The floor (bench/floor) is a bare net/http + pgx server sending the same statements in the same round trips (a test proves it), with the session cookie lookup and JSON in and out, and nothing else. The same load generator drives the server, then the floor, %d times alternated (`-floor-rounds`), then pgbench runs the statements; CPU is per request, of the server's or the floor's process, and the ratio is of the medians over the rounds (each round's own ratio follows it). CPU per request is the figure to steer by here: throughput moves with whatever else the shared machine runs (a † marks a run during which other processes used more than 10%% of it). Throughput and latencies are the first round's.\n\n", r.opts.floorRounds)
	fmt.Fprintf(b, "| scenario | clients | server CPU | floor CPU | ratio | each round | target | server req/s | floor req/s | pgbench tx/s | server p50 | server p99 | floor p50 | floor p99 |\n")
	fmt.Fprintf(b, "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, x := range xs {
		m, f := x.server, x.rounds[0][1]
		pg := ""
		if x.pgbench != nil {
			pg = fmt.Sprintf("%.0f%s", x.pgbench.Rate, noisy(*x.pgbench))
		}
		each := make([]string, len(x.rounds))
		for i, r := range x.rounds {
			each[i] = fmt.Sprintf("%.2f%s", float64(r[0].ServerCPU)/float64(max(r[1].ServerCPU, 1)), noisyAny(r[:]))
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %.2f× | %s | ≤ %.1f× | %.0f%s | %.0f%s | %s | %s | %s | %s | %s |\n", x.scenario, x.clients,
			us(x.medianCPU(0)), us(x.medianCPU(1)), cpuRatio(x), strings.Join(each, ", "), floorLimit(x.scenario), m.Rate, noisy(m), f.Rate, noisy(f), pg,
			us(m.P50), us(m.P99), us(f.P50), us(f.P99))
	}
}

// sizeTargets adds the target rows of a size sweep: each scenario at the
// last size no more than 1.2× slower than at the first.
func (r *report) sizeTargets(b *strings.Builder, scenarios []string, sizes []int) {
	first, last := sizes[0], sizes[len(sizes)-1]
	if last == first {
		return
	}
	for _, sc := range scenarios {
		a, z := r.find(first, sc, r.opts.sizeClients), r.find(last, sc, r.opts.sizeClients)
		if a != nil && z != nil && z.server.Rate > 0 {
			slower := a.server.Rate / z.server.Rate
			fmt.Fprintf(b, "| %s ≤ 1.2× slower at %s rows than at %s | %.2f× | %s |\n", sc, rows(last), rows(first), slower, yes(slower <= 1.2))
		}
	}
}

// sizeSweep writes the rows of a size sweep's table, each size against
// the first.
func (r *report) sizeSweep(b *strings.Builder, scenarios []string, sizes []int) {
	fmt.Fprintf(b, "| scenario | rows | req/s | p50 | p99 | errors | server CPU | DB CPU | statements | peak RSS | slower than %s |\n", rows(sizes[0]))
	fmt.Fprintf(b, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, sc := range scenarios {
		base := r.find(sizes[0], sc, r.opts.sizeClients)
		for _, size := range sizes {
			x := r.find(size, sc, r.opts.sizeClients)
			if x == nil {
				continue
			}
			m := x.server
			slower := "–"
			if base != nil && m.Rate > 0 {
				slower = fmt.Sprintf("%.2f×", base.server.Rate/m.Rate)
			}
			statements := "–"
			if m.Statements > 0 {
				statements = fmt.Sprintf("%.2f", m.Statements)
			}
			fmt.Fprintf(b, "| %s | %s | %.0f%s | %s | %s | %d | %s | %s | %s | %.1f MiB | %s |\n", sc, rows(size), m.Rate, noisy(m), us(m.P50), us(m.P99),
				m.Errors, us(m.ServerCPU), us(m.DBCPU), statements, mib(m.PeakRSS), slower)
		}
	}
}

// argsOf is the command line as given.
func argsOf() []string { return os.Args[1:] }

// noisy marks a run that other processes disturbed.
func noisy(m metrics) string {
	if m.Other > 0.10 {
		return " †"
	}
	return ""
}

// noisyAny marks runs of which one was disturbed.
func noisyAny(ms []metrics) string {
	for _, m := range ms {
		if noisy(m) != "" {
			return " †"
		}
	}
	return ""
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func rows(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

var goBenchLine = regexp.MustCompile(`^(Benchmark[\w/]+?)(?:-\d+)?\s+\d+\s+([0-9.]+) ns/op(?:\s+[0-9.]+ cpu-ns/op)?(?:\s+([0-9.]+) B/op)?(?:\s+([0-9.]+) allocs/op)?`)

// goBenchPattern selects the Go benchmarks the report shows;
// BenchmarkUploadCosts sets creating an upload and serving /content beside
// a GET of a creative (docs/uploads.md).
const goBenchPattern = "BenchmarkValidate|BenchmarkDepositCreate|BenchmarkReviewAction|BenchmarkUploadCosts"

// floorBenchmark is the floor's deposit create, the yardstick of the
// server's allocations.
const floorBenchmark = "BenchmarkFloorDepositCreate"

// goBenchmarks runs the validation and first-versus-replay benchmarks, and
// the floor's deposit create.
func goBenchmarks(ctx context.Context) ([]goBenchResult, error) {
	var out bytes.Buffer
	for _, run := range [][3]string{{goBenchPattern, ".", "./internal/httpapi"}, {floorBenchmark, benchModule, "./floor"}} {
		cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", run[0], "-benchmem", "-benchtime", "3s", run[2])
		cmd.Dir = run[1]
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("go test -bench %s: %w\n%s", run[2], err, out.String())
		}
	}
	var res []goBenchResult
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		m := goBenchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		g := goBenchResult{name: m[1]}
		g.nsPerOp, _ = strconv.ParseFloat(m[2], 64)
		g.bytes, _ = strconv.ParseFloat(m[3], 64)
		g.alloc, _ = strconv.ParseFloat(m[4], 64)
		res = append(res, g)
		fmt.Fprintln(os.Stderr, "  "+sc.Text())
	}
	return res, nil
}

// machine describes the CPU, memory, kernel and versions.
func machine(pgbenchPath string, pgSettings []string) string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				mem = fmt.Sprintf(", %.0f GiB RAM", float64(kb)/(1<<20))
			}
		}
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	// pgbench --version: "pgbench (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)".
	pgv, _ := exec.Command(pgbenchPath, "--version").Output()
	version := strings.TrimSpace(strings.TrimPrefix(string(pgv), "pgbench (PostgreSQL)"))
	return fmt.Sprintf("%s, %d CPUs%s, Linux %s; PostgreSQL %s (private cluster, fsync on, %s); %s",
		model, runtime.NumCPU(), mem, strings.TrimSpace(string(kernel)), version, pgSettingsText(pgSettings), runtime.Version())
}
