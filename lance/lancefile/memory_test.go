package lancefile

import (
	"io"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countingWriter)(nil)

// TestWriterBoundedMemory streams 1 GiB of (id, name, float32[128]) rows
// through a Writer and checks that the heap never holds more than a few
// pages per column: the writer must not buffer its input.
func TestWriterBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 1 GiB")
	}
	schema, recs := benchTableRows(t, true, 10_000)
	// One 10,000-row record (≈5.3 MB) written again and again.
	rec := recs[0]
	perRec := estimateBytes(rec.Column(0)) + estimateBytes(rec.Column(1)) + estimateBytes(rec.Column(2))
	times := (1 << 30) / perRec
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	var out countingWriter
	w, err := NewWriter(&out, schema, WriterOptions{})
	assert.NilError(t, err)
	for i := 0; i < times; i++ {
		assert.NilError(t, w.Write(rec))
	}
	assert.NilError(t, w.Close())
	close(stop)
	<-done
	t.Logf("streamed %d MiB of input into a %d MiB file; peak heap %d MiB (input record and test data included)",
		int64(times)*int64(perRec)>>20, out.n>>20, peak.Load()>>20)
	assert.Assert(t, peak.Load() < 300<<20, "peak heap %d MiB", peak.Load()>>20)
}
