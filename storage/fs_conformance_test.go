//go:build unix

package storage_test

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/storage"
	"github.com/lancecat/lancecat/storage/storagetest"
)

func TestFSConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Bucket { return newFS(t) })
}

func newFS(t *testing.T) *storage.FS {
	t.Helper()
	b, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	return b
}
