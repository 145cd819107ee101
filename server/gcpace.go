package server

import (
	"os"
	"runtime/debug"
	"sync"
)

// Large bodies in flight tighten the collector. A body is live heap for as long as its request
// runs, and decoding an Arrow IPC body of many small batches makes short-lived garbage (arrow-go's
// per-batch headers, ~2 KB a batch) that GOGC=100 lets grow to the live heap's size before a
// collection: a 250 MB insert peaked at 2.4x its body with the copies gone (e2e
// TestInsertManyBatchesRSSSweep). While any body of at least largeBody bytes is in flight the
// collector runs at inFlightGCPercent, which keeps the peak under twice the bodies; the server's
// own setting comes back when the last one ends, so small requests pay nothing. An operator who
// set GOGC or GOMEMLIMIT has chosen the trade-off already: then nothing changes.
const (
	largeBody         = 16 << 20
	inFlightGCPercent = 50
)

// pacer is the process's one: the collector's setting is process-wide, so every Server in a
// process (tests run many) counts its bodies in the same place.
var pacer = sync.OnceValue(newGCPacer)

type gcPacer struct {
	mu       sync.Mutex
	large    int
	saved    int
	disabled bool
}

func newGCPacer() *gcPacer {
	return &gcPacer{disabled: os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != ""}
}

// hold marks a body of n bytes in flight; the func it returns ends it.
func (p *gcPacer) hold(n int64) func() {
	if p == nil || p.disabled || n < largeBody {
		return func() {}
	}
	p.mu.Lock()
	if p.large == 0 {
		p.saved = debug.SetGCPercent(inFlightGCPercent)
	}
	p.large++
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.large--
		if p.large == 0 {
			debug.SetGCPercent(p.saved)
		}
		p.mu.Unlock()
	}
}
