package logbuffer_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"creativeapi/internal/logbuffer"
)

// BenchmarkRequestLine writes the request log's line (its attributes as
// the server writes them) to a file, directly and through the buffer: the
// difference is the write system call per request the buffer saves.
func BenchmarkRequestLine(b *testing.B) {
	for _, tt := range []struct {
		name string
		wrap func(*os.File) (io.Writer, func())
	}{
		{"direct", func(f *os.File) (io.Writer, func()) { return f, func() {} }},
		{"buffered", func(f *os.File) (io.Writer, func()) {
			w := logbuffer.New(f, 64<<10, 100*time.Millisecond)
			return w, func() { _ = w.Close() }
		}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			w, closeW := tt.wrap(f)
			defer closeW()
			log := slog.New(slog.NewJSONHandler(w, nil))
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				log.LogAttrs(ctx, slog.LevelInfo, "request",
					slog.String("method", "POST"), slog.String("route", "/api/v1/me/balance/deposits"),
					slog.String("path", "/api/v1/me/balance/deposits"), slog.Int("status", 201),
					slog.Int64("duration_us", 4321), slog.String("trace_id", "4bf92f3577b34da6a3ce929d0e0e4736"),
					slog.String("operation", "createAccountDeposit"), slog.String("user_id", "0193f6a0-0000-7000-8000-000000000000"))
			}
		})
	}
}
