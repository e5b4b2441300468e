package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc's CPU times (USER_HZ): 100 on Linux.
const clockTick = 10 * time.Millisecond

// procTimes reads a process's CPU time from /proc/<pid>/stat: utime+stime,
// and with children set also cutime+cstime (its reaped children).
func procTimes(pid int, children bool) (time.Duration, int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): ppid is field 4, utime..cstime fields 14..17.
	if len(f) < 15 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ppid, _ := strconv.Atoi(f[1])
	last := 12
	if children {
		last = 14
	}
	var ticks int64
	for _, v := range f[11 : last+1] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, ppid, nil
}

// processCPU is one process's own CPU time.
func processCPU(pid int) (time.Duration, error) {
	t, _, err := procTimes(pid, false)
	return t, err
}

// clusterCPU is the CPU time of a PostgreSQL cluster: the postmaster with
// its reaped children (exited backends) plus every live child.
func clusterCPU(postmaster int) (time.Duration, error) {
	total, _, err := procTimes(postmaster, true)
	if err != nil {
		return 0, err
	}
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == postmaster {
			continue
		}
		t, ppid, err := procTimes(pid, false)
		if err != nil || ppid != postmaster {
			continue // exited meanwhile, or not a backend
		}
		total += t
	}
	return total, nil
}

// peakRSS is VmHWM, the process's peak resident set, in bytes.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmHWM", pid)
}

// resetPeakRSS starts a new VmHWM peak at the current RSS (Linux 4.0+), so
// each scenario reports its own peak.
func resetPeakRSS(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// postmasterPID is the first line of the cluster's postmaster.pid.
func postmasterPID(dataDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(first))
}

// machineCPU reads /proc/stat's first line: the time all CPUs spent busy
// and in total since boot.
func machineCPU() (busy, total time.Duration, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: unexpected %q", line)
	}
	var ticks [10]int64
	for i := 1; i < len(f) && i <= len(ticks); i++ {
		ticks[i-1], _ = strconv.ParseInt(f[i], 10, 64)
	}
	var sum int64
	for _, t := range ticks[:8] { // guest time is already in user
		sum += t
	}
	idle := ticks[3] + ticks[4] // idle + iowait
	return time.Duration(sum-idle) * clockTick, time.Duration(sum) * clockTick, nil
}

// waitQuiet waits until the machine's CPUs are nearly idle (other work, such
// as a test run, would distort the figures), for at most limit. It returns
// the busy share seen last.
func waitQuiet(ctx context.Context, limit time.Duration) (float64, error) {
	deadline := time.Now().Add(limit)
	warned := false
	for {
		b0, t0, err := machineCPU()
		if err != nil {
			return 0, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Second):
		}
		b1, t1, err := machineCPU()
		if err != nil {
			return 0, err
		}
		busy := float64(b1-b0) / float64(max(t1-t0, 1))
		if busy < quietShare || time.Now().After(deadline) {
			return busy, nil
		}
		if !warned {
			fmt.Fprintf(os.Stderr, "    waiting for the machine to be idle (%.0f%% busy with other work)\n", 100*busy)
			warned = true
		}
	}
}

// quietShare is the busy share of all CPUs below which a run may start.
const quietShare = 0.10
