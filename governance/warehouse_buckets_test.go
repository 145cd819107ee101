package governance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// bucketEnv is a governance service keeping warehouses under base, whose catalog root is
// base/catalog (so a warehouse named "catalog" would overlap it), with its log captured.
type bucketEnv struct {
	svc   *Service
	store *registry.Store
	base  string
	root  string
	logs  *bytes.Buffer
	mu    sync.Mutex
	now   time.Time
}

func newBucketEnv(t *testing.T) *bucketEnv {
	t.Helper()
	dir := t.TempDir()
	e := &bucketEnv{store: registry.NewStore(storage.NewMemory()), base: filepath.Join(dir, "wh"), logs: &bytes.Buffer{},
		now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	e.root = filepath.Join(e.base, "catalog")
	svc, err := New(Options{
		Store: e.store, Buckets: LocalBuckets{Base: e.base, Reserve: []string{e.root}},
		Logger: slog.New(slog.NewJSONHandler(syncWriter{e}, nil)),
		Now: func() time.Time {
			e.mu.Lock()
			defer e.mu.Unlock()
			return e.now
		},
	})
	assert.NilError(t, err)
	e.svc = svc
	for _, p := range []string{"p1", "p2"} {
		_, err := svc.CreateProject(context.Background(), "", p, false)
		assert.NilError(t, err)
	}
	return e
}

type syncWriter struct{ e *bucketEnv }

func (w syncWriter) Write(p []byte) (int, error) {
	w.e.mu.Lock()
	defer w.e.mu.Unlock()
	return w.e.logs.Write(p)
}

func (e *bucketEnv) create(id, project, bucket string) (registry.Warehouse, error) {
	return e.svc.CreateWarehouse(context.Background(), "", CreateWarehouse{ID: id, Project: project, Bucket: bucket})
}

func (e *bucketEnv) purge(id string) (DeletedWarehouse, error) {
	return e.svc.DeleteWarehouse(context.Background(), "", id, DeleteWarehouse{PurgeBucket: true}, nil)
}

func writeFile(t *testing.T, path string) {
	t.Helper()
	assert.NilError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	assert.NilError(t, os.WriteFile(path, []byte("precious"), 0o644))
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// On a local root a requested bucket is a name under the warehouse root, never a path: absolute
// paths, "..", separators and anything else that could leave the root are refused (issue 10
// item 5: "/some/existing/dir" and "<root>/../victim" were accepted).
func TestLocalBucketIsAName(t *testing.T) {
	l := LocalBuckets{Base: "/srv/wh"}
	for _, tc := range []struct {
		bucket string
		want   string // "" = refused
	}{
		{"", "/srv/wh/w1"},
		{"sales", "/srv/wh/sales"},
		{"a.b-c_d", "/srv/wh/a.b-c_d"},
		{"/some/existing/dir", ""},
		{"/srv/wh/x", ""},
		{"../victim", ""},
		{"..", ""},
		{".", ""},
		{"a/b", ""},
		{`a\b`, ""},
		{".hidden", ""},
		{"Upper", ""},
		{"x\x00", ""},
		{strings.Repeat("a", 64), ""},
	} {
		t.Run(fmt.Sprintf("%q", tc.bucket), func(t *testing.T) {
			name, root, err := l.Resolve("w1", tc.bucket)
			if tc.want == "" {
				assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput, "%v", err)
				assert.ErrorContains(t, err, "must be a name")
				if !strings.Contains(tc.bucket, l.Base) {
					assert.Assert(t, !strings.Contains(err.Error(), l.Base), "the refusal names the server's path: %v", err)
				}
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, name, tc.want)
			assert.Equal(t, root, tc.want)
		})
	}
	_, _, err := LocalBuckets{}.Resolve("w1", "")
	assert.Equal(t, nserr.CodeOf(err), nserr.Unsupported)
}

// A warehouse never adopts what it did not make, and a bucket has one claim: a directory
// already holding files (or a file, or a link) is refused, a reserved or claimed name is
// refused (same project or not), and no refusal names the holder or a server path (issue 11
// item 9). Nothing refused is touched.
func TestWarehouseBucketClaims(t *testing.T) {
	e := newBucketEnv(t)
	victim := filepath.Join(e.base, "victim", "data.txt")
	writeFile(t, victim)
	assert.NilError(t, os.Symlink(t.TempDir(), filepath.Join(e.base, "link")))
	writeFile(t, filepath.Join(e.base, "afile"))
	assert.NilError(t, os.MkdirAll(filepath.Join(e.base, "empty"), 0o755))

	_, err := e.create("w1", "p1", "")
	assert.NilError(t, err)
	_, err = e.create("w2", "p1", "empty")
	assert.NilError(t, err, "an empty directory (a failed create's leftover) is adopted")

	for _, tc := range []struct {
		name, id, project, bucket string
		code                      nserr.Code
		says                      string
	}{
		{"pre-existing directory with files", "x1", "p2", "victim", nserr.NamespaceAlreadyExists, `bucket "victim" is not available`},
		{"symbolic link", "x2", "p2", "link", nserr.NamespaceAlreadyExists, `bucket "link" is not available`},
		{"a file", "x3", "p2", "afile", nserr.NamespaceAlreadyExists, `bucket "afile" is not available`},
		{"another project's bucket", "x4", "p2", "w1", nserr.NamespaceAlreadyExists, `bucket "w1" is not available`},
		{"a sibling's bucket", "x5", "p1", "w1", nserr.NamespaceAlreadyExists, `bucket "w1" is not available`},
		{"the catalog root", "x6", "p2", "catalog", nserr.InvalidInput, `bucket "catalog" is reserved`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.create(tc.id, tc.project, tc.bucket)
			assert.Equal(t, nserr.CodeOf(err), tc.code, "%v", err)
			assert.ErrorContains(t, err, tc.says)
			for _, leak := range []string{e.base, "p1", "another project", "claimed by", "overlaps"} {
				assert.Assert(t, !strings.Contains(err.Error(), leak), "the refusal leaks %q: %v", leak, err)
			}
		})
	}
	assert.Assert(t, exists(victim), "a refused create leaves what was there")
	assert.Assert(t, strings.Contains(e.logs.String(), "overlaps "+e.root), "the log keeps the full reason: %s", e.logs)
}

// Of any number of racing creates of one bucket, exactly one gets it (the claim record is
// put-if-absent), whatever their ids and projects.
func TestWarehouseBucketClaimRace(t *testing.T) {
	e := newBucketEnv(t)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = e.create(fmt.Sprintf("w%d", i), []string{"p1", "p2"}[i%2], "contested")
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		assert.Equal(t, nserr.CodeOf(err), nserr.NamespaceAlreadyExists, "%v", err)
	}
	assert.Equal(t, won, 1)
	listed, err := registry.List[registry.Warehouse](context.Background(), e.store, registry.WarehousesPrefix)
	assert.NilError(t, err)
	assert.Equal(t, len(listed.Records), 1, "one warehouse record per bucket")
}

// A claim left by a create that crashed before recording its warehouse blocks the bucket while
// fresh and is taken over once stale; a live warehouse's claim never is.
func TestStaleBucketClaim(t *testing.T) {
	ctx := context.Background()
	e := newBucketEnv(t)
	ghost := bucketClaim{Bucket: filepath.Join(e.base, "b"), Warehouse: "ghost", Token: "t", CreatedAt: e.now}
	assert.NilError(t, registry.Create(ctx, e.store, bucketClaimKey(ghost.Bucket), ghost))
	_, err := e.create("w1", "p1", "b")
	assert.Equal(t, nserr.CodeOf(err), nserr.NamespaceAlreadyExists, "a fresh claim holds: %v", err)
	e.now = e.now.Add(claimStaleAfter)
	_, err = e.create("w1", "p1", "b")
	assert.NilError(t, err, "a stale claim of a warehouse never recorded is taken over")
	e.now = e.now.Add(10 * claimStaleAfter)
	_, err = e.create("w2", "p2", "b")
	assert.Equal(t, nserr.CodeOf(err), nserr.NamespaceAlreadyExists, "a live warehouse's claim is never stale: %v", err)
}

// A purge deletes only a bucket the catalog claimed for that warehouse: records from before
// claims (a directory anywhere on the host, or one under the warehouse root the catalog did not
// make) are never purged, and a purge refused for a shared bucket does not describe other
// projects' claims.
func TestWarehousePurgeOnlyWhatItOwns(t *testing.T) {
	ctx := context.Background()
	e := newBucketEnv(t)
	legacy := func(id, project, dir string) {
		t.Helper()
		rec := registry.Warehouse{ID: id, Project: project, Bucket: dir, RootURI: dir, Status: registry.StatusActive, CreatedAt: e.now}
		assert.NilError(t, registry.Create(ctx, e.store, registry.WarehouseKey(id), rec))
	}
	outside := filepath.Join(t.TempDir(), "host-dir")
	writeFile(t, filepath.Join(outside, "f"))
	legacy("old1", "p1", outside)
	inside := filepath.Join(e.base, "unclaimed")
	writeFile(t, filepath.Join(inside, "f"))
	legacy("old2", "p1", inside)
	shared := filepath.Join(e.base, "shared")
	writeFile(t, filepath.Join(shared, "f"))
	legacy("old3", "p1", shared)
	legacy("old4", "p2", shared)

	for _, tc := range []struct {
		id, dir, says string
	}{
		{"old1", outside, "was not made by this catalog"},
		{"old2", inside, "was not made by this catalog"},
		{"old3", shared, "is shared with another warehouse"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			_, err := e.purge(tc.id)
			assert.Equal(t, nserr.CodeOf(err), nserr.NamespaceNotEmpty, "%v", err)
			assert.ErrorContains(t, err, tc.says)
			for _, leak := range []string{e.base, outside, "old4", "p2"} {
				assert.Assert(t, !strings.Contains(err.Error(), leak), "the refusal leaks %q: %v", leak, err)
			}
			assert.Assert(t, exists(filepath.Join(tc.dir, "f")), "a refused purge deletes nothing")
		})
	}

	// The bucket the catalog made is purged, and its claim released with it.
	_, err := e.create("w1", "p1", "")
	assert.NilError(t, err)
	writeFile(t, filepath.Join(e.base, "w1", "ns", "t.lance", "data"))
	d, err := e.purge("w1")
	assert.NilError(t, err)
	assert.Equal(t, d.ObjectsPurged, int64(1))
	assert.Assert(t, !exists(filepath.Join(e.base, "w1")))
	_, _, err = registry.Read[bucketClaim](ctx, e.store, bucketClaimKey(filepath.Join(e.base, "w1")))
	assert.Assert(t, errors.Is(err, registry.ErrNotFound), "the claim goes with the warehouse: %v", err)

	// LocalBuckets itself never purges outside its root, whatever it is asked.
	_, err = LocalBuckets{Base: e.base}.Purge(ctx, outside)
	assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput)
	assert.Assert(t, exists(filepath.Join(outside, "f")))
}

// A warehouse deleted without purge keeps its bytes, and a new warehouse of that name does not
// inherit them (it is refused: the directory is not empty).
func TestWarehouseBucketNotInherited(t *testing.T) {
	e := newBucketEnv(t)
	_, err := e.create("w1", "p1", "")
	assert.NilError(t, err)
	data := filepath.Join(e.base, "w1", "t.lance", "data")
	writeFile(t, data)
	_, err = e.svc.DeleteWarehouse(context.Background(), "", "w1", DeleteWarehouse{}, nil)
	assert.NilError(t, err)
	_, err = e.create("w9", "p2", "w1")
	assert.Equal(t, nserr.CodeOf(err), nserr.NamespaceAlreadyExists, "%v", err)
	assert.Assert(t, exists(data))
}

// A failed create removes the bucket it made (issue 11 item 12), and only that: an empty
// directory that was there before stays.
func TestFailedWarehouseCreateReleasesItsBucket(t *testing.T) {
	for _, preexisting := range []bool{false, true} {
		t.Run(fmt.Sprintf("preexisting=%v", preexisting), func(t *testing.T) {
			e := newRaceEnv(t)
			e.createProject(t, "p1")
			dir := filepath.Join(e.buckets.Base, "w1")
			if preexisting {
				assert.NilError(t, os.MkdirAll(dir, 0o755))
			}
			// The whole project delete runs just before the create makes its bucket.
			var delErr error
			e.buckets.onEnsure = func() { _, delErr = e.deleteProject("p1") }
			_, err := e.createWarehouse("w1", "p1")
			assert.NilError(t, delErr)
			assert.Equal(t, nserr.CodeOf(err), nserr.NamespaceNotFound, "%v", err)
			assert.Equal(t, exists(dir), preexisting, "only the bucket the create made is removed")
			_, _, err = registry.Read[bucketClaim](context.Background(), e.store, bucketClaimKey(dir))
			assert.Assert(t, errors.Is(err, registry.ErrNotFound), "the claim is released: %v", err)
		})
	}
}

// A bucket failure is logged with its cause: the 503 detail the server logs is the error's
// message, so the cause must be in it (issue 11 item 12: the log said only "creating the
// warehouse bucket failed").
func TestWarehouseBucketErrorsCarryTheCause(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	b := S3Buckets{Config: storage.S3Config{Endpoint: "127.0.0.1:1", Region: "us-east-1", AccessKey: "k", SecretKey: "s", PathStyle: true, Insecure: true}}
	_, err := b.Ensure(ctx, "lancecat-nowhere")
	assert.Equal(t, nserr.CodeOf(err), nserr.ServiceUnavailable)
	assert.ErrorContains(t, err, "creating the warehouse bucket failed: storage: checking bucket lancecat-nowhere")
}
