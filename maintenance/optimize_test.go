package maintenance

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/dml"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index/tableindex"
)

// TestOptimizeIndices: optimize adds the unindexed fragments to every
// index as Lance does — scalar indices rewritten as one segment, the
// vector index's newest segment rewritten with the new rows and the same
// model (or given a delta segment, merged into one once there would be
// more than MaxDeltas) — and every index answers as a
// scan over every fragment afterwards. Health reports the rows left
// unindexed before, nothing after.
func TestOptimizeIndices(t *testing.T) {
	ctx := context.Background()
	ds := indexedTable(t, []int64{300, 100}, 1, "id % 17 = 3")
	health := IndexHealth(ctx, ds)
	assert.Equal(t, len(health), 4)
	for _, f := range health {
		assert.Equal(t, f.Kind, FindingUnindexedRows, "%+v", f)
		assert.Equal(t, f.UnindexedFragments, 1)
	}

	rep, err := tableindex.OptimizeIndices(ctx, ds, tableindex.OptimizeIndicesOptions{})
	assert.NilError(t, err)
	assert.Assert(t, rep.Version != 0)
	segs := map[string]int{}
	for _, r := range rep.Indices {
		assert.Equal(t, r.Status, tableindex.IndexOptimized, "%+v", r)
		segs[r.Name] = r.SegmentsAfter
	}
	// As the SDKs leave them: one segment per index.
	assert.DeepEqual(t, segs, map[string]int{"id_idx": 1, "cat_idx": 1, "tags_idx": 1, "vec_idx": 1})
	checkIndices(t, ds, true)
	assert.Equal(t, len(IndexHealth(ctx, ds)), 0)
	txn, err := ds.ReadTransaction(ctx, head(t, ds))
	assert.NilError(t, err)
	ci := txn.GetCreateIndex()
	assert.Equal(t, len(ci.GetNewIndices()), 4)
	assert.Equal(t, len(ci.GetRemovedIndices()), 4)

	// Up to date: nothing committed.
	again, err := tableindex.OptimizeIndices(ctx, ds, tableindex.OptimizeIndicesOptions{})
	assert.NilError(t, err)
	assert.Equal(t, again.Version, uint64(0))

	// Appends optimized as delta segments (Lance's OptimizeOptions::append),
	// then merged all into one once there are more than MaxDeltas.
	for i, want := range []int{2, 3, 1} {
		_, err := ds.Write(ctx, remapStream(t, int64(1000+100*i), 50), lance.WriteOptions{Mode: lance.WriteAppend})
		assert.NilError(t, err)
		_, err = dml.Delete(ctx, ds, "id % 19 = 5")
		assert.NilError(t, err)
		rep, err := tableindex.OptimizeIndices(ctx, ds, tableindex.OptimizeIndicesOptions{MaxDeltas: 3, VectorDeltas: true})
		assert.NilError(t, err)
		for _, r := range rep.Indices {
			if r.Name == "vec_idx" {
				assert.Equal(t, r.SegmentsAfter, want)
			}
		}
		checkIndices(t, ds, true)
		if want == 3 {
			// The kept segments are listed again in new_indices, as Lance does.
			txn, err := ds.ReadTransaction(ctx, head(t, ds))
			assert.NilError(t, err)
			assert.Equal(t, len(txn.GetCreateIndex().GetNewIndices()), 3+3)
			assert.Equal(t, len(txn.GetCreateIndex().GetRemovedIndices()), 3)
		}
	}

	// Compaction then remaps every segment of every index.
	cr, err := Compact(ctx, ds, CompactOptions{})
	assert.NilError(t, err)
	assert.Assert(t, cr.Version != 0)
	assert.Equal(t, len(head(t, ds).Manifest().GetFragments()), 1)
	checkIndices(t, ds, true)
}
