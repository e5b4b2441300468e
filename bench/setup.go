package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"creativeapi/bench/internal/plan"
	"creativeapi/internal/pgserver"
	"creativeapi/internal/tron"
)

// Session tokens of the benchmark's callers are decimal strings, so a
// pgbench script can compute them: bench user i has token userToken0+i,
// client k acts with authorToken0+k and reviewerToken0+k.
const (
	userToken0     = 100_000_000_000
	authorToken0   = 200_000_000_000
	reviewerToken0 = 300_000_000_000
	// csrfPrefix marks the benchmark's sessions.
	csrfPrefix = "bench-csrf-"
)

// benchDatabase is the database the benchmark creates in its cluster.
const benchDatabase = "bench"

// benchModule is the directory of bench's own module in the repository.
const benchModule = "bench"

// enterRepository makes the repository's root, the nearest directory
// above whose go.mod is the service's module, the working directory: the
// run reads queries/ there and builds the server from it.
func enterRepository() error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	for {
		if mod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(mod), "module creativeapi\n") {
			return os.Chdir(dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return errors.New("not inside the creativeapi repository: run bench from its bench/ directory")
		}
		dir = parent
	}
}

// build compiles the server (in the service's module), the load generator
// and the floor (in bench's) into dir.
func build(ctx context.Context, dir string) (server, loadgen, floor string, err error) {
	server, loadgen, floor = filepath.Join(dir, "creativeapi"), filepath.Join(dir, "loadgen"), filepath.Join(dir, "floor")
	for _, b := range [][3]string{{server, ".", "./cmd/creativeapi"}, {loadgen, benchModule, "./loadgen"}, {floor, benchModule, "./floor"}} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", b[0], b[2])
		cmd.Dir = b[1]
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return "", "", "", fmt.Errorf("go build %s: %w", b[2], err)
		}
	}
	return server, loadgen, floor, nil
}

// startCluster starts a durable private PostgreSQL (fsync on, the default
// settings but settings, each name=value) in dir and creates the benchmark
// database. With statements it also loads pg_stat_statements, for
// diagnostics only. Either takes a restart.
func startCluster(ctx context.Context, dir string, statements bool, settings []string) (*pgserver.Server, error) {
	logf, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return nil, err
	}
	opts := pgserver.Options{DataDir: filepath.Join(dir, "pg"), Throwaway: false, Log: logf}
	srv, err := pgserver.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	sqls := []string{"CREATE DATABASE " + benchDatabase}
	if statements {
		sqls = append(sqls, "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
	}
	for _, kv := range settings {
		name, value, _ := strings.Cut(kv, "=")
		// The name was checked (pgSettingName); the value is a literal.
		sqls = append(sqls, fmt.Sprintf("ALTER SYSTEM SET %s = %s", name, quoteLiteral(value)))
	}
	if err := execAll(ctx, srv.URL("postgres"), sqls...); err != nil {
		_ = srv.Stop()
		return nil, err
	}
	if !statements && len(settings) == 0 {
		return srv, nil
	}
	_ = srv.Stop()
	if srv, err = pgserver.Start(ctx, opts); err != nil {
		return nil, err
	}
	if !statements {
		return srv, nil
	}
	if err := execAll(ctx, srv.URL(benchDatabase), "CREATE EXTENSION pg_stat_statements",
		"ALTER SYSTEM SET pg_stat_statements.track_planning = on", "SELECT pg_reload_conf()"); err != nil {
		_ = srv.Stop()
		return nil, err
	}
	return srv, nil
}

// pgSettingName is what -pg-settings takes as a setting's name (ALTER
// SYSTEM takes it unquoted).
var pgSettingName = regexp.MustCompile(`^[a-z_][a-z0-9_.]*$`)

// quoteLiteral is value as an SQL string literal.
func quoteLiteral(value string) string {
	return "'" + strings.ReplaceAll(value, "'", "''") + "'"
}

// defaultPGSettings gives the benchmark cluster shared buffers that hold
// the 1M-row database with its comments (about 1.6 GB): 2 GB, or a quarter
// of the machine's memory when that is less (PostgreSQL's guidance for a
// dedicated server). With the default 128 MB, the size sweep measured
// reads from outside shared buffers (40 to 50 µs a page on this project's
// VM, page cache or not), not the queries (docs/performance.md).
func defaultPGSettings() string {
	size := int64(2 << 30)
	if m, err := meminfo(); err == nil && m["MemTotal"] > 0 {
		size = min(size, m["MemTotal"]<<10/4)
	}
	return fmt.Sprintf("shared_buffers=%dMB", max(size>>20, 128))
}

// pgSettingsText says which settings the cluster runs with, for the
// progress output and the report.
func pgSettingsText(settings []string) string {
	if len(settings) == 0 {
		return "default settings"
	}
	return "default settings but " + strings.Join(settings, ", ")
}

func execAll(ctx context.Context, url string, sqls ...string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, sql := range sqls {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// pgbenchPath finds pgbench beside the PostgreSQL server binaries.
func pgbenchPath() (string, error) {
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	if len(dirs) == 0 {
		return "", fmt.Errorf("pgbench not found (Debian: apt-get install postgresql-client)")
	}
	return dirs[0], nil
}

// runBinary runs the server binary's management command with the
// benchmark's database, showing its seed progress on one line.
func runBinary(ctx context.Context, bin, dbURL string, logw io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "DEV_MODE=true", "DATABASE_URL="+dbURL, "LOG_LEVEL=info")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = logw
	if err := cmd.Start(); err != nil {
		return err
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		fmt.Fprintln(logw, sc.Text())
		var line struct {
			Msg     string `json:"msg"`
			Created int    `json:"created"`
			Of      int    `json:"of"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "seed benchmark creatives" && line.Of > 0 {
			fmt.Fprintf(os.Stderr, "\r\033[K    seed: %d of %d creatives", line.Created, line.Of)
		}
	}
	fmt.Fprint(os.Stderr, "\r\033[K")
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("creativeapi %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// fixtures are the benchmark's callers and the organization they act in.
type fixtures struct {
	org       string
	benchTask string
	users     []plan.Session
	authors   []plan.Session
	reviewers []plan.Session
}

// createCallers adds n bench users with one session each, and sessions of
// the demo author and reviewer for each of maxClients clients. Their
// last_seen_at lies ahead, so the idle-expiry touch (once a minute per
// session in real use) never adds a write to a measured request.
func createCallers(ctx context.Context, pool *pgxpool.Pool, n, maxClients int) (fixtures, error) {
	var f fixtures
	_, err := pool.Exec(ctx, `
		INSERT INTO users (email, name, password_hash)
		SELECT 'bench-' || i || '@bench.test', 'Bench User ' || i, 'no-sign-in'
		FROM generate_series(0, $1::integer - 1) AS i
		ON CONFLICT DO NOTHING`, n)
	if err != nil {
		return f, fmt.Errorf("bench users: %w", err)
	}
	sessions := func(userSQL string, tokens string, count int) error {
		_, err := pool.Exec(ctx, `
			INSERT INTO sessions (user_id, token_hash, csrf_token, last_seen_at, idle_expires_at, absolute_expires_at)
			SELECT u.id, sha256(convert_to(($2::bigint + i)::text, 'UTF8')), $3 || ($2::bigint + i),
			       now() + interval '1 day', now() + interval '1 day', now() + interval '2 days'
			FROM generate_series(0, $1::integer - 1) AS i
			JOIN users u ON `+userSQL+`
			ON CONFLICT (token_hash) DO NOTHING`, count, tokens, csrfPrefix)
		return err
	}
	if err := sessions(`lower(u.email) = 'bench-' || i || '@bench.test'`, strconv.Itoa(userToken0), n); err != nil {
		return f, fmt.Errorf("bench sessions: %w", err)
	}
	if err := sessions(`u.email = 'author@acme.test'`, strconv.Itoa(authorToken0), maxClients); err != nil {
		return f, fmt.Errorf("author sessions: %w", err)
	}
	if err := sessions(`u.email = 'reviewer@acme.test'`, strconv.Itoa(reviewerToken0), maxClients); err != nil {
		return f, fmt.Errorf("reviewer sessions: %w", err)
	}
	session := func(token int) plan.Session {
		t := strconv.Itoa(token)
		return plan.Session{Token: t, CSRF: csrfPrefix + t}
	}
	for i := range n {
		f.users = append(f.users, session(userToken0+i))
	}
	for k := range maxClients {
		f.authors = append(f.authors, session(authorToken0+k))
		f.reviewers = append(f.reviewers, session(reviewerToken0+k))
	}
	err = pool.QueryRow(ctx, `SELECT o.id::text, t.id::text FROM organizations o JOIN tasks t ON t.organization_id = o.id
		WHERE o.slug = 'acme' AND t.name = 'Benchmark'`).Scan(&f.org, &f.benchTask)
	if err != nil {
		return f, fmt.Errorf("the seeded organization: %w", err)
	}
	return f, nil
}

// topUpDeposits makes the deposits table hold at least n rows: past,
// expired deposits of the bench users, whose amounts are released, as a
// long-running service accumulates them.
func topUpDeposits(ctx context.Context, pool *pgxpool.Pool, n int) error {
	var have int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM deposits").Scan(&have); err != nil {
		return err
	}
	const batch = 100_000
	for have < n {
		size := min(batch, n-have)
		_, err := pool.Exec(ctx, `
			WITH bench AS (SELECT array_agg(id) AS ids FROM users WHERE email LIKE 'bench-%@bench.test')
			INSERT INTO deposits (user_id, network, address, currency, base_amount_minor, suffix_minor,
			                      requested_amount_minor, confirmations_required, status, reserved,
			                      reserved_until, created_at, expires_at)
			SELECT bench.ids[1 + g % cardinality(bench.ids)], 'TRC20', $3, 'USDT', x.base, x.suffix, x.base + x.suffix, 19,
			       'expired', false, x.at + interval '24 hours 30 minutes', x.at, x.at + interval '30 minutes'
			FROM bench, generate_series($1::integer, $1::integer + $2::integer - 1) AS g,
			     LATERAL (SELECT 10000000 + 10000 * (g % 999000)::bigint AS base, 1 + g % 9999 AS suffix,
			                     now() - interval '2 days' - g * interval '1 second' AS at) x`,
			have, size, tron.DevTreasuryAddress)
		if err != nil {
			return fmt.Errorf("deposits: %w", err)
		}
		have += size
		fmt.Fprintf(os.Stderr, "\r\033[K    seed: %d of %d deposits", have, n)
	}
	fmt.Fprint(os.Stderr, "\r\033[K")
	return nil
}

// seededTables are the tables the size sweep seeds; commentTables the
// comment sweep's.
var (
	seededTables  = []string{"users", "sessions", "organizations", "memberships", "tasks", "creatives", "creative_versions", "assets", "deposits"}
	commentTables = []string{"organizations", "memberships", "creatives", "creative_versions", "comments"}
)

// analyze brings statistics and the visibility map of the seeded tables up
// to date, as autovacuum would on a service that has been running. Tables
// still empty are left alone: PostgreSQL plans for a never-vacuumed table
// as if it had some pages, while one vacuumed empty looks empty, and a plan
// cached on that (a scan instead of the primary key) would last until
// autovacuum's first analyze, a minute in: longer than a run. A checkpoint
// then writes out what seeding dirtied, so the checkpointer does not spread
// a million rows' worth of writes over the runs that follow.
//
// With prewarm it then reads every table and index of the schema into
// shared buffers (pg_prewarm), as a service whose database fits its
// memory has them after running a while: a run lasts seconds, too short to
// warm a million rows by itself (-prewarm).
func analyze(ctx context.Context, pool *pgxpool.Pool, tables []string, prewarm bool) error {
	start := time.Now()
	_, err := pool.Exec(ctx, "VACUUM (ANALYZE) "+strings.Join(tables, ", "))
	if err == nil {
		_, err = pool.Exec(ctx, "CHECKPOINT")
	}
	done := "vacuum analyze, checkpoint"
	if err == nil && prewarm {
		var pages int64
		if _, err = pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_prewarm"); err != nil {
			return fmt.Errorf("prewarm (-prewarm=false runs without): %w", err)
		}
		err = pool.QueryRow(ctx, `
			SELECT coalesce(sum(pg_prewarm(c.oid)), 0) FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i', 'm')`).Scan(&pages)
		done += fmt.Sprintf(", prewarm %d MB", pages*8/1024)
	}
	fmt.Fprintf(os.Stderr, "    %s: %s\n", done, time.Since(start).Round(100*time.Millisecond))
	return err
}
