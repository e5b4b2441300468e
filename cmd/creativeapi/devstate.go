package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"text/tabwriter"

	"creativeapi/internal/config"
)

// runStateFile, under DATA_DIR, is where a development server (DEV_MODE)
// says what it serves where while it runs: the other commands read it to
// use its private PostgreSQL and its chain simulator instead of starting
// their own, and `creativeapi dev status` prints it. It holds the private
// cluster's password, so only its owner can read it.
const runStateFile = "run.json"

// runState is the content of runStateFile.
type runState struct {
	PID      int    `json:"pid"`
	API      string `json:"api"`
	Docs     string `json:"docs"`
	Metrics  string `json:"metrics,omitempty"`
	Devchain string `json:"devchain,omitempty"`
	// Database is the private cluster's URL; empty when the server uses
	// DATABASE_URL.
	Database string `json:"database,omitempty"`
}

// writeRunState publishes s under dataDir; the returned function removes
// it (on the server's way out).
func writeRunState(dataDir string, s runState) (remove func(), err error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dataDir, runStateFile)
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	return func() {
		// Remove only our own file: a second server may have replaced it.
		if cur, err := readRunState(dataDir); err == nil && cur.PID == s.PID {
			_ = os.Remove(path)
		}
	}, nil
}

// errNoDevServer: no development server runs under DATA_DIR.
var errNoDevServer = errors.New("no development server runs here")

// readRunState returns the state of the development server running under
// dataDir, or errNoDevServer when there is none (no file, or the process
// that wrote it is gone: a killed server leaves its file behind).
func readRunState(dataDir string) (runState, error) {
	var s runState
	b, err := os.ReadFile(filepath.Join(dataDir, runStateFile))
	if errors.Is(err, os.ErrNotExist) {
		return s, errNoDevServer
	}
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: %w", filepath.Join(dataDir, runStateFile), err)
	}
	if !processAlive(s.PID) {
		return s, errNoDevServer
	}
	return s, nil
}

// processAlive reports whether pid names a running process (signal 0
// checks without sending anything; EPERM means it runs as another user).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

const devUsage = `usage: creativeapi dev status

Prints what the development server (make run) serves where: the API, the
docs, the metrics, the chain simulator and the database URL (with the
private PostgreSQL's password: paste it into psql). It reads
DATA_DIR/run.json, which the server writes while it runs with DEV_MODE=true.
While it runs, the other commands (users, orgs, transfers, seed, migrate,
devchain pay) use its database and its simulator.
`

// cmdDev runs `creativeapi dev …`.
func cmdDev(_ context.Context, e env, args []string) error {
	_, args, err := subcommand("dev", args, "status")
	if err != nil {
		return err
	}
	if err := parse(newFlags("dev status"), args); err != nil {
		return err
	}
	cfg, err := config.Load(e.getenv)
	if err != nil {
		return err
	}
	s, err := readRunState(cfg.DataDir)
	if errors.Is(err, errNoDevServer) {
		return fmt.Errorf("no development server runs under DATA_DIR=%s: start one with make run", cfg.DataDir)
	}
	if err != nil {
		return err
	}
	orOff := func(v string) string {
		if v == "" {
			return "(off)"
		}
		return v
	}
	db := s.Database
	if db == "" {
		db = "DATABASE_URL (from the server's environment)"
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "server pid\t%d\n", s.PID)
	fmt.Fprintf(tw, "API\t%s\n", s.API)
	fmt.Fprintf(tw, "Docs\t%s\n", s.Docs)
	fmt.Fprintf(tw, "Metrics\t%s\n", orOff(s.Metrics))
	fmt.Fprintf(tw, "Chain simulator\t%s\n", orOff(s.Devchain))
	fmt.Fprintf(tw, "Database\t%s\n", db)
	return tw.Flush()
}
