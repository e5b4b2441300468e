package upload_test

import (
	"bytes"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"strings"
	"testing"
	"time"

	"creativeapi/internal/upload"
)

func TestAFileIsCutIntoPartsS3Takes(t *testing.T) {
	const MiB = 1 << 20
	for _, tc := range []struct {
		name            string
		size            int64
		partSize, count int64
		last            int64
	}{
		{"one byte is one part", 1, 8 * MiB, 1, 1},
		{"exactly a part is one part", 8 * MiB, 8 * MiB, 1, 8 * MiB},
		{"a byte more is two parts, the last of one byte", 8*MiB + 1, 8 * MiB, 2, 1},
		{"2 GiB is 256 parts", 2 << 30, 8 * MiB, 256, 8 * MiB},
		{"5 TiB needs larger parts to stay within 10000", 5 << 40, 525 * MiB, 9987, 5<<40 - 525*MiB*9986},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := upload.PartSize(tc.size)
			n := upload.PartCount(tc.size, p)
			if p != tc.partSize || int64(n) != tc.count || upload.PartLength(tc.size, p, n) != tc.last {
				t.Fatalf("part size %d, %d parts, last %d", p, n, upload.PartLength(tc.size, p, n))
			}
			if p < upload.MinPartSize || n > upload.MaxParts {
				t.Fatalf("outside S3's limits: part size %d, %d parts", p, n)
			}
		})
	}
}

func TestOnlyAPendingUploadMoves(t *testing.T) {
	for _, tc := range []struct {
		from upload.Status
		move upload.Move
		to   upload.Status
		ok   bool
	}{
		{upload.StatusPending, upload.MoveComplete, upload.StatusReady, true},
		{upload.StatusPending, upload.MoveReject, upload.StatusFailed, true},
		{upload.StatusPending, upload.MoveExpire, upload.StatusFailed, true},
		{upload.StatusReady, upload.MoveComplete, upload.StatusReady, false},
		{upload.StatusReady, upload.MoveReject, upload.StatusReady, false},
		{upload.StatusReady, upload.MoveExpire, upload.StatusReady, false},
		{upload.StatusFailed, upload.MoveComplete, upload.StatusFailed, false},
		{upload.StatusFailed, upload.MoveReject, upload.StatusFailed, false},
		{upload.StatusFailed, upload.MoveExpire, upload.StatusFailed, false},
		{upload.StatusPending, upload.MoveDelete, upload.StatusFailed, true},
		{upload.StatusReady, upload.MoveDelete, upload.StatusReady, false},
		{upload.StatusFailed, upload.MoveDelete, upload.StatusFailed, false},
		{upload.StatusPending, "erase", upload.StatusPending, false},
	} {
		t.Run(string(tc.from)+" "+string(tc.move), func(t *testing.T) {
			to, err := upload.Decide(tc.from, tc.move)
			if to != tc.to || (err == nil) != tc.ok {
				t.Fatalf("got %s, %v", to, err)
			}
		})
	}
}

// TestAPendingUploadExpiresAnHourAfterItsLastPartAndADayAfterItsCreation:
// §21's rule, with UPLOAD_URL_TTL 1h and UPLOAD_TTL 24h.
func TestAPendingUploadExpiresAnHourAfterItsLastPartAndADayAfterItsCreation(t *testing.T) {
	lim := upload.NewLimits(100<<30, 2<<30, 24*time.Hour, time.Hour)
	created := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		last time.Time
		want time.Time
	}{
		{"no part yet: an hour after its creation", time.Time{}, created.Add(time.Hour)},
		{"a part 10 minutes in", created.Add(10 * time.Minute), created.Add(70 * time.Minute)},
		{"a part before its creation (clock skew) counts from the creation", created.Add(-time.Minute), created.Add(time.Hour)},
		{"a part at 23h: at most a day", created.Add(23 * time.Hour), created.Add(24 * time.Hour)},
		{"a part after a day changes nothing", created.Add(30 * time.Hour), created.Add(24 * time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := upload.Expiry(created, tc.last, lim); !got.Equal(tc.want) {
				t.Fatalf("expires at %s, want %s", got, tc.want)
			}
		})
	}
}

// TestEachUploaderHoldsAtMost20PendingUploadsAnd2GiB: the pending limits
// come before the organization's quota; a server whose largest upload is
// above 2 GiB lets one such file be pending.
func TestEachUploaderHoldsAtMost20PendingUploadsAnd2GiB(t *testing.T) {
	lim := upload.NewLimits(100<<30, 2<<30, 24*time.Hour, time.Hour)
	for _, tc := range []struct {
		name string
		r    upload.Reservations
		size int64
		lim  upload.Limits
		want error
	}{
		{"nothing pending", upload.Reservations{}, 1, lim, nil},
		{"19 pending", upload.Reservations{UploaderPending: 19, UploaderPendingBytes: 19}, 1, lim, nil},
		{"20 pending", upload.Reservations{UploaderPending: 20, UploaderPendingBytes: 20}, 1, lim, upload.ErrTooManyPending},
		{"exactly 2 GiB with this one", upload.Reservations{UploaderPending: 1, UploaderPendingBytes: 1 << 30}, 1 << 30, lim, nil},
		{"a byte over 2 GiB", upload.Reservations{UploaderPending: 1, UploaderPendingBytes: 1 << 30}, 1<<30 + 1, lim, upload.ErrTooManyPending},
		{"over both: the pending limits first", upload.Reservations{OrganizationBytes: 100 << 30, UploaderPending: 20}, 1, lim, upload.ErrTooManyPending},
		{"the quota", upload.Reservations{OrganizationBytes: 100 << 30}, 1, lim, upload.ErrQuotaExceeded},
		{"a 5 GiB server: one 5 GiB file fits", upload.Reservations{}, 5 << 30, upload.NewLimits(100<<30, 5<<30, 24*time.Hour, time.Hour), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Admit(tc.size, tc.lim); got != tc.want {
				t.Fatalf("admit: %v, want %v", got, tc.want)
			}
		})
	}
}

func encode(t *testing.T, format string, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	var b bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	case "gif":
		err = gif.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// webp is a 3×2 lossless WebP (VP8L), small enough to write out.
var webp = []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x02\x40\x00\x00\x07\x10\x11\x11\x88\x88\xfe\x07\x00")

func TestAFileIsOfItsTypeByItsFirstBytes(t *testing.T) {
	pngB, jpegB, gifB := encode(t, "png", 3, 2), encode(t, "jpeg", 3, 2), encode(t, "gif", 3, 2)
	mp4 := []byte("\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2")
	mov := []byte("\x00\x00\x00\x14ftypqt  \x00\x00\x02\x00qt  ")
	webm := []byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01")
	zip := []byte("PK\x03\x04\x14\x00\x00\x00")
	files := map[string][]byte{"image/png": pngB, "image/jpeg": jpegB, "image/gif": gifB, "image/webp": webp,
		"video/mp4": mp4, "video/quicktime": mov, "video/webm": webm, "application/zip": zip}
	for mime := range files {
		for other, b := range files {
			if got := upload.MatchesType(mime, b); got != (mime == other) {
				t.Errorf("%s file declared %s: matches %v", other, mime, got)
			}
		}
	}
	if upload.MatchesType("text/html", []byte("<html>")) || upload.MatchesType("image/png", nil) {
		t.Error("an unknown type or an empty file matched")
	}
}

func TestImagesAreMeasuredByTheirDecoders(t *testing.T) {
	for _, tc := range []struct {
		mime string
		file []byte
	}{
		{"image/png", encode(t, "png", 3, 2)},
		{"image/jpeg", encode(t, "jpeg", 3, 2)},
		{"image/gif", encode(t, "gif", 3, 2)},
		{"image/webp", webp},
	} {
		t.Run(tc.mime, func(t *testing.T) {
			m := upload.Probe(tc.mime, tc.file)
			if m.Width == nil || m.Height == nil || *m.Width != 3 || *m.Height != 2 || m.DurationMs != nil {
				t.Fatalf("got %+v", m)
			}
		})
	}
	if m := upload.Probe("image/png", encode(t, "gif", 3, 2)); m.Width != nil {
		t.Error("a GIF's size was read as a PNG's")
	}
	if m := upload.Probe("application/zip", []byte("PK\x03\x04")); m.Width != nil {
		t.Error("a zip has no size")
	}
}

// TestEveryUploadMoveIsGuardedByItsStatement: the statement of each move
// (queries/uploads.sql) sets the rule's To and is guarded by its From, so
// the SQL cannot move an upload the table does not.
func TestEveryUploadMoveIsGuardedByItsStatement(t *testing.T) {
	sql, err := os.ReadFile("../../queries/uploads.sql")
	if err != nil {
		t.Fatal(err)
	}
	statements := map[string]string{}
	for _, part := range strings.Split(string(sql), "-- name: ")[1:] {
		name, _, _ := strings.Cut(part, " ")
		statements[name] = part
	}
	for m, r := range upload.Moves {
		stmt, ok := statements[r.Query]
		if !ok {
			t.Errorf("%s: no statement %s in queries/uploads.sql", m, r.Query)
			continue
		}
		if len(r.From) != 1 || len(r.To) != 1 {
			t.Errorf("%s: an upload moves from one status to one status: %v → %v", m, r.From, r.To)
			continue
		}
		if guard := fmt.Sprintf("AND status = '%s'", r.From[0]); !strings.Contains(stmt, guard) {
			t.Errorf("%s: %s is not guarded by %q", m, r.Query, guard)
		}
		if set := fmt.Sprintf("SET status = '%s'", r.To[0]); !strings.Contains(stmt, set) {
			t.Errorf("%s: %s does not %q", m, r.Query, set)
		}
	}
}
