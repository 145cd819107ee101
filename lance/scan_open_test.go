package lance_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancetest"
	"github.com/lancecat/lancecat/storage"
)

// A data file that fails to open (corrupt, or a read cancelled mid-way)
// is a scan error, not a panic: openFragmentFiles' cleanup used its named
// result, which the error return had just set to nil.
func TestScanDataFileOpenErrorIsAnError(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fs, err := storage.NewFS(dir)
	assert.NilError(t, err)
	ds := lance.NewDataset(fs)
	mem := testenv.CheckedAllocator(t)
	_, err = ds.Write(ctx, lancetest.Stream(t, mem, 0, 100, 100), lance.WriteOptions{Mem: mem})
	assert.NilError(t, err)
	files, err := filepath.Glob(filepath.Join(dir, "data", "*.lance"))
	assert.NilError(t, err)
	assert.Equal(t, len(files), 1)
	info, err := os.Stat(files[0])
	assert.NilError(t, err)
	garbage := make([]byte, info.Size())
	for i := range garbage {
		garbage[i] = 0xAB
	}
	assert.NilError(t, os.WriteFile(files[0], garbage, 0o644))
	s, err := ds.Scan(ctx, lance.ScanOptions{Mem: mem})
	assert.NilError(t, err)
	defer s.Release()
	assert.Assert(t, !s.Next())
	assert.ErrorContains(t, s.Err(), "open")
}
