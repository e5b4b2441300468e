package childproc_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"creativeapi/internal/childproc"
)

func TestAChildThatExitsDuringStartUpIsReportedAtOnce(t *testing.T) {
	p, err := childproc.Start("quitter", exec.Command("sh", "-c", "exit 3"))
	if err != nil {
		t.Fatal(err)
	}
	err = p.WaitReady(context.Background(), time.Minute, func(context.Context) error { return errors.New("not yet") })
	if err == nil || !strings.Contains(err.Error(), "quitter exited during start-up") || !strings.Contains(err.Error(), "not yet") {
		t.Fatalf("want the exit and the last check, got %v", err)
	}
	p.Stop(syscall.SIGTERM, time.Second) // an ended process stops at once
}

func TestAChildIsReadyWhenItsCheckSucceeds(t *testing.T) {
	p, err := childproc.Start("sleeper", exec.Command("sleep", "60"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(syscall.SIGTERM, 5*time.Second)
	calls := 0
	err = p.WaitReady(context.Background(), time.Minute, func(context.Context) error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("ready after %d checks: %v", calls, err)
	}
}

func TestAChildThatNeverGetsReadyTimesOut(t *testing.T) {
	p, err := childproc.Start("slow", exec.Command("sleep", "60"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(syscall.SIGTERM, 5*time.Second)
	err = p.WaitReady(context.Background(), 200*time.Millisecond, func(context.Context) error { return errors.New("not yet") })
	if err == nil || !strings.Contains(err.Error(), "slow was not ready within 200ms") {
		t.Fatalf("want a timeout, got %v", err)
	}
}

func TestAChildIgnoringItsSignalIsKilledAfterTheGrace(t *testing.T) {
	// The shell ignores SIGTERM, then waits; only a kill ends it.
	p, err := childproc.Start("stubborn", exec.Command("sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the trap be set
	start := time.Now()
	p.Stop(syscall.SIGTERM, 300*time.Millisecond)
	if d := time.Since(start); d < 300*time.Millisecond || d > 10*time.Second {
		t.Fatalf("stopped after %s: want the grace, then the kill", d)
	}
	p.Stop(syscall.SIGTERM, time.Second) // a second stop does nothing
}
