package dml

import (
	"context"
	"errors"
	"testing"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
)

// TestRebase pins Lance's conflict rules for row writes, each committed on
// a read version another writer has moved past: deletes of other rows of
// the same fragment are rebased (deletion vectors merged); deleting a row
// someone else deleted, or writing rows of a fragment whose columns were
// rewritten (Merge), is a retryable conflict that the dml functions rerun;
// an Overwrite in between is a plain conflict (code 14), never retried.
func TestRebase(t *testing.T) {
	ctx := context.Background()
	ds, _ := newTable(t, "2.1", rowsN(0, 10, "a"))
	read := latest(t, ds)
	del := func(rows ...uint32) *lance.DeleteRows {
		return &lance.DeleteRows{Rows: lance.RowDeletes{0: rows}, Read: readFragments(read)}
	}
	at := lance.CommitOptions{ReadVersion: read.Number()}

	_, err := ds.Commit(ctx, del(1, 2), at)
	assert.NilError(t, err)
	_, err = ds.Commit(ctx, del(5), at) // other rows, same fragment: rebased
	assert.NilError(t, err)
	var ids []int64
	for _, r := range readAll(t, ds) {
		ids = append(ids, r.ID)
	}
	assert.DeepEqual(t, ids, []int64{0, 3, 4, 6, 7, 8, 9})

	_, err = ds.Commit(ctx, del(2, 3), at) // row 2 is gone already
	assert.Assert(t, errors.Is(err, lance.ErrRetryableConflict), "%v", err)
	assert.Equal(t, nserr.CodeOf(err), nserr.ConcurrentModification)

	read = latest(t, ds)
	at = lance.CommitOptions{ReadVersion: read.Number()}
	_, err = AddColumns(ctx, ds, []NewColumn{{"x", "id + 1"}})
	assert.NilError(t, err)
	_, err = ds.Commit(ctx, &lance.UpdateRows{Rows: lance.RowDeletes{0: {0}}, Read: readFragments(read)}, at)
	assert.Assert(t, errors.Is(err, lance.ErrRetryableConflict), "%v", err)

	read = latest(t, ds)
	at = lance.CommitOptions{ReadVersion: read.Number()}
	_, err = Insert(ctx, ds, stream(t, rowsN(0, 2, "o")...), true)
	assert.NilError(t, err)
	_, err = ds.Commit(ctx, &lance.DeleteRows{Rows: lance.RowDeletes{0: {0}}, Read: readFragments(read)}, at)
	assert.Assert(t, errors.Is(err, lance.ErrCommitConflict) && !errors.Is(err, lance.ErrRetryableConflict), "%v", err)
	assert.Equal(t, nserr.CodeOf(err), nserr.ConcurrentModification)
}

// TestDeleteAllKeepsConcurrentAppend: delete 'true' removes the fragments
// it read; rows appended concurrently survive, as in Lance.
func TestDeleteAllKeepsConcurrentAppend(t *testing.T) {
	ctx := context.Background()
	ds, _ := newTable(t, "2.1", rowsN(0, 3, "a"), rowsN(3, 6, "a"))
	read := latest(t, ds)
	_, err := Insert(ctx, ds, stream(t, rowsN(100, 102, "n")...), false)
	assert.NilError(t, err)
	_, err = ds.Commit(ctx, &lance.DeleteRows{DeleteAll: true, Read: readFragments(read), Predicate: "true"},
		lance.CommitOptions{ReadVersion: read.Number()})
	assert.NilError(t, err)
	assert.DeepEqual(t, readAll(t, ds), rowsN(100, 102, "n"))
}
