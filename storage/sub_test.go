package storage_test

import (
	"bytes"
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/storage"
	"github.com/lancecat/lancecat/storage/storagetest"
)

// TestSubConformance: a prefixed view (a table's or a branch's directory opened as a dataset) is
// a Bucket like any other; the nested view is one view with the prefixes joined.
func TestSubConformance(t *testing.T) {
	t.Run("sub", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Bucket { return storage.Sub(storage.NewMemory(), "tables/t1") })
	})
	t.Run("nested", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Bucket {
			return storage.Sub(storage.Sub(storage.NewMemory(), "tables/t1/"), "tree/feature/")
		})
	})
}

// TestSubStaysUnderItsPrefix: what a view writes lands under its prefix in the bucket, and the
// view sees nothing of its siblings.
func TestSubStaysUnderItsPrefix(t *testing.T) {
	ctx := context.Background()
	mem := storage.NewMemory()
	a, b := storage.Sub(mem, "a/"), storage.Sub(mem, "b/")
	_, err := a.Put(ctx, "k", bytes.NewReader([]byte("x")), 1)
	assert.NilError(t, err)
	info, err := mem.Stat(ctx, "a/k")
	assert.NilError(t, err)
	assert.Equal(t, info.Key, "a/k")
	_, err = b.Stat(ctx, "k")
	assert.ErrorIs(t, err, storage.ErrNotFound)
	page, err := a.List(ctx, "", storage.ListOptions{})
	assert.NilError(t, err)
	assert.Equal(t, len(page.Objects), 1)
	assert.Equal(t, page.Objects[0].Key, "k")
	got, err := a.PutIfMatch(ctx, "k", bytes.NewReader([]byte("y")), 1, page.Objects[0].ETag)
	assert.NilError(t, err)
	assert.Equal(t, got.Key, "k")
}
