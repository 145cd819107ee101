package storage

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"

	"gotest.tools/v3/assert"
)

type localOpener interface {
	OpenLocal(string) (*os.File, error)
}

// A view of a local bucket opens its files through the root (one open for many range reads of
// a Lance data file); keys leaving the view are refused, and a view of a non-local bucket says so.
func TestOpenLocalThroughSub(t *testing.T) {
	ctx := context.Background()
	fs, err := NewFS(t.TempDir())
	assert.NilError(t, err)
	_, err = fs.Put(ctx, "tables/t/data/a.lance", bytes.NewReader([]byte("hello")), 5)
	assert.NilError(t, err)
	v, ok := Sub(Sub(fs, "tables"), "t").(localOpener)
	assert.Assert(t, ok)
	f, err := v.OpenLocal("data/a.lance")
	assert.NilError(t, err)
	b, err := io.ReadAll(f)
	assert.NilError(t, err)
	assert.NilError(t, f.Close())
	assert.Equal(t, string(b), "hello")
	_, err = v.OpenLocal("../t/data/a.lance")
	assert.Assert(t, err != nil)
	_, err = Sub(struct{ Bucket }{fs}, "tables").(localOpener).OpenLocal("t/data/a.lance")
	assert.ErrorIs(t, err, ErrNotLocal)
}
