//go:build unix

package storage_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/storage"
)

// The cross-process tests re-exec the test binary as worker processes.
// These variables carry the worker's job; see runWorker.
const (
	envWorker = "LANCECAT_STORAGE_WORKER"
	envRoot   = "LANCECAT_STORAGE_WORKER_ROOT"
	envID     = "LANCECAT_STORAGE_WORKER_ID"
)

func TestMain(m *testing.M) {
	if job := os.Getenv(envWorker); job != "" {
		os.Exit(runWorker(job))
	}
	os.Exit(m.Run())
}

// runWorker is the body of a worker process. It waits for the parent's
// start signal (a "go" file) so all workers race at once, then prints one
// line per operation for the parent to check.
func runWorker(job string) int {
	root, id := os.Getenv(envRoot), os.Getenv(envID)
	b, err := storage.NewFS(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for {
		if _, err := os.Stat(filepath.Join(root, "go")); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	ctx := context.Background()
	switch job {
	case "put-if-absent":
		for round := range fsRounds {
			val := fmt.Sprintf("worker %s round %d", id, round)
			_, err := b.PutIfAbsent(ctx, fmt.Sprintf("race/%d", round), strings.NewReader(val), int64(len(val)))
			switch {
			case err == nil:
				fmt.Printf("won %d %s\n", round, val)
			case errors.Is(err, storage.ErrExists):
				fmt.Printf("lost %d\n", round)
			default:
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	case "increment":
		for range fsIncrements {
			for {
				data, info, err := storage.ReadAll(ctx, b, "counter")
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					return 1
				}
				n, _ := strconv.Atoi(string(data))
				next := strconv.Itoa(n + 1)
				_, err = b.PutIfMatch(ctx, "counter", strings.NewReader(next), int64(len(next)), info.ETag)
				if err == nil {
					break
				}
				if !errors.Is(err, storage.ErrPreconditionFailed) {
					fmt.Fprintln(os.Stderr, err)
					return 1
				}
			}
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown job", job)
		return 2
	}
	return 0
}

const (
	fsWorkers    = 4
	fsRounds     = 20
	fsIncrements = 25
)

// startWorkers runs n copies of the test binary on job against root and
// returns their stdout once all have exited successfully.
func startWorkers(t *testing.T, job, root string, n int) []string {
	t.Helper()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := range n {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envWorker+"="+job, envRoot+"="+root, envID+"="+strconv.Itoa(i))
		out := new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = out, out
		assert.NilError(t, cmd.Start())
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	assert.NilError(t, os.WriteFile(filepath.Join(root, "go"), nil, 0o644))
	var res []string
	for i, cmd := range cmds {
		assert.NilError(t, cmd.Wait(), "worker %d: %s", i, outs[i])
		res = append(res, outs[i].String())
	}
	return res
}

// TestFSPutIfAbsentAcrossProcesses: processes (not just goroutines) racing
// PutIfAbsent on the same keys never both win.
func TestFSPutIfAbsentAcrossProcesses(t *testing.T) {
	root := t.TempDir()
	outs := startWorkers(t, "put-if-absent", root, fsWorkers)

	winners := map[int][]string{}
	for _, out := range outs {
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			var round int
			if val, ok := strings.CutPrefix(sc.Text(), "won "); ok {
				r, v, _ := strings.Cut(val, " ")
				round, _ = strconv.Atoi(r)
				winners[round] = append(winners[round], v)
			}
		}
	}
	b := newFSAt(t, root)
	for round := range fsRounds {
		assert.Check(t, is.Len(winners[round], 1), "round %d", round)
		if len(winners[round]) == 1 {
			got, _, err := storage.ReadAll(t.Context(), b, fmt.Sprintf("race/%d", round))
			assert.NilError(t, err)
			assert.Check(t, is.Equal(string(got), winners[round][0]), "round %d", round)
		}
	}
}

// TestFSPutIfMatchAcrossProcesses: read-modify-write from several processes
// loses no increment, which needs the flock around compare-and-rename.
func TestFSPutIfMatchAcrossProcesses(t *testing.T) {
	root := t.TempDir()
	b := newFSAt(t, root)
	_, err := b.Put(t.Context(), "counter", strings.NewReader("0"), 1)
	assert.NilError(t, err)
	startWorkers(t, "increment", root, fsWorkers)
	got, _, err := storage.ReadAll(t.Context(), b, "counter")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(string(got), strconv.Itoa(fsWorkers*fsIncrements)))
}

// TestFSCrashLeftovers: a writer that died mid-write leaves a temp file
// (and maybe a stray directory); neither is ever visible as an object.
func TestFSCrashLeftovers(t *testing.T) {
	root := t.TempDir()
	b := newFSAt(t, root)
	ctx := t.Context()
	_, err := b.Put(ctx, "data/a", strings.NewReader("a"), 1)
	assert.NilError(t, err)

	// What a crash between write and rename leaves behind.
	tmpDir := filepath.Join(root, ".lancecat-tmp")
	assert.NilError(t, os.WriteFile(filepath.Join(tmpDir, "deadbeef.tmp"), []byte("partial"), 0o644))
	assert.NilError(t, os.MkdirAll(filepath.Join(tmpDir, "data"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(tmpDir, "data", "b"), []byte("partial"), 0o644))
	// An empty directory left by a crash between mkdir and rename.
	assert.NilError(t, os.MkdirAll(filepath.Join(root, "data", "empty"), 0o755))

	objs, err := storage.ListAll(ctx, b, "")
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(keys(objs), []string{"data/a"}))
	page, err := b.List(ctx, "", storage.ListOptions{Delimiter: true})
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(page.CommonPrefixes, []string{"data/"}))
	page, err = b.List(ctx, "data/", storage.ListOptions{Delimiter: true})
	assert.NilError(t, err)
	assert.Check(t, is.Len(page.CommonPrefixes, 0), "an empty directory is not a common prefix")

	_, err = b.Stat(ctx, "data/b")
	assert.Check(t, is.ErrorIs(err, storage.ErrNotFound))
	_, _, err = b.Get(ctx, "deadbeef.tmp")
	assert.Check(t, is.ErrorIs(err, storage.ErrNotFound))
	_, err = b.Stat(ctx, ".lancecat-tmp/deadbeef.tmp")
	assert.Check(t, is.ErrorIs(err, storage.ErrInvalidKey))

	// Writes still work, and clean up after themselves.
	_, err = b.PutIfAbsent(ctx, "data/b", strings.NewReader("b"), 1)
	assert.NilError(t, err)
	left, err := os.ReadDir(tmpDir)
	assert.NilError(t, err)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	assert.Check(t, is.DeepEqual(names, []string{"data", "deadbeef.tmp", "locks"}), "only the planted leftovers remain")
}

// TestFSSymlinkEscape: a symlink planted under the root cannot be used to
// read or write outside it.
func TestFSSymlinkEscape(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644))
	assert.NilError(t, os.Symlink(outside, filepath.Join(root, "link")))
	b := newFSAt(t, root)
	ctx := t.Context()

	_, _, err := b.Get(ctx, "link/secret")
	assert.Check(t, err != nil && !errors.Is(err, storage.ErrInvalidKey), "got %v", err)
	_, err = b.Put(ctx, "link/planted", strings.NewReader("x"), 1)
	assert.Check(t, err != nil, "write through an escaping symlink must fail")
	_, err = os.Stat(filepath.Join(outside, "planted"))
	assert.Check(t, errors.Is(err, os.ErrNotExist))
	objs, err := storage.ListAll(ctx, b, "")
	assert.NilError(t, err)
	assert.Check(t, is.Len(objs, 0), "symlinks are not walked")
}

// TestFSETagTracksOutOfBandWrites: the cached ETag is invalidated when a
// file is replaced behind the store's back, and foreign files get ETags.
func TestFSETagTracksOutOfBandWrites(t *testing.T) {
	root := t.TempDir()
	b := newFSAt(t, root)
	ctx := t.Context()
	info, err := b.Put(ctx, "k", strings.NewReader("one"), 3)
	assert.NilError(t, err)

	// Rewrite in place with same size, then a different mtime.
	p := filepath.Join(root, "k")
	assert.NilError(t, os.WriteFile(p, []byte("two"), 0o644))
	assert.NilError(t, os.Chtimes(p, time.Now(), time.Now().Add(time.Hour)))
	st, err := b.Stat(ctx, "k")
	assert.NilError(t, err)
	assert.Check(t, st.ETag != info.ETag, "stale ETag served after an out-of-band write")
	_, err = b.PutIfMatch(ctx, "k", strings.NewReader("x"), 1, info.ETag)
	assert.Check(t, is.ErrorIs(err, storage.ErrPreconditionFailed))

	// A file copied in by hand is an object with a content ETag.
	assert.NilError(t, os.WriteFile(filepath.Join(root, "foreign"), []byte("one"), 0o644))
	st, err = b.Stat(ctx, "foreign")
	assert.NilError(t, err)
	assert.Check(t, is.Equal(st.ETag, info.ETag), "same content, same ETag")
}

// TestFSKeyDirectoryConflict documents the one place the filesystem differs
// from S3: a key cannot also be a "directory" of other keys.
func TestFSKeyDirectoryConflict(t *testing.T) {
	b := newFS(t)
	ctx := t.Context()
	_, err := b.Put(ctx, "a", strings.NewReader("x"), 1)
	assert.NilError(t, err)
	_, err = b.Put(ctx, "a/b", strings.NewReader("y"), 1)
	assert.Check(t, err != nil, "file a blocks key a/b")
	_, err = b.Stat(ctx, "a/b")
	assert.Check(t, is.ErrorIs(err, storage.ErrNotFound))

	_, err = b.Put(ctx, "d/e", strings.NewReader("x"), 1)
	assert.NilError(t, err)
	_, err = b.PutIfAbsent(ctx, "d", strings.NewReader("y"), 1)
	assert.Check(t, err != nil && !errors.Is(err, storage.ErrExists), "got %v", err)
}

func newFSAt(t *testing.T, root string) *storage.FS {
	t.Helper()
	b, err := storage.NewFS(root)
	assert.NilError(t, err)
	return b
}

func keys(objs []storage.ObjectInfo) []string {
	var ks []string
	for _, o := range objs {
		ks = append(ks, o.Key)
	}
	return ks
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestFSPutDeletePrune: Delete prunes directories that became empty, which
// races with a Put that just created (or found) them; Put must retry
// rather than fail or lose the write.
func TestFSPutDeletePrune(t *testing.T) {
	b := newFS(t)
	ctx := t.Context()
	const workers, iters = 8, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range iters {
				// Shared, deep, and emptied after every iteration.
				key := fmt.Sprintf("prune/d%d/e/f/w%d", i%2, w)
				if _, err := b.Put(ctx, key, strings.NewReader(key), int64(len(key))); err != nil {
					t.Errorf("put %s: %v", key, err)
					return
				}
				got, _, err := storage.ReadAll(ctx, b, key)
				if err != nil || string(got) != key {
					t.Errorf("read %s: %q %v", key, got, err)
					return
				}
				if err := b.Delete(ctx, key); err != nil {
					t.Errorf("delete %s: %v", key, err)
					return
				}
			}
		})
	}
	wg.Wait()
	objs, err := storage.ListAll(ctx, b, "")
	assert.NilError(t, err)
	assert.Check(t, is.Len(objs, 0))
	_, err = os.Stat(filepath.Join(b.Root(), "prune"))
	assert.Check(t, errors.Is(err, os.ErrNotExist), "empty directories are pruned: %v", err)
}

// TestFSStatOddPaths: Stat (which on Linux takes a one-openat2 path and
// falls back to os.Root) answers like Get for everything a key can meet on
// disk: an object, a foreign file, a directory, a path through a file, a
// FIFO (must not hang), symlinks inside and escaping the root.
func TestFSStatOddPaths(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	b := newFSAt(t, root)
	ctx := t.Context()
	_, err := b.Put(ctx, "dir/obj", strings.NewReader("object"), 6)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(root, "dir", "foreign"), []byte("foreign"), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644))
	assert.NilError(t, os.Symlink(outside, filepath.Join(root, "escape")))
	assert.NilError(t, os.Symlink("dir", filepath.Join(root, "inside")))
	assert.NilError(t, syscall.Mkfifo(filepath.Join(root, "dir", "fifo"), 0o644))

	for _, tc := range []struct {
		key      string
		notFound bool // ErrNotFound, else some other error unless found
		found    bool
	}{
		{key: "dir/obj", found: true},
		{key: "dir/foreign", found: true},
		{key: "dir/missing", notFound: true},
		{key: "dir", notFound: true},
		{key: "dir/obj/below", notFound: true},
		{key: "dir/fifo", notFound: true},
		{key: "inside/obj", found: true},
		{key: "escape/secret"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			info, err := b.Stat(ctx, tc.key)
			switch {
			case tc.found:
				assert.NilError(t, err)
				rc, got, gerr := b.Get(ctx, tc.key)
				assert.NilError(t, gerr)
				rc.Close()
				assert.Check(t, is.Equal(info.ETag, got.ETag))
				assert.Check(t, is.Equal(info.Size, got.Size))
				assert.Check(t, info.ModTime.Equal(got.ModTime))
				// Twice: the second answer comes from the cached ETag.
				again, err := b.Stat(ctx, tc.key)
				assert.NilError(t, err)
				assert.Check(t, is.Equal(again.ETag, info.ETag))
			case tc.notFound:
				assert.Check(t, is.ErrorIs(err, storage.ErrNotFound))
			default:
				assert.Check(t, err != nil, "a key through an escaping symlink must not be found")
			}
		})
	}
}
