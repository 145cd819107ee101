package lance

import (
	"context"
	"sync"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/storage"
)

// cachedDataset is datasetWith at a known location (only datasets with a
// location use the shared manifest cache).
func cachedDataset(t *testing.T, store storage.Bucket, versions ...uint64) *Dataset {
	t.Helper()
	ds := NewDatasetAt(store, "memory://"+t.Name())
	for _, v := range versions {
		_, err := ds.PutManifest(context.Background(), NamingV2, testManifestFile(v, fragment(0, 10*v, 0)))
		assert.NilError(t, err)
	}
	return ds
}

// A second open of the same manifest file shares the first one's decode;
// a new commit is seen at once (the latest version is looked up on every
// open, only the decode is cached).
func TestManifestCacheNeverStale(t *testing.T) {
	ctx := context.Background()
	store := storage.NewMemory()
	ds := cachedDataset(t, store, 1, 2)
	a, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	b, err := NewDatasetAt(store, "memory://"+t.Name()).OpenLatest(ctx)
	assert.NilError(t, err)
	assert.Equal(t, b.Number(), uint64(2))
	assert.Assert(t, a.File == b.File, "the second open decoded the manifest again")

	_, err = ds.PutManifest(ctx, NamingV2, testManifestFile(3, fragment(0, 30, 0)))
	assert.NilError(t, err)
	c, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	assert.Equal(t, c.Number(), uint64(3))
	n, err := c.CountRows()
	assert.NilError(t, err)
	assert.Equal(t, n, uint64(30))
}

// A table dropped and created again at the same location has manifests
// with the same keys: their content (so ETag) differs, and the cache must
// not answer with the old table's decode.
func TestManifestCacheRecreatedTable(t *testing.T) {
	ctx := context.Background()
	old := cachedDataset(t, storage.NewMemory(), 1)
	v, err := old.OpenLatest(ctx)
	assert.NilError(t, err)
	n, err := v.CountRows()
	assert.NilError(t, err)
	assert.Equal(t, n, uint64(10))

	recreated := NewDatasetAt(storage.NewMemory(), "memory://"+t.Name())
	_, err = recreated.PutManifest(ctx, NamingV2, testManifestFile(1, fragment(0, 77, 0)))
	assert.NilError(t, err)
	v, err = recreated.OpenLatest(ctx)
	assert.NilError(t, err)
	n, err = v.CountRows()
	assert.NilError(t, err)
	assert.Equal(t, n, uint64(77))
}

// Without a location (NewDataset) nothing is cached: two datasets of
// different stores could otherwise share keys.
func TestManifestCacheNeedsLocation(t *testing.T) {
	ds, _ := datasetWith(t, NamingV2, 1)
	loc, err := ds.LatestLocation(context.Background())
	assert.NilError(t, err)
	assert.Equal(t, ds.manifestCacheKey(loc), "")
}

// The budget is in bytes: the least recently used entries leave first, and
// a file heavier than the whole budget is not kept.
func TestManifestCacheEvictsByBytes(t *testing.T) {
	c := newManifestCache(100 * manifestDecodedFactor)
	f := &ManifestFile{}
	c.put("a", f, 40)
	c.put("b", f, 40)
	assert.Assert(t, c.get("a") != nil) // a is now the most recent
	c.put("c", f, 40)                   // over budget: b goes
	assert.Assert(t, c.get("b") == nil)
	assert.Assert(t, c.get("a") != nil)
	assert.Assert(t, c.get("c") != nil)
	c.put("huge", f, 101)
	assert.Assert(t, c.get("huge") == nil)
	assert.Equal(t, c.len(), 2)
	c.put("", f, 1) // no key: never cached
	assert.Equal(t, c.len(), 2)
}

// Opens from many goroutines while versions are committed: every open
// sees a version at least as new as the last commit before it started
// (run under -race).
func TestManifestCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	store := storage.NewMemory()
	ds := cachedDataset(t, store, 1)
	var mu sync.Mutex
	committed := uint64(1)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				mu.Lock()
				floor := committed
				mu.Unlock()
				v, err := NewDatasetAt(store, "memory://"+t.Name()).OpenLatest(ctx)
				assert.Check(t, err)
				if err == nil {
					assert.Check(t, v.Number() >= floor, "opened %d after %d was committed", v.Number(), floor)
				}
			}
		}()
	}
	for v := uint64(2); v <= 10; v++ {
		_, err := ds.PutManifest(ctx, NamingV2, testManifestFile(v, fragment(0, 10*v, 0)))
		assert.NilError(t, err)
		mu.Lock()
		committed = v
		mu.Unlock()
	}
	wg.Wait()
}
