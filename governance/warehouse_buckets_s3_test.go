package governance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// s3Names is a MinIO client and a source of fresh bucket names, each removed (with its objects)
// when the test ends if it still exists.
func s3Names(t *testing.T, cfg storage.S3Config) (*minio.Client, func() string) {
	t.Helper()
	mc, err := minio.New(cfg.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""), Region: cfg.Region})
	assert.NilError(t, err)
	return mc, func() string {
		var b [6]byte
		_, _ = rand.Read(b[:])
		name := "lancecat-wb-" + hex.EncodeToString(b[:])
		t.Cleanup(func() {
			ctx := context.Background()
			for o := range mc.ListObjects(ctx, name, minio.ListObjectsOptions{Recursive: true}) {
				_ = mc.RemoveObject(ctx, name, o.Key, minio.RemoveObjectOptions{})
			}
			_ = mc.RemoveBucket(ctx, name)
		})
		return name
	}
}

func bucketExists(t *testing.T, mc *minio.Client, name string) bool {
	t.Helper()
	ok, err := mc.BucketExists(context.Background(), name)
	assert.NilError(t, err)
	return ok
}

// On S3 a warehouse gets a bucket the catalog makes, or an existing one only while it is empty: a
// bucket holding objects is refused and left alone (issue 10 item 5, the S3 half), and Release
// removes only an empty bucket.
func TestS3WarehouseBuckets(t *testing.T) {
	cfg, existing := testenv.S3Bucket(t)
	ctx := context.Background()
	mc, fresh := s3Names(t, cfg)
	b := S3Buckets{Config: cfg}

	made, err := b.Ensure(ctx, existing)
	assert.NilError(t, err, "an existing empty bucket is adopted")
	assert.Assert(t, !made)
	_, err = mc.PutObject(ctx, existing, "someone/else.txt", strings.NewReader("x"), 1, minio.PutObjectOptions{})
	assert.NilError(t, err)
	_, err = b.Ensure(ctx, existing)
	assert.Equal(t, nserr.CodeOf(err), nserr.NamespaceAlreadyExists, "a bucket holding objects is refused: %v", err)
	assert.ErrorContains(t, err, "is not available")
	assert.Assert(t, errors.Is(b.Release(ctx, existing), storage.ErrExists), "a non-empty bucket is left as it is")
	assert.Assert(t, bucketExists(t, mc, existing))

	name := fresh()
	made, err = b.Ensure(ctx, name)
	assert.NilError(t, err)
	assert.Assert(t, made)
	assert.NilError(t, b.Release(ctx, name))
	assert.Assert(t, !bucketExists(t, mc, name), "an empty bucket is released")
	assert.NilError(t, b.Release(ctx, name), "releasing a gone bucket is fine")
}

// The whole create and delete on S3: a bucket holding someone's objects is never claimed (so
// never purged), a create that fails after making its bucket removes it, and the owner's purge
// removes what its warehouse wrote.
func TestS3WarehouseLifecycle(t *testing.T) {
	cfg, foreign := testenv.S3Bucket(t)
	ctx := context.Background()
	mc, fresh := s3Names(t, cfg)
	_, err := mc.PutObject(ctx, foreign, "precious.txt", strings.NewReader("x"), 1, minio.PutObjectOptions{})
	assert.NilError(t, err)

	e := newRaceEnv(t)
	e.buckets = nil
	svc, err := New(Options{Store: e.store, Buckets: S3Buckets{Config: cfg}})
	assert.NilError(t, err)
	e.svc = svc
	e.createProject(t, "p1")

	_, err = svc.CreateWarehouse(ctx, "", CreateWarehouse{ID: "w0", Project: "p1", Bucket: foreign})
	assert.Equal(t, nserr.CodeOf(err), nserr.NamespaceAlreadyExists, "%v", err)
	_, err = svc.CreateWarehouse(ctx, "", CreateWarehouse{ID: "w0", Project: "p1", Bucket: foreign})
	assert.Equal(t, nserr.CodeOf(err), nserr.NamespaceAlreadyExists, "its claim was released, the refusal stays: %v", err)

	// A create whose project goes away under it removes the bucket it made.
	gone := fresh()
	setHook(t, &testHookWarehouseRecordWritten, func(string) {
		_, err := registry.Mutate(ctx, e.store, registry.ProjectKey("p1"), func(p *registry.Project) error {
			since := e.now
			p.Deleting, p.DeletingSince = true, &since
			return nil
		})
		assert.NilError(t, err)
	})
	_, err = svc.CreateWarehouse(ctx, "", CreateWarehouse{ID: "w1", Project: "p1", Bucket: gone})
	assert.Equal(t, nserr.CodeOf(err), nserr.ConcurrentModification, "%v", err)
	assert.Assert(t, !bucketExists(t, mc, gone), "a failed create leaves no bucket behind")
	testHookWarehouseRecordWritten = nil
	_, err = registry.Mutate(ctx, e.store, registry.ProjectKey("p1"), func(p *registry.Project) error {
		p.Deleting, p.DeletingSince = false, nil
		return nil
	})
	assert.NilError(t, err)

	own := fresh()
	_, err = svc.CreateWarehouse(ctx, "", CreateWarehouse{ID: "w2", Project: "p1", Bucket: own})
	assert.NilError(t, err)
	_, err = mc.PutObject(ctx, own, "ns/t.lance/data/0.lance", strings.NewReader("x"), 1, minio.PutObjectOptions{})
	assert.NilError(t, err)
	d, err := svc.DeleteWarehouse(ctx, "", "w2", DeleteWarehouse{PurgeBucket: true}, nil)
	assert.NilError(t, err)
	assert.Equal(t, d.ObjectsPurged, int64(1))
	assert.Assert(t, !bucketExists(t, mc, own))
	assert.Assert(t, bucketExists(t, mc, foreign))
}
