package tableindex_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/lance/lancetest"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// scanRows is every live row of the latest version: row id -> the id,
// name and tags of the row (brute force for the index searches).
type bruteRow struct {
	id   int64
	name any // string or nil
	tags []string
	null bool // tags is null
}

func bruteRows(t *testing.T, ds *lance.Dataset) map[uint64]bruteRow {
	t.Helper()
	sc, err := ds.Scan(context.Background(), lance.ScanOptions{Columns: []string{"id", "name", "tags"}, WithRowID: true})
	assert.NilError(t, err)
	defer sc.Release()
	out := map[uint64]bruteRow{}
	for sc.Next() {
		rec := sc.RecordBatch()
		ids := rec.Column(0).(*array.Int64)
		names := rec.Column(1).(*array.String)
		tags := rec.Column(2).(*array.List)
		tv := tags.ListValues().(*array.String)
		rowids := rec.Column(3).(*array.Uint64)
		for i := range int(rec.NumRows()) {
			r := bruteRow{id: ids.Value(i), null: tags.IsNull(i)}
			if names.IsValid(i) {
				r.name = names.Value(i)
			}
			lo, hi := tags.ValueOffsets(i)
			for j := lo; j < hi; j++ {
				r.tags = append(r.tags, tv.Value(int(j)))
			}
			out[rowids.Value(i)] = r
		}
	}
	assert.NilError(t, sc.Err())
	return out
}

func searchAll(t *testing.T, ds *lance.Dataset, name string, p index.Predicate) []uint64 {
	t.Helper()
	ctx := context.Background()
	v, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	segs, err := tableindex.IndexSegments(v, name)
	assert.NilError(t, err)
	var out []uint64
	for _, s := range segs {
		r, err := tableindex.OpenScalarIndex(ctx, ds, v, s)
		assert.NilError(t, err)
		rows, err := r.Search(ctx, p)
		assert.NilError(t, err)
		out = append(out, rows.ToArray()...)
	}
	slices.Sort(out)
	return out
}

func bruteSearch(rows map[uint64]bruteRow, keep func(bruteRow) bool) []uint64 {
	var out []uint64
	for id, r := range rows {
		if keep(r) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// TestScalarIndexRoundTrip builds each scalar index type on a Go table of
// two fragments and checks every predicate kind against a brute-force scan:
// the index answers exactly the rows the scan finds. Small BTREE pages put
// values of one key across page boundaries.
func TestScalarIndexRoundTrip(t *testing.T) {
	ctx := context.Background()
	ds := lancetest.NewLocal(t)
	_, err := ds.Write(ctx, lancetest.Stream(t, memory.DefaultAllocator, 0, 700, 256), lance.WriteOptions{})
	assert.NilError(t, err)
	_, err = ds.Append(ctx, lancetest.Stream(t, memory.DefaultAllocator, 700, 500, 256), lance.WriteOptions{})
	assert.NilError(t, err)
	for _, o := range []tableindex.ScalarIndexOptions{
		{Column: "id", Type: index.BTree, BatchSize: 100},
		{Column: "name", Type: index.BTree, Name: "name_btree", BatchSize: 64},
		{Column: "name", Type: index.Bitmap},
		{Column: "tags", Type: index.LabelList},
	} {
		_, err := tableindex.CreateScalarIndex(ctx, ds, o)
		assert.NilError(t, err, "%+v", o)
	}
	rows := bruteRows(t, ds)
	has := func(tags []string, w string) bool { return slices.Contains(tags, w) }
	cases := []struct {
		index string
		p     index.Predicate
		keep  func(bruteRow) bool
	}{
		{"id_idx", index.Predicate{Op: index.Equals, Values: []any{int64(777)}}, func(r bruteRow) bool { return r.id == 777 }},
		{"id_idx", index.Predicate{Op: index.Equals, Values: []any{int64(5000)}}, func(r bruteRow) bool { return false }},
		{"id_idx", index.Predicate{Op: index.Range, Lower: &index.Bound{Value: int64(95)}, Upper: &index.Bound{Value: int64(305), Inclusive: true}},
			func(r bruteRow) bool { return r.id > 95 && r.id <= 305 }},
		{"id_idx", index.Predicate{Op: index.Range, Lower: &index.Bound{Value: 1100.5, Inclusive: true}}, func(r bruteRow) bool { return r.id >= 1101 }},
		{"id_idx", index.Predicate{Op: index.IsIn, Values: []any{int64(0), int64(99), int64(100), int64(1199), int64(-3)}},
			func(r bruteRow) bool { return slices.Contains([]int64{0, 99, 100, 1199}, r.id) }},
		{"id_idx", index.Predicate{Op: index.IsNull}, func(r bruteRow) bool { return false }},
		{"name_btree", index.Predicate{Op: index.IsNull}, func(r bruteRow) bool { return r.name == nil }},
		{"name_btree", index.Predicate{Op: index.Equals, Values: []any{"n15"}}, func(r bruteRow) bool { return r.name == "n15" }},
		{"name_btree", index.Predicate{Op: index.Range, Lower: &index.Bound{Value: "n2", Inclusive: true}, Upper: &index.Bound{Value: "n3"}},
			func(r bruteRow) bool { s, ok := r.name.(string); return ok && s >= "n2" && s < "n3" }},
		{"name_idx", index.Predicate{Op: index.IsNull}, func(r bruteRow) bool { return r.name == nil }},
		{"name_idx", index.Predicate{Op: index.IsIn, Values: []any{"n1", "n8", "zz"}}, func(r bruteRow) bool { return r.name == "n1" || r.name == "n8" }},
		{"name_idx", index.Predicate{Op: index.Range, Upper: &index.Bound{Value: "n11"}}, func(r bruteRow) bool { s, ok := r.name.(string); return ok && s < "n11" }},
		{"tags_idx", index.Predicate{Op: index.HasAny, Values: []any{"t1"}}, func(r bruteRow) bool { return has(r.tags, "t1") }},
		{"tags_idx", index.Predicate{Op: index.HasAny, Values: []any{"t0", "t1"}}, func(r bruteRow) bool { return has(r.tags, "t0") || has(r.tags, "t1") }},
		{"tags_idx", index.Predicate{Op: index.HasAll, Values: []any{"t0", "t1"}}, func(r bruteRow) bool { return has(r.tags, "t0") && has(r.tags, "t1") }},
		{"tags_idx", index.Predicate{Op: index.IsNull}, func(r bruteRow) bool { return r.null }},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d_%s", i, c.index), func(t *testing.T) {
			want := bruteSearch(rows, c.keep)
			got := searchAll(t, ds, c.index, c.p)
			assert.Check(t, is.DeepEqual(got, want))
		})
	}

	// Listing and stats come from the manifest.
	v, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	st, err := tableindex.IndexStats(v, "id_idx")
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(st, lance.IndexStats{Type: "BTREE", NumIndexedRows: 1200, NumIndices: 1}))
	_, err = tableindex.IndexStats(v, "nope")
	assert.Check(t, is.ErrorIs(err, lance.ErrIndexNotFound))

	// An append leaves the new fragment unindexed.
	_, err = ds.Append(ctx, lancetest.Stream(t, memory.DefaultAllocator, 1200, 30, 30), lance.WriteOptions{})
	assert.NilError(t, err)
	v, err = ds.OpenLatest(ctx)
	assert.NilError(t, err)
	st, err = tableindex.IndexStats(v, "name_idx")
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(st, lance.IndexStats{Type: "BITMAP", NumIndexedRows: 1200, NumUnindexedRows: 30, NumIndices: 1}))
}

// TestCreateIndexConflictsAndDrop: an existing name without Replace is
// ErrIndexExists and commits nothing; Replace swaps the segment; drop
// removes it and a second drop is ErrIndexNotFound; bad columns and types
// are refused before anything is written.
func TestCreateIndexConflictsAndDrop(t *testing.T) {
	ctx := context.Background()
	ds := lancetest.NewLocal(t)
	_, err := ds.Write(ctx, lancetest.Stream(t, memory.DefaultAllocator, 0, 50, 50), lance.WriteOptions{})
	assert.NilError(t, err)
	v1, err := tableindex.CreateScalarIndex(ctx, ds, tableindex.ScalarIndexOptions{Column: "id", Type: index.BTree})
	assert.NilError(t, err)
	_, err = tableindex.CreateScalarIndex(ctx, ds, tableindex.ScalarIndexOptions{Column: "id", Type: index.Bitmap})
	assert.Check(t, is.ErrorIs(err, lance.ErrIndexExists))
	v2, err := tableindex.CreateScalarIndex(ctx, ds, tableindex.ScalarIndexOptions{Column: "id", Type: index.Bitmap, Replace: true})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(v2.Number(), v1.Number()+1))
	segs, err := tableindex.IndexSegments(v2, "id_idx")
	assert.NilError(t, err)
	assert.Check(t, is.Len(segs, 1))
	assert.Check(t, is.Equal(index.TypeName(segs[0].GetIndexDetails().GetTypeUrl()), "BITMAP"))
	txn := v2.Transaction().GetCreateIndex()
	assert.Check(t, is.Len(txn.GetRemovedIndices(), 1))

	for _, o := range []tableindex.ScalarIndexOptions{
		{Column: "missing", Type: index.BTree},
		{Column: "vec", Type: index.BTree},
		{Column: "id", Type: index.LabelList, Name: "x"},
	} {
		_, err := tableindex.CreateScalarIndex(ctx, ds, o)
		assert.Check(t, err != nil, "%+v", o)
	}
	v3, err := tableindex.DropIndex(ctx, ds, "id_idx")
	assert.NilError(t, err)
	assert.Check(t, is.Len(v3.Indices(), 0))
	_, err = tableindex.DropIndex(ctx, ds, "id_idx")
	assert.Check(t, is.ErrorIs(err, lance.ErrIndexNotFound))
	latest, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(latest.Number(), v3.Number()))
}

// TestCreateIndexConflictRules: an index trained on an older version is
// rebased over what Lance rebases it over (an append: the new fragment
// stays unindexed; another index; a config change) and refused after an
// overwrite or a restore (ErrCommitConflict), as Lance's resolver does.
func TestCreateIndexConflictRules(t *testing.T) {
	ctx := context.Background()
	segment := func(t *testing.T, ds *lance.Dataset, name string) *tablepb.IndexMetadata {
		t.Helper()
		// An index built on another copy: only its metadata matters here.
		v, err := tableindex.CreateScalarIndex(ctx, ds, tableindex.ScalarIndexOptions{Column: "id", Type: index.BTree, Name: name})
		assert.NilError(t, err)
		segs, err := tableindex.IndexSegments(v, name)
		assert.NilError(t, err)
		return proto.CloneOf(segs[0])
	}
	cases := []struct {
		name     string
		between  func(t *testing.T, ds *lance.Dataset)
		conflict bool
	}{
		{"append", func(t *testing.T, ds *lance.Dataset) {
			_, err := ds.Append(ctx, lancetest.Stream(t, memory.DefaultAllocator, 100, 10, 10), lance.WriteOptions{})
			assert.NilError(t, err)
		}, false},
		{"another index", func(t *testing.T, ds *lance.Dataset) {
			_, err := tableindex.CreateScalarIndex(ctx, ds, tableindex.ScalarIndexOptions{Column: "name", Type: index.Bitmap})
			assert.NilError(t, err)
		}, false},
		{"config", func(t *testing.T, ds *lance.Dataset) {
			_, err := ds.UpdateTableMetadata(ctx, lance.MetadataUpdate{"k": lance.Set("v")})
			assert.NilError(t, err)
		}, false},
		{"overwrite", func(t *testing.T, ds *lance.Dataset) {
			_, err := ds.Overwrite(ctx, lancetest.Stream(t, memory.DefaultAllocator, 0, 10, 10), lance.WriteOptions{})
			assert.NilError(t, err)
		}, true},
		{"restore", func(t *testing.T, ds *lance.Dataset) {
			_, err := ds.RestoreVersion(ctx, 1)
			assert.NilError(t, err)
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := lancetest.NewLocal(t)
			v1, err := ds.Write(ctx, lancetest.Stream(t, memory.DefaultAllocator, 0, 100, 50), lance.WriteOptions{})
			assert.NilError(t, err)
			other := lancetest.NewLocal(t)
			_, err = other.Write(ctx, lancetest.Stream(t, memory.DefaultAllocator, 0, 100, 50), lance.WriteOptions{})
			assert.NilError(t, err)
			seg := segment(t, other, "late_idx")
			c.between(t, ds)
			v, err := ds.Commit(ctx, &lance.CreateIndex{New: []*tablepb.IndexMetadata{seg}}, lance.CommitOptions{ReadVersion: v1.Number()})
			if c.conflict {
				assert.Check(t, is.ErrorIs(err, lance.ErrCommitConflict))
				return
			}
			assert.NilError(t, err)
			segs, err := tableindex.IndexSegments(v, "late_idx")
			assert.NilError(t, err)
			assert.Check(t, is.Len(segs, 1))
			assert.Check(t, is.Equal(v.Transaction().GetCreateIndex().GetNewIndices()[0].GetName(), "late_idx"))
		})
	}
}

// TestSearchScalarIndexLiveAddresses: the query engine's lookup picks the
// index for the predicate, answers live row addresses of the covered
// fragments (rows deleted after the build are dropped; stable row ids are
// mapped to addresses) and names the covered fragments, so the appended
// fragment is left to the scan.
func TestSearchScalarIndexLiveAddresses(t *testing.T) {
	for _, stable := range []bool{false, true} {
		t.Run(fmt.Sprintf("stable=%v", stable), func(t *testing.T) {
			ctx := context.Background()
			ds := lancetest.NewLocal(t)
			_, err := ds.Write(ctx, lancetest.Stream(t, memory.DefaultAllocator, 0, 200, 100), lance.WriteOptions{MaxRowsPerFile: 100, EnableStableRowIDs: stable})
			assert.NilError(t, err)
			for _, o := range []tableindex.ScalarIndexOptions{
				{Column: "id", Type: index.BTree, BatchSize: 32},
				{Column: "name", Type: index.Bitmap},
				{Column: "tags", Type: index.LabelList},
			} {
				_, err := tableindex.CreateScalarIndex(ctx, ds, o)
				assert.NilError(t, err)
			}
			// Delete ids 10..19 (fragment 0) after the build, then append.
			head, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)
			frags := head.Manifest().GetFragments()
			nf, _, err := lance.MergeDeletions(ctx, ds.Store(), frags[0], head.Number(), []uint32{10, 11, 12, 13, 14, 15, 16, 17, 18, 19})
			assert.NilError(t, err)
			_, err = ds.Commit(ctx, lance.NewDelete([]*tablepb.DataFragment{nf}, nil, "id >= 10 AND id < 20"), lance.CommitOptions{})
			assert.NilError(t, err)
			_, err = ds.Append(ctx, lancetest.Stream(t, memory.DefaultAllocator, 200, 50, 50), lance.WriteOptions{})
			assert.NilError(t, err)
			v, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)

			addr := func(ids ...int64) []uint64 {
				var out []uint64
				for _, id := range ids {
					out = append(out, lance.RowAddress(uint64(id/100), uint32(id%100)))
				}
				return out
			}
			m, err := tableindex.SearchScalarIndex(ctx, ds, v, "id", index.Predicate{Op: index.Range, Lower: &index.Bound{Value: int64(5), Inclusive: true}, Upper: &index.Bound{Value: int64(25)}})
			assert.NilError(t, err)
			assert.Check(t, is.Equal(m.Index, "id_idx"))
			assert.Check(t, is.DeepEqual(m.Covered, []uint64{0, 1}))
			assert.Check(t, is.DeepEqual(m.Rows.ToArray(), addr(5, 6, 7, 8, 9, 20, 21, 22, 23, 24)))

			m, err = tableindex.SearchScalarIndex(ctx, ds, v, "id", index.Predicate{Op: index.IsIn, Values: []any{int64(15), int64(150), int64(210)}})
			assert.NilError(t, err)
			assert.Check(t, is.DeepEqual(m.Rows.ToArray(), addr(150)), "15 is deleted, 210 is not covered")

			m, err = tableindex.SearchScalarIndex(ctx, ds, v, "name", index.Predicate{Op: index.IsNull})
			assert.NilError(t, err)
			assert.Check(t, is.Equal(m.Index, "name_idx"))
			var nulls []int64
			for id := int64(0); id < 200; id += 7 {
				if id < 10 || id >= 20 {
					nulls = append(nulls, id)
				}
			}
			assert.Check(t, is.DeepEqual(m.Rows.ToArray(), addr(nulls...)))

			_, err = tableindex.SearchScalarIndex(ctx, ds, v, "tags", index.Predicate{Op: index.Equals, Values: []any{"t0"}})
			assert.Check(t, is.ErrorIs(err, lance.ErrIndexNotFound), "equality on a list column has no index")
			m, err = tableindex.SearchScalarIndex(ctx, ds, v, "tags", index.Predicate{Op: index.HasAll, Values: []any{"t0", "t1"}})
			assert.NilError(t, err)
			assert.Check(t, is.Equal(m.Type, index.LabelList))
			var both []int64
			for id := int64(0); id < 200; id++ {
				if id%5 != 0 && id%3 == 2 && (id < 10 || id >= 20) {
					both = append(both, id)
				}
			}
			assert.Check(t, is.DeepEqual(m.Rows.ToArray(), addr(both...)))
		})
	}
}
