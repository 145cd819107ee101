//go:build unix

package storage_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestFSSweepsCrashTempFiles: temp files a killed writer left behind are deleted when the bucket
// is next opened, once idle for TempIdleLimit; fresh ones (a live upload of another process),
// lock files and anything not named by this backend's writer are kept. Before, leftovers were
// never swept and piled up with every crash.
func TestFSSweepsCrashTempFiles(t *testing.T) {
	root := t.TempDir()
	newFSAt(t, root)
	tmpDir := filepath.Join(root, ".lancecat-tmp")
	old := time.Now().Add(-2 * time.Hour)
	plant := func(name string, mtime time.Time) {
		p := filepath.Join(tmpDir, name)
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte("partial"), 0o644))
		assert.NilError(t, os.Chtimes(p, mtime, mtime))
	}
	plant("0123456789abcdef01234567.tmp", old)                               // a killed writer's: swept
	plant("89abcdef0123456789abcdef.tmp", old)                               // another: swept
	plant("fedcba9876543210fedcba98.tmp", time.Now())                        // a live upload: kept
	plant("0123456789ABCDEF01234567.tmp", old)                               // not a name we give: kept
	plant("deadbeef.tmp", old)                                               // not a name we give: kept
	plant("notes.txt", old)                                                  // kept
	plant("sub/0123456789abcdef01234567.tmp", old)                           // not directly in the directory: kept
	assert.NilError(t, os.Chtimes(filepath.Join(tmpDir, "locks"), old, old)) // the lock directory: kept

	newFSAt(t, root) // the restart
	var left []string
	assert.NilError(t, filepath.WalkDir(tmpDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Dir(p) != filepath.Join(tmpDir, "locks") {
			rel, _ := filepath.Rel(tmpDir, p)
			left = append(left, rel)
		}
		return err
	}))
	slices.Sort(left)
	assert.Check(t, is.DeepEqual(left, []string{
		"0123456789ABCDEF01234567.tmp", "deadbeef.tmp", "fedcba9876543210fedcba98.tmp", "notes.txt", "sub/0123456789abcdef01234567.tmp",
	}))
	_, err := os.Stat(filepath.Join(tmpDir, "locks"))
	assert.NilError(t, err)
}
