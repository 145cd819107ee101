package query_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/expr"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/query"
)

// indexedTable is newTable with a BTREE on id, a BITMAP on name and a
// BTREE on score (NaN and NULL among its values), built by lancecat; then
// 700 rows appended (a fragment no index covers) and every 9th row of
// fragment 1 deleted after the build (the index still lists them).
func indexedTable(t testing.TB) *lance.Dataset {
	t.Helper()
	ctx := context.Background()
	ds := newTable(t, nRows, fragRows)
	for _, o := range []tableindex.ScalarIndexOptions{
		{Column: "id", Type: index.BTree, BatchSize: 64},
		{Column: "name", Type: index.Bitmap},
		{Column: "score", Type: index.BTree, BatchSize: 64},
	} {
		_, err := tableindex.CreateScalarIndex(ctx, ds, o)
		assert.NilError(t, err)
	}
	rec := tRecord(memory.DefaultAllocator, nRows, 700)
	rr, err := array.NewRecordReader(tSchema, []arrow.RecordBatch{rec})
	assert.NilError(t, err)
	_, err = ds.Write(ctx, rr, lance.WriteOptions{Mode: lance.WriteAppend})
	rr.Release()
	rec.Release()
	assert.NilError(t, err)
	head, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	f1 := head.Manifest().GetFragments()[1]
	var rows []uint32
	for r := uint32(0); r < fragRows; r += 9 {
		rows = append(rows, r)
	}
	nf, _, err := lance.MergeDeletions(ctx, ds.Store(), f1, head.Number(), rows)
	assert.NilError(t, err)
	_, err = ds.Commit(ctx, lance.NewDelete([]*tablepb.DataFragment{nf}, nil, "some rows of fragment 1"), lance.CommitOptions{})
	assert.NilError(t, err)
	return ds
}

// indexFilters: each filter with whether an index must serve it (the
// explain names ScalarIndexQuery) — equality, ranges, BETWEEN, IN, IS
// NULL, literals on the left, coercions, NaN and NULL cases, conjunctions
// with a residual, and shapes an index must not answer (negations, OR,
// expressions).
var indexFilters = []struct {
	filter  string
	indexed bool
}{
	{"id = 1500", true},
	{"id = 1800", true}, // deleted after the build
	{"id = 3000", true}, // only in the appended fragment
	{"id < 40", true},
	{"40 > id", true},
	{"id >= 2490 AND id <= 2510", true},
	{"id BETWEEN 995 AND 1012", true},
	{"id IN (3, 10, 1009, 1010, 2999, 2650)", true},
	{"name = 'n007'", true},
	{"name IN ('n001', 'n499', 'nope')", true},
	{"name IS NULL", true},
	{"name IS NULL AND id > 2000", true},
	{"name = 'n010' AND id % 2 = 0", true},
	{"name = 'n010' OR id = 4", false},
	{"NOT (name = 'n010')", false},
	{"name != 'n010'", false},
	{"name IS NOT NULL AND id < 30", true},
	{"score = 10", true},
	{"score = 0", true},
	{"score > 24", true}, // NaN rows included, as the scan orders them
	{"score < 1", true},
	{"score BETWEEN 2 AND 3", true},
	{"score IS NULL", true},
	{"score IN (1.25, 25)", true},
	{"score >= 1e400", true},
	{"id = NULL", false},
	{"id + 1 = 5", false},
}

func TestScalarIndexFilters(t *testing.T) {
	ds := indexedTable(t)
	ctx := context.Background()
	for _, tc := range indexFilters {
		t.Run(tc.filter, func(t *testing.T) {
			ref := reference(t, ds, tc.filter)
			defer ref.Release()
			want := nonNil(int64s(ref, "id"))
			req := query.Request{Filter: tc.filter, Columns: []string{"id", "name"}}
			plan, err := query.Explain(ctx, ds, req, false)
			assert.NilError(t, err)
			assert.Equal(t, strings.Contains(plan, "ScalarIndexQuery"), tc.indexed, plan)

			req.Mem = testenv.CheckedAllocator(t)
			rec := run(t, ds, req)
			defer rec.Release()
			assert.DeepEqual(t, nonNil(int64s(rec, "id")), want)

			// count, with a limit and offset, ordered, and as a kNN prefilter
			n, err := query.Count(ctx, ds, nil, tc.filter)
			assert.NilError(t, err)
			assert.Equal(t, n, uint64(len(want)))

			rec2 := run(t, ds, query.Request{Filter: tc.filter, Columns: []string{"id"}, Offset: 3, Limit: 5, Mem: testenv.CheckedAllocator(t)})
			defer rec2.Release()
			assert.DeepEqual(t, nonNil(int64s(rec2, "id")), nonNil(window(want, 3, 5)))

			rec3 := run(t, ds, query.Request{Filter: tc.filter, Columns: []string{"id"}, Limit: 7, Mem: testenv.CheckedAllocator(t),
				OrderBy: []query.OrderBy{{Column: "id", Descending: true}}})
			defer rec3.Release()
			desc := slices.Clone(want)
			slices.Reverse(desc)
			assert.DeepEqual(t, nonNil(int64s(rec3, "id")), nonNil(window(desc, 0, 7)))

			q := make([]float32, dim)
			for k := range q {
				q[k] = vecOf(77, k)
			}
			vreq := query.Request{Filter: tc.filter, Columns: []string{"id"}, Prefilter: true,
				Vector: &query.VectorQuery{Column: "vec", Vectors: [][]float32{q}, K: 5}}
			got := run(t, ds, vreq)
			defer got.Release()
			// the same search over exactly the reference rows
			assert.Check(t, is.Len(int64s(got, "id"), min(5, countVec(ref))))
			for _, id := range int64s(got, "id") {
				assert.Check(t, slices.Contains(want, id), "kNN prefilter returned id %d outside the filter", id)
			}
		})
	}
}

func window(v []int64, off, n int) []int64 {
	off = min(off, len(v))
	return v[off:min(len(v), off+n)]
}

// countVec counts the rows of rec with a non-null vec.
func countVec(rec arrow.RecordBatch) int {
	c := rec.Column(rec.Schema().FieldIndices("vec")[0])
	return c.Len() - c.NullN()
}

// TestScalarIndexAnalyze: analyze names the index and counts the rows it
// selected and the rows taken.
func TestScalarIndexAnalyze(t *testing.T) {
	ds := indexedTable(t)
	out, err := query.Analyze(context.Background(), ds, query.Request{Filter: "id BETWEEN 100 AND 199 AND name IS NOT NULL", Columns: []string{"id"}})
	assert.NilError(t, err)
	assert.Check(t, is.Contains(out, "ScalarIndexQuery: query=[(`id` BETWEEN 100 AND 199)]@id_idx(BTree)"), out)
	// 100 ids, 10 of them deleted in fragment 0 (every 10th)
	assert.Check(t, is.Contains(out, "fragments=3 [rows=90 "), out)
	assert.Check(t, is.Contains(out, "residual filter: (`name` IS NOT NULL) [rows=90 "), out)
}

// FuzzIndexedFilter: for any filter the engine accepts on the indexed table (BTREE id and score,
// BITMAP name, an unindexed appended fragment, rows deleted after the build), the rows answered
// through the scalar indices are the rows of a plain scan filtered by expr, in the same order,
// and count agrees: an index is only used where its answer is the scan's.
func FuzzIndexedFilter(f *testing.F) {
	for _, tc := range indexFilters {
		f.Add(tc.filter)
	}
	f.Add("id >= 10 AND id < 10")
	f.Add("id > 5 AND id >= 5 AND id <= 2 AND id < 900")
	f.Add("score >= -0.0 AND score <= 0")
	f.Add("name >= 'n4' AND name < 'n5' AND id BETWEEN 100 AND 3000")
	ds := indexedTable(f)
	f.Fuzz(func(t *testing.T, filter string) {
		ctx := context.Background()
		rr, err := query.Run(ctx, ds, query.Request{Filter: filter, Columns: []string{"id"}})
		if err != nil {
			return
		}
		got, ok := collectOrFail(t, rr)
		if !ok {
			return // a runtime error while the rows stream (divide by zero, a failed cast), as in Lance
		}
		defer got.Release()
		s, err := ds.Scan(ctx, lance.ScanOptions{})
		assert.NilError(t, err)
		all := collect(t, s)
		defer all.Release()
		want, err := expr.Filter(ctx, filter, all)
		if err != nil {
			return // an error on rows the index skipped: not a difference in answers
		}
		defer want.Release()
		assert.DeepEqual(t, nonNil(int64s(got, "id")), nonNil(int64s(want, "id")))
		n, err := query.Count(ctx, ds, nil, filter)
		assert.NilError(t, err)
		assert.Equal(t, n, uint64(want.NumRows()))
	})
}

// collectOrFail is collect for a query that may fail while its rows stream: false (and nothing
// held) when the reader ends in an error.
func collectOrFail(t testing.TB, rr array.RecordReader) (arrow.RecordBatch, bool) {
	t.Helper()
	var recs []arrow.RecordBatch
	for rr.Next() {
		r := rr.RecordBatch()
		r.Retain()
		recs = append(recs, r)
	}
	schema, err := rr.Schema(), rr.Err()
	rr.Release()
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if err != nil {
		return nil, false
	}
	again, err := array.NewRecordReader(schema, recs)
	assert.NilError(t, err)
	return collect(t, again), true
}
