package query_test

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/query"
)

// peakAllocator counts the bytes held and the most ever held at once.
type peakAllocator struct {
	mem       memory.Allocator
	cur, peak atomic.Int64
}

func (a *peakAllocator) hold(n int64) {
	c := a.cur.Add(n)
	for {
		p := a.peak.Load()
		if c <= p || a.peak.CompareAndSwap(p, c) {
			return
		}
	}
}

func (a *peakAllocator) Allocate(n int) []byte {
	a.hold(int64(n))
	return a.mem.Allocate(n)
}

func (a *peakAllocator) Reallocate(n int, b []byte) []byte {
	a.hold(int64(n - len(b)))
	return a.mem.Reallocate(n, b)
}

func (a *peakAllocator) Free(b []byte) {
	a.hold(-int64(len(b)))
	a.mem.Free(b)
}

// memoryTable is the 200,000-row table of the memory tests (which it skips under -short or
// -race), with the collector eager and 2 workers until t ends, and the live heap once collected.
func memoryTable(t *testing.T) (*lance.Dataset, uint64) {
	t.Helper()
	if testing.Short() || raceEnabled {
		t.Skip("writes a 200,000-row table (too slow under -short or -race)")
	}
	ds := benchTable(t)
	gc := debug.SetGCPercent(10)
	t.Cleanup(func() { debug.SetGCPercent(gc) })
	procs := runtime.GOMAXPROCS(2)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs) })
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ds, ms.HeapAlloc
}

// A full scan of the 200,000-row table (≈103 MB of vectors and strings)
// streams: the batches held at once (by the allocator's count) stay under
// a third of the answer and the Go heap (batches, the file reader's page
// buffers, garbage) under 64 MiB — a bound set by the workers (pinned to
// 2 here) and the task size, not by the table — and everything is released
// at the end.
func TestStreamingMemory(t *testing.T) {
	ds, base := memoryTable(t)
	var ms runtime.MemStats
	alloc := &peakAllocator{mem: memory.NewGoAllocator()}
	rr, err := query.Run(context.Background(), ds, query.Request{Mem: alloc})
	assert.NilError(t, err)
	var answered, heapPeak uint64
	var rows int64
	for rr.Next() {
		rec := rr.RecordBatch()
		rows += rec.NumRows()
		for _, c := range rec.Columns() {
			for _, b := range c.Data().Buffers() {
				if b != nil {
					answered += uint64(b.Len())
				}
			}
			for _, ch := range c.Data().Children() {
				for _, b := range ch.Buffers() {
					if b != nil {
						answered += uint64(b.Len())
					}
				}
			}
		}
		runtime.ReadMemStats(&ms)
		heapPeak = max(heapPeak, ms.HeapAlloc-min(ms.HeapAlloc, base))
		time.Sleep(time.Millisecond) // a slow reader: the workers must wait, not pile up batches
	}
	assert.NilError(t, rr.Err())
	rr.Release()
	assert.Equal(t, rows, int64(benchRows))
	t.Logf("answer %d MB; peak held by the allocator %d MB; Go heap peak above the start %d MB",
		answered>>20, alloc.peak.Load()>>20, heapPeak>>20)
	assert.Assert(t, uint64(alloc.peak.Load()) < answered/3, "the scan held %d of %d bytes at once", alloc.peak.Load(), answered)
	assert.Assert(t, heapPeak < 64<<20, "the Go heap grew by %d bytes for an answer of %d", heapPeak, answered)
	assert.Equal(t, alloc.cur.Load(), int64(0))
}

// On the default allocator (the Go heap) lance/lancefile wraps decoded pages
// as the answer's buffers without a copy; a batch then shares its page's
// buffers, which must not make the stream hold more than a few pages.
func TestStreamingMemoryGoHeap(t *testing.T) {
	ds, base := memoryTable(t)
	var ms runtime.MemStats
	rr, err := query.Run(context.Background(), ds, query.Request{})
	assert.NilError(t, err)
	var answered, heapPeak uint64
	var rows int64
	for rr.Next() {
		rec := rr.RecordBatch()
		rows += rec.NumRows()
		for _, c := range rec.Columns() {
			answered += uint64(c.Data().SizeInBytes())
		}
		runtime.ReadMemStats(&ms)
		heapPeak = max(heapPeak, ms.HeapAlloc-min(ms.HeapAlloc, base))
		time.Sleep(time.Millisecond)
	}
	assert.NilError(t, rr.Err())
	rr.Release()
	assert.Equal(t, rows, int64(benchRows))
	t.Logf("answer %d MB; Go heap peak above the start %d MB", answered>>20, heapPeak>>20)
	assert.Assert(t, heapPeak < 64<<20, "the Go heap grew by %d bytes for an answer of %d", heapPeak, answered)
}

// A reader released early (a limit reached, a client gone) stops its
// workers and releases every batch they had queued.
func TestStreamingEarlyRelease(t *testing.T) {
	ds := newTable(t, nRows, fragRows)
	before := runtime.NumGoroutine()
	for _, req := range []query.Request{
		{Filter: "id > 5"},
		{Columns: []string{"id"}},
		{Filter: "name IS NOT NULL", Limit: 3},
	} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		req.Mem = mem
		rr, err := query.Run(context.Background(), ds, req)
		assert.NilError(t, err)
		assert.Assert(t, rr.Next())
		rr.Release()
		assert.Equal(t, mem.CurrentAlloc(), 0, "%+v", req)
	}
	// a cancelled context ends the scan with its error
	ctx, cancel := context.WithCancel(context.Background())
	rr, err := query.Run(ctx, ds, query.Request{Filter: "id > 5"})
	assert.NilError(t, err)
	cancel()
	for rr.Next() {
	}
	assert.ErrorIs(t, rr.Err(), context.Canceled)
	rr.Release()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.Assert(t, runtime.NumGoroutine() <= before, "%d goroutines, %d before", runtime.NumGoroutine(), before)
}
