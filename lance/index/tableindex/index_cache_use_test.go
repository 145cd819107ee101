package tableindex_test

import (
	"context"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/lance/lancetest"
)

// A second query of an index does not reopen it (the reader cache), and a
// replaced index (a new uuid) is opened afresh, never served stale.
func TestIndexReaderCacheReuse(t *testing.T) {
	ctx := context.Background()
	ds := lancetest.NewLocal(t)
	_, err := ds.Write(ctx, lancetest.Stream(t, memory.DefaultAllocator, 0, 300, 128), lance.WriteOptions{})
	assert.NilError(t, err)
	_, err = tableindex.CreateScalarIndex(ctx, ds, tableindex.ScalarIndexOptions{Column: "id", Type: index.BTree})
	assert.NilError(t, err)
	eq := index.Predicate{Op: index.Equals, Values: []any{int64(42)}}
	search := func() int {
		v, err := ds.OpenLatest(ctx)
		assert.NilError(t, err)
		m, err := tableindex.SearchScalarIndex(ctx, ds, v, "id", eq)
		assert.NilError(t, err)
		return int(m.Rows.GetCardinality())
	}
	before := tableindex.IndexCacheOpens()
	assert.Equal(t, search(), 1)
	assert.Equal(t, search(), 1)
	assert.Equal(t, tableindex.IndexCacheOpens()-before, 1, "the second query used the cached reader")
	// Concurrent queries share the one reader (run under -race).
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := ds.OpenLatest(ctx)
			assert.Check(t, err)
			m, err := tableindex.SearchScalarIndex(ctx, ds, v, "id", index.Predicate{Op: index.Range, Lower: &index.Bound{Value: int64(10), Inclusive: true}, Upper: &index.Bound{Value: int64(20)}})
			if assert.Check(t, err) {
				assert.Check(t, m.Rows.GetCardinality() == 10)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, tableindex.IndexCacheOpens()-before, 1)

	_, err = tableindex.CreateScalarIndex(ctx, ds, tableindex.ScalarIndexOptions{Column: "id", Type: index.Bitmap, Replace: true})
	assert.NilError(t, err)
	assert.Equal(t, search(), 1)
	assert.Equal(t, tableindex.IndexCacheOpens()-before, 2, "the replacement is a new segment, opened once")
}
