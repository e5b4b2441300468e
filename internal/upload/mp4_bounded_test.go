package upload_test

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"

	"creativeapi/internal/upload"
	"creativeapi/internal/upload/mp4test"
)

// box is an MP4 box of kind around body.
func box(kind string, body ...[]byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(8+len(bytes.Join(body, nil))))
	return append(append(b, kind...), bytes.Join(body, nil)...)
}

// craftedMP4 is the outside review's attack: an MP4 of about a hundred
// bytes whose stsz claims sampleCount samples, with empty stco, stsc and
// stts: a demuxer that sizes its sample table by the count allocates
// sampleCount entries (0xFFFFFFFF: about 172 GB).
func craftedMP4(sampleCount uint32) []byte {
	stsz := box("stsz", []byte{0, 0, 0, 0}, binary.BigEndian.AppendUint32(nil, 1), binary.BigEndian.AppendUint32(nil, sampleCount))
	empty := func(kind string) []byte { return box(kind, make([]byte, 8)) }
	stbl := box("stbl", stsz, empty("stco"), empty("stsc"), empty("stts"))
	trak := box("trak", box("mdia", box("minf", stbl)))
	return append(box("ftyp", []byte("isom\x00\x00\x02\x00isom")), box("moov", trak)...)
}

// allocated is the bytes run allocates (TotalAlloc only grows: no
// collection is needed to read its difference).
func allocated(run func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	run()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// maxProbeAlloc is what one probe may allocate, whatever the file says.
const maxProbeAlloc = 16 << 20

// TestProbingAllocatesNothingSizedByTheFile: the crafted 112-byte files
// (sample counts of 0xFFFFFFFF and 30,000,000), boxes that state sizes
// beyond their parent or the file, 64-bit and to-the-end sizes, and deep
// nesting all probe within maxProbeAlloc, and give nothing they lied about.
func TestProbingAllocatesNothingSizedByTheFile(t *testing.T) {
	huge := binary.BigEndian.AppendUint32(nil, 0xFFFFFFF0)
	// Ten thousand trak boxes, each the only child of the one before.
	const depth = 10_000
	var deep []byte
	for i := range depth {
		deep = binary.BigEndian.AppendUint32(deep, uint32(8*(depth-i)+8))
		deep = append(deep, "trak"...)
	}
	deep = append(deep, box("free")...)
	for _, tc := range []struct {
		rule string
		file []byte
	}{
		{"a sample count of 0xFFFFFFFF", craftedMP4(0xFFFFFFFF)},
		{"a sample count of 30,000,000", craftedMP4(30_000_000)},
		{"a box larger than the file", append(box("ftyp", []byte("isom")), append(huge, "moov"...)...)},
		{"a 64-bit size larger than the file", append(box("ftyp", []byte("isom")), append(binary.BigEndian.AppendUint32(nil, 1), append([]byte("moov"), binary.BigEndian.AppendUint64(nil, 1<<62)...)...)...)},
		{"a child larger than its parent", append(box("ftyp", []byte("isom")), box("moov", append(huge, "mvhd"...))...)},
		{"a size smaller than its header", append(box("ftyp", []byte("isom")), append(binary.BigEndian.AppendUint32(nil, 3), "moov"...)...)},
		{"boxes nested ten thousand deep", append(box("ftyp", []byte("isom")), box("moov", deep)...)},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			var m upload.Media
			n := allocated(func() {
				head := tc.file[:min(len(tc.file), upload.SniffLen)]
				tail := tc.file[max(0, len(tc.file)-upload.TailLen):]
				m = upload.ProbeMP4(head, tail, int64(len(tc.file)))
			})
			if n > maxProbeAlloc {
				t.Fatalf("%d bytes probed with %d bytes allocated, over %d", len(tc.file), n, maxProbeAlloc)
			}
			if m.Width != nil || m.Height != nil {
				t.Fatalf("a file that lies gave a size: %+v", m)
			}
		})
	}
	if n := len(craftedMP4(0xFFFFFFFF)); n > 150 {
		t.Fatalf("the crafted file has %d bytes; the attack's had 112", n)
	}
}

// FuzzProbe: no file makes a probe of any type panic or allocate more
// than maxProbeAlloc. The seeds are the crafted files and real ones.
func FuzzProbe(f *testing.F) {
	f.Add(craftedMP4(0xFFFFFFFF))
	f.Add(craftedMP4(30_000_000))
	f.Add(mp4test.File(f, 320, 240, 5, 10))
	f.Add([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x04\x00\x00\x00\x04\x08\x06\x00\x00\x00"))
	f.Add([]byte("GIF89a\x04\x00\x04\x00\x00\x00\x00;"))
	f.Add([]byte("RIFF\x24\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x03\x00\x00\x03\x00\x00"))
	f.Add([]byte("\xff\xd8\xff\xc0\x00\x11\x08\x00\x04\x00\x04\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01\xff\xd9"))
	f.Fuzz(func(t *testing.T, file []byte) {
		head := file[:min(len(file), upload.SniffLen)]
		tail := file[max(0, len(file)-upload.TailLen):]
		n := allocated(func() {
			upload.ProbeMP4(head, tail, int64(len(file)))
			for _, mime := range []string{"image/png", "image/jpeg", "image/gif", "image/webp"} {
				upload.Probe(mime, head)
			}
		})
		if n > maxProbeAlloc+uint64(4*len(file)) {
			t.Fatalf("%d bytes probed with %d bytes allocated", len(file), n)
		}
	})
}
