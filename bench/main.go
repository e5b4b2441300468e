// Command bench measures the API against the database's own limit on this
// machine, in one run: it builds the server, starts a private durable
// PostgreSQL (fsync on), seeds it, starts the server as its own process,
// drives each scenario from a load generator in another process, and runs
// pgbench with the very statements each request sends at the same
// concurrency. It writes the figures as Markdown (reports/results.md).
//
// bench is a Go module of its own, so that the service's module needs
// none of its code; run it from this directory (it works in the
// repository's root, which it finds above it):
//
//	go run .                        # sizes 10k, 100k and 1M
//	go run . -sizes 10000,100000    # shorter: no 1M step
//	go run . -sizes 10000,1000000 -scenarios create,version,search -clients 16 -targets 8
//	                                # the authoring commands and the title search only
//	go run . -sizes 1000 -scenarios comments,comments-version,comments-open,comments-creatives -go-bench=false -metrics-rounds 0 -floor=false
//	                                # the comment lists at 1,200 and 1M comments only
//	go run . -compare -out /tmp/compare.md
//	                                # only server vs floor vs pgbench, then the deposit concurrency sweep
//	go run . -compare -sweep-only -sweep 8,64 -floor-rounds 2 -duration 5s -out /tmp/sweep.md
//	                                # two points of the sweep only (about 3 minutes)
//
// The floor (bench/floor) is the bare Go server doing the same database
// work: at the target concurrencies the deposit, action, replay, get and
// list scenarios run on it too, and the report compares the server's CPU
// per request with it.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"creativeapi/bench/internal/pgbench"
	"creativeapi/bench/internal/plan"
	"creativeapi/internal/pgserver"
	"creativeapi/internal/tron"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		stop()
		os.Exit(1)
	}
}

// options are the command line.
type options struct {
	duration, warmup time.Duration
	sizes            []int
	clients          []int
	targets          []int
	sizeClients      int
	users, replay    int
	sample           int
	out              string
	profile          string
	serverEnv        []string
	// pgSettings are PostgreSQL settings (name=value) the benchmark
	// cluster gets instead of the defaults; prewarm reads the seeded
	// database into shared buffers before the runs.
	pgSettings []string
	prewarm    bool
	// hugePages puts the shared buffers in huge pages, reserving them
	// for the run when the kernel has too few (bench/hugepages.go).
	hugePages  bool
	scenarios  []string
	goBench    bool
	statements bool
	keep       bool
	// metricsRounds is how many off/on pairs the metrics overhead runs
	// (0: none), at metricsClients.
	metricsRounds, metricsClients int
	// floor runs floorScenarios on bench/floor at the targets too, in
	// floorRounds alternations of server and floor.
	floor       bool
	floorRounds int
	// quietWait bounds the wait for an idle machine before each run.
	quietWait time.Duration
	// commentScenarios (plan.CommentScenarios taken out of -scenarios) run
	// at sizeClients with the comments table at each of commentSizes.
	commentScenarios []string
	commentSizes     []int
	// sweep are the concurrencies of the deposit concurrency sweep (with
	// -compare), each with as many users as clients and with sweepFewUsers
	// users (0: that series is skipped); sweepOnly runs nothing else.
	sweep         []int
	sweepFewUsers int
	sweepOnly     bool
}

func parseOptions() (options, error) {
	var o options
	var sizes, clients, targets, serverEnv, scenarios, commentSizes, sweep, pgSettings string
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "measured interval of each run")
	flag.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured warm-up before each load generator run")
	flag.StringVar(&sizes, "sizes", "10000,100000,1000000", "creatives and deposits in the tables, one size sweep step each (1M takes about 3 minutes to seed)")
	flag.StringVar(&commentSizes, "comment-sizes", defaultCommentSizes, "comments in the table, one step of the comment scenarios' size sweep each (1M takes about a minute to seed; a step holds at least what the scenarios read, internal/commentseed.Least)")
	flag.StringVar(&clients, "clients", "1,4,16,64", "concurrency sweep at the first size")
	flag.StringVar(&targets, "targets", "8,32", "concurrencies where every scenario is also run with pgbench")
	flag.IntVar(&o.sizeClients, "size-clients", 16, "concurrency of the size sweep")
	flag.IntVar(&o.users, "users", 20000, "bench users (each with a session): deposits spread over them")
	flag.IntVar(&o.replay, "replay-users", 1000, "users whose stored answer the replay scenario resends")
	flag.IntVar(&o.sample, "creatives-sample", 10000, "random creatives the action and get scenarios spread over")
	flag.StringVar(&o.out, "out", "reports/results.md", "Markdown results file (relative to where bench is run)")
	flag.StringVar(&o.profile, "profile", "", "directory for a server CPU profile per scenario (at the first target concurrency), and in the sweep the server's CPU, mutex and block profiles at every point (the mutex and block profiles need PPROF_CONTENTION=true in -server-env), and in mid-run its live heap, goroutines and memory statistics (the last round's)")
	flag.StringVar(&serverEnv, "server-env", "", "extra server settings, comma-separated KEY=VALUE")
	flag.StringVar(&pgSettings, "pg-settings", defaultPGSettings(), "PostgreSQL settings of the benchmark cluster instead of the defaults, comma-separated name=value (\"\": PostgreSQL's defaults, 128MB of shared_buffers); the default holds the 1M-row database in shared buffers, a quarter of the machine's memory at most")
	flag.BoolVar(&o.hugePages, "huge-pages", true, "put the shared buffers in huge pages (huge_pages=on), raising vm.nr_hugepages for the run when there are too few (root), else run on 4 kB pages and say so in the report")
	flag.BoolVar(&o.prewarm, "prewarm", true, "after seeding, read every table and index into shared buffers (pg_prewarm), as a running service has its working set")
	flag.StringVar(&scenarios, "scenarios", strings.Join(allScenarios, ","), "scenarios to run")
	flag.BoolVar(&o.goBench, "go-bench", true, "also run the Go benchmarks (validation, first execution vs replay)")
	flag.BoolVar(&o.statements, "statements", false, "diagnostics: load pg_stat_statements and print each run's statements per request (the comment scenarios load it anyway, for their statements column)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (cluster, logs)")
	flag.IntVar(&o.metricsRounds, "metrics-rounds", 2, "metrics overhead: pairs of runs per scenario with METRICS_ADDR off and on, at the first size (0: skip)")
	flag.IntVar(&o.metricsClients, "metrics-clients", 16, "metrics overhead: concurrency of its runs")
	flag.BoolVar(&o.floor, "floor", true, "also run the deposit, action, replay, get and list scenarios on bench/floor at the -targets concurrencies")
	flag.DurationVar(&o.quietWait, "quiet-wait", 2*time.Minute, "longest wait for the machine to be idle before each run (then it runs anyway, marked †)")
	flag.IntVar(&o.floorRounds, "floor-rounds", 3, "server, floor alternations per floor comparison: the ratio is of their median CPU per request (this machine's other tenants move one run's figures by tens of percent)")
	flag.StringVar(&sweep, "sweep", "8,32,64,128", "with -compare: the deposit concurrency sweep's client counts, server and floor alternated -floor-rounds times at each (\"\": no sweep)")
	flag.IntVar(&o.sweepFewUsers, "sweep-few-users", 8, "the sweep's second series signs with this many users at every concurrency (0: only as many users as clients)")
	flag.BoolVar(&o.sweepOnly, "sweep-only", false, "with -compare: only the concurrency sweep (no target comparisons, no pgbench)")
	compare := flag.Bool("compare", false, "only the comparison with the floor: the first size, -targets concurrencies, the floor's scenarios, with pgbench; no sweeps, metrics overhead or Go benchmarks")
	flag.Parse()
	var err error
	if o.sizes, err = ints(sizes); err != nil {
		return o, fmt.Errorf("-sizes: %w", err)
	}
	if o.clients, err = ints(clients); err != nil {
		return o, fmt.Errorf("-clients: %w", err)
	}
	if o.targets, err = ints(targets); err != nil {
		return o, fmt.Errorf("-targets: %w", err)
	}
	if serverEnv != "" {
		o.serverEnv = strings.Split(serverEnv, ",")
	}
	if pgSettings != "" {
		o.pgSettings = strings.Split(pgSettings, ",")
		for _, kv := range o.pgSettings {
			if name, _, ok := strings.Cut(kv, "="); !ok || !pgSettingName.MatchString(name) {
				return o, fmt.Errorf("-pg-settings: %q is not name=value", kv)
			}
		}
	}
	if o.commentSizes, err = ints(commentSizes); err != nil {
		return o, fmt.Errorf("-comment-sizes: %w", err)
	}
	o.commentSizes = commentTableSizes(o.commentSizes)
	o.scenarios = strings.Split(scenarios, ",")
	if *compare {
		o.sizes, clients, o.scenarios, o.floor = o.sizes[:1], targets, floorScenarios, true
		o.goBench, o.metricsRounds = false, 0
		if o.clients, err = ints(clients); err != nil {
			return o, fmt.Errorf("-targets: %w", err)
		}
		// The size sweep's concurrency is one of the runs: no run of its own.
		o.sizeClients = o.clients[0]
		if o.sweep, err = ints(sweep); err != nil {
			return o, fmt.Errorf("-sweep: %w", err)
		}
		if o.sweepOnly {
			o.scenarios = nil
		}
	} else if o.sweepOnly {
		return o, errors.New("-sweep-only: only with -compare")
	}
	for _, s := range o.scenarios {
		if !slices.Contains(allScenarios, s) {
			return o, fmt.Errorf("-scenarios: unknown %q", s)
		}
	}
	o.scenarios = slices.DeleteFunc(o.scenarios, func(s string) bool {
		if slices.Contains(plan.CommentScenarios, s) {
			o.commentScenarios = append(o.commentScenarios, s)
			return true
		}
		return false
	})
	if len(o.commentScenarios) > 0 && len(o.commentSizes) == 0 {
		return o, errors.New("-comment-sizes: at least one size")
	}
	if o.floorRounds < 1 {
		return o, errors.New("-floor-rounds: at least 1")
	}
	if len(o.sizes) == 0 || len(o.clients) == 0 || o.duration < time.Second {
		return o, fmt.Errorf("need at least one size, one concurrency and -duration of 1s or more")
	}
	// The run works in the repository's root; the files named on the
	// command line stay where they were meant.
	for _, path := range []*string{&o.out, &o.profile} {
		if *path != "" {
			abs, err := filepath.Abs(*path)
			if err != nil {
				return o, err
			}
			*path = abs
		}
	}
	return o, nil
}

var allScenarios = append([]string{plan.Action, plan.Deposit, plan.Replay, plan.Get, plan.List, plan.Create, plan.Version, plan.Search},
	plan.CommentScenarios...)

// floorScenarios are the scenarios bench/floor serves.
var floorScenarios = []string{plan.Deposit, plan.Action, plan.Replay, plan.Get, plan.List}

// commands are the scenarios pgbench accompanies at every concurrency.
var commands = []string{plan.Action, plan.Deposit, plan.Create, plan.Version}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// bench is one benchmark run's resources.
type bench struct {
	opts       options
	dir        string
	loadgen    string
	pgbench    string
	pg         *pgserver.Server
	postmaster int
	pool       *pgxpool.Pool
	bin        string
	logf       *os.File
	srv        *server
	floorBin   string
	floor      *server
	cpus       int
	fx         fixtures
	scripts    map[string]pgbench.Script
	vars       []string
	// serverPool is the server pool's size and session settings, which the
	// floor and pgbench's sessions share.
	serverPool poolSettings
	// cbase is the number of the first benchmark creative; pgbench's
	// clients act on cbase.., the load generator on a sample of the rest
	// (from cbase+maxClients).
	cbase      int
	maxClients int
	sample     []string
	report     report
	// counting: pg_stat_statements is loaded (-statements, or comment
	// scenarios), so each run reports its statements per request.
	counting bool
	thread   commentThread
	// nextUser is where the concurrency sweep takes its next fresh users.
	nextUser int
}

func run(ctx context.Context) error {
	start := time.Now()
	opts, err := parseOptions()
	if err != nil {
		return err
	}
	if err := enterRepository(); err != nil {
		return err
	}
	b := &bench{opts: opts, cpus: runtime.NumCPU()}
	b.report.start = start
	if b.dir, err = os.MkdirTemp("", "creativeapi-bench-"); err != nil {
		return err
	}
	// The cluster runs as an unprivileged user when we are root.
	if err := os.Chmod(b.dir, 0o755); err != nil {
		return err
	}
	if !opts.keep {
		defer os.RemoveAll(b.dir)
	} else {
		fmt.Fprintln(os.Stderr, "temporary directory:", b.dir)
	}
	step("build the server and the load generator")
	bin, loadgen, floorBin, err := build(ctx, b.dir)
	if err != nil {
		return err
	}
	b.loadgen, b.bin, b.floorBin = loadgen, bin, floorBin
	if b.pgbench, err = pgbenchPath(); err != nil {
		return err
	}
	qs, err := pgbench.LoadQueries("queries")
	if err != nil {
		return err
	}
	if b.scripts, err = pgbench.Scripts(qs); err != nil {
		return err
	}

	settings := opts.pgSettings
	if sb := sharedBuffersBytes(settings); opts.hugePages && sb > 0 {
		reserved, restore, note := reserveHugePages(sb)
		if restore != nil {
			defer restore() // after the cluster's stop, deferred below
		}
		if reserved {
			settings = append(slices.Clone(settings), "huge_pages=on")
		} else {
			note = "4 kB pages: " + note
		}
		fmt.Fprintln(os.Stderr, "    huge pages:", note)
		b.report.hugePages = note
	}
	step("start PostgreSQL (durable: fsync on, " + pgSettingsText(settings) + ")")
	b.counting = opts.statements || len(opts.commentScenarios) > 0
	if b.pg, err = startCluster(ctx, b.dir, b.counting, settings); err != nil {
		return err
	}
	defer func() { _ = b.pg.Stop() }()
	if b.postmaster, err = postmasterPID(b.pg.DataDir); err != nil {
		return err
	}
	dbURL := b.pg.URL(benchDatabase)
	logf, err := os.Create(filepath.Join(b.dir, "server.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	b.logf = logf
	if err := runBinary(ctx, bin, dbURL, logf, "migrate"); err != nil {
		return err
	}
	if b.pool, err = pxpool(ctx, dbURL); err != nil {
		return err
	}
	defer b.pool.Close()

	maxClients := slices.Max(append(slices.Clone(opts.clients), append(opts.targets, opts.sizeClients)...))
	for i, size := range opts.sizes {
		step(fmt.Sprintf("seed %d creatives and %d deposits", size, size))
		seedStart := time.Now()
		if err := runBinary(ctx, bin, dbURL, logf, "seed", "--creatives", strconv.Itoa(size)); err != nil {
			return err
		}
		if i == 0 {
			if b.fx, err = createCallers(ctx, b.pool, opts.users, maxClients); err != nil {
				return err
			}
		}
		if err := topUpDeposits(ctx, b.pool, size); err != nil {
			return err
		}
		if err := analyze(ctx, b.pool, seededTables, b.opts.prewarm); err != nil {
			return err
		}
		b.report.seeded = append(b.report.seeded, seedTime{size, time.Since(seedStart)})
		b.maxClients = maxClients
		if err := b.pickCreatives(ctx, maxClients); err != nil {
			return err
		}
		if b.srv == nil {
			step("start the server")
			if b.srv, err = startServer(ctx, bin, dbURL, logf, opts.serverEnv); err != nil {
				return err
			}
			defer b.srv.stop()
			if err := b.pgbenchVariables(ctx); err != nil {
				return err
			}
			if b.serverPool, err = serverPool(serverEnv(dbURL, opts.serverEnv)); err != nil {
				return err
			}
			if opts.floor {
				step("start the floor (bench/floor)")
				if b.floor, err = startFloor(ctx, b.floorBin, dbURL, b.serverPool, logf); err != nil {
					return err
				}
				defer b.floor.stop()
			}
		}
		if i == 0 {
			for _, sc := range opts.scenarios {
				for _, c := range opts.clients {
					if err := b.measure(ctx, size, sc, c, slices.Contains(commands, sc) || slices.Contains(opts.targets, c)); err != nil {
						return err
					}
				}
				for _, c := range opts.targets {
					if !slices.Contains(opts.clients, c) {
						if err := b.measure(ctx, size, sc, c, true); err != nil {
							return err
						}
					}
				}
			}
			if !slices.Contains(opts.clients, opts.sizeClients) {
				for _, sc := range opts.scenarios {
					if err := b.measure(ctx, size, sc, opts.sizeClients, false); err != nil {
						return err
					}
				}
			}
			if opts.metricsRounds > 0 {
				if err := b.metricsOverhead(ctx, dbURL); err != nil {
					return err
				}
			}
			if len(opts.sweep) > 0 {
				if err := b.concurrencySweep(ctx); err != nil {
					return err
				}
			}
			continue
		}
		for _, sc := range opts.scenarios {
			if err := b.measure(ctx, size, sc, opts.sizeClients, false); err != nil {
				return err
			}
		}
	}
	if len(opts.commentScenarios) > 0 {
		if err := b.commentSweep(ctx); err != nil {
			return err
		}
	}
	if opts.goBench {
		step("Go benchmarks (validation; deposit create first vs replay)")
		if b.report.goBench, err = goBenchmarks(ctx); err != nil {
			return err
		}
	}
	b.report.machine = machine(b.pgbench, settings)
	b.report.opts = opts
	b.report.scripts = b.scripts
	b.report.elapsed = time.Since(start)
	md := b.report.markdown()
	if err := os.WriteFile(opts.out, []byte(md), 0o644); err != nil {
		return err
	}
	fmt.Println(md)
	fmt.Fprintf(os.Stderr, "bench: wrote %s; total %s\n", opts.out, time.Since(start).Round(time.Second))
	return nil
}

func pxpool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	return pgxpool.New(ctx, url)
}

func step(s string) { fmt.Fprintf(os.Stderr, "== %s\n", s) }

// pickCreatives chooses, for the current size, the creatives pgbench's
// clients act on (the first maxClients benchmark creatives) and a random
// sample of the others for the load generator.
func (b *bench) pickCreatives(ctx context.Context, maxClients int) error {
	if err := b.pool.QueryRow(ctx, "SELECT min(number) FROM creatives WHERE task_id = $1", b.fx.benchTask).Scan(&b.cbase); err != nil {
		return err
	}
	rows, err := b.pool.Query(ctx, `SELECT id::text FROM creatives WHERE task_id = $1 AND number >= $2
		ORDER BY random() LIMIT $3`, b.fx.benchTask, b.cbase+maxClients, b.opts.sample)
	if err != nil {
		return err
	}
	b.sample = b.sample[:0]
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		b.sample = append(b.sample, id)
	}
	return rows.Err()
}

// creatives reads the current review status of the sample.
func (b *bench) creatives(ctx context.Context) ([]plan.Creative, error) {
	rows, err := b.pool.Query(ctx, "SELECT id::text, review_status, title FROM creatives WHERE id = ANY($1::uuid[])", b.sample)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []plan.Creative
	for rows.Next() {
		var c plan.Creative
		if err := rows.Scan(&c.ID, &c.Status, &c.Title); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// pgbenchVariables prepares the -D definitions of the scripts, with stored
// answers taken from the running server so their sizes are real.
func (b *bench) pgbenchVariables(ctx context.Context) error {
	user := b.fx.users[len(b.fx.users)-1]
	dbody, dloc, err := b.call(ctx, http.MethodPost, "/api/v1/me/balance/deposits", user,
		`{"amount":{"amountMinor":"10000000","currency":"USDT","scale":6}}`, http.StatusCreated)
	if err != nil {
		return fmt.Errorf("sample deposit: %w", err)
	}
	cbody, _, err := b.call(ctx, http.MethodGet, "/api/v1/organizations/"+b.fx.org+"/creatives/"+b.sample[0], b.fx.reviewers[0], "", http.StatusOK)
	if err != nil {
		return fmt.Errorf("sample creative: %w", err)
	}
	var cmax int
	if err := b.pool.QueryRow(ctx, "SELECT max(number) FROM creatives WHERE task_id = $1", b.fx.benchTask).Scan(&cmax); err != nil {
		return fmt.Errorf("the last benchmark creative: %w", err)
	}
	var fp [32]byte
	_, _ = rand.Read(fp[:])
	b.vars = append(pgbench.SetupVariables(),
		"t0="+strconv.Itoa(userToken0), "nusers="+strconv.Itoa(b.opts.users), "nreplay="+strconv.Itoa(b.opts.replay),
		"a0="+strconv.Itoa(authorToken0), "r0="+strconv.Itoa(reviewerToken0),
		"organization_id="+b.fx.org, "cbase="+strconv.Itoa(b.cbase),
		`fp=\x`+hex.EncodeToString(fp[:]), "ttls=86400",
		"network=TRC20", "address="+tron.DevTreasuryAddress, "currency=USDT", "confirmations_required=19",
		"ttl=1800 seconds", "reserve_for=88200 seconds", "max_open=999993",
		`dbody=\x`+hex.EncodeToString(dbody), "dloc="+dloc, `cbody=\x`+hex.EncodeToString(cbody),
		"cloc=/api/v1/organizations/"+b.fx.org+"/creatives/"+b.sample[0],
		"maxclients="+strconv.Itoa(b.maxClients), "cmax="+strconv.Itoa(cmax),
	)
	return nil
}

// call sends one request to the server outside any measurement.
func (b *bench) call(ctx context.Context, method, path string, s plan.Session, body string, want int) ([]byte, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, b.srv.baseURL+path, strings.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Cookie", "session="+s.Token)
	if method != http.MethodGet {
		req.Header.Set("X-CSRF-Token", s.CSRF)
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, "", err
	}
	if res.StatusCode != want {
		return nil, "", fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	return raw, res.Header.Get("Location"), nil
}

// measure runs one scenario at one concurrency on the server, and with
// withPgbench its pgbench script too.
func (b *bench) measure(ctx context.Context, size int, scenario string, clients int, withPgbench bool) error {
	cfg, err := b.loadConfig(ctx, scenario, clients)
	if err != nil {
		return err
	}
	if _, err := waitQuiet(ctx, b.opts.quietWait); err != nil {
		return err
	}
	profileDone := make(chan error, 1)
	profiling := b.opts.profile != "" && len(b.opts.targets) > 0 && clients == b.opts.targets[0] && size == b.opts.sizes[0]
	if profiling {
		go func() {
			time.Sleep(b.opts.warmup)
			path := filepath.Join(b.opts.profile, fmt.Sprintf("cpu-%s-%d.pprof", scenario, clients))
			profileDone <- b.srv.cpuProfile(ctx, b.opts.duration, path)
		}()
	}
	if b.counting {
		if _, err := b.pool.Exec(ctx, "SELECT pg_stat_statements_reset()"); err != nil {
			return err
		}
	}
	m, err := b.runLoad(ctx, cfg)
	if err != nil {
		return fmt.Errorf("%s at %d clients: %w", scenario, clients, err)
	}
	if b.counting {
		if m.Statements, err = b.statementsPerRequest(ctx, m.Sent); err != nil {
			return err
		}
	}
	if b.opts.statements {
		if err := b.printStatements(ctx, m.Requests); err != nil {
			return err
		}
	}
	if profiling {
		if err := <-profileDone; err != nil {
			return fmt.Errorf("profile: %w", err)
		}
	}
	r := result{size: size, scenario: scenario, clients: clients, server: m}
	fmt.Fprintf(os.Stderr, "  %-8s %6d rows %3d clients  server  %s\n", scenario, size, clients, m.line())
	if m.FirstError != "" {
		fmt.Fprintf(os.Stderr, "    first error: %s\n", m.FirstError)
	}
	if b.floor != nil && size == b.opts.sizes[0] && slices.Contains(b.opts.targets, clients) && slices.Contains(floorScenarios, scenario) {
		if err := b.againstFloor(ctx, &r); err != nil {
			return err
		}
	}
	if withPgbench {
		s := b.scripts[scenario]
		if _, err := waitQuiet(ctx, b.opts.quietWait); err != nil {
			return err
		}
		pm, err := b.runPgbench(ctx, scenario, s.Text, clients, b.opts.duration, b.vars)
		if err != nil {
			return err
		}
		r.pgbench = &pm
		fmt.Fprintf(os.Stderr, "  %-8s %6d rows %3d clients  pgbench %s  ratio %.2f\n", scenario, size, clients, pm.line(), m.Rate/pm.Rate)
		if pm.FirstError != "" {
			fmt.Fprintf(os.Stderr, "    first error: %s\n", pm.FirstError)
		}
	}
	b.report.results = append(b.report.results, r)
	return nil
}

// againstFloor runs r's load on the floor, then server and floor again
// until floorRounds alternations are done: r.rounds gets every pair, the
// server's first run being r.server. Each run gets a fresh plan, as the
// first did: the action scenario's plan holds the creatives' versions.
func (b *bench) againstFloor(ctx context.Context, r *result) error {
	m := r.server
	for round := range b.opts.floorRounds {
		if round > 0 {
			cfg, err := b.loadConfig(ctx, r.scenario, r.clients)
			if err != nil {
				return err
			}
			if _, err := waitQuiet(ctx, b.opts.quietWait); err != nil {
				return err
			}
			if m, err = b.runLoad(ctx, cfg); err != nil {
				return fmt.Errorf("%s at %d clients: %w", r.scenario, r.clients, err)
			}
			fmt.Fprintf(os.Stderr, "  %-8s %6d rows %3d clients  server  %s  (round %d)\n", r.scenario, r.size, r.clients, m.line(), round+1)
		}
		f, err := b.onFloor(ctx, r.scenario, r.clients)
		if err != nil {
			return fmt.Errorf("%s at %d clients on the floor: %w", r.scenario, r.clients, err)
		}
		r.rounds = append(r.rounds, [2]metrics{m, f})
		fmt.Fprintf(os.Stderr, "  %-8s %6d rows %3d clients  floor   %s  CPU ratio %.2f\n", r.scenario, r.size, r.clients, f.line(),
			float64(m.ServerCPU)/float64(max(f.ServerCPU, 1)))
		if f.FirstError != "" {
			fmt.Fprintf(os.Stderr, "    first error: %s\n", f.FirstError)
		}
	}
	return nil
}

// onFloor runs one scenario on the floor instead of the server (its
// figures: the "server" ones are the floor's).
func (b *bench) onFloor(ctx context.Context, scenario string, clients int) (metrics, error) {
	srv := b.srv
	b.srv = b.floor
	defer func() { b.srv = srv }()
	cfg, err := b.loadConfig(ctx, scenario, clients)
	if err != nil {
		return metrics{}, err
	}
	if _, err := waitQuiet(ctx, b.opts.quietWait); err != nil {
		return metrics{}, err
	}
	return b.runLoad(ctx, cfg)
}

// loadConfig is the load generator's plan for one scenario on b.srv.
func (b *bench) loadConfig(ctx context.Context, scenario string, clients int) (plan.Config, error) {
	cfg := plan.Config{
		BaseURL: b.srv.baseURL, Scenario: scenario, Clients: clients, Warmup: b.opts.warmup, Duration: b.opts.duration,
		CookieName: "session", Authors: b.fx.authors, Reviewers: b.fx.reviewers, Org: b.fx.org,
	}
	switch scenario {
	case plan.Action, plan.Get, plan.Version, plan.Search:
		var err error
		if cfg.Creatives, err = b.creatives(ctx); err != nil {
			return cfg, err
		}
	case plan.Deposit:
		cfg.Users = b.fx.users
	case plan.Replay:
		cfg.Users = b.fx.users[:b.opts.replay]
	case plan.Comments, plan.CommentsByVersion, plan.CommentsOpen, plan.CommentsCreatives:
		cfg.Org, cfg.Path = b.thread.org, b.thread.path(scenario)
	}
	return cfg, nil
}

// statementsPerRequest is what pg_stat_statements counted since its reset
// (the warm-up included) per request sent, the job queue's polling (River's
// statements) left out.
func (b *bench) statementsPerRequest(ctx context.Context, sent int) (float64, error) {
	var calls int64
	err := b.pool.QueryRow(ctx, `SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND query !~* 'river|pg_stat_statements'`).Scan(&calls)
	return float64(calls) / float64(max(sent, 1)), err
}

// printStatements shows what pg_stat_statements counted since its reset,
// per measured request (the warm-up is included, so counts run a little high).
func (b *bench) printStatements(ctx context.Context, requests int) error {
	rows, err := b.pool.Query(ctx, `SELECT calls, plans, mean_exec_time, mean_plan_time, regexp_replace(query, '\s+', ' ', 'g')
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		ORDER BY calls DESC LIMIT 16`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var calls, plans int64
		var exec, plan float64
		var query string
		if err := rows.Scan(&calls, &plans, &exec, &plan, &query); err != nil {
			return err
		}
		if len(query) > 70 {
			query = query[:70]
		}
		fmt.Fprintf(os.Stderr, "      %6.2f/req  exec %7.1f µs  planned %3.0f%% %7.1f µs  %s\n",
			float64(calls)/float64(max(requests, 1)), exec*1000, 100*float64(plans)/float64(max(calls, 1)), plan*1000, query)
	}
	return rows.Err()
}

func (m metrics) line() string {
	wal := "–" // none written (a replay), or not read (pgbench)
	if m.WAL > 0 {
		wal = fmt.Sprintf("%.0f B", m.WAL)
	}
	return fmt.Sprintf("%8.0f/s  p50 %7s  p99 %7s  errors %d  server %s  db %s  client %s  wal %s  rss %.1f MiB  other %.0f%%",
		m.Rate, us(m.P50), us(m.P99), m.Errors, us(m.ServerCPU), us(m.DBCPU), us(m.ClientCPU), wal, float64(m.PeakRSS)/(1<<20), 100*m.Other)
}

// us formats a duration in microseconds or milliseconds.
func us(d time.Duration) string {
	switch {
	case d == 0:
		return "–"
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	default:
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
	}
}
