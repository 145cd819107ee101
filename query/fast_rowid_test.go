package query_test

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/query"
)

// TestFastSearchAnswersRowID: a fast search an index serves answers _rowid before _distance,
// as Lance does (the SDK embedded, select(["id"]) on an IVF_FLAT-indexed table: id, _rowid,
// _distance; without fastSearch, or with no index to serve it: id, _distance).
func TestFastSearchAnswersRowID(t *testing.T) {
	ds := newTable(t, 600, 300)
	v := make([]float32, dim)
	for k := range v {
		v[k] = vecOf(5, k)
	}
	search := func(fast bool) []string {
		rec := run(t, ds, query.Request{Columns: []string{"id"}, Vector: &query.VectorQuery{Column: "vec", Vectors: [][]float32{v}, K: 3, NProbes: 2, FastSearch: fast}})
		defer rec.Release()
		return fieldNames(rec)
	}
	assert.DeepEqual(t, search(false), []string{"id", "_distance"})
	_, err := tableindex.CreateVectorIndex(t.Context(), ds, tableindex.VectorIndexOptions{Column: "vec", Kind: index.VectorKind("IVF_FLAT"), NumPartitions: 2, Name: "vec_idx", Seed: 7})
	assert.NilError(t, err)
	assert.DeepEqual(t, search(false), []string{"id", "_distance"})
	assert.DeepEqual(t, search(true), []string{"id", "_rowid", "_distance"})
	// asked for, _rowid stays where the client asks it
	rec := run(t, ds, query.Request{Columns: []string{"id"}, WithRowID: true, Vector: &query.VectorQuery{Column: "vec", Vectors: [][]float32{v}, K: 3, NProbes: 2, FastSearch: true}})
	defer rec.Release()
	assert.DeepEqual(t, fieldNames(rec), []string{"id", "_distance", "_rowid"})
}

// TestVectorColumnMissing: a search of a column the table lacks says it does not exist, as
// Lance says it (the SDK embedded: "column nope does not exist in schema"), as invalid input.
func TestVectorColumnMissing(t *testing.T) {
	ds := newTable(t, 10, 10)
	_, err := query.Run(t.Context(), ds, query.Request{Vector: &query.VectorQuery{Column: "nope", Vectors: [][]float32{make([]float32, dim)}}})
	assert.ErrorContains(t, err, `the vector column "nope" does not exist in the table`)
}
