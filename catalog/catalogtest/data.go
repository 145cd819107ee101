package catalogtest

// The data plane through the contract: every configuration (in-process, routed, governed, HTTP)
// reads and writes rows the same way, with the same answers and the same errors.

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/dml"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/query"
)

// kv is the data case's schema: a key, a group and a value.
var kvSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	{Name: "g", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

type kvRow struct {
	K int64
	G int32
	V string
}

func kvRecords(rows ...kvRow) array.RecordReader {
	b := array.NewRecordBuilder(memory.NewGoAllocator(), kvSchema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.K)
		b.Field(1).(*array.Int32Builder).Append(r.G)
		b.Field(2).(*array.StringBuilder).Append(r.V)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rr, _ := array.NewRecordReader(kvSchema, []arrow.RecordBatch{rec})
	return rr
}

// readKV reads the rows of a query answering k, g, v (in that order), sorted by k then g.
func readKV(t *testing.T, rr array.RecordReader) []kvRow {
	t.Helper()
	defer rr.Release()
	var out []kvRow
	for rr.Next() {
		rec := rr.RecordBatch()
		for i := range int(rec.NumRows()) {
			out = append(out, kvRow{
				K: rec.Column(0).(*array.Int64).Value(i),
				G: rec.Column(1).(*array.Int32).Value(i),
				V: rec.Column(2).(*array.String).Value(i),
			})
		}
	}
	assert.NilError(t, rr.Err())
	slices.SortFunc(out, func(a, b kvRow) int {
		if a.K != b.K {
			return int(a.K - b.K)
		}
		return int(a.G - b.G)
	})
	return out
}

// testData: insert, count (with and without a filter, at a version), query (filter, columns,
// limit), update, delete, merge on a composite key, add and alter columns; a bad filter is
// InvalidInput and writes nothing; a missing version is TableVersionNotFound.
func testData(t *testing.T, s *suite, ns ident.ID) {
	ctx := s.ctx
	id := child(ns, "rows")
	_, v, err := s.c.CreateTable(ctx, id, catalog.NewTable{Schema: kvSchema})
	assert.NilError(t, err)
	assert.Equal(t, v, uint64(1))
	h := s.load(t, id)
	latest := catalog.ReadAt{}

	r, err := h.Insert(ctx, "", kvRecords(kvRow{1, 1, "a"}, kvRow{2, 1, "b"}, kvRow{3, 2, "c"}, kvRow{4, 2, "d"}), false)
	assert.NilError(t, err)
	assert.Equal(t, r.Version, uint64(2))
	n, at, err := h.Count(ctx, latest, "")
	assert.NilError(t, err)
	assert.Equal(t, n, uint64(4))
	assert.Equal(t, at, uint64(2))
	n, _, err = h.Count(ctx, latest, "g = 2 AND k > 3")
	assert.NilError(t, err)
	assert.Equal(t, n, uint64(1))

	rr, at, err := s.load(t, id).Query(ctx, latest, query.Request{Filter: "g = 1", Columns: []string{"k", "g", "v"}})
	assert.NilError(t, err)
	assert.Equal(t, at, uint64(2))
	assert.DeepEqual(t, readKV(t, rr), []kvRow{{1, 1, "a"}, {2, 1, "b"}})
	rr, _, err = s.load(t, id).Query(ctx, latest, query.Request{Limit: 1, Offset: 2})
	assert.NilError(t, err)
	assert.DeepEqual(t, readKV(t, rr), []kvRow{{3, 2, "c"}})

	r, err = h.Update(ctx, "", "k = 2", []dml.Assignment{{Column: "v", Expr: "'B'"}})
	assert.NilError(t, err)
	assert.Equal(t, r.Updated, uint64(1))
	r, err = h.Delete(ctx, "", "k = 4")
	assert.NilError(t, err)
	assert.Equal(t, r.Deleted, uint64(1))
	// A composite key: (3, 2) matches and is updated, (3, 9) does not and is inserted.
	r, err = h.Merge(ctx, "", kvRecords(kvRow{3, 2, "C"}, kvRow{3, 9, "new"}),
		dml.MergeInsert{On: []string{"k", "g"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true})
	assert.NilError(t, err)
	assert.Equal(t, r.Updated, uint64(1))
	assert.Equal(t, r.Inserted, uint64(1))
	rr, _, err = s.load(t, id).Query(ctx, latest, query.Request{})
	assert.NilError(t, err)
	assert.DeepEqual(t, readKV(t, rr), []kvRow{{1, 1, "a"}, {2, 1, "B"}, {3, 2, "C"}, {3, 9, "new"}})

	// Time travel: version 2 still has its four rows.
	two := int64(2)
	n, at, err = s.load(t, id).Count(ctx, catalog.ReadAt{Version: &two}, "")
	assert.NilError(t, err)
	assert.Equal(t, n, uint64(4))
	assert.Equal(t, at, uint64(2))
	missing := int64(99)
	_, _, err = s.load(t, id).Count(ctx, catalog.ReadAt{Version: &missing}, "")
	code(t, err, nserr.TableVersionNotFound)

	// Bad input writes nothing.
	_, _, err = s.load(t, id).Count(ctx, latest, "nope > 1")
	code(t, err, nserr.InvalidInput)
	_, err = s.load(t, id).Delete(ctx, "", "k >")
	code(t, err, nserr.InvalidInput)
	st, err := s.load(t, id).State(ctx, catalog.DescribeOptions{})
	assert.NilError(t, err)
	before := st.Version

	v, err = s.load(t, id).AddColumns(ctx, "", []dml.NewColumn{{Name: "k2", Expr: "k * 2"}})
	assert.NilError(t, err)
	assert.Equal(t, v, before+1)
	v, err = s.load(t, id).AlterColumns(ctx, "", []dml.Alteration{{Path: "g", DataType: arrow.PrimitiveTypes.Int64}})
	assert.NilError(t, err)
	assert.Equal(t, v, before+2)
	st, err = s.load(t, id).State(ctx, catalog.DescribeOptions{})
	assert.NilError(t, err)
	assert.DeepEqual(t, fieldNames(st), []string{"k", "g", "v", "k2"})
	n, _, err = s.load(t, id).Count(ctx, latest, "k2 = 6 AND g = 9")
	assert.NilError(t, err)
	assert.Equal(t, n, uint64(1))
}
