package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The benchmark cluster's shared buffers live in huge pages when the
// kernel can hold them. With 4 kB pages every PostgreSQL backend takes a
// page fault the first time it touches each page of shared memory: get at
// 1M rows, whose 10,000 sampled creatives spread over some 800 MB of
// buffers, spent 885, 792 and 661 µs of database CPU per request in three
// runs one after the other on the same connections, against 352 µs in the
// first run with 2 MB pages (docs/performance.md). A service that has run
// for hours has long paid those faults; a 12-second run pays them all.

const hugePagesPath = "/proc/sys/vm/nr_hugepages"

// hugePages is the kernel's huge page pool, from /proc/meminfo.
type hugePages struct {
	total, free int64
	size        int64 // bytes per page
}

func readHugePages() (hugePages, error) {
	m, err := meminfo()
	if err != nil {
		return hugePages{}, err
	}
	h := hugePages{total: m["HugePages_Total"], free: m["HugePages_Free"], size: m["Hugepagesize"] << 10}
	if h.size == 0 {
		return h, fmt.Errorf("no huge pages in /proc/meminfo")
	}
	return h, nil
}

// meminfo is /proc/meminfo's figures by name (kB for sizes, counts for
// the huge pages).
func meminfo() (map[string]int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return nil, err
	}
	m := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if fields := strings.Fields(value); ok && len(fields) > 0 {
			if n, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
				m[name] = n
			}
		}
	}
	return m, nil
}

// reserveHugePages makes the kernel hold enough free huge pages for
// sharedBuffers bytes of shared buffers and PostgreSQL's other shared
// memory, raising vm.nr_hugepages when it has too few (which takes root).
// restore puts the count back (nil when nothing was changed); reserved is
// false when the pages are not there, and then the cluster runs on 4 kB
// pages.
func reserveHugePages(sharedBuffers int64) (reserved bool, restore func(), note string) {
	h, err := readHugePages()
	if err != nil {
		return false, nil, err.Error()
	}
	// Shared buffers' descriptors, the lock tables and the rest take
	// about a tenth more; 64 pages more leave room for small settings.
	need := sharedBuffers/h.size + sharedBuffers/h.size/10 + 64
	if h.free >= need {
		return true, nil, fmt.Sprintf("%d free huge pages of %d kB", h.free, h.size>>10)
	}
	want := h.total + need - h.free
	if err := os.WriteFile(hugePagesPath, []byte(strconv.FormatInt(want, 10)), 0o644); err != nil {
		return false, nil, fmt.Sprintf("%d huge pages needed, %d free, and %s cannot be raised: %v", need, h.free, hugePagesPath, err)
	}
	restore = func() {
		_ = os.WriteFile(hugePagesPath, []byte(strconv.FormatInt(h.total, 10)), 0o644)
	}
	after, err := readHugePages()
	if err == nil && after.free < need {
		err = fmt.Errorf("the kernel found %d of the %d huge pages asked for", after.free, need)
	}
	if err != nil {
		restore()
		return false, nil, err.Error()
	}
	return true, restore, fmt.Sprintf("%d huge pages of %d kB reserved for the run (vm.nr_hugepages %d → %d, put back after it)", need, h.size>>10, h.total, want)
}

// sharedBuffersBytes is the shared_buffers of settings in bytes (0 when
// unset or not in kB, MB or GB).
func sharedBuffersBytes(settings []string) int64 {
	for _, kv := range settings {
		name, value, _ := strings.Cut(kv, "=")
		if name != "shared_buffers" {
			continue
		}
		for unit, shift := range map[string]uint{"kB": 10, "MB": 20, "GB": 30} {
			if digits, ok := strings.CutSuffix(value, unit); ok {
				if n, err := strconv.ParseInt(digits, 10, 64); err == nil {
					return n << shift
				}
			}
		}
	}
	return 0
}
