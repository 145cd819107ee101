package dml

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
)

// scanColumn reads one column of the live rows as strings (via the Arrow
// value formatter), in scan order.
func scanColumn(t *testing.T, ds *lance.Dataset, name string) (arrow.DataType, []string) {
	t.Helper()
	s, err := ds.Scan(context.Background(), lance.ScanOptions{Columns: []string{name}})
	assert.NilError(t, err)
	defer s.Release()
	var out []string
	for s.Next() {
		c := s.RecordBatch().Column(0)
		for i := 0; i < c.Len(); i++ {
			out = append(out, c.ValueStr(i))
		}
	}
	assert.NilError(t, s.Err())
	return s.Schema().Field(0).Type, out
}

// TestAddColumns: the new columns hold the expressions' values for every
// live row (also in a fragment with deletions), old columns are intact,
// and the version records Lance's Merge.
func TestAddColumns(t *testing.T) {
	for _, version := range []string{"2.1", "2.2"} {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			ds, _ := newTable(t, version, rowsN(0, 3, "a"), rowsN(3, 5, "b"))
			_, err := Delete(ctx, ds, "id = 1")
			assert.NilError(t, err)
			v, err := AddColumns(ctx, ds, []NewColumn{{"double", "val * 2"}, {"tag", "concat(grp, '-', CAST(id AS string))"}, {"one", "CAST(1 AS int)"}})
			assert.NilError(t, err)
			assert.Equal(t, lance.OperationName(v.Transaction()), "Merge")
			typ, got := scanColumn(t, ds, "double")
			assert.Equal(t, typ.ID(), arrow.INT64) // int32 * an int64 literal, as DataFusion types it
			assert.DeepEqual(t, got, []string{"0", "4", "6", "8"})
			_, got = scanColumn(t, ds, "tag")
			assert.DeepEqual(t, got, []string{"a-0", "a-2", "b-3", "b-4"})
			_, got = scanColumn(t, ds, "one")
			assert.DeepEqual(t, got, []string{"1", "1", "1", "1"})
			assert.DeepEqual(t, readAll(t, ds), []row{{0, "a", 0}, {2, "a", 2}, {3, "b", 3}, {4, "b", 4}})
			// Later writes see the new columns.
			_, err = Update(ctx, ds, "id = 0", []Assignment{{"double", "99"}})
			assert.NilError(t, err)
			_, got = scanColumn(t, ds, "double")
			assert.DeepEqual(t, got, []string{"4", "6", "8", "99"})
		})
	}
}

// TestAlterColumnType: the column is rewritten with the new type under a
// new field id; values are cast; a lossy cast or a cast Lance forbids is
// InvalidInput and nothing is committed; rename alone stays a Project.
func TestAlterColumnType(t *testing.T) {
	ctx := context.Background()
	ds, _ := newTable(t, "2.2", rowsN(0, 3, "a"), rowsN(3, 5, "b"))
	before := latest(t, ds)
	v, err := AlterColumns(ctx, ds, []Alteration{{Path: "val", DataType: arrow.PrimitiveTypes.Int64}})
	assert.NilError(t, err)
	assert.Equal(t, lance.OperationName(v.Transaction()), "Merge")
	typ, got := scanColumn(t, ds, "val")
	assert.Equal(t, typ.ID(), arrow.INT64)
	assert.DeepEqual(t, got, []string{"0", "1", "2", "3", "4"})
	var oldID, newID int32
	for _, f := range before.Fields() {
		if f.GetName() == "val" {
			oldID = f.GetId()
		}
	}
	for _, f := range v.Fields() {
		if f.GetName() == "val" {
			newID = f.GetId()
		}
	}
	assert.Assert(t, newID > oldID)

	for _, tc := range []struct {
		name string
		alt  Alteration
	}{
		{"int to string (Lance forbids)", Alteration{Path: "val", DataType: arrow.BinaryTypes.String}},
		{"unknown column", Alteration{Path: "nope", DataType: arrow.PrimitiveTypes.Int32}},
		{"rename onto another column", Alteration{Path: "val", Rename: ptr("grp"), DataType: arrow.PrimitiveTypes.Int32}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := latest(t, ds).Number()
			_, err := AlterColumns(ctx, ds, []Alteration{tc.alt})
			assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput, "%v", err)
			assert.Equal(t, latest(t, ds).Number(), n)
		})
	}
	t.Run("lossy cast", func(t *testing.T) {
		_, err := Update(ctx, ds, "id = 4", []Assignment{{"val", "100000"}})
		assert.NilError(t, err)
		n := latest(t, ds).Number()
		_, err = AlterColumns(ctx, ds, []Alteration{{Path: "val", DataType: arrow.PrimitiveTypes.Int8}})
		assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput, "%v", err)
		assert.Equal(t, latest(t, ds).Number(), n)
	})
	t.Run("rename is a Project", func(t *testing.T) {
		name := "value"
		v, err := AlterColumns(ctx, ds, []Alteration{{Path: "val", Rename: &name}})
		assert.NilError(t, err)
		assert.Equal(t, lance.OperationName(v.Transaction()), "Project")
		_, got := scanColumn(t, ds, "value")
		assert.Equal(t, len(got), 5)
	})
}

func ptr[T any](v T) *T { return &v }

// TestAddColumnsNullability: a column computed from non-null columns and literals by
// arithmetic, comparison or CAST is non-null, as Lance (DataFusion) makes it (the SDK embedded:
// addColumns("id * 2") over a non-null id is a non-null column); one that reads a nullable
// column, calls a function or divides may be null.
func TestAddColumnsNullability(t *testing.T) {
	ctx := context.Background()
	ds, _ := newTable(t, "2.2", rowsN(0, 3, "a"))
	_, err := AddColumns(ctx, ds, []NewColumn{
		{"dbl", "id * 2"}, {"cmp", "id > 1 AND NOT id = 2"}, {"txt", "CAST(id AS STRING)"}, {"neg", "-id + 1"},
		{"withval", "id + val"}, {"up", "upper(CAST(id AS STRING))"}, {"half", "id / 2"}, {"lit", "'x'"}, {"nul", "CAST(NULL AS int)"},
	})
	assert.NilError(t, err)
	_, schema, err := head(ctx, ds)
	assert.NilError(t, err)
	got := map[string]bool{}
	for _, f := range schema.Fields() {
		got[f.Name] = f.Nullable
	}
	assert.DeepEqual(t, got, map[string]bool{"id": false, "grp": true, "val": true,
		"dbl": false, "cmp": false, "txt": false, "neg": false, "lit": false,
		"withval": true, "up": true, "half": true, "nul": true})
	_, vals := scanColumn(t, ds, "dbl")
	assert.DeepEqual(t, vals, []string{"0", "2", "4"})
}
