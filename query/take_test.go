package query_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/query"
)

// TestRunTakeOffsets: the remote client's takeOffsets (columns and _rowoffset, filtered by
// `_rowoffset IN (…)`) answers the rows at those positions among the live rows, as Lance's
// take does (the SDK embedded, on a table of 20 rows with row 3 deleted and a second fragment,
// answers takeOffsets([5, 0, 2, 3, 19]) with ids 0, 2, 4, 6 and the second fragment's first):
// deleted rows take no position, the answer is in offset order, offsets past the end are no
// rows. Fragment 0 of newTable(100, 40) holds ids 0..39 less every 10th (36 live rows).
func TestRunTakeOffsets(t *testing.T) {
	ds := newTable(t, 100, 40)
	for _, tc := range []struct {
		name    string
		filter  string
		columns []string
		ids     []int64
		offsets []uint64 // nil: no _rowoffset column asked
	}{
		{"in list", "_rowoffset IN (95, 0, 1, 35, 36, 37, 200, 1)", []string{"id", "_rowoffset"},
			[]int64{1, 2, 39, 40, 41, 99}, []uint64{0, 1, 35, 36, 37, 95}},
		{"equals", "_rowoffset = 3", []string{"id", "_rowoffset"}, []int64{4}, []uint64{3}},
		{"without the column", "_rowoffset IN (0, 36)", []string{"id"}, []int64{1, 40}, nil},
		{"column first", "_rowoffset IN (2)", []string{"_rowoffset", "id"}, []int64{3}, []uint64{2}},
		{"past the end", "_rowoffset IN (96, 1000)", []string{"id", "_rowoffset"}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := run(t, ds, query.Request{Filter: tc.filter, Columns: tc.columns})
			defer rec.Release()
			assert.DeepEqual(t, fieldNames(rec), tc.columns)
			if len(tc.ids) == 0 {
				assert.Equal(t, rec.NumRows(), int64(0))
				return
			}
			assert.DeepEqual(t, int64s(rec, "id"), tc.ids)
			if tc.offsets != nil {
				c := rec.Column(rec.Schema().FieldIndices("_rowoffset")[0]).(*array.Uint64)
				assert.DeepEqual(t, c.Uint64Values(), tc.offsets)
			}
		})
	}
	// any other filter on _rowoffset is not a take
	_, err := query.Run(t.Context(), ds, query.Request{Filter: "_rowoffset > 3", Columns: []string{"id"}})
	assert.ErrorContains(t, err, "_rowoffset")
	_, err = query.Run(t.Context(), ds, query.Request{Filter: "_rowoffset IN ('a')", Columns: []string{"id"}})
	assert.ErrorContains(t, err, "integers")
}

// TestRegexpMatchFilter: regexp_match filters as the boolean Lance coerces it to (the SDK
// embedded keeps, for NOT regexp_match(name, …), the rows whose name is NULL too).
func TestRegexpMatchFilter(t *testing.T) {
	ds := newTable(t, 100, 40)
	ids := func(filter string) []int64 {
		rec := run(t, ds, query.Request{Filter: filter, Columns: []string{"id"}})
		defer rec.Release()
		return int64s(rec, "id")
	}
	like := ids("regexp_like(name, '^n01[0-9]$')")
	assert.Assert(t, len(like) > 0)
	assert.DeepEqual(t, ids("regexp_match(name, '^n01[0-9]$')"), like)
	notLike := ids("NOT coalesce(regexp_like(name, '^n01[0-9]$'), false)")
	assert.DeepEqual(t, ids("NOT regexp_match(name, '^n01[0-9]$')"), notLike)
	n, err := query.Count(t.Context(), ds, nil, "regexp_match(name, '^n01[0-9]$')")
	assert.NilError(t, err)
	assert.Equal(t, int(n), len(like))
}
