package dml

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
)

// TestDelete: the rows a predicate matches are gone, the others stay, a
// fragment left empty is removed (as Lance removes it), and the version
// records Lance's Delete operation.
func TestDelete(t *testing.T) {
	for _, version := range []string{"2.1", "2.2"} {
		for _, tc := range []struct {
			pred      string
			want      []row
			deleted   uint64
			fragments int
		}{
			{"id < 3", append(rowsN(3, 5, "a"), rowsN(5, 10, "b")...), 3, 2},
			{"grp = 'a'", rowsN(5, 10, "b"), 5, 1},
			{"val >= 7 OR id = 0", append(rowsN(1, 5, "a"), rowsN(5, 7, "b")...), 4, 2},
			{"true", nil, 10, 0},
			{"id > 100", append(rowsN(0, 5, "a"), rowsN(5, 10, "b")...), 0, 2},
		} {
			t.Run(version+"/"+tc.pred, func(t *testing.T) {
				ds, _ := newTable(t, version, rowsN(0, 5, "a"), rowsN(5, 10, "b"))
				res, err := Delete(context.Background(), ds, tc.pred)
				assert.NilError(t, err)
				assert.Equal(t, res.Deleted, tc.deleted)
				assert.DeepEqual(t, readAll(t, ds), tc.want)
				v := latest(t, ds)
				assert.Equal(t, lance.OperationName(v.Transaction()), "Delete")
				assert.Equal(t, len(v.Manifest().GetFragments()), tc.fragments)
				assert.Equal(t, v.DataStorageVersion(), version)
			})
		}
	}
}

// TestUpdate: matching rows get the SQL values cast to the column type,
// the rest are untouched, and the version records Lance's Update.
func TestUpdate(t *testing.T) {
	for _, version := range []string{"2.1", "2.2"} {
		for _, tc := range []struct {
			pred    string
			set     []Assignment
			want    []row
			updated uint64
		}{
			{"id = 1", []Assignment{{"val", "100"}}, []row{{0, "a", 0}, {1, "a", 100}, {2, "a", 2}, {3, "b", 3}}, 1},
			{"grp = 'b'", []Assignment{{"val", "val * 10 + id"}, {"grp", "upper(grp)"}}, []row{{0, "a", 0}, {1, "a", 1}, {2, "a", 2}, {3, "B", 33}}, 1},
			{"", []Assignment{{"val", "-1"}}, []row{{0, "a", -1}, {1, "a", -1}, {2, "a", -1}, {3, "b", -1}}, 4},
			{"id > 9", []Assignment{{"val", "1"}}, []row{{0, "a", 0}, {1, "a", 1}, {2, "a", 2}, {3, "b", 3}}, 0},
		} {
			t.Run(version+"/"+tc.pred, func(t *testing.T) {
				ds, _ := newTable(t, version, []row{{0, "a", 0}, {1, "a", 1}}, []row{{2, "a", 2}, {3, "b", 3}})
				res, err := Update(context.Background(), ds, tc.pred, tc.set)
				assert.NilError(t, err)
				assert.Equal(t, res.Updated, tc.updated)
				assert.DeepEqual(t, readAll(t, ds), tc.want)
				v := latest(t, ds)
				assert.Equal(t, lance.OperationName(v.Transaction()), "Update")
				assert.Equal(t, v.DataStorageVersion(), version)
			})
		}
	}
}

// TestMerge: composite keys, each clause and its filter; counts match.
func TestMerge(t *testing.T) {
	base := []row{{1, "a", 10}, {1, "b", 11}, {2, "a", 20}, {3, "a", 30}}
	src := []row{{1, "a", 100}, {2, "b", 200}, {3, "a", 5}}
	for _, tc := range []struct {
		name                       string
		m                          MergeInsert
		want                       []row
		inserted, updated, deleted uint64
	}{
		{"upsert", MergeInsert{On: []string{"id", "grp"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true},
			[]row{{1, "a", 100}, {1, "b", 11}, {2, "a", 20}, {2, "b", 200}, {3, "a", 5}}, 1, 2, 0},
		{"update only if newer", MergeInsert{On: []string{"id", "grp"}, WhenMatchedUpdateAll: true, WhenMatchedUpdateAllFilter: "source.val > target.val"},
			[]row{{1, "a", 100}, {1, "b", 11}, {2, "a", 20}, {3, "a", 30}}, 0, 1, 0},
		{"insert only", MergeInsert{On: []string{"id", "grp"}, WhenNotMatchedInsertAll: true},
			[]row{{1, "a", 10}, {1, "b", 11}, {2, "a", 20}, {2, "b", 200}, {3, "a", 30}}, 1, 0, 0},
		{"replace", MergeInsert{On: []string{"id", "grp"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true, WhenNotMatchedBySourceDelete: true},
			[]row{{1, "a", 100}, {2, "b", 200}, {3, "a", 5}}, 1, 2, 2},
		{"delete by source with filter", MergeInsert{On: []string{"id", "grp"}, WhenNotMatchedBySourceDelete: true, WhenNotMatchedBySourceDeleteFilter: "grp = 'b'"},
			[]row{{1, "a", 10}, {2, "a", 20}, {3, "a", 30}}, 0, 0, 1},
		{"single key", MergeInsert{On: []string{"id"}, WhenMatchedUpdateAll: true},
			[]row{{1, "a", 100}, {1, "a", 100}, {2, "b", 200}, {3, "a", 5}}, 0, 4, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, _ := newTable(t, "2.2", base[:2], base[2:])
			res, err := Merge(context.Background(), ds, stream(t, src...), tc.m)
			assert.NilError(t, err)
			assert.DeepEqual(t, readAll(t, ds), tc.want)
			assert.Equal(t, res.Inserted, tc.inserted)
			assert.Equal(t, res.Updated, tc.updated)
			assert.Equal(t, res.Deleted, tc.deleted)
			assert.Equal(t, lance.OperationName(latest(t, ds).Transaction()), "Update")
		})
	}
}

// TestBadInput: each is InvalidInput (code 13) and nothing is committed.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		do   func(ds *lance.Dataset) error
	}{
		{"delete malformed", func(ds *lance.Dataset) error { _, err := Delete(ctx, ds, "id = = 1"); return err }},
		{"delete unknown column", func(ds *lance.Dataset) error { _, err := Delete(ctx, ds, "nope = 1"); return err }},
		{"delete type mismatch", func(ds *lance.Dataset) error { _, err := Delete(ctx, ds, "id = 'abc'"); return err }},
		{"delete not boolean", func(ds *lance.Dataset) error { _, err := Delete(ctx, ds, "id + 1"); return err }},
		{"delete empty", func(ds *lance.Dataset) error { _, err := Delete(ctx, ds, " "); return err }},
		{"update unknown column", func(ds *lance.Dataset) error {
			_, err := Update(ctx, ds, "", []Assignment{{"nope", "1"}})
			return err
		}},
		{"update bad value", func(ds *lance.Dataset) error {
			_, err := Update(ctx, ds, "", []Assignment{{"val", "'abc'"}})
			return err
		}},
		{"update overflow", func(ds *lance.Dataset) error {
			_, err := Update(ctx, ds, "", []Assignment{{"val", "99999999999"}})
			return err
		}},
		{"update malformed predicate", func(ds *lance.Dataset) error {
			_, err := Update(ctx, ds, "id >", []Assignment{{"val", "1"}})
			return err
		}},
		{"merge duplicate keys", func(ds *lance.Dataset) error {
			_, err := Merge(ctx, ds, stream(t, row{7, "x", 1}, row{7, "x", 2}), MergeInsert{On: []string{"id", "grp"}, WhenNotMatchedInsertAll: true})
			return err
		}},
		{"merge unknown key", func(ds *lance.Dataset) error {
			_, err := Merge(ctx, ds, stream(t, row{7, "x", 1}), MergeInsert{On: []string{"nope"}, WhenNotMatchedInsertAll: true})
			return err
		}},
		{"merge bad condition", func(ds *lance.Dataset) error {
			_, err := Merge(ctx, ds, stream(t, row{1, "a", 1}), MergeInsert{On: []string{"id"}, WhenMatchedUpdateAll: true, WhenMatchedUpdateAllFilter: "source.nope > 1"})
			return err
		}},
		{"merge type mismatch", func(ds *lance.Dataset) error {
			src := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}, nil)
			b := array.NewStringBuilder(testenv.CheckedAllocator(t))
			defer b.Release()
			b.Append("not a number")
			col := b.NewArray()
			defer col.Release()
			rec := array.NewRecordBatch(src, []arrow.Array{col}, 1)
			defer rec.Release()
			rr, _ := array.NewRecordReader(src, []arrow.RecordBatch{rec})
			defer rr.Release()
			_, err := Merge(ctx, ds, rr, MergeInsert{On: []string{"id"}, WhenNotMatchedInsertAll: true})
			return err
		}},
		{"merge unknown source column", func(ds *lance.Dataset) error {
			src := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "nope", Type: arrow.PrimitiveTypes.Int64}}, nil)
			rr, _ := array.NewRecordReader(src, nil)
			_, err := Merge(ctx, ds, rr, MergeInsert{On: []string{"id"}, WhenNotMatchedInsertAll: true})
			return err
		}},
		{"add column exists", func(ds *lance.Dataset) error {
			_, err := AddColumns(ctx, ds, []NewColumn{{"val", "1"}})
			return err
		}},
		{"add column unknown reference", func(ds *lance.Dataset) error {
			_, err := AddColumns(ctx, ds, []NewColumn{{"x", "nope + 1"}})
			return err
		}},
		{"add column malformed", func(ds *lance.Dataset) error {
			_, err := AddColumns(ctx, ds, []NewColumn{{"x", "id +"}})
			return err
		}},
		{"merge no key", func(ds *lance.Dataset) error {
			_, err := Merge(ctx, ds, stream(t, row{1, "a", 1}), MergeInsert{WhenNotMatchedInsertAll: true})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, _ := newTable(t, "2.1", rowsN(0, 4, "a"))
			before := latest(t, ds).Number()
			err := tc.do(ds)
			assert.Assert(t, err != nil)
			assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput, "%v", err)
			assert.Equal(t, latest(t, ds).Number(), before)
			assert.DeepEqual(t, readAll(t, ds), rowsN(0, 4, "a"))
		})
	}
}
