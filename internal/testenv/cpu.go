package testenv

import (
	"syscall"
	"testing"
	"time"
)

// ReportCPU starts counting the process's CPU time (user and system, every
// goroutine: server and client) and returns the function that reports it
// per operation as cpu-ns/op. On a shared machine wall time per operation
// moves with the neighbours' load; the CPU an operation costs moves less,
// and it is the figure the benchmarks steer by. PostgreSQL and the object
// store run in other processes and are not counted.
func ReportCPU(b *testing.B) func() {
	start := processCPU(b)
	return func() {
		b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
	}
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
