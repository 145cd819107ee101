package server

import (
	"runtime/debug"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
)

// TestGCPacer: the collector runs at inFlightGCPercent while any large body is in flight, and the
// setting from before comes back when the last one ends, however they overlap; small bodies and
// an operator's own GOGC/GOMEMLIMIT change nothing.
func TestGCPacer(t *testing.T) {
	before := debug.SetGCPercent(137)
	defer debug.SetGCPercent(before)
	current := func() int { v := debug.SetGCPercent(-1); debug.SetGCPercent(v); return v }

	p := &gcPacer{}
	p.hold(largeBody - 1)()
	assert.Equal(t, current(), 137, "a small body changes nothing")

	end1 := p.hold(largeBody)
	assert.Equal(t, current(), inFlightGCPercent)
	end2 := p.hold(largeBody * 4)
	end1()
	assert.Equal(t, current(), inFlightGCPercent, "one large body is still in flight")
	end2()
	assert.Equal(t, current(), 137)

	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() { defer wg.Done(); p.hold(largeBody)() }()
	}
	wg.Wait()
	assert.Equal(t, current(), 137, "overlapping bodies restore the setting")

	off := &gcPacer{disabled: true}
	off.hold(largeBody * 8)()
	assert.Equal(t, current(), 137, "the operator's GOGC/GOMEMLIMIT is kept")
}
