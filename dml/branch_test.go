package dml

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
)

// TestWritesOnBranch: on a branch (whose fragments and deletion files live
// in main's directory, named through a base path) deletes, updates and
// merges read main's files and write the branch's own; main is untouched.
func TestWritesOnBranch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := storage.NewFS(dir)
	assert.NilError(t, err)
	main := lance.NewDatasetAt(store, "file://"+dir)
	_, err = main.Write(ctx, stream(t, rowsN(0, 10, "a")...), lance.WriteOptions{Mode: lance.WriteCreate})
	assert.NilError(t, err)
	_, err = Delete(ctx, main, "id = 9") // main's fragment gets a deletion file
	assert.NilError(t, err)
	_, _, err = main.CreateBranch(ctx, "dev", "", 0)
	assert.NilError(t, err)
	dev, err := main.Branch("dev")
	assert.NilError(t, err)

	_, err = Delete(ctx, dev, "id < 2")
	assert.NilError(t, err)
	_, err = Update(ctx, dev, "id = 5", []Assignment{{"val", "55"}})
	assert.NilError(t, err)
	_, err = Merge(ctx, dev, stream(t, row{6, "a", 66}, row{20, "n", 1}), MergeInsert{On: []string{"id"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true})
	assert.NilError(t, err)

	want := []row{{2, "a", 2}, {3, "a", 3}, {4, "a", 4}, {5, "a", 55}, {6, "a", 66}, {7, "a", 7}, {8, "a", 8}, {20, "n", 1}}
	assert.DeepEqual(t, readAll(t, dev), want)
	assert.DeepEqual(t, readAll(t, main), rowsN(0, 9, "a"))
}
