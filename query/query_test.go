package query_test

import (
	"cmp"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/expr"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancetest"
	"github.com/lancecat/lancecat/query"
	"github.com/lancecat/lancecat/storage"
)

// The table of most tests: 2,500 rows in fragments of 1,000 (three
// fragments; every 10th row of the first deleted), so every query crosses
// fragments, chunks and a deletion vector.
const (
	nRows    = 2500
	fragRows = 1000
)

func liveIDs() []int64 {
	var out []int64
	for i := range nRows {
		if i%10 == 0 && i < fragRows {
			continue
		}
		out = append(out, int64(i))
	}
	return out
}

// reference materializes the live table with lance's scanner (tested on
// its own) and filters it with expr (tested differentially against the
// SDK): what a query must return, computed the obvious way.
func reference(t *testing.T, ds *lance.Dataset, filter string) arrow.RecordBatch {
	t.Helper()
	s, err := ds.Scan(context.Background(), lance.ScanOptions{WithRowAddress: true})
	assert.NilError(t, err)
	all := collect(t, s)
	if filter == "" {
		return all
	}
	defer all.Release()
	out, err := expr.Filter(context.Background(), filter, all)
	assert.NilError(t, err)
	return out
}

func TestRunScan(t *testing.T) {
	ds := newTable(t, nRows, fragRows)
	live := liveIDs()
	for _, tc := range []struct {
		name   string
		req    query.Request
		cols   []string
		filter string // the reference's filter
		window [2]int // offset, limit (0: none) over the reference rows
	}{
		{name: "everything", cols: []string{"id", "name", "score", "vec", "bv"}},
		{name: "columns in the asked order", req: query.Request{Columns: []string{"name", "id"}}, cols: []string{"name", "id"}},
		{name: "filter", req: query.Request{Filter: "id > 2400 AND name IS NOT NULL", Columns: []string{"id"}},
			cols: []string{"id"}, filter: "id > 2400 AND name IS NOT NULL"},
		{name: "filter with NaN and nulls", req: query.Request{Filter: "score > 10 OR score IS NULL", Columns: []string{"id"}},
			cols: []string{"id"}, filter: "score > 10 OR score IS NULL"},
		{name: "filter matching nothing", req: query.Request{Filter: "id < 0", Columns: []string{"id"}}, cols: []string{"id"}, filter: "id < 0"},
		// offset/limit without a filter are pushed into the tasks; across
		// the deletion vector and a fragment boundary
		{name: "offset and limit", req: query.Request{Columns: []string{"id"}, Offset: 895, Limit: 300}, cols: []string{"id"}, window: [2]int{895, 300}},
		{name: "offset past the end", req: query.Request{Columns: []string{"id"}, Offset: 5000}, cols: []string{"id"}, window: [2]int{5000, 0}},
		{name: "offset and limit after a filter", req: query.Request{Columns: []string{"id"}, Filter: "name LIKE 'n1%'", Offset: 20, Limit: 50},
			cols: []string{"id"}, filter: "name LIKE 'n1%'", window: [2]int{20, 50}},
		{name: "limit on the first chunk", req: query.Request{Columns: []string{"id"}, Limit: 3}, cols: []string{"id"}, window: [2]int{0, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			tc.req.Mem = mem
			got := run(t, ds, tc.req)
			defer got.Release()
			assert.DeepEqual(t, fieldNames(got), tc.cols)
			want := reference(t, ds, tc.filter)
			defer want.Release()
			wantIDs := int64s(want, "id")
			if tc.window[0] > 0 || tc.window[1] > 0 {
				lo := min(len(wantIDs), tc.window[0])
				hi := len(wantIDs)
				if tc.window[1] > 0 {
					hi = min(hi, lo+tc.window[1])
				}
				wantIDs = wantIDs[lo:hi]
			}
			assert.DeepEqual(t, nonNil(int64s(got, "id")), nonNil(wantIDs))
			if tc.name == "everything" {
				assert.DeepEqual(t, int64s(got, "id"), live)
				// values, not only ids: every column equals the reference
				for c := range got.NumCols() {
					assert.Check(t, array.ApproxEqual(got.Column(int(c)), want.Column(int(c)), array.WithNaNsEqual(true)), "column %s", got.Schema().Field(int(c)).Name)
				}
			}
		})
	}
}

func nonNil(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return v
}

// Projections are {alias: expression}; _rowid comes last and is the row
// address on a dataset without stable row ids.
func TestRunProjectionAndRowID(t *testing.T) {
	ds := newTable(t, nRows, fragRows)
	mem := testenv.CheckedAllocator(t)
	got := run(t, ds, query.Request{Mem: mem, Filter: "id BETWEEN 998 AND 1002",
		Projection: []query.Projection{{Name: "twice", Expr: "id * 2"}, {Name: "id", Expr: "id"}, {Name: "up", Expr: "upper(name)"}},
		WithRowID:  true})
	defer got.Release()
	assert.DeepEqual(t, fieldNames(got), []string{"twice", "id", "up", "_rowid"})
	// 1000 is live: only fragment 0 (rows 0..999) lost every 10th row
	assert.DeepEqual(t, int64s(got, "id"), []int64{998, 999, 1000, 1001, 1002})
	assert.DeepEqual(t, int64s(got, "twice"), []int64{1996, 1998, 2000, 2002, 2004})
	ids := got.Column(3).(*array.Uint64)
	assert.Equal(t, ids.Value(0), lance.RowAddress(0, 998))
	assert.Equal(t, ids.Value(3), lance.RowAddress(1, 1))
	up := got.Column(2).(*array.String)
	assert.Equal(t, up.Value(0), "N498")
}

// refRow is a row of the reference with the values the sorts and
// distances need.
type refRow struct {
	id    int64
	name  *string
	score *float64
	vec   []float32
	bv    []byte
}

func refRows(t *testing.T, rec arrow.RecordBatch) []refRow {
	ids := rec.Column(0).(*array.Int64)
	names := rec.Column(1).(*array.String)
	scores := rec.Column(2).(*array.Float64)
	vecs := rec.Column(3).(*array.FixedSizeList)
	vv := vecs.ListValues().(*array.Float32).Float32Values()
	bvs := rec.Column(4).(*array.FixedSizeList)
	bb := bvs.ListValues().(*array.Uint8).Uint8Values()
	out := make([]refRow, rec.NumRows())
	for i := range out {
		r := refRow{id: ids.Value(i)}
		if names.IsValid(i) {
			s := names.Value(i)
			r.name = &s
		}
		if scores.IsValid(i) {
			f := scores.Value(i)
			r.score = &f
		}
		if vecs.IsValid(i) {
			r.vec = vv[i*dim : (i+1)*dim]
		}
		r.bv = bb[i*4 : (i+1)*4]
		out[i] = r
	}
	return out
}

// cmpNullable orders a and b with nulls first or last whatever the
// direction, as SQL's NULLS FIRST/LAST do.
func cmpNullable[T any](a, b *T, desc, nullsFirst bool, c func(x, y T) int) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		if nullsFirst {
			return -1
		}
		return 1
	case b == nil:
		if nullsFirst {
			return 1
		}
		return -1
	}
	if desc {
		return -c(*a, *b)
	}
	return c(*a, *b)
}

// NaN sorts after every number (DataFusion's total order).
func cmpNaN(a, b float64) int {
	switch an, bn := math.IsNaN(a), math.IsNaN(b); {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

func TestRunOrderBy(t *testing.T) {
	ds := newTable(t, nRows, fragRows)
	ref := reference(t, ds, "")
	rows := refRows(t, ref)
	ref.Release()
	for _, tc := range []struct {
		name   string
		req    query.Request
		less   func(a, b refRow) int
		filter func(r refRow) bool
	}{
		{name: "score desc nulls first, id",
			req: query.Request{OrderBy: []query.OrderBy{{Column: "score", Descending: true, NullsFirst: true}, {Column: "id"}}},
			less: func(a, b refRow) int {
				return cmp.Or(cmpNullable(a.score, b.score, true, true, cmpNaN), cmp.Compare(a.id, b.id))
			}},
		{name: "top-k: name asc nulls last, id desc, limit",
			req: query.Request{Limit: 25, Offset: 7, OrderBy: []query.OrderBy{{Column: "name"}, {Column: "id", Descending: true}}},
			less: func(a, b refRow) int {
				return cmp.Or(cmpNullable(a.name, b.name, false, false, strings.Compare), -cmp.Compare(a.id, b.id))
			}},
		{name: "top-k with a filter: score asc nulls last (NaN after numbers)",
			req: query.Request{Limit: 40, Filter: "id >= 2000", OrderBy: []query.OrderBy{{Column: "score"}}},
			less: func(a, b refRow) int {
				// ties keep scan order (row address, here id)
				return cmp.Or(cmpNullable(a.score, b.score, false, false, cmpNaN), cmp.Compare(a.id, b.id))
			},
			filter: func(r refRow) bool { return r.id >= 2000 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			tc.req.Mem = mem
			tc.req.Columns = []string{"id", "score"}
			got := run(t, ds, tc.req)
			defer got.Release()
			var want []refRow
			for _, r := range rows {
				if tc.filter == nil || tc.filter(r) {
					want = append(want, r)
				}
			}
			slices.SortStableFunc(want, tc.less)
			lo := min(len(want), int(tc.req.Offset))
			want = want[lo:]
			if tc.req.Limit > 0 {
				want = want[:min(len(want), int(tc.req.Limit))]
			}
			var wantIDs []int64
			for _, r := range want {
				wantIDs = append(wantIDs, r.id)
			}
			assert.DeepEqual(t, int64s(got, "id"), wantIDs)
		})
	}
}

// refDistance is the metric in float64, the obvious way.
func refDistance(metric string, q []float32, r refRow) (float64, bool) {
	if metric == "hamming" {
		d := 0
		for i, b := range r.bv {
			x := byte(q[i]) ^ b
			for ; x != 0; x &= x - 1 {
				d++
			}
		}
		return float64(d), true
	}
	if r.vec == nil {
		return 0, false
	}
	var l2, dot, nq, nv float64
	for i, x := range q {
		y := float64(r.vec[i])
		l2 += (float64(x) - y) * (float64(x) - y)
		dot += float64(x) * y
		nq += float64(x) * float64(x)
		nv += y * y
	}
	switch metric {
	case "cosine":
		return 1 - dot/math.Sqrt(nq*nv), true
	case "dot":
		return 1 - dot, true
	}
	return l2, true
}

func TestRunKNN(t *testing.T) {
	ds := newTable(t, nRows, fragRows)
	ref := reference(t, ds, "")
	rows := refRows(t, ref)
	ref.Release()
	q1 := []float32{0.1, -0.2, 0.3, 0.05, -0.5, 0.7, 0, 0.2}
	q2 := []float32{-0.6, 0.1, 0.1, 0.9, 0.4, -0.3, 0.2, -0.1}
	f := func(v float32) *float32 { return &v }
	for _, tc := range []struct {
		name      string
		vq        query.VectorQuery
		filter    string
		keep      func(r refRow) bool
		prefilter bool
		offset    int
	}{
		{name: "l2", vq: query.VectorQuery{Vectors: [][]float32{q1}, K: 10}},
		{name: "cosine", vq: query.VectorQuery{Column: "vec", Vectors: [][]float32{q1}, Metric: "cosine", K: 7}},
		{name: "dot", vq: query.VectorQuery{Vectors: [][]float32{q2}, Metric: "dot", K: 12}},
		{name: "hamming over uint8 vectors", vq: query.VectorQuery{Column: "bv", Vectors: [][]float32{{3, 200, 17, 128}}, Metric: "hamming", K: 5}},
		{name: "prefilter: the k best of the matching rows", vq: query.VectorQuery{Vectors: [][]float32{q1}, K: 10},
			filter: "id % 3 = 0", keep: func(r refRow) bool { return r.id%3 == 0 }, prefilter: true},
		{name: "offset", vq: query.VectorQuery{Vectors: [][]float32{q1}, K: 5}, offset: 3},
		{name: "distance range [lower, upper)", vq: query.VectorQuery{Vectors: [][]float32{q1}, K: 20, LowerBound: f(1.5), UpperBound: f(2)}},
		{name: "two query vectors", vq: query.VectorQuery{Vectors: [][]float32{q1, q2}, K: 4, Metric: "cosine"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			metric := cmp.Or(tc.vq.Metric, "l2")
			got := run(t, ds, query.Request{Mem: mem, Vector: &tc.vq, Filter: tc.filter, Prefilter: tc.prefilter,
				Offset: int64(tc.offset), Columns: []string{"id"}, WithRowID: true})
			defer got.Release()
			want := []string{"id", "_distance", "_rowid"}
			if len(tc.vq.Vectors) > 1 {
				want = append([]string{"query_index"}, want...)
			}
			assert.DeepEqual(t, fieldNames(got), want)
			var wantIDs []int64
			var wantD []float64
			var wantQ []int32
			for qi, q := range tc.vq.Vectors {
				type cand struct {
					id int64
					d  float64
				}
				var cs []cand
				for _, r := range rows {
					if tc.keep != nil && !tc.keep(r) {
						continue
					}
					d, ok := refDistance(metric, q, r)
					if !ok || tc.vq.LowerBound != nil && d < float64(*tc.vq.LowerBound) || tc.vq.UpperBound != nil && d >= float64(*tc.vq.UpperBound) {
						continue
					}
					cs = append(cs, cand{r.id, d})
				}
				slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(a.d, b.d) })
				cs = cs[min(len(cs), tc.offset):]
				cs = cs[:min(len(cs), tc.vq.K)]
				for _, c := range cs {
					wantIDs = append(wantIDs, c.id)
					wantD = append(wantD, c.d)
					wantQ = append(wantQ, int32(qi))
				}
			}
			assert.DeepEqual(t, int64s(got, "id"), wantIDs)
			for i, d := range float32s(got, "_distance") {
				assert.Check(t, math.Abs(float64(d)-wantD[i]) <= 1e-4*math.Max(1, math.Abs(wantD[i])), "row %d: distance %v, want %v", i, d, wantD[i])
			}
			if len(tc.vq.Vectors) > 1 {
				qc := got.Column(0).(*array.Int32)
				assert.DeepEqual(t, append([]int32{}, qc.Int32Values()...), wantQ)
			}
		})
	}
}

// Postfilter: the k nearest first, then the filter, so fewer than k rows
// may come back (the SDK's semantics: prefilter=false).
func TestRunKNNPostfilter(t *testing.T) {
	ds := newTable(t, nRows, fragRows)
	q := []float32{0.1, -0.2, 0.3, 0.05, -0.5, 0.7, 0, 0.2}
	all := run(t, ds, query.Request{Vector: &query.VectorQuery{Vectors: [][]float32{q}, K: 10}, Columns: []string{"id"}})
	defer all.Release()
	var want []int64
	for _, id := range int64s(all, "id") {
		if id%2 == 0 {
			want = append(want, id)
		}
	}
	post := run(t, ds, query.Request{Vector: &query.VectorQuery{Vectors: [][]float32{q}, K: 10}, Columns: []string{"id"}, Filter: "id % 2 = 0"})
	defer post.Release()
	assert.DeepEqual(t, int64s(post, "id"), want)
	pre := run(t, ds, query.Request{Vector: &query.VectorQuery{Vectors: [][]float32{q}, K: 10}, Columns: []string{"id"}, Filter: "id % 2 = 0", Prefilter: true})
	defer pre.Release()
	assert.Equal(t, pre.NumRows(), int64(10))
	assert.Check(t, len(want) < 10, "the example must lose rows to the postfilter: %v", want)
}

func TestCount(t *testing.T) {
	ctx := context.Background()
	ds := newTable(t, nRows, fragRows)
	head, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	first, err := ds.OpenVersion(ctx, 1)
	assert.NilError(t, err)
	for _, tc := range []struct {
		name   string
		at     *lance.Version
		filter string
		want   uint64
	}{
		{name: "all, from the manifest", want: uint64(len(liveIDs()))},
		{name: "all at version 1 (before the delete)", at: first, want: nRows},
		{name: "filter", at: head, filter: "id < 1000", want: 900},
		{name: "filter with nulls", filter: "name IS NULL", want: uint64(countIf(func(i int64) bool { return i%7 == 0 }))},
		{name: "filter matching nothing", filter: "id > 1000000000", want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := query.Count(ctx, ds, tc.at, tc.filter)
			assert.NilError(t, err)
			assert.Equal(t, n, tc.want)
		})
	}
}

// Count without a filter reads no data: it answers from the manifest
// even with every data file gone (and a filter then fails to read).
func TestCountReadsOnlyTheManifest(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ds := lancetest.Open(t, dir)
	rr, err := array.NewRecordReader(tSchema, []arrow.RecordBatch{tRecord(memory.DefaultAllocator, 0, 300)})
	assert.NilError(t, err)
	defer rr.Release()
	_, err = ds.Write(ctx, rr, lance.WriteOptions{MaxRowsPerFile: 100})
	assert.NilError(t, err)
	files, err := filepath.Glob(filepath.Join(dir, "data", "*.lance"))
	assert.NilError(t, err)
	assert.Equal(t, len(files), 3)
	for _, f := range files {
		assert.NilError(t, os.Remove(f))
	}
	n, err := query.Count(ctx, ds, nil, "")
	assert.NilError(t, err)
	assert.Equal(t, n, uint64(300))
	_, err = query.Count(ctx, ds, nil, "id > 3")
	assert.Assert(t, err != nil, "a filtered count reads the filter's column")
}

func countIf(f func(int64) bool) int {
	n := 0
	for _, id := range liveIDs() {
		if f(id) {
			n++
		}
	}
	return n
}

// Bad requests are InvalidInput (400, code 13) naming what is wrong.
func TestRunErrors(t *testing.T) {
	ctx := context.Background()
	ds := newTable(t, 100, 100)
	vq := func(dims int, col string) *query.VectorQuery {
		return &query.VectorQuery{Column: col, Vectors: [][]float32{make([]float32, dims)}}
	}
	for _, tc := range []struct {
		name string
		req  query.Request
		want string
		code nserr.Code // 0: InvalidInput
	}{
		{name: "malformed filter", req: query.Request{Filter: "id >"}, want: "position"},
		{name: "filter on an unknown column", req: query.Request{Filter: "nope = 1"}, want: `"nope"`},
		{name: "filter of a type mismatch", req: query.Request{Filter: "id = 'abc'"}, want: "id"},
		{name: "a filter that is not boolean", req: query.Request{Filter: "id + 1"}, want: "boolean"},
		{name: "unknown column", req: query.Request{Columns: []string{"id", "nope"}}, want: `"nope"`},
		{name: "bad projection", req: query.Request{Projection: []query.Projection{{Name: "x", Expr: "id +"}}}, want: "position"},
		{name: "wrong vector dimension", req: query.Request{Vector: vq(3, "vec")}, want: "3 dimensions"},
		{name: "ambiguous vector column", req: query.Request{Vector: vq(3, "")}, want: "more than one vector column"},
		{name: "not a vector column", req: query.Request{Vector: vq(8, "name")}, want: "not a vector"},
		{name: "unknown metric", req: query.Request{Vector: &query.VectorQuery{Vectors: [][]float32{make([]float32, 8)}, Metric: "manhattan"}}, want: "manhattan"},
		{name: "hamming over floats", req: query.Request{Vector: &query.VectorQuery{Column: "vec", Vectors: [][]float32{make([]float32, 8)}, Metric: "hamming"}}, want: "uint8"},
		// the spec: a missing order_by field is TableColumnNotFound
		{name: "order by an unknown column", req: query.Request{OrderBy: []query.OrderBy{{Column: "nope"}}}, want: `"nope"`, code: nserr.TableColumnNotFound},
		{name: "order by an unknown nested field", req: query.Request{OrderBy: []query.OrderBy{{Column: "name.x"}}}, want: "name", code: nserr.TableColumnNotFound},
		{name: "order by an expression", req: query.Request{OrderBy: []query.OrderBy{{Column: "id + 1"}}}, want: "field path"},
		{name: "order by a vector", req: query.Request{OrderBy: []query.OrderBy{{Column: "vec"}}}, want: "does not sort"},
		{name: "negative offset", req: query.Request{Offset: -1}, want: "offset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := query.Run(ctx, ds, tc.req)
			assert.ErrorContains(t, err, tc.want)
			want := tc.code
			if want == 0 {
				want = nserr.InvalidInput
			}
			assert.Check(t, is.Equal(nserr.CodeOf(err), want), "%v", err)
			_, err = query.Explain(ctx, ds, tc.req, false)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	_, err := query.Count(ctx, ds, nil, "nope > 1")
	assert.Check(t, is.Equal(nserr.CodeOf(err), nserr.InvalidInput), "%v", err)
}

func TestExplainAnalyze(t *testing.T) {
	ctx := context.Background()
	ds := newTable(t, nRows, fragRows)
	req := query.Request{Filter: "id > 100", Vector: &query.VectorQuery{Vectors: [][]float32{make([]float32, 8)}, K: 5}, Prefilter: true, Columns: []string{"id"}}
	got, err := query.Explain(ctx, ds, req, true)
	assert.NilError(t, err)
	for _, want := range []string{"KNN: flat (no index) column=vec metric=l2 k=5", "Filter: prefilter: id > 100", "Scan: version=2 fragments=3 rows=2400 columns=[id, vec]", "Take: columns=[id]", "output schema: id: int64, _distance: float32"} {
		assert.Check(t, is.Contains(got, want))
	}
	got, err = query.Analyze(ctx, ds, query.Request{Filter: "id >= 2000", OrderBy: []query.OrderBy{{Column: "id", Descending: true}}, Limit: 3})
	assert.NilError(t, err)
	for _, want := range []string{"Sort: id DESC NULLS LAST; top-3 (bounded heap)", "Filter: id >= 2000 [rows=500 ", "Scan: version=2 fragments=3 rows=2400 columns=[id] parallel=", "[rows=2400 ", "total: rows=3 elapsed="} {
		assert.Check(t, is.Contains(got, want))
	}
	t.Log("\n" + got)
}

// order_by with a vector search sorts the k nearest rows (not the table).
func TestRunKNNOrderBy(t *testing.T) {
	ds := newTable(t, nRows, fragRows)
	q := []float32{0.1, -0.2, 0.3, 0.05, -0.5, 0.7, 0, 0.2}
	mem := testenv.CheckedAllocator(t)
	near := run(t, ds, query.Request{Mem: mem, Vector: &query.VectorQuery{Vectors: [][]float32{q}, K: 10}, Columns: []string{"id"}})
	defer near.Release()
	want := int64s(near, "id")
	slices.Sort(want)
	slices.Reverse(want)
	got := run(t, ds, query.Request{Mem: mem, Vector: &query.VectorQuery{Vectors: [][]float32{q}, K: 10}, Columns: []string{"id"},
		OrderBy: []query.OrderBy{{Column: "id", Descending: true}}})
	defer got.Release()
	assert.DeepEqual(t, int64s(got, "id"), want)
	plan, err := query.Explain(context.Background(), ds, query.Request{Vector: &query.VectorQuery{Vectors: [][]float32{q}}, Filter: "id > 3",
		OrderBy: []query.OrderBy{{Column: "score"}}}, false)
	assert.NilError(t, err)
	assert.Check(t, is.Contains(plan, "Sort: score ASC NULLS LAST; of the nearest rows"))
	assert.Check(t, is.Contains(plan, "Filter: postfilter (after the top-k): id > 3"))
	t.Log("\n" + plan)
}

// order_by takes field paths: a nested struct field sorts too.
func TestRunOrderByNestedField(t *testing.T) {
	ctx := context.Background()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Float64, Nullable: true}), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	// a: 3, -0, NaN, null, +0, -inf, 1
	vals := []float64{3, math.Copysign(0, -1), math.NaN(), 0, 0, math.Inf(-1), 1}
	for i, v := range vals {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		sb := b.Field(1).(*array.StructBuilder)
		sb.Append(true)
		if i == 3 {
			sb.FieldBuilder(0).AppendNull()
		} else {
			sb.FieldBuilder(0).(*array.Float64Builder).Append(v)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rr, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	assert.NilError(t, err)
	defer rr.Release()
	fs, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	ds := lance.NewDataset(fs)
	_, err = ds.Write(ctx, rr, lance.WriteOptions{})
	assert.NilError(t, err)
	// IEEE 754 total order: -inf < -0 < +0 < 1 < 3 < NaN; nulls first
	got := run(t, ds, query.Request{Columns: []string{"id"}, OrderBy: []query.OrderBy{{Column: "st.a", NullsFirst: true}}})
	defer got.Release()
	assert.DeepEqual(t, int64s(got, "id"), []int64{3, 5, 1, 4, 6, 0, 2})
}

// Queries that match nothing answer an empty result with the answer's
// schema, in every mode.
func TestRunMatchingNothing(t *testing.T) {
	ds := newTable(t, 300, 100)
	q := make([]float32, dim)
	for _, req := range []query.Request{
		{Filter: "id < 0", Columns: []string{"id"}},
		{Filter: "id < 0", Columns: []string{"id"}, OrderBy: []query.OrderBy{{Column: "score"}}},
		{Filter: "id < 0", Columns: []string{"id"}, Vector: &query.VectorQuery{Vectors: [][]float32{q}}, Prefilter: true, WithRowID: true},
		{Filter: "id < 0", Columns: []string{"id"}, Vector: &query.VectorQuery{Vectors: [][]float32{q, q}}},
		{Columns: []string{"id"}, Vector: &query.VectorQuery{Vectors: [][]float32{q}, LowerBound: ptr(float32(1e9))}},
		{Columns: []string{"id"}, Offset: 1000},
	} {
		mem := testenv.CheckedAllocator(t)
		req.Mem = mem
		got := run(t, ds, req)
		assert.Equal(t, got.NumRows(), int64(0))
		assert.Assert(t, slices.Contains(fieldNames(got), "id"), "%v", fieldNames(got))
		got.Release()
	}
}

func ptr[T any](v T) *T { return &v }
