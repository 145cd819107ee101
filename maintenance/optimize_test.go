package maintenance

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/dml"
	"github.com/lancecat/lancecat/lance"
)

// TestOptimizeIndices: optimize adds the unindexed fragments to every
// index as Lance does — scalar indices rewritten as one segment, the
// vector index given a delta segment with the same model, merged into one
// once there would be more than MaxDeltas — and every index answers as a
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

	rep, err := ds.OptimizeIndices(ctx, lance.OptimizeIndicesOptions{MaxDeltas: 3})
	assert.NilError(t, err)
	assert.Assert(t, rep.Version != 0)
	segs := map[string]int{}
	for _, r := range rep.Indices {
		assert.Equal(t, r.Status, lance.IndexOptimized, "%+v", r)
		segs[r.Name] = r.SegmentsAfter
	}
	assert.DeepEqual(t, segs, map[string]int{"id_idx": 1, "cat_idx": 1, "tags_idx": 1, "vec_idx": 2})
	checkIndices(t, ds, true)
	assert.Equal(t, len(IndexHealth(ctx, ds)), 0)
	txn, err := ds.ReadTransaction(ctx, head(t, ds))
	assert.NilError(t, err)
	ci := txn.GetCreateIndex()
	// Lance re-lists the kept vector segment: 4 new segments + 1 kept.
	assert.Equal(t, len(ci.GetNewIndices()), 5)
	assert.Equal(t, len(ci.GetRemovedIndices()), 3)

	// Up to date: nothing committed.
	again, err := ds.OptimizeIndices(ctx, lance.OptimizeIndicesOptions{MaxDeltas: 3})
	assert.NilError(t, err)
	assert.Equal(t, again.Version, uint64(0))

	// Two more appends: a third delta, then a merge into one.
	for i, want := range []int{3, 1} {
		_, err := ds.Write(ctx, remapStream(int64(1000+100*i), 50), lance.WriteOptions{Mode: lance.WriteAppend})
		assert.NilError(t, err)
		_, err = dml.Delete(ctx, ds, "id % 19 = 5")
		assert.NilError(t, err)
		rep, err := ds.OptimizeIndices(ctx, lance.OptimizeIndicesOptions{MaxDeltas: 3})
		assert.NilError(t, err)
		for _, r := range rep.Indices {
			if r.Name == "vec_idx" {
				assert.Equal(t, r.SegmentsAfter, want)
			}
		}
		checkIndices(t, ds, true)
	}

	// Compaction then remaps every segment of every index.
	cr, err := Compact(ctx, ds, CompactOptions{})
	assert.NilError(t, err)
	assert.Assert(t, cr.Version != 0)
	assert.Equal(t, len(head(t, ds).Manifest().GetFragments()), 1)
	checkIndices(t, ds, true)
}
