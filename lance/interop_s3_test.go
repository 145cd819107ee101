package lance

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/storage"
)

// The table interop tests again with the datasets on MinIO: the SDK-written
// fixtures are uploaded into a fresh bucket, Go reads and commits through
// the S3 backend, and the SDK opens the same s3:// URIs. Run with
// scripts/with-services.sh (MinIO) and LANCE_TABLE_FIXTURES.

// s3Place is one fresh test bucket on the test MinIO, reachable from Go and
// from the SDK.
type s3Place struct {
	cfg    storage.S3Config
	bucket string
	env    testenv.S3Env
}

func newS3Place(t *testing.T) s3Place {
	t.Helper()
	env := testenv.S3(t)
	cfg, bucket := testenv.S3Bucket(t)
	return s3Place{cfg: cfg, bucket: bucket, env: env}
}

// dataset opens prefix (a dataset root, "a/t.lance") as Go's dataset and
// returns its s3:// URI for the SDK.
func (p s3Place) dataset(t *testing.T, prefix string) (*Dataset, string) {
	t.Helper()
	store, err := storage.NewS3(context.Background(), p.cfg, p.bucket, prefix)
	assert.NilError(t, err)
	uri := "s3://" + p.bucket + "/" + prefix
	return NewDatasetAt(store, uri), uri
}

// upload copies the local dataset directory src under prefix, skipping our
// FS backend's scratch directory (left there when Go opened the fixture).
func (p s3Place) upload(t *testing.T, src, prefix string) {
	t.Helper()
	ctx := context.Background()
	store, err := storage.NewS3(ctx, p.cfg, p.bucket, prefix)
	assert.NilError(t, err)
	var g errgroup.Group
	g.SetLimit(8)
	n := 0
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if strings.HasPrefix(rel, ".lancecat-tmp") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		n++
		g.Go(func() error {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				return err
			}
			_, err = store.Put(ctx, filepath.ToSlash(rel), f, fi.Size())
			return err
		})
		return nil
	})
	assert.NilError(t, err)
	assert.NilError(t, g.Wait())
	assert.Assert(t, n > 0, "nothing to upload under %s", src)
}

// TestSDKTableFixturesS3: Go reads every version, tag, branch, index and
// deletion file of the SDK-written fixtures through the S3 backend.
func TestSDKTableFixturesS3(t *testing.T) {
	sdks := loadTableFixtures(t)
	p := newS3Place(t)
	for _, sdk := range sdks {
		for _, table := range sdk.Tables {
			t.Run(sdk.SDK+"/"+table.Name, func(t *testing.T) {
				prefix := "read/" + sdk.SDK + "/" + table.Dir
				p.upload(t, filepath.Join(sdk.dir, table.Dir), prefix)
				ds, _ := p.dataset(t, prefix)
				checkSDKTable(t, ds, sdk, table)
			})
		}
	}
}

// TestSDKReadsGoCommitsS3 is TestSDKReadsGoCommits on MinIO: Go commits
// through the S3 backend, the SDK opens the s3:// URIs, reads every version
// and appends, and Go reads the result.
func TestSDKReadsGoCommitsS3(t *testing.T) {
	sdks := loadTableFixtures(t)
	p := newS3Place(t)
	for _, sdk := range sdks {
		t.Run(sdk.SDK, func(t *testing.T) {
			goCommitsThenSDK(t, sdk, t.TempDir(), p.env.SDKStorageOptions(), func(t *testing.T, table sdkTableExpect) (*Dataset, string) {
				prefix := "commits/" + sdk.SDK + "/" + table.Dir
				p.upload(t, filepath.Join(sdk.dir, table.Dir), prefix)
				return p.dataset(t, prefix)
			})
		})
	}
}

// TestOpenManyVersionsS3 times opening and listing 1,000 versions on MinIO
// (the manifests of the "many" table, see manyVersionsDir).
func TestOpenManyVersionsS3(t *testing.T) {
	p := newS3Place(t)
	ctx := context.Background()
	p.upload(t, filepath.Join(manyVersionsDir(t), "_versions"), "many.lance/_versions")
	ds, _ := p.dataset(t, "many.lance")

	start := time.Now()
	v, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	openLatest := time.Since(start)
	assert.Equal(t, v.Number(), uint64(1000))
	start = time.Now()
	_, err = ds.OpenVersion(ctx, 500)
	assert.NilError(t, err)
	openOld := time.Since(start)
	start = time.Now()
	page, err := ds.ListVersions(ctx, ListVersionsOptions{Descending: true, Limit: 20})
	assert.NilError(t, err)
	listPage := time.Since(start)
	assert.Equal(t, len(page), 20)
	start = time.Now()
	list, err := ds.ListVersions(ctx, ListVersionsOptions{})
	assert.NilError(t, err)
	listAll := time.Since(start)
	assert.Equal(t, len(list), 1000)
	t.Logf("1,000 versions on MinIO: OpenLatest %v, OpenVersion(500) %v, ListVersions newest 20 %v, ListVersions all %v",
		openLatest, openOld, listPage, listAll)
}
