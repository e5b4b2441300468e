package upload_test

import (
	"bytes"
	"testing"

	"creativeapi/internal/upload"
	"creativeapi/internal/upload/mp4test"
)

func TestProbeMP4ReadsTheVideoTracksSizeAndTheMoviesDuration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		w, h         uint
		frames, pad  int
		wantDuration int32
	}{
		{"a small clip, all in the first bytes", 320, 240, 25, 100, 1000},
		// 100 frames of 20 KB: moov is after 2 MB of media data, past the
		// first bytes kept, found in the last ones.
		{"moov after the media data", 1280, 720, 100, 20_000, 4000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := mp4test.File(t, tc.w, tc.h, tc.frames, tc.pad)
			if !upload.MatchesType("video/mp4", file) {
				t.Fatalf("the muxed file does not start as an MP4: % x", file[:16])
			}
			head := file[:min(len(file), upload.SniffLen)]
			tail := file[max(0, len(file)-upload.TailLen):]
			m := upload.ProbeMP4(head, tail, int64(len(file)))
			if m.Width == nil || m.Height == nil || m.DurationMs == nil {
				t.Fatalf("%d bytes: %+v", len(file), m)
			}
			// The muxer counts the time between the first and the last
			// samples it timed (its last frames get no duration of their
			// own): within two frames of frames × 40 ms.
			if *m.Width != int32(tc.w) || *m.Height != int32(tc.h) || *m.DurationMs < tc.wantDuration-80 || *m.DurationMs >= tc.wantDuration {
				t.Fatalf("%dx%d, %d ms; want %dx%d, about %d ms", *m.Width, *m.Height, *m.DurationMs, tc.w, tc.h, tc.wantDuration)
			}
		})
	}
	t.Run("moov in neither window gives nothing", func(t *testing.T) {
		file := mp4test.File(t, 320, 240, 100, 20_000)
		if m := upload.ProbeMP4(file[:1000], file[len(file)-1000:], int64(len(file))); m != (upload.Media{}) {
			t.Fatalf("%+v", m)
		}
	})
	t.Run("garbage after ftyp gives nothing", func(t *testing.T) {
		file := append([]byte("\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2"), bytes.Repeat([]byte{0xff}, 500)...)
		if m := upload.ProbeMP4(file, file, int64(len(file))); m != (upload.Media{}) {
			t.Fatalf("%+v", m)
		}
	})
}
