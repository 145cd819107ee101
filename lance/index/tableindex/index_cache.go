package tableindex

// A process-wide, bounded cache of opened index readers. An index
// segment's files never change once committed (a rebuild writes a new
// _indices/<uuid>/), so a reader opened for one query answers the next
// one too: without the cache every query re-reads and re-decodes the
// IVF centroids and PQ codebook, the BITMAP keys, the whole INVERTED
// index. Entries are keyed by the table's location, the directory the
// files live in (branch or main) and the segment uuid.
//
// Readers are shared by concurrent queries (the index readers are safe
// for concurrent Search); a caller's Close releases its reference, and an
// evicted reader is closed once its last user has released it.

import (
	"container/list"
	"context"
	"errors"
	"sync"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// Index cache limits: at most this many readers and this many bytes
// (estimated from the segment's files, which the readers hold at most
// once decoded).
const (
	defaultIndexCacheBytes   = 512 << 20
	defaultIndexCacheEntries = 256
	// unknownIndexBytes is the estimate for a segment that does not list
	// its files (writers before Lance 8).
	unknownIndexBytes = 16 << 20
)

type indexCacheKey struct {
	// owner is the table's location, or the *Dataset when it has none
	// (tools that open a bucket directly).
	owner any
	// scope is the branch whose directory holds the files ("" for main).
	scope string
	uuid  string
	kind  string
}

type indexCacheEntry struct {
	key   indexCacheKey
	ready chan struct{} // closed when val/err are set
	val   any
	close func() error
	err   error
	size  int64
	refs  int
	// gone: evicted (or failed); closed when refs reach 0.
	gone bool
	elem *list.Element
}

type indexCache struct {
	mu         sync.Mutex
	maxBytes   int64
	maxEntries int
	bytes      int64
	lru        list.List // of *indexCacheEntry, most recent at the front
	m          map[indexCacheKey]*indexCacheEntry
	// opens counts the readers actually opened (tests).
	opens int
}

var readerCache = &indexCache{maxBytes: defaultIndexCacheBytes, maxEntries: defaultIndexCacheEntries, m: map[indexCacheKey]*indexCacheEntry{}}

// SetIndexCacheLimits bounds the process-wide index reader cache (bytes
// and entries; 0 entries disables caching) and returns the previous
// limits. Readers beyond the new bounds are evicted.
func SetIndexCacheLimits(maxBytes int64, maxEntries int) (int64, int) {
	c := readerCache
	c.mu.Lock()
	defer c.mu.Unlock()
	pb, pe := c.maxBytes, c.maxEntries
	c.maxBytes, c.maxEntries = maxBytes, maxEntries
	c.evictLocked()
	return pb, pe
}

// IndexCacheOpens is how many index readers the cache has opened (a
// query served from the cache opens none).
func IndexCacheOpens() int {
	readerCache.mu.Lock()
	defer readerCache.mu.Unlock()
	return readerCache.opens
}

// cacheKey is the cache key of segment seg of d read at v.
func cacheKey(d *lance.Dataset, seg *tablepb.IndexMetadata, kind string) indexCacheKey {
	k := indexCacheKey{owner: d.Location(), uuid: string(seg.GetUuid().GetUuid()), kind: kind}
	if d.Location() == "" {
		k.owner = d
	}
	if seg.BaseId == nil {
		k.scope = d.BranchName()
	}
	return k
}

// segmentBytes estimates what a reader of seg holds: the sizes of the
// files the segment lists.
func segmentBytes(seg *tablepb.IndexMetadata) int64 {
	var n int64
	for _, f := range lance.IndexFiles(seg) {
		n += int64(min(f.Size, 1<<40))
	}
	if n == 0 {
		return unknownIndexBytes
	}
	return n
}

// acquire returns the cached reader of key, opening it with open on a
// miss (concurrent misses of one key open it once), and the function that
// releases the caller's reference.
func (c *indexCache) acquire(ctx context.Context, key indexCacheKey, size int64, open func() (any, func() error, error)) (any, func() error, error) {
	c.mu.Lock()
	if c.maxEntries <= 0 {
		c.opens++
		c.mu.Unlock()
		return open()
	}
	if e, ok := c.m[key]; ok {
		e.refs++
		if e.elem != nil {
			c.lru.MoveToFront(e.elem)
		}
		c.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			c.release(e)
			return nil, nil, ctx.Err()
		}
		if e.err != nil {
			c.release(e)
			if ctx.Err() == nil && (errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded)) {
				// The query that was opening it gave up; ours has not.
				return c.acquire(ctx, key, size, open)
			}
			return nil, nil, e.err
		}
		return e.val, c.releaser(e), nil
	}
	e := &indexCacheEntry{key: key, ready: make(chan struct{}), size: size, refs: 1}
	c.m[key] = e
	e.elem = c.lru.PushFront(e)
	c.bytes += size
	c.opens++
	c.mu.Unlock()

	val, closeFn, err := open()
	c.mu.Lock()
	e.val, e.close, e.err = val, closeFn, err
	close(e.ready)
	if err != nil {
		// A failure is not cached: the next query tries again.
		c.removeLocked(e)
	} else {
		c.evictLocked()
	}
	c.mu.Unlock()
	if err != nil {
		c.release(e)
		return nil, nil, err
	}
	return val, c.releaser(e), nil
}

// releaser is a Close for one reference (idempotent).
func (c *indexCache) releaser(e *indexCacheEntry) func() error {
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() { err = c.release(e) })
		return err
	}
}

func (c *indexCache) release(e *indexCacheEntry) error {
	c.mu.Lock()
	e.refs--
	done := e.gone && e.refs == 0 && e.close != nil
	if done {
		e.val = nil
	}
	c.mu.Unlock()
	if done {
		return e.close()
	}
	return nil
}

// removeLocked takes e out of the cache; its reader is closed when its
// last user releases it.
func (c *indexCache) removeLocked(e *indexCacheEntry) {
	if e.gone {
		return
	}
	e.gone = true
	if c.m[e.key] == e {
		delete(c.m, e.key)
	}
	if e.elem != nil {
		c.lru.Remove(e.elem)
		e.elem = nil
	}
	c.bytes -= e.size
}

// evictLocked drops the least recently used readers beyond the limits;
// the most recent one stays even if it alone is over the byte budget
// (the query that opened it is using it).
func (c *indexCache) evictLocked() {
	for c.lru.Len() > 0 && (c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes) {
		back := c.lru.Back()
		e := back.Value.(*indexCacheEntry)
		if back == c.lru.Front() && c.maxEntries > 0 {
			return
		}
		c.removeLocked(e)
		if e.refs == 0 && e.close != nil {
			fn := e.close
			e.val = nil
			go fn() //nolint:errcheck // closing an evicted reader frees memory; there is no caller to tell
		}
	}
}
