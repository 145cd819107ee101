package mview

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/maintenance/tasks"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// srcSchema is the differential test's source: a group column, an integer, a float (with NaN and
// values whose sums round differently in another order) and a wide integer, all nullable.
var srcSchema = arrow.NewSchema([]arrow.Field{
	{Name: "g", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "k", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

// row is one source row; nil fields are nulls.
type row struct {
	g *string
	k *int32
	x *float64
	i *int64
}

func ptr[T any](v T) *T { return &v }

// srcBatch is rows as one source record, from a checked allocator: the test must release it, and
// the writes it passes through must not keep it.
func srcBatch(t testing.TB, rows []row) arrow.RecordBatch {
	b := array.NewRecordBuilder(testenv.CheckedAllocator(t), srcSchema)
	defer b.Release()
	for _, r := range rows {
		if r.g == nil {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.StringBuilder).Append(*r.g)
		}
		if r.k == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int32Builder).Append(*r.k)
		}
		if r.x == nil {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Float64Builder).Append(*r.x)
		}
		if r.i == nil {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Int64Builder).Append(*r.i)
		}
	}
	return b.NewRecordBatch()
}

// exact renders a record with floats as their bits, so two answers compare equal only when
// every value is bit for bit the same (NaN included, -0 apart from 0).
func exact(rec arrow.RecordBatch) string {
	var rows []string
	for r := 0; r < int(rec.NumRows()); r++ {
		var vals []string
		for c := 0; c < int(rec.NumCols()); c++ {
			col := rec.Column(c)
			switch {
			case col.IsNull(r):
				vals = append(vals, "null")
			case col.DataType().ID() == arrow.FLOAT64:
				v := col.(*array.Float64).Value(r)
				vals = append(vals, fmt.Sprintf("%v/%x", v, math.Float64bits(v)))
			default:
				vals = append(vals, col.ValueStr(r))
			}
		}
		rows = append(rows, strings.Join(vals, ","))
	}
	return strings.Join(rows, ";")
}

// scanView reads view id's rows as a client does (a scan of its table), rendered exactly.
func scanView(t *testing.T, ns *namespace.Namespace, id ident.ID) string {
	t.Helper()
	return readView(t, ns, id, exact)
}

func refreshResult(t *testing.T, ns *namespace.Namespace, id ident.ID) RefreshResult {
	t.Helper()
	task := lastTask(t, ns, id)
	assert.Equal(t, task.State, tasks.StateSucceeded, task.Error)
	var res RefreshResult
	assert.NilError(t, jsonUnmarshal(task.Result, &res))
	return res
}

// TestIncrementalEqualsFull is the differential test of the two refresh paths: views of every
// mergeable shape (grouped and global aggregates, avg, min/max over floats and strings, HAVING,
// ORDER BY with LIMIT, expressions over aggregates, per-row) are refreshed incrementally after
// each of several appends (new and existing groups, nulls everywhere, NaN, float values whose
// sums round differently in another order, an append of no rows, an append WHERE filters out
// entirely, a refresh with no change), and after each one their rows must be exactly (bit for
// bit) those of a view created then over the same source (a full recompute). The incremental
// refreshes must say so and read only the appended rows; the views that cannot merge say why
// they recomputed.
func TestIncrementalEqualsFull(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := storage.NewFS(dir)
	assert.NilError(t, err)
	ns := namespace.New(store, namespace.Options{RootURI: dir})
	svc := &Service{Catalog: ns, Holder: "test"}
	first := srcBatch(t, []row{
		{g: ptr("a"), k: ptr[int32](1), x: ptr(0.1), i: ptr[int64](10)},
		{g: ptr("b"), k: ptr[int32](2), x: ptr(0.2), i: nil},
		{g: ptr("a"), k: nil, x: nil, i: ptr[int64](math.MaxInt64)},
		{g: nil, k: ptr[int32](4), x: ptr(1e16), i: ptr[int64](-3)},
	})
	defer first.Release()
	_, _, err = ns.CreateTable(ctx, ident.ID{"src"}, catalog.NewTable{Schema: srcSchema, Rows: catalog.Records(srcSchema, first)})
	assert.NilError(t, err)

	views := []struct {
		name, sql string
		blocked   string // the reason a refresh recomputes ("": incremental)
	}{
		{"grouped", "SELECT g, count(*) AS n, count(x) AS cx, sum(x) AS sx, avg(x) AS ax, min(x) AS mn, max(x) AS mx, sum(i) AS si, avg(k) AS ak, max(g) AS mg, min(k) AS mk FROM src GROUP BY g", ""},
		{"global", "SELECT count(*) AS n, sum(x) AS sx, min(i) AS mi, max(i) AS xi, avg(x) AS ax, count(g) AS cg FROM src WHERE x < 1e300 OR x IS NULL OR k > 0", ""},
		{"shaped", "SELECT k % 3 AS b, sum(x) / count(x) AS ratio, max(x) - min(x) AS spread, count(*) * 2 AS n2 FROM src WHERE i IS NOT NULL GROUP BY k % 3 HAVING count(*) > 1 ORDER BY b DESC NULLS FIRST LIMIT 2", ""},
		{"empty_groups", "SELECT g, sum(x) AS sx FROM src WHERE k > 100 GROUP BY g ORDER BY 1", ""},
		{"per_row", "SELECT g, x * 2 AS x2, i FROM src WHERE k > 1", ""},
		{"distinct", "SELECT g, count(DISTINCT k) AS dk FROM src GROUP BY g", "count(DISTINCT)"},
		{"top", "SELECT g, x FROM src ORDER BY x DESC LIMIT 3", "ORDER BY with LIMIT"},
	}
	for _, v := range views {
		_, _, err := svc.Create(ctx, ident.ID{v.name}, v.sql, false)
		assert.NilError(t, err, v.name)
	}
	svc.Wait()

	appends := [][]row{
		// existing groups, a new one, NaN, a null group, and a sum that rounds by order: group a
		// holds 0.1, then 0.2 and 0.3 come: (0.1+0.2)+0.3 != 0.1+(0.2+0.3), so merging a sum
		// of the new rows into the old would differ from the full path by one ulp
		{{g: ptr("a"), k: ptr[int32](5), x: ptr(0.2), i: ptr[int64](1)},
			{g: ptr("a"), k: ptr[int32](5), x: ptr(0.3), i: ptr[int64](1)},
			{g: ptr("c"), k: ptr[int32](6), x: ptr(math.NaN()), i: ptr[int64](7)},
			{g: nil, k: ptr[int32](7), x: ptr(-1e16), i: ptr[int64](5)},
			{g: ptr("b"), k: ptr[int32](8), x: ptr(1.5), i: ptr[int64](2)}},
		{}, // no rows
		// only nulls: count(*) grows, nothing else changes
		{{g: ptr("b"), k: nil, x: nil, i: nil}, {g: nil, k: nil, x: nil, i: nil}},
		// wraps the int sum (as the full path does), -0, a new group with only a NaN
		{{g: ptr("a"), k: ptr[int32](9), x: ptr(math.Copysign(0, -1)), i: ptr[int64](5)},
			{g: ptr("d"), k: ptr[int32](200), x: ptr(math.NaN()), i: ptr[int64](1)},
			{g: ptr("b"), k: ptr[int32](101), x: ptr(-0.7), i: ptr[int64](math.MinInt64 + 1)}},
		// rows WHERE drops for most views
		{{g: ptr("e"), k: ptr[int32](-1), x: ptr(math.Inf(1)), i: nil}},
	}
	for step, rows := range appends {
		rec := srcBatch(t, rows)
		if rec.NumRows() > 0 {
			appendTo(t, ns, ident.ID{"src"}, rec)
		}
		rec.Release()
		full := fmt.Sprintf("full%d_", step)
		for _, v := range views {
			_, err := svc.Refresh(ctx, ident.ID{v.name}, nil)
			assert.NilError(t, err)
			_, _, err = svc.Create(ctx, ident.ID{full + v.name}, v.sql, false)
			assert.NilError(t, err)
		}
		svc.Wait()
		for _, v := range views {
			got, want := scanView(t, ns, ident.ID{v.name}), scanView(t, ns, ident.ID{full + v.name})
			assert.Equal(t, got, want, "step %d view %s", step, v.name)
			res := refreshResult(t, ns, ident.ID{v.name})
			if v.blocked != "" {
				assert.Equal(t, res.Mode, "full", "step %d view %s", step, v.name)
				assert.Assert(t, strings.Contains(res.Reason, v.blocked), "step %d view %s: %q", step, v.name, res.Reason)
				continue
			}
			assert.Equal(t, res.Mode, "incremental", "step %d view %s: %s", step, v.name, res.Reason)
			assert.Equal(t, res.SourceRowsRead, int64(len(rows)), "step %d view %s: only the appended rows are read", step, v.name)
			assert.Equal(t, refreshResult(t, ns, ident.ID{full + v.name}).Reason, "first refresh")
		}
	}
	// The group state is not a column: a reader sees exactly the declared ones.
	tbl, err := ns.LoadTable(ctx, ident.ID{"grouped"})
	assert.NilError(t, err)
	st, err := tbl.State(ctx, catalog.DescribeOptions{})
	assert.NilError(t, err)
	assert.Equal(t, len(st.Schema.Fields), 11)

	// A delete in the source recomputes, saying why, and still equals a full recompute.
	src, err := ns.LoadTable(ctx, ident.ID{"src"})
	assert.NilError(t, err)
	_, err = src.Delete(ctx, "", "g = 'a'")
	assert.NilError(t, err)
	_, err = svc.Refresh(ctx, ident.ID{"grouped"}, nil)
	assert.NilError(t, err)
	_, _, err = svc.Create(ctx, ident.ID{"after_delete"}, views[0].sql, false)
	assert.NilError(t, err)
	svc.Wait()
	res := refreshResult(t, ns, ident.ID{"grouped"})
	assert.Equal(t, res.Mode, "full")
	assert.Assert(t, strings.Contains(res.Reason, "other than by appends"), res.Reason)
	assert.Equal(t, scanView(t, ns, ident.ID{"grouped"}), scanView(t, ns, ident.ID{"after_delete"}))
}

func appendTo(t testing.TB, ns *namespace.Namespace, id ident.ID, rec arrow.RecordBatch) {
	t.Helper()
	ctx := context.Background()
	tbl, err := ns.LoadTable(ctx, id)
	assert.NilError(t, err)
	ds, err := tbl.Dataset()
	assert.NilError(t, err)
	_, err = ds.Append(ctx, &oneBatch{rec: rec, schema: rec.Schema()}, lance.WriteOptions{})
	assert.NilError(t, err)
}

// TestNaNOrder: NaN orders above every number, as in Lance: max is NaN once one is seen, min
// ignores it unless there is nothing else, ORDER BY puts it after the numbers (nulls apart).
func TestNaNOrder(t *testing.T) {
	rec := srcBatch(t, []row{
		{g: ptr("a"), x: ptr(1.0)}, {g: ptr("a"), x: ptr(math.NaN())}, {g: ptr("a"), x: ptr(2.0)},
		{g: ptr("b"), x: ptr(math.NaN())}, {g: ptr("c"), x: nil},
	})
	defer rec.Release()
	for _, tc := range []struct{ sql, want string }{
		{"SELECT g, min(x), max(x) FROM src GROUP BY g", "a,1,NaN;b,NaN,NaN;c,(null),(null)"},
		{"SELECT x FROM src ORDER BY x NULLS LAST", "1;2;NaN;NaN;(null)"},
	} {
		q, err := Parse(tc.sql)
		assert.NilError(t, err)
		p, err := NewPlan(q, srcSchema)
		assert.NilError(t, err)
		out, err := p.Run(context.Background(), &sliceBatches{recs: []arrow.RecordBatch{rec}}, false)
		assert.NilError(t, err)
		assert.Equal(t, render(out), tc.want, tc.sql)
		out.Release()
	}
}

// TestViewWrittenRecomputes: a write to the view's table other than a refresh (here a client's
// append) means its rows are no longer what the group state describes: the next refresh
// recomputes, says why, and the stray row is gone.
func TestViewWrittenRecomputes(t *testing.T) {
	ctx := context.Background()
	sql := "SELECT region, sum(qty) AS q FROM sales GROUP BY region"
	a, _, ns, _ := replicas(t, sql)
	want := scanView(t, ns, ident.ID{"v"})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "q", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(testenv.CheckedAllocator(t), schema)
	b.Field(0).(*array.StringBuilder).Append("stray")
	b.Field(1).(*array.Int64Builder).Append(1)
	stray := b.NewRecordBatch()
	b.Release()
	defer stray.Release()
	appendTo(t, ns, ident.ID{"v"}, stray)
	_, err := a.Refresh(ctx, ident.ID{"v"}, nil)
	assert.NilError(t, err)
	a.Wait()
	res := refreshResult(t, ns, ident.ID{"v"})
	assert.Equal(t, res.Mode, "full")
	assert.Assert(t, strings.Contains(res.Reason, "written since its last refresh"), res.Reason)
	assert.Equal(t, scanView(t, ns, ident.ID{"v"}), want)
}
