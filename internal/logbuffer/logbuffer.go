// Package logbuffer batches the server's log lines into few writes. The
// request log writes a line per request; written straight to stdout that
// is a system call per request. Lines wait in memory until the buffer
// fills or at most an interval, and Close writes the rest, so a clean
// shutdown loses none; a crash loses at most an interval's lines.
package logbuffer

import (
	"io"
	"sync"
	"time"
)

// Writer is an io.Writer, safe for concurrent use, that buffers what it is
// given and writes it to the underlying writer in batches. Each Write is
// kept whole: a log handler's line never straddles two batches.
type Writer struct {
	mu     sync.Mutex
	w      io.Writer
	buf    []byte
	closed bool
	stop   chan struct{}
	done   chan struct{}
}

// New returns a Writer over w holding up to size bytes, which writes what
// it holds at least every interval.
func New(w io.Writer, size int, interval time.Duration) *Writer {
	b := &Writer{w: w, buf: make([]byte, 0, size), stop: make(chan struct{}), done: make(chan struct{})}
	go b.flushEvery(interval)
	return b
}

func (b *Writer) flushEvery(interval time.Duration) {
	defer close(b.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			_ = b.Flush()
		}
	}
}

// Write buffers p, writing the buffer out first when p does not fit. A p
// larger than the buffer, or any p after Close, is written directly.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buf)+len(p) > cap(b.buf) {
		if err := b.flush(); err != nil {
			return 0, err
		}
	}
	if b.closed || len(p) > cap(b.buf) {
		return b.w.Write(p)
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// Flush writes what the buffer holds.
func (b *Writer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flush()
}

func (b *Writer) flush() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.w.Write(b.buf)
	// A failed write drops the batch: keeping it would only grow the
	// buffer, and the next lines may still get through.
	b.buf = b.buf[:0]
	return err
}

// Close stops the periodic writes and writes what the buffer holds; later
// writes go straight through, so nothing logged after Close is lost either.
func (b *Writer) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	close(b.stop)
	<-b.done
	return b.Flush()
}
