package dml

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
)

// rowIDsByID maps each live row's id column to its stable row id.
func rowIDsByID(t *testing.T, ds *lance.Dataset) map[int64]uint64 {
	t.Helper()
	s, err := ds.Scan(context.Background(), lance.ScanOptions{Columns: []string{"id"}, WithRowID: true})
	assert.NilError(t, err)
	defer s.Release()
	out := map[int64]uint64{}
	for s.Next() {
		rec := s.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			out[rec.Column(0).(*array.Int64).Value(i)] = rec.Column(1).(*array.Uint64).Value(i)
		}
	}
	assert.NilError(t, s.Err())
	return out
}

// TestStableRowIDs: on a dataset with stable row ids, rows an update or a
// merge rewrites keep their row ids (as Lance keeps them), inserted rows
// get new ones, and no id is used twice.
func TestStableRowIDs(t *testing.T) {
	ctx := context.Background()
	db := t.TempDir()
	store, err := storage.NewFS(filepath.Join(db, "t.lance"))
	assert.NilError(t, err)
	ds := lance.NewDataset(store)
	_, err = ds.Write(ctx, stream(t, rowsN(0, 10, "a")...), lance.WriteOptions{Mode: lance.WriteCreate, EnableStableRowIDs: true})
	assert.NilError(t, err)
	before := rowIDsByID(t, ds)

	_, err = Update(ctx, ds, "id % 3 = 0", []Assignment{{"val", "val + 100"}})
	assert.NilError(t, err)
	assert.DeepEqual(t, rowIDsByID(t, ds), before)

	_, err = Merge(ctx, ds, stream(t, row{1, "a", 7}, row{5, "a", 7}, row{42, "n", 1}, row{43, "n", 1}),
		MergeInsert{On: []string{"id"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true})
	assert.NilError(t, err)
	after := rowIDsByID(t, ds)
	for id, rid := range before {
		assert.Equal(t, after[id], rid, "row %d", id)
	}
	var all []uint64
	for _, rid := range after {
		all = append(all, rid)
	}
	slices.Sort(all)
	assert.Equal(t, len(slices.Compact(all)), 12)
	assert.Assert(t, after[42] >= 10 && after[43] >= 10)
	got := readAll(t, ds)
	assert.Equal(t, len(got), 12)
	assert.DeepEqual(t, got[1], row{1, "a", 7})
	assert.DeepEqual(t, got[3], row{3, "a", 103})

	// Both SDK versions read the rows (their row id sequences included).
	if os.Getenv(testenv.EnvLanceDBSDK) == "" {
		return
	}
	for _, sdk := range testenv.SDKs(t) {
		v := sdkRead(t, sdk, db, "t")
		assert.Equal(t, v.Count, 12, sdk)
		assert.Equal(t, len(v.Rows), 12, sdk)
		assert.Equal(t, v.Rows[3]["val"], float64(103), sdk)
	}
}
