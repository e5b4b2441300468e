// Package mp4test makes small real MP4 files for tests: H.264 frames of a
// chosen size (a hand-made sequence parameter set, the frame data
// filler) muxed by github.com/yapingcat/gomedia.
package mp4test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	mp4 "github.com/yapingcat/gomedia/go-mp4"
)

// bits writes an H.264 RBSP: fixed-width fields and Exp-Golomb codes.
type bits struct {
	b []byte
	n int
}

func (w *bits) u(width int, v uint) {
	for i := width - 1; i >= 0; i-- {
		if w.n%8 == 0 {
			w.b = append(w.b, 0)
		}
		if v>>i&1 == 1 {
			w.b[len(w.b)-1] |= 0x80 >> (w.n % 8)
		}
		w.n++
	}
}

func (w *bits) ue(v uint) {
	v++
	width := 0
	for x := v; x > 1; x >>= 1 {
		width++
	}
	w.u(width, 0)
	w.u(width+1, v)
}

// sps is a baseline-profile sequence parameter set of a w×h picture
// (multiples of 16), with its start code.
func sps(w, h uint) []byte {
	var b bits
	b.u(8, 0x67)   // NAL header: SPS
	b.u(8, 66)     // profile_idc: baseline
	b.u(8, 0)      // constraint flags
	b.u(8, 30)     // level_idc
	b.ue(0)        // seq_parameter_set_id
	b.ue(0)        // log2_max_frame_num_minus4
	b.ue(2)        // pic_order_cnt_type
	b.ue(1)        // max_num_ref_frames
	b.u(1, 0)      // gaps_in_frame_num_value_allowed_flag
	b.ue(w/16 - 1) // pic_width_in_mbs_minus1
	b.ue(h/16 - 1) // pic_height_in_map_units_minus1
	b.u(1, 1)      // frame_mbs_only_flag
	b.u(1, 1)      // direct_8x8_inference_flag
	b.u(1, 0)      // frame_cropping_flag
	b.u(1, 0)      // vui_parameters_present_flag
	b.u(1, 1)      // rbsp_stop_one_bit
	for b.n%8 != 0 {
		b.u(1, 0)
	}
	return append([]byte{0, 0, 0, 1}, b.b...)
}

// File muxes frames H.264 frames of w×h, one every 40 ms (25 fps), each
// padded to pad bytes, with gomedia's muxer, which writes moov after the
// media data (no faststart).
func File(t testing.TB, w, h uint, frames, pad int) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "clip.mp4")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mux, err := mp4.CreateMp4Muxer(f)
	if err != nil {
		t.Fatal(err)
	}
	track := mux.AddVideoTrack(mp4.MP4_CODEC_H264)
	pps := []byte{0, 0, 0, 1, 0x68, 0xce, 0x38, 0x80}
	for i := range frames {
		slice := append([]byte{0, 0, 0, 1, 0x65, 0x88, 0x84}, bytes.Repeat([]byte{0x5a}, pad)...)
		frame := append(append(sps(w, h), pps...), slice...)
		if err := mux.Write(track, frame, uint64(i*40), uint64(i*40)); err != nil {
			t.Fatal(err)
		}
	}
	if err := mux.WriteTrailer(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
