package upload

import (
	"encoding/binary"
)

// TailLen is how many of a stored file's last bytes complete keeps for an
// MP4 whose moov box follows its media data (a file not written
// "faststart"): with the first SniffLen bytes, the probe sees moov at
// either end without a second read of the object.
const TailLen = 1 << 20

// ProbeMP4 reads an MP4's width and height (its video track's tkhd) and
// duration (mvhd's duration over its timescale) from the file's first and
// last bytes, with a reader of our own over the box headers: a file from a
// user is hostile, and a demuxer that sizes its tables by counts read from
// the file let 112 bytes ask for 172 GB (docs/uploads.md, "Probing"). No
// allocation here is sized by a number read from the file: every box size
// is checked against its parent's and the file's, nesting is bounded, and
// so is the number of boxes looked at. The media data between the two
// windows is skipped, never read. A moov box out of both windows, no video
// track, or a box that lies give what could be read (possibly nothing).
func ProbeMP4(head, tail []byte, size int64) (m Media) {
	f := sparse{head: head, tail: tail, size: size}
	budget := maxBoxes
	var moov []byte
	for off := int64(0); off < size && moov == nil; {
		b, ok := f.box(off, size, &budget)
		if !ok {
			return Media{}
		}
		if b.kind == "moov" {
			if moov = f.bytes(b.body, b.end); moov == nil {
				return Media{} // moov in neither window
			}
		}
		off = b.end
	}
	if moov == nil {
		return Media{}
	}
	mv := movie{}
	mv.read(moov, 0, &budget)
	if mv.timescale > 0 && mv.duration > 0 {
		if ms := mv.duration * 1000 / uint64(mv.timescale); ms > 0 && ms <= 1<<31-1 {
			d := int32(ms)
			m.DurationMs = &d
		}
	}
	if mv.width > 0 && mv.height > 0 && mv.width <= 1<<20 && mv.height <= 1<<20 {
		w, h := int32(mv.width), int32(mv.height)
		m.Width, m.Height = &w, &h
	}
	return m
}

// maxBoxes bounds the boxes one probe looks at, maxDepth their nesting:
// a real file has tens of boxes a few levels deep.
const (
	maxBoxes = 10_000
	maxDepth = 8
)

// boxHeader is one box: its type, where its body starts and where it ends.
type boxHeader struct {
	kind      string
	body, end int64
}

// header reads the box header at the start of b (at least its first 8
// or 16 bytes), of a box with room bytes from its start to the end of its
// parent (or of the file); body and end are relative to the box's start.
// ok is false when the header does not fit or states a size that does not.
func header(b []byte, room int64) (boxHeader, bool) {
	if len(b) < 8 || room < 8 {
		return boxHeader{}, false
	}
	n := int64(binary.BigEndian.Uint32(b))
	h := boxHeader{kind: string(b[4:8]), body: 8}
	switch n {
	case 0: // to the end of its parent
		n = room
	case 1: // a 64-bit size follows
		if len(b) < 16 {
			return boxHeader{}, false
		}
		large := binary.BigEndian.Uint64(b[8:])
		if large > uint64(room) {
			return boxHeader{}, false
		}
		n, h.body = int64(large), 16
	}
	if n < h.body || n > room {
		return boxHeader{}, false
	}
	h.end = n
	return h, true
}

// movie is what ProbeMP4 reads of moov.
type movie struct {
	timescale     uint32
	duration      uint64
	width, height uint32
}

// read takes the facts from the boxes of b (moov's body).
func (mv *movie) read(b []byte, depth int, budget *int) {
	walk(b, depth, budget, func(kind string, body []byte) {
		switch kind {
		case "mvhd":
			mv.timescale, mv.duration = mvhd(body)
		case "trak":
			if mv.width == 0 {
				t := track{}
				t.read(body, depth+1, budget)
				if t.video {
					mv.width, mv.height = t.width, t.height
				}
			}
		}
	})
}

// walk calls visit with the kind and body of each box of b (a box's
// body), spending one of budget per box and going no deeper than
// maxDepth; what does not parse is left unread.
func walk(b []byte, depth int, budget *int, visit func(kind string, body []byte)) {
	if depth > maxDepth {
		return
	}
	for off := int64(0); off < int64(len(b)); {
		if *budget--; *budget < 0 {
			return
		}
		h, ok := header(b[off:], int64(len(b))-off)
		if !ok {
			return
		}
		visit(h.kind, b[off+h.body:off+h.end])
		off += h.end
	}
}

// track is what ProbeMP4 reads of a trak: its tkhd's size and whether its
// handler (mdia/hdlr) is video.
type track struct {
	video         bool
	width, height uint32
}

func (t *track) read(b []byte, depth int, budget *int) {
	walk(b, depth, budget, func(kind string, body []byte) {
		switch kind {
		case "tkhd":
			t.width, t.height = tkhd(body)
		case "mdia":
			t.read(body, depth+1, budget)
		case "hdlr":
			// version and flags (4), pre_defined (4), handler_type (4).
			t.video = len(body) >= 12 && string(body[8:12]) == "vide"
		}
	})
}

// mvhd reads a movie header's timescale and duration (version 0: 32-bit
// times, version 1: 64-bit); zeros when the box is too short.
func mvhd(b []byte) (timescale uint32, duration uint64) {
	switch {
	case len(b) >= 20 && b[0] == 0: // version, flags, creation, modification
		return binary.BigEndian.Uint32(b[12:]), uint64(binary.BigEndian.Uint32(b[16:]))
	case len(b) >= 32 && b[0] == 1:
		return binary.BigEndian.Uint32(b[20:]), binary.BigEndian.Uint64(b[24:])
	}
	return 0, 0
}

// tkhd reads a track header's width and height (16.16 fixed point, after
// the times, the layer, volume and matrix); zeros when the box is too
// short.
func tkhd(b []byte) (width, height uint32) {
	at := 76 // version 0: 4 + 4+4+4+4+4 (times, track id) + 8 + 2+2+2+2 + 36
	if len(b) > 0 && b[0] == 1 {
		at = 88 // 64-bit creation, modification and duration
	}
	if len(b) < at+8 {
		return 0, 0
	}
	return binary.BigEndian.Uint32(b[at:]) >> 16, binary.BigEndian.Uint32(b[at+4:]) >> 16
}

// sparse is a file of size bytes of which only head (at the start) and
// tail (at the end) are known.
type sparse struct {
	head, tail []byte
	size       int64
}

// bytes is the file's [from, to) when one window holds all of it, else nil.
func (s *sparse) bytes(from, to int64) []byte {
	if from < 0 || to > s.size || from > to {
		return nil
	}
	if to <= int64(len(s.head)) {
		return s.head[from:to]
	}
	if tailStart := s.size - int64(len(s.tail)); from >= tailStart {
		return s.tail[from-tailStart : to-tailStart]
	}
	return nil
}

// box reads the top-level box header at off (the header must lie in a
// window; the body may not) of a file of size bytes, spending budget.
func (s *sparse) box(off, size int64, budget *int) (boxHeader, bool) {
	if *budget--; *budget < 0 {
		return boxHeader{}, false
	}
	b := s.bytes(off, min(off+16, size))
	if b == nil {
		return boxHeader{}, false
	}
	h, ok := header(b, size-off)
	h.body += off
	h.end += off
	return h, ok
}

// suffix keeps the last max bytes written to it.
type suffix struct {
	b   []byte
	max int
}

func (s *suffix) Write(b []byte) (int, error) {
	s.b = append(s.b, b...)
	if len(s.b) > 2*s.max {
		s.b = append(s.b[:0], s.b[len(s.b)-s.max:]...)
	}
	return len(b), nil
}

func (s *suffix) bytes() []byte { return s.b[max(0, len(s.b)-s.max):] }
