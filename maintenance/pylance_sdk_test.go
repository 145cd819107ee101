package maintenance

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/storage"
)

// pylanceAnswers is the part of scripts/pylance/dataset.py read's output this test reads.
type pylanceAnswers struct {
	CountRows int `json:"count_rows"`
	Filters   []struct {
		IDs []string `json:"ids"`
	} `json:"filters"`
	FTS []struct {
		IDs []string `json:"ids"`
	} `json:"fts"`
	Indices []struct {
		Name      string   `json:"name"`
		Fragments []uint32 `json:"fragments"`
	} `json:"indices"`
}

// TestCompactPylanceStableRowIDs: a dataset pylance 14 writes with stable row ids and indexes
// (BTREE, BITMAP, INVERTED), compacted by lancecat. Lance 14's BTREE records row addresses even
// there (index version 1), its BITMAP and INVERTED stable row ids: lancecat's index lookups
// resolve each by its own domain, and the compaction keeps the row-id indices covering the
// rewritten rows while the address index stops covering them (their addresses changed), so pylance
// answers every query as before; lancecat's optimize then folds the rows back into the address
// index by their addresses. Before, lancecat's BTREE lookups found nothing past the first
// fragment, and its compaction left the BTREE claiming rows at addresses they had left (pylance's
// lookups then missed them).
func TestCompactPylanceStableRowIDs(t *testing.T) {
	venv := testenv.Pylance(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "stable.lance")
	script := testenv.Script("pylance", "dataset.py")
	testenv.PythonJSON(t, nil, venv, script, "write", dir, "default", "0", "3000", "1000", "stable")
	testenv.PythonJSON(t, nil, venv, script, "index", dir)
	queries := testenv.JobFile(t, map[string]any{
		"filters": []string{"id = 1500", "id = 2999", "id >= 990 AND id < 1010", "color = 'blue'"},
		"fts":     []string{"manifest", "vector catalog"},
	})
	read := func() pylanceAnswers {
		var out pylanceAnswers
		testenv.PythonJSON(t, &out, venv, script, "read", dir, queries)
		return out
	}
	before := read()
	assert.Equal(t, before.CountRows, 3000)
	assert.DeepEqual(t, before.Filters[0].IDs, []string{"1500"})
	assert.Equal(t, len(before.Filters[2].IDs), 20)

	ds, err := lance.OpenURI(ctx, dir, storage.S3Config{})
	assert.NilError(t, err)
	lookup := func(id int64) {
		t.Helper()
		v, err := ds.OpenLatest(ctx)
		assert.NilError(t, err)
		m, err := tableindex.SearchScalarIndex(ctx, ds, v, "id", index.Predicate{Op: index.Equals, Values: []any{id}})
		assert.NilError(t, err)
		if m.Rows.GetCardinality() == 0 {
			return // not covered any more: the query scans the fragment
		}
		rec, err := ds.TakeRowAddresses(ctx, m.Rows.ToArray(), lance.TakeOptions{At: v, Columns: []string{"id"}})
		assert.NilError(t, err)
		defer rec.Release()
		assert.DeepEqual(t, rec.Column(0).(*array.Int64).Int64Values(), []int64{id})
	}
	v, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	m, err := tableindex.SearchScalarIndex(ctx, ds, v, "id", index.Predicate{Op: index.Equals, Values: []any{int64(1500)}})
	assert.NilError(t, err)
	assert.Equal(t, m.Rows.GetCardinality(), uint64(1), "lancecat's lookup in pylance's BTREE")
	for _, id := range []int64{0, 999, 1000, 1500, 2999} {
		lookup(id)
	}

	rep, err := Compact(ctx, ds, CompactOptions{TargetRowsPerFragment: 3000})
	assert.NilError(t, err)
	assert.Assert(t, rep.FragmentsRemoved > 0, "%+v", rep)
	after := read()
	assert.DeepEqual(t, after.Filters, before.Filters)
	assert.DeepEqual(t, after.FTS, before.FTS)
	frags := map[string][]uint32{}
	for _, ix := range after.Indices {
		frags[ix.Name] = ix.Fragments
	}
	v, err = ds.OpenLatest(ctx)
	assert.NilError(t, err)
	var live []uint32
	for _, f := range v.Manifest().GetFragments() {
		live = append(live, uint32(f.GetId()))
	}
	assert.DeepEqual(t, frags["color_idx"], live)
	assert.DeepEqual(t, frags["text_idx"], live)
	assert.Assert(t, !slices.ContainsFunc(frags["id_idx"], func(f uint32) bool { return slices.Contains(live, f) }), "%v covers %v", frags["id_idx"], live)
	for _, id := range []int64{0, 999, 1000, 1500, 2999} {
		lookup(id)
	}

	// lancecat's optimize folds the compacted rows back into the address index, by their
	// addresses (its old segment's domain): covered again, and every answer as before.
	orep, err := tableindex.OptimizeIndices(ctx, ds, tableindex.OptimizeIndicesOptions{})
	assert.NilError(t, err)
	assert.Assert(t, orep.Version != 0)
	after = read()
	assert.DeepEqual(t, after.Filters, before.Filters)
	assert.DeepEqual(t, after.FTS, before.FTS)
	for _, ix := range after.Indices {
		assert.DeepEqual(t, ix.Fragments, live)
	}
	v, err = ds.OpenLatest(ctx)
	assert.NilError(t, err)
	for _, id := range []int64{0, 999, 1000, 1500, 2999} {
		m, err := tableindex.SearchScalarIndex(ctx, ds, v, "id", index.Predicate{Op: index.Equals, Values: []any{id}})
		assert.NilError(t, err)
		assert.Equal(t, m.Rows.GetCardinality(), uint64(1), "id %d", id)
		lookup(id)
	}
}
