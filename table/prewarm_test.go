package table

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance/index/tableindex"
)

// TestPrewarmIndexWarmsWhatTheNextQueryReads: after a prewarm, the open a query through the index
// makes reads no index file (the reader cache answers it); a missing index is TableIndexNotFound.
func TestPrewarmIndexWarmsWhatTheNextQueryReads(t *testing.T) {
	ctx := context.Background()
	tbl := oneRowTable(t)
	_, err := tbl.CreateIndex(ctx, catalog.CreateIndexRequest{Column: "x", IndexType: "BTREE"})
	assert.NilError(t, err)

	before := tableindex.IndexCacheOpens()
	assert.NilError(t, PrewarmIndex(ctx, tbl, "x_idx"))
	warmed := tableindex.IndexCacheOpens()
	assert.Equal(t, warmed, before+1, "the prewarm opens the index's one segment")
	// What a query through the index opens (tableindex's index search): found warm.
	ds, err := tbl.Dataset()
	assert.NilError(t, err)
	v, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	segs, err := tableindex.IndexSegments(v, "x_idx")
	assert.NilError(t, err)
	_, err = tableindex.OpenScalarIndex(ctx, ds, v, segs[0])
	assert.NilError(t, err)
	assert.Equal(t, tableindex.IndexCacheOpens(), warmed, "the query's open found the reader warm")
	assert.NilError(t, PrewarmIndex(ctx, tbl, "x_idx"), "prewarming a warm index is a no-op")
	assert.Equal(t, tableindex.IndexCacheOpens(), warmed)

	assert.Equal(t, nserr.CodeOf(PrewarmIndex(ctx, tbl, "nosuch")), nserr.TableIndexNotFound)
	assert.NilError(t, PrewarmData(ctx, tbl, nil))
	assert.NilError(t, PrewarmData(ctx, tbl, []string{"x"}))
	assert.Equal(t, nserr.CodeOf(PrewarmData(ctx, tbl, []string{"nope"})), nserr.TableColumnNotFound)
}
