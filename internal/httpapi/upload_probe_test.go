package httpapi_test

import (
	"bytes"
	"encoding/binary"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"creativeapi/gen/api"
)

// mp4Box is an MP4 box of kind around body.
func mp4Box(kind string, body ...[]byte) []byte {
	inner := bytes.Join(body, nil)
	return append(append(binary.BigEndian.AppendUint32(nil, uint32(8+len(inner))), kind...), inner...)
}

// lyingMP4 is the outside review's crafted video: a hundred-odd bytes whose
// stsz claims sampleCount samples over empty stco, stsc and stts.
func lyingMP4(sampleCount uint32) []byte {
	stsz := mp4Box("stsz", make([]byte, 4), binary.BigEndian.AppendUint32(nil, 1), binary.BigEndian.AppendUint32(nil, sampleCount))
	empty := func(kind string) []byte { return mp4Box(kind, make([]byte, 8)) }
	trak := mp4Box("trak", mp4Box("mdia", mp4Box("minf", mp4Box("stbl", stsz, empty("stco"), empty("stsc"), empty("stts")))))
	return append(mp4Box("ftyp", []byte("isom\x00\x00\x02\x00isom")), mp4Box("moov", trak)...)
}

// TestCraftedVideosCompleteInParallelWithoutTheServersMemory: eight
// crafted MP4s (sample counts of 0xFFFFFFFF and 30,000,000) uploaded and
// completed at once through the real server and store each come back
// ready without the facts they lied about, and the process's heap grows
// by far less than one of them once cost (1.2 GB for 30,000,000 samples;
// the process died of 0xFFFFFFFF).
func TestCraftedVideosCompleteInParallelWithoutTheServersMemory(t *testing.T) {
	t.Parallel()
	d := newUploadDesk(t)
	files := [][]byte{}
	for range 4 {
		files = append(files, lyingMP4(0xFFFFFFFF), lyingMP4(30_000_000))
	}
	uploads := make([]api.Upload, len(files))
	for i, f := range files {
		f = append(f, byte(i)) // one SHA-256 each
		files[i] = f
		uploads[i] = d.create(t, "crafted.mp4", "video/mp4", f)
		put(t, uploads[i], f, 1)
	}

	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	var base runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	answers := make([]api.Upload, len(uploads))
	statuses := make([]int, len(uploads))
	for i, u := range uploads {
		wg.Go(func() {
			r := d.complete(u.Id)
			statuses[i] = r.Status
			if r.Status == http.StatusOK {
				r.JSON(t, &answers[i])
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	for i, u := range answers {
		asset, err := u.Asset.Get()
		if statuses[i] != http.StatusOK || u.Status != api.UploadReady || err != nil ||
			!asset.Width.IsNull() || !asset.Height.IsNull() || !asset.DurationMs.IsNull() {
			t.Errorf("crafted file %d: %d %+v; want ready without width, height or duration", i, statuses[i], u)
		}
	}
	grew := int64(peak.Load()) - int64(base.HeapAlloc)
	t.Logf("heap: %.1f MiB before, peak %.1f MiB while completing %d crafted files at once", float64(base.HeapAlloc)/(1<<20), float64(peak.Load())/(1<<20), len(files))
	if grew > 40<<20 {
		t.Fatalf("the heap grew by %.1f MiB completing %d crafted files", float64(grew)/(1<<20), len(files))
	}
}
