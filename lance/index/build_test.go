package index

import (
	"context"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/lance/lancefile"
)

// TestBTreeOrderMatchesSDK: page_data.lance holds nulls first, then the values ascending with
// NaN last, ties by row id, and page_lookup's min is null when the page holds nulls and its max
// NaN: the bytes 0.39.0 wrote for [1.5, NaN, -Inf, null, +Inf, -2] (values
// [null -Inf -2 1.5 +Inf NaN], ids [3 2 5 0 4 1]).
func TestBTreeOrderMatchesSDK(t *testing.T) {
	ctx := context.Background()
	fb := array.NewFloat64Builder(memory.DefaultAllocator)
	fb.AppendValues([]float64{1.5, math.NaN(), math.Inf(-1), 0, math.Inf(1), -2}, []bool{true, true, true, false, true, true})
	vals := fb.NewArray()
	fb.Release()
	defer vals.Release()
	b, err := NewBuilder(BTree, vals.DataType(), BuildOptions{})
	assert.NilError(t, err)
	assert.NilError(t, b.Add(vals, []uint64{0, 1, 2, 3, 4, 5}))
	st := memStore{}
	_, err = b.Finish(ctx, st)
	assert.NilError(t, err)

	data, err := lancefile.Open(ctx, sourceOf{memFile(st[PageDataFile])})
	assert.NilError(t, err)
	rec, err := data.Read(ctx, memory.DefaultAllocator, lancefile.ReadOptions{Limit: -1})
	assert.NilError(t, err)
	defer rec.Release()
	assert.Check(t, is.Equal(rec.Column(0).String(), "[(null) -Inf -2 1.5 +Inf NaN]"))
	assert.Check(t, is.DeepEqual(rec.Column(1).(*array.Uint64).Uint64Values(), []uint64{3, 2, 5, 0, 4, 1}))

	lookup, err := lancefile.Open(ctx, sourceOf{memFile(st[PageLookupFile])})
	assert.NilError(t, err)
	lrec, err := lookup.Read(ctx, memory.DefaultAllocator, lancefile.ReadOptions{Limit: -1})
	assert.NilError(t, err)
	defer lrec.Release()
	assert.Check(t, is.Equal(lrec.Column(0).String(), "[(null)]"))
	assert.Check(t, is.Equal(lrec.Column(1).String(), "[NaN]"))
	assert.Check(t, is.Equal(lrec.Column(2).String(), "[1]"))

	r, err := Open(ctx, BTree, st)
	assert.NilError(t, err)
	rows, err := r.Search(ctx, Predicate{Op: Range, Lower: &Bound{Value: 1.0}})
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(rows.ToArray(), []uint64{0, 1, 4}), "NaN is above every number, as in the SDK's order")
}
