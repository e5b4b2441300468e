package testenv

import (
	"testing"
	"time"
)

// WaitTimeout is how long Eventually waits: far longer than any event a
// test waits for takes on a loaded 2-core machine.
const WaitTimeout = 10 * time.Second

// Eventually checks done every few milliseconds until it reports true,
// and fails the test with what (and done's last words) after
// WaitTimeout. A test waits for what it checks this way, never for a
// fixed time.
func Eventually(t testing.TB, what string, done func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(WaitTimeout)
	for !done() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("waited %s for %s", WaitTimeout, what)
		}
	}
}
