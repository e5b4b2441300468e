package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"creativeapi/bench/internal/plan"
)

// metrics are one measured interval's figures.
type metrics struct {
	Rate     float64 // requests (or pgbench transactions) per second
	P50, P99 time.Duration
	Requests int
	Errors   int
	// Per request: the server's CPU, the cluster's, the client's (the load
	// generator or pgbench).
	ServerCPU, DBCPU, ClientCPU time.Duration
	PeakRSS                     int64
	FirstError                  string
	// Other is the share of the machine's CPU that other processes (not the
	// server, the cluster or the client) used during the interval.
	Other float64
	// Sent counts every answered request, the warm-up's included.
	Sent int
	// Statements per request sent, when pg_stat_statements counts them.
	Statements float64
	// GCs is the server's garbage collections per thousand requests (when
	// its pprof is on; the floor's is not).
	GCs float64
	// WAL is the bytes of write-ahead log the cluster wrote per request.
	WAL float64
}

// runLoad runs the load generator once and samples the server's and the
// cluster's CPU at the start and end of its measured interval.
func (b *bench) runLoad(ctx context.Context, cfg plan.Config) (metrics, error) {
	var m metrics
	path := filepath.Join(b.dir, "loadgen.json")
	raw, err := json.Marshal(cfg)
	if err != nil {
		return m, err
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return m, err
	}
	if err := b.srv.alive(); err != nil {
		return m, err
	}
	if err := resetPeakRSS(b.srv.pid()); err != nil {
		return m, fmt.Errorf("reset the server's peak RSS: %w", err)
	}
	cmd := exec.CommandContext(ctx, b.loadgen, path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return m, err
	}
	if err := cmd.Start(); err != nil {
		return m, err
	}
	type sample struct {
		srv, db, client, busy, total time.Duration
		gcs                          int
		wal                          int64
	}
	var s0, s1 sample
	var res plan.Result
	var sampleErr error
	keep := func(e error) {
		if e != nil && sampleErr == nil {
			sampleErr = e
		}
	}
	// countGCs reads the server's count of collections. It asks the server
	// for its heap profile, work of its own, so it is read before the CPU
	// at the start of the measured interval and after it at the end.
	countGCs := func(s *sample) {
		if b.srv.pprofAddr != "" {
			var err error
			s.gcs, err = b.srv.gcCycles(ctx)
			keep(err)
		}
	}
	// readWAL reads the cluster's WAL position (bytes since its start): a
	// statement of the cluster's, so read where countGCs reads.
	readWAL := func(s *sample) {
		keep(b.pool.QueryRow(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint").Scan(&s.wal))
	}
	take := func(s *sample) {
		var err error
		s.srv, err = processCPU(b.srv.pid())
		keep(err)
		s.db, err = clusterCPU(b.postmaster)
		keep(err)
		s.client, err = processCPU(cmd.Process.Pid)
		keep(err)
		s.busy, s.total, err = machineCPU()
		keep(err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		switch line := sc.Text(); line {
		case plan.StartLine:
			countGCs(&s0)
			readWAL(&s0)
			take(&s0)
		case plan.EndLine:
			take(&s1)
			readWAL(&s1)
			countGCs(&s1)
		default:
			if err := json.Unmarshal([]byte(line), &res); err != nil {
				return m, fmt.Errorf("loadgen said %q", line)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		if aerr := b.srv.alive(); aerr != nil {
			return m, aerr
		}
		return m, fmt.Errorf("loadgen: %w", err)
	}
	if sampleErr != nil {
		return m, sampleErr
	}
	m = metrics{
		Rate: float64(res.Requests) / res.Elapsed.Seconds(), P50: res.P50, P99: res.P99,
		Requests: res.Requests, Errors: res.Errors, FirstError: res.FirstError, Sent: res.Sent,
	}
	if res.Requests > 0 {
		m.ServerCPU = (s1.srv - s0.srv) / time.Duration(res.Requests)
		m.DBCPU = (s1.db - s0.db) / time.Duration(res.Requests)
		m.GCs = float64(s1.gcs-s0.gcs) * 1000 / float64(res.Requests)
		m.WAL = float64(s1.wal-s0.wal) / float64(res.Requests)
	}
	ours := (s1.srv - s0.srv) + (s1.db - s0.db) + (s1.client - s0.client)
	m.Other = max(0, float64(s1.busy-s0.busy-ours)/float64(max(s1.total-s0.total, 1)))
	if res.Sent > 0 {
		m.ClientCPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()) / time.Duration(res.Sent)
	}
	if m.PeakRSS, err = peakRSS(b.srv.pid()); err != nil {
		return m, err
	}
	return m, nil
}

var (
	tpsLine       = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	processedLine = regexp.MustCompile(`number of transactions actually processed: (\d+)`)
	failedLine    = regexp.MustCompile(`number of failed transactions: (\d+)`)
	abortedLine   = regexp.MustCompile(`(?m)^.*client \d+ aborted.*$`)
)

// runPgbench runs one pgbench script for d at the given concurrency with
// prepared statements (as pgx sends them) and samples the cluster's CPU.
func (b *bench) runPgbench(ctx context.Context, scenario, script string, clients int, d time.Duration, vars []string) (metrics, error) {
	var m metrics
	run := fmt.Sprintf("pgbench-%s-%d-%d", scenario, clients, time.Now().UnixNano())
	scriptPath := filepath.Join(b.dir, run+".sql")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		return m, err
	}
	args := []string{
		"-n", "-M", "prepared", "-c", strconv.Itoa(clients), "-j", strconv.Itoa(min(clients, b.cpus)),
		"-T", strconv.Itoa(int(d.Seconds())), "-f", scriptPath,
		"-l", "--log-prefix", filepath.Join(b.dir, run),
		"-h", "127.0.0.1", "-p", strconv.Itoa(b.pg.Port), "-U", "creativeapi",
	}
	for _, v := range vars {
		args = append(args, "-D", v)
	}
	args = append(args, benchDatabase)
	db0, err := clusterCPU(b.postmaster)
	if err != nil {
		return m, err
	}
	busy0, total0, err := machineCPU()
	if err != nil {
		return m, err
	}
	cmd := exec.CommandContext(ctx, b.pgbench, args...)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), "PGOPTIONS="+b.serverPool.pgOptions, "PGPASSWORD="+b.pg.Password())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	stop := progressLine(fmt.Sprintf("pgbench  %3d clients", clients), d)
	err = cmd.Run()
	stop()
	if err != nil && !bytes.Contains(out.Bytes(), []byte("tps =")) {
		return m, fmt.Errorf("pgbench %s: %w\n%s", scenario, err, out.String())
	}
	// Backends exit when pgbench disconnects; give the postmaster a moment
	// to reap them so their CPU time is counted.
	time.Sleep(200 * time.Millisecond)
	db1, err := clusterCPU(b.postmaster)
	if err != nil {
		return m, err
	}
	busy1, total1, err := machineCPU()
	if err != nil {
		return m, err
	}
	ours := db1 - db0 + cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	m.Other = max(0, float64(busy1-busy0-ours)/float64(max(total1-total0, 1)))
	text := out.String()
	if t := tpsLine.FindStringSubmatch(text); t != nil {
		m.Rate, _ = strconv.ParseFloat(t[1], 64)
	}
	if p := processedLine.FindStringSubmatch(text); p != nil {
		m.Requests, _ = strconv.Atoi(p[1])
	}
	if f := failedLine.FindStringSubmatch(text); f != nil {
		m.Errors, _ = strconv.Atoi(f[1])
	}
	if a := abortedLine.FindAllString(text, -1); len(a) > 0 {
		m.Errors += len(a)
		m.FirstError = a[0]
	}
	lat, err := pgbenchLatencies(filepath.Join(b.dir, run))
	if err != nil {
		return m, err
	}
	slices.Sort(lat)
	m.P50, m.P99 = percentile(lat, 0.50), percentile(lat, 0.99)
	if m.Requests > 0 {
		m.DBCPU = (db1 - db0) / time.Duration(m.Requests)
		m.ClientCPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()) / time.Duration(m.Requests)
	}
	return m, nil
}

// pgbenchLatencies reads the per-transaction logs (-l): the third field is
// the latency in microseconds.
func pgbenchLatencies(prefix string) ([]time.Duration, error) {
	files, err := filepath.Glob(prefix + ".*")
	if err != nil {
		return nil, err
	}
	var out []time.Duration
	for _, f := range files {
		if strings.HasSuffix(f, ".sql") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(raw), "\n") {
			fields := strings.Fields(line)
			if len(fields) < 3 {
				continue
			}
			us, err := strconv.ParseInt(fields[2], 10, 64)
			if err != nil {
				continue
			}
			out = append(out, time.Duration(us)*time.Microsecond)
		}
		_ = os.Remove(f)
	}
	return out, nil
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// progressLine shows elapsed time on one line while a step without its own
// progress (pgbench) runs.
func progressLine(label string, d time.Duration) (stop func()) {
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-quit:
				fmt.Fprint(os.Stderr, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprintf(os.Stderr, "\r\033[K    %s  %5.1fs of %s", label, time.Since(start).Seconds(), d)
			}
		}
	}()
	return func() { close(quit); <-finished }
}
