package upload

import (
	"errors"
	"io"

	mp4 "github.com/yapingcat/gomedia/go-mp4"
)

// TailLen is how many of a stored file's last bytes complete keeps for an
// MP4 whose moov box follows its media data (a file not written
// "faststart"): with the first SniffLen bytes, the probe sees moov at
// either end without a second read of the object.
const TailLen = 1 << 20

// ProbeMP4 reads an MP4's width and height (its video track's sample
// entry) and duration (mvhd's duration over its timescale) with
// github.com/yapingcat/gomedia's demuxer, from the file's first and last
// bytes; the media data between them is skipped, never read. A moov box
// out of both windows, no video track or a file the demuxer refuses give
// what could be read (possibly nothing).
func ProbeMP4(head, tail []byte, size int64) (m Media) {
	defer func() {
		// A parser of untrusted bytes must not take the server down.
		if recover() != nil {
			m = Media{}
		}
	}()
	d := mp4.CreateMp4Demuxer(&sparse{head: head, tail: tail, size: size})
	tracks, err := d.ReadHead()
	if err != nil {
		return Media{}
	}
	for _, t := range tracks {
		if (t.Cid == mp4.MP4_CODEC_H264 || t.Cid == mp4.MP4_CODEC_H265) && t.Width > 0 && t.Height > 0 && t.Width <= 1<<20 && t.Height <= 1<<20 {
			w, h := int32(t.Width), int32(t.Height)
			m.Width, m.Height = &w, &h
			break
		}
	}
	info := d.GetMp4Info()
	if info.Timescale > 0 && info.Duration > 0 {
		if ms := uint64(info.Duration) * 1000 / uint64(info.Timescale); ms > 0 && ms <= 1<<31-1 {
			d := int32(ms)
			m.DurationMs = &d
		}
	}
	return m
}

var errNotKept = errors.New("upload: the probe reads only the file's first and last bytes")

// sparse is a file of size bytes of which only head (at the start) and
// tail (at the end) are known; reading elsewhere fails.
type sparse struct {
	head, tail []byte
	size, off  int64
}

func (s *sparse) Read(p []byte) (int, error) {
	if s.off >= s.size {
		return 0, io.EOF
	}
	var n int
	switch tailStart := s.size - int64(len(s.tail)); {
	case s.off < int64(len(s.head)):
		n = copy(p, s.head[s.off:])
	case s.off >= tailStart:
		n = copy(p, s.tail[s.off-tailStart:])
	default:
		return 0, errNotKept
	}
	s.off += int64(n)
	return n, nil
}

func (s *sparse) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += s.off
	case io.SeekEnd:
		offset += s.size
	}
	if offset < 0 {
		return 0, errors.New("upload: seek before the start")
	}
	s.off = offset
	return offset, nil
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
