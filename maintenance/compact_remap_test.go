package maintenance

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/dml"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
)

const remapDim = 8

var remapSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "cat", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	{Name: "vec", Type: arrow.FixedSizeListOf(remapDim, arrow.PrimitiveTypes.Float32)},
}, nil)

// remapStream is n rows from id from (from a checked allocator, released when t ends): cat = id % 7 (null every 11th),
// tags = [id % 3, id % 5] (null every 13th), a deterministic vector.
func remapStream(t testing.TB, from, n int64) lance.RecordStream {
	b := array.NewRecordBuilder(testenv.CheckedAllocator(t), remapSchema)
	defer b.Release()
	rng := rand.New(rand.NewPCG(uint64(from), 7))
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		if i%11 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int32Builder).Append(int32(i % 7))
		}
		lb := b.Field(2).(*array.ListBuilder)
		if i%13 == 0 {
			lb.AppendNull()
		} else {
			lb.Append(true)
			lb.ValueBuilder().(*array.Int32Builder).AppendValues([]int32{int32(i % 3), 10 + int32(i%5)}, nil)
		}
		fb := b.Field(3).(*array.FixedSizeListBuilder)
		fb.Append(true)
		for range remapDim {
			fb.ValueBuilder().(*array.Float32Builder).Append(rng.Float32())
		}
	}
	rec := b.NewRecordBatch()
	rr, _ := array.NewRecordReader(remapSchema, []arrow.RecordBatch{rec})
	rec.Release()
	t.Cleanup(rr.Release) // before the allocator's check, which runs last
	return rr
}

// indexedTable: fragments of sizes, every index built after the first
// indexedFrags of them, then the rest appended (unindexed) and deletes run.
func indexedTable(t *testing.T, sizes []int64, indexedFrags int, deletes ...string) *lance.Dataset {
	t.Helper()
	ctx := context.Background()
	ds := openDir(t, t.TempDir())
	next := int64(0)
	write := func(n int64, mode lance.WriteMode) {
		_, err := ds.Write(ctx, remapStream(t, next, n), lance.WriteOptions{Mode: mode, DataStorageVersion: "2.1"})
		assert.NilError(t, err)
		next += n
	}
	for i, n := range sizes[:indexedFrags] {
		write(n, map[bool]lance.WriteMode{true: lance.WriteCreate, false: lance.WriteAppend}[i == 0])
	}
	for _, o := range []tableindex.ScalarIndexOptions{
		{Column: "id", Type: index.BTree, BatchSize: 64},
		{Column: "cat", Type: index.Bitmap},
		{Column: "tags", Type: index.LabelList},
	} {
		_, err := tableindex.CreateScalarIndex(ctx, ds, o)
		assert.NilError(t, err)
	}
	_, err := tableindex.CreateVectorIndex(ctx, ds, tableindex.VectorIndexOptions{Column: "vec", Kind: index.IVFPQ, NumPartitions: 4, NumSubVectors: 2, Seed: 1})
	assert.NilError(t, err)
	for _, n := range sizes[indexedFrags:] {
		write(n, lance.WriteAppend)
	}
	for _, d := range deletes {
		_, err := dml.Delete(ctx, ds, d)
		assert.NilError(t, err)
	}
	return ds
}

// scanTruth is, per live row, its address, id, cat (-1 null) and tags.
type truthRow struct {
	addr uint64
	cat  int32
	tags []int32 // nil: null list
}

func scanTruth(t *testing.T, ds *lance.Dataset) map[int64]truthRow {
	t.Helper()
	s, err := ds.Scan(context.Background(), lance.ScanOptions{Columns: []string{"id", "cat", "tags"}, WithRowID: true})
	assert.NilError(t, err)
	defer s.Release()
	out := map[int64]truthRow{}
	for s.Next() {
		rec := s.RecordBatch()
		ids, cats, tags, rid := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int32), rec.Column(2).(*array.List), rec.Column(3).(*array.Uint64)
		for i := range ids.Len() {
			r := truthRow{addr: rid.Value(i), cat: -1}
			if !cats.IsNull(i) {
				r.cat = cats.Value(i)
			}
			if !tags.IsNull(i) {
				lo, hi := tags.ValueOffsets(i)
				r.tags = slices.Clone(tags.ListValues().(*array.Int32).Int32Values()[lo:hi])
			}
			out[ids.Value(i)] = r
		}
	}
	assert.NilError(t, s.Err())
	return out
}

// checkIndices: every index of the latest version answers exactly what a
// scan of the fragments it covers answers (addresses of live rows), and
// covers only fragments that exist.
func checkIndices(t *testing.T, ds *lance.Dataset, wantCoverAll bool) {
	t.Helper()
	ctx := context.Background()
	v := head(t, ds)
	truth := scanTruth(t, ds)
	live := roaring64.New()
	for _, r := range truth {
		live.Add(r.addr)
	}
	frags := fragmentIDs(v)
	for _, name := range []string{"id_idx", "cat_idx", "tags_idx", "vec_idx"} {
		segs, err := tableindex.IndexSegments(v, name)
		assert.NilError(t, err, name)
		covered := map[uint64]bool{}
		for _, s := range segs {
			fs, err := index.DecodeFragmentBitmap(s.GetFragmentBitmap())
			assert.NilError(t, err)
			for _, f := range fs {
				assert.Assert(t, slices.Contains(frags, uint64(f)), "%s covers removed fragment %d", name, f)
				covered[uint64(f)] = true
			}
		}
		if wantCoverAll {
			assert.Equal(t, len(covered), len(frags), "%s covers every fragment", name)
		}
		// want(pred) is the addresses of live covered rows matching pred.
		want := func(pred func(id int64, r truthRow) bool) *roaring64.Bitmap {
			out := roaring64.New()
			for id, r := range truth {
				if covered[r.addr>>32] && pred(id, r) {
					out.Add(r.addr)
				}
			}
			return out
		}
		got := func(p index.Predicate) *roaring64.Bitmap {
			out := roaring64.New()
			for _, s := range segs {
				rd, err := tableindex.OpenScalarIndex(ctx, ds, v, s)
				assert.NilError(t, err)
				rows, err := rd.Search(ctx, p)
				assert.NilError(t, err)
				out.Or(rows)
			}
			out.And(live)
			return out
		}
		switch name {
		case "id_idx":
			lo, hi := int64(100), int64(900)
			w := want(func(id int64, _ truthRow) bool { return id >= lo && id < hi })
			g := got(index.Predicate{Op: index.Range, Lower: &index.Bound{Value: lo, Inclusive: true}, Upper: &index.Bound{Value: hi}})
			assert.Assert(t, w.Equals(g), "%s: want %d rows, got %d", name, w.GetCardinality(), g.GetCardinality())
		case "cat_idx":
			for c := int64(0); c < 7; c++ {
				w := want(func(_ int64, r truthRow) bool { return int64(r.cat) == c })
				g := got(index.Predicate{Op: index.Equals, Values: []any{c}})
				assert.Assert(t, w.Equals(g), "%s = %d: want %d rows, got %d", name, c, w.GetCardinality(), g.GetCardinality())
			}
			w := want(func(_ int64, r truthRow) bool { return r.cat == -1 })
			assert.Assert(t, w.Equals(got(index.Predicate{Op: index.IsNull})), "%s IS NULL", name)
		case "tags_idx":
			w := want(func(_ int64, r truthRow) bool { return slices.Contains(r.tags, 2) })
			assert.Assert(t, w.Equals(got(index.Predicate{Op: index.HasAny, Values: []any{int64(2)}})), "%s has 2", name)
			w = want(func(_ int64, r truthRow) bool { return r.tags == nil })
			assert.Assert(t, w.Equals(got(index.Predicate{Op: index.IsNull})), "%s IS NULL", name)
		case "vec_idx":
			// Probing every partition for every row: the hits are the
			// live rows of the covered fragments, each once.
			w := want(func(int64, truthRow) bool { return true })
			g := roaring64.New()
			for _, s := range segs {
				vr, err := tableindex.OpenVectorIndex(ctx, ds, v, s)
				assert.NilError(t, err)
				hits, err := vr.Search(ctx, index.VectorSearch{Query: make([]float32, remapDim), K: 1 << 20, NProbes: vr.NumPartitions()})
				assert.NilError(t, err)
				vr.Close()
				for _, h := range hits {
					g.Add(h.RowID)
				}
			}
			g.And(live)
			assert.Assert(t, w.Equals(g), "%s: want %d rows, got %d", name, w.GetCardinality(), g.GetCardinality())
		}
	}
}

// TestCompactRemapsIndices: on a table without stable row ids, compaction
// rewrites indexed fragments (Lance's default), reserving the new
// fragments' ids first and committing remapped copies of every index in
// the Rewrite; every index answers exactly as a scan afterwards.
func TestCompactRemapsIndices(t *testing.T) {
	ctx := context.Background()
	ds := indexedTable(t, []int64{200, 150, 120, 90, 60, 40}, 4, "id % 17 = 3", "id >= 500 AND id < 540")
	checkIndices(t, ds, false)
	before := scanTruth(t, ds)
	rep, err := Compact(ctx, ds, CompactOptions{})
	assert.NilError(t, err)
	assert.Equal(t, len(rep.Excluded), 0)
	assert.Equal(t, rep.IndicesRemapped, 4)
	assert.Assert(t, rep.ReservedVersion != 0 && rep.ReservedVersion+1 == rep.Version)
	v := head(t, ds)
	// Indexed and unindexed fragments are never mixed: two new fragments.
	assert.Equal(t, len(v.Manifest().GetFragments()), 2)
	after := scanTruth(t, ds)
	assert.Equal(t, len(after), len(before))
	for id, r := range before {
		assert.DeepEqual(t, after[id].tags, r.tags)
		assert.Equal(t, after[id].cat, r.cat)
	}
	checkIndices(t, ds, false)

	txn, err := ds.ReadTransaction(ctx, v)
	assert.NilError(t, err)
	rw := txn.GetRewrite()
	assert.Equal(t, len(rw.GetRewrittenIndices()), 4)
	for _, ri := range rw.GetRewrittenIndices() {
		found := false
		for _, idx := range v.Indices() {
			if slices.Equal(idx.GetUuid().GetUuid(), ri.GetNewId().GetUuid()) {
				found = true
			}
		}
		assert.Assert(t, found, "rewritten index %x is in the manifest", ri.GetNewId().GetUuid())
	}
	reserve, err := ds.OpenVersion(ctx, rep.ReservedVersion)
	assert.NilError(t, err)
	rtx, err := ds.ReadTransaction(ctx, reserve)
	assert.NilError(t, err)
	assert.Equal(t, lance.OperationName(rtx), "ReserveFragments")
}

// TestCompactRemapConcurrent: what lands between the remap and the
// Rewrite's commit. An append is rebased over (the remapped indices do not
// cover it); an optimize that replaced a remapped segment makes the
// Rewrite a retryable conflict (its copy of the index is stale), so
// Compact plans, remaps and commits again; a delete in an indexed
// fragment too. Every index answers as a scan at the end.
func TestCompactRemapConcurrent(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name     string
		race     func(t *testing.T, ds *lance.Dataset)
		attempts int
	}{
		{"append", func(t *testing.T, ds *lance.Dataset) {
			_, err := ds.Write(ctx, remapStream(t, 5000, 20), lance.WriteOptions{Mode: lance.WriteAppend})
			assert.NilError(t, err)
		}, 1},
		{"optimize", func(t *testing.T, ds *lance.Dataset) {
			_, err := tableindex.OptimizeIndices(ctx, ds, tableindex.OptimizeIndicesOptions{Names: []string{"id_idx"}})
			assert.NilError(t, err)
		}, 2},
		{"delete", func(t *testing.T, ds *lance.Dataset) {
			_, err := dml.Delete(ctx, ds, "id = 7")
			assert.NilError(t, err)
		}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := indexedTable(t, []int64{300, 40, 30}, 2)
			beforeCommit = func(*lance.Version) {
				beforeCommit = nil
				tc.race(t, ds)
			}
			defer func() { beforeCommit = nil }()
			rep, err := Compact(ctx, ds, CompactOptions{})
			assert.NilError(t, err)
			assert.Equal(t, rep.Attempts, tc.attempts)
			checkIndices(t, ds, false)
		})
	}
}
