package lance

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/storage"
)

// manyVersionsDir is a local dataset with 1,000 versions: the SDK-written
// "many" table of LANCE_FIXTURE_DIR when that is set, else one Go writes
// into tb's temp dir with testManifestFile (small manifests).
func manyVersionsDir(tb testing.TB) string {
	tb.Helper()
	if dir := os.Getenv(fixtureEnv); dir != "" {
		return filepath.Join(dir, "many.lance")
	}
	dir := tb.TempDir()
	store, err := storage.NewFS(dir)
	assert.NilError(tb, err)
	defer store.Close()
	ds := NewDataset(store)
	for v := uint64(1); v <= 1000; v++ {
		_, err := ds.PutManifest(context.Background(), NamingV2, testManifestFile(v, fragment(0, 10*v, 0)))
		assert.NilError(tb, err)
	}
	return dir
}

func openMany(b *testing.B) *Dataset {
	store, err := storage.NewFS(manyVersionsDir(b))
	assert.NilError(b, err)
	b.Cleanup(func() { store.Close() })
	return NewDataset(store)
}

// BenchmarkOpenLatest1000 opens the newest of 1,000 versions on local disk.
func BenchmarkOpenLatest1000(b *testing.B) {
	ds := openMany(b)
	ctx := context.Background()
	for b.Loop() {
		v, err := ds.OpenLatest(ctx)
		assert.NilError(b, err)
		assert.Equal(b, v.Number(), uint64(1000))
	}
}

// BenchmarkListVersions1000 lists 1,000 versions with their timestamps.
func BenchmarkListVersions1000(b *testing.B) {
	ds := openMany(b)
	ctx := context.Background()
	for b.Loop() {
		l, err := ds.ListVersions(ctx, ListVersionsOptions{})
		assert.NilError(b, err)
		assert.Equal(b, len(l), 1000)
	}
}

// BenchmarkListVersionsPage lists the newest 20 of 1,000 versions.
func BenchmarkListVersionsPage(b *testing.B) {
	ds := openMany(b)
	ctx := context.Background()
	for b.Loop() {
		l, err := ds.ListVersions(ctx, ListVersionsOptions{Descending: true, Limit: 20})
		assert.NilError(b, err)
		assert.Equal(b, len(l), 20)
	}
}
