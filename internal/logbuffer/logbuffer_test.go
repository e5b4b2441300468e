package logbuffer_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"creativeapi/internal/logbuffer"
)

// writes records each write the buffer makes to the underlying writer.
type writes struct {
	mu    sync.Mutex
	calls []string
	wrote chan struct{}
}

func newWrites() *writes { return &writes{wrote: make(chan struct{}, 100)} }

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.calls = append(w.calls, string(p))
	w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *writes) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.calls...)
}

const never = time.Hour

func TestLinesWaitUntilTheBufferFillsAndStayWhole(t *testing.T) {
	w := newWrites()
	b := logbuffer.New(w, 10, never)
	defer b.Close()
	for _, line := range []string{"abc\n", "def\n", "ghi\n"} {
		if _, err := b.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.get(); len(got) != 1 || got[0] != "abc\ndef\n" {
		t.Fatalf("writes %q, want the two lines that fit, in one write", got)
	}
}

func TestALineLargerThanTheBufferGoesStraightThroughAfterTheOthers(t *testing.T) {
	w := newWrites()
	b := logbuffer.New(w, 8, never)
	defer b.Close()
	_, _ = b.Write([]byte("ab\n"))
	_, _ = b.Write([]byte("a long line\n"))
	if got := w.get(); len(got) != 2 || got[0] != "ab\n" || got[1] != "a long line\n" {
		t.Fatalf("writes %q", got)
	}
}

func TestCloseWritesWhatIsHeldAndLaterLinesGoThrough(t *testing.T) {
	w := newWrites()
	b := logbuffer.New(w, 1<<10, never)
	_, _ = b.Write([]byte("one\n"))
	if got := w.get(); len(got) != 0 {
		t.Fatalf("written before Close: %q", got)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	_, _ = b.Write([]byte("two\n"))
	if got := strings.Join(w.get(), ""); got != "one\ntwo\n" {
		t.Fatalf("written %q", got)
	}
}

func TestHeldLinesAreWrittenWithinTheInterval(t *testing.T) {
	w := newWrites()
	b := logbuffer.New(w, 1<<10, 10*time.Millisecond)
	defer b.Close()
	_, _ = b.Write([]byte("one\n"))
	select {
	case <-w.wrote:
	case <-time.After(5 * time.Second):
		t.Fatal("the held line was not written within 5s")
	}
	if got := w.get(); len(got) != 1 || got[0] != "one\n" {
		t.Fatalf("writes %q", got)
	}
}

func TestConcurrentWritersLoseNoLine(t *testing.T) {
	var out bytes.Buffer
	b := logbuffer.New(&out, 256, time.Millisecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				_, _ = fmt.Fprintf(b, "writer %d line %d\n", g, i)
			}
		})
	}
	wg.Wait()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8*500 {
		t.Fatalf("%d lines, want %d", len(lines), 8*500)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l] = true
	}
	for g := range 8 {
		for i := range 500 {
			if l := fmt.Sprintf("writer %d line %d", g, i); !seen[l] {
				t.Fatalf("missing or torn: %q", l)
			}
		}
	}
}
