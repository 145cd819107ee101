package tableindex

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"gotest.tools/v3/assert"
)

// fakeOpen counts opens and closes of one key's reader: the cache's
// bookkeeping is what is tested here, so the reader is a stand-in (the
// real readers are exercised through OpenScalarIndex in
// index_cache_use_test.go).
type fakeOpen struct {
	opens, closes atomic.Int32
	fail          error
}

func (f *fakeOpen) open() (any, func() error, error) {
	f.opens.Add(1)
	if f.fail != nil {
		return nil, nil, f.fail
	}
	return "reader", func() error { f.closes.Add(1); return nil }, nil
}

func newTestCache(bytes int64, entries int) *indexCache {
	return &indexCache{maxBytes: bytes, maxEntries: entries, m: map[indexCacheKey]*indexCacheEntry{}}
}

func key(s string) indexCacheKey { return indexCacheKey{owner: "t", uuid: s, kind: "vector"} }

// Concurrent queries of one segment open it once and share it (run under
// -race: the bookkeeping is locked).
func TestIndexCacheSharesOneOpen(t *testing.T) {
	c := newTestCache(1<<20, 4)
	var f fakeOpen
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, release, err := c.acquire(context.Background(), key("a"), 10, f.open)
			assert.Check(t, err)
			assert.Check(t, v == "reader")
			assert.Check(t, release())
			assert.Check(t, release()) // a second Close is harmless
		}()
	}
	wg.Wait()
	assert.Equal(t, f.opens.Load(), int32(1))
	assert.Equal(t, f.closes.Load(), int32(0))
	assert.Equal(t, c.m[key("a")].refs, 0)
}

// Bounds: beyond the entry or byte limit the least recently used reader
// goes; one still in use is closed only when its user releases it.
func TestIndexCacheEvicts(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name           string
		bytes          int64
		entries        int
		sizeA, sizeB   int64
		wantAEvicted   bool
		wantOpensAgain int32
	}{
		{name: "within bounds", bytes: 100, entries: 2, sizeA: 10, sizeB: 10, wantOpensAgain: 1},
		{name: "entries", bytes: 100, entries: 1, sizeA: 10, sizeB: 10, wantAEvicted: true, wantOpensAgain: 2},
		{name: "bytes", bytes: 100, entries: 4, sizeA: 60, sizeB: 60, wantAEvicted: true, wantOpensAgain: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCache(tc.bytes, tc.entries)
			var a, b fakeOpen
			_, relA, err := c.acquire(ctx, key("a"), tc.sizeA, a.open)
			assert.NilError(t, err)
			_, relB, err := c.acquire(ctx, key("b"), tc.sizeB, b.open)
			assert.NilError(t, err)
			assert.Equal(t, a.closes.Load(), int32(0), "a is in use: not closed even if evicted")
			assert.NilError(t, relA())
			want := int32(0)
			if tc.wantAEvicted {
				want = 1
			}
			assert.Equal(t, a.closes.Load(), want)
			assert.NilError(t, relB())
			_, relA, err = c.acquire(ctx, key("a"), tc.sizeA, a.open)
			assert.NilError(t, err)
			assert.NilError(t, relA())
			assert.Equal(t, a.opens.Load(), tc.wantOpensAgain)
			assert.Assert(t, c.bytes <= max(tc.bytes, tc.sizeA))
		})
	}
}

// A failed open is not cached (the next query tries again), and limits
// of 0 entries turn the cache off.
func TestIndexCacheFailureAndOff(t *testing.T) {
	ctx := context.Background()
	c := newTestCache(100, 4)
	f := fakeOpen{fail: errors.New("boom")}
	_, _, err := c.acquire(ctx, key("a"), 1, f.open)
	assert.ErrorContains(t, err, "boom")
	f.fail = nil
	_, rel, err := c.acquire(ctx, key("a"), 1, f.open)
	assert.NilError(t, err)
	assert.NilError(t, rel())
	assert.Equal(t, f.opens.Load(), int32(2))

	off := newTestCache(100, 0)
	var g fakeOpen
	for range 2 {
		_, rel, err := off.acquire(ctx, key("a"), 1, g.open)
		assert.NilError(t, err)
		assert.NilError(t, rel())
	}
	assert.Equal(t, g.opens.Load(), int32(2))
	assert.Equal(t, g.closes.Load(), int32(2))
	assert.Equal(t, len(off.m), 0)
}
