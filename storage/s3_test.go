package storage_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/storage"
	"github.com/lancecat/lancecat/storage/storagetest"
)

func TestS3Conformance(t *testing.T) {
	cfg := s3TestConfig(t)
	storagetest.Run(t, func(t *testing.T) storage.Bucket {
		return newS3(t, cfg, "p-"+randHex(4)+"/nested")
	})
}

// TestS3NoPrefix covers a bucket used from its root.
func TestS3NoPrefix(t *testing.T) {
	cfg := s3TestConfig(t)
	b := newS3(t, cfg, "")
	ctx := t.Context()
	_, err := b.Put(ctx, "a/b", strings.NewReader("x"), 1)
	assert.NilError(t, err)
	objs, err := storage.ListAll(ctx, b, "")
	assert.NilError(t, err)
	assert.Check(t, is.Len(objs, 1))
	assert.Check(t, is.Equal(objs[0].Key, "a/b"))
}

// TestS3Open reaches MinIO through the URI entry point.
func TestS3Open(t *testing.T) {
	cfg := s3TestConfig(t)
	bucket := newTestBucket(t, cfg)
	b, err := storage.Open(t.Context(), "s3://"+bucket+"/some/prefix/", cfg)
	assert.NilError(t, err)
	_, err = b.PutIfAbsent(t.Context(), "k", strings.NewReader("v"), 1)
	assert.NilError(t, err)

	_, err = adminClient(t, cfg).StatObject(t.Context(), bucket, "some/prefix/k", minio.StatObjectOptions{})
	assert.NilError(t, err, "keys must land under the URI's prefix")

	_, err = storage.Open(t.Context(), "s3://no-such-bucket-"+randHex(6)+"/x", cfg)
	assert.ErrorContains(t, err, "does not exist")
}

func s3TestConfig(t *testing.T) storage.S3Config {
	t.Helper()
	endpoint := os.Getenv("LANCECAT_TEST_S3_ENDPOINT")
	if endpoint == "" {
		t.Skip("LANCECAT_TEST_S3_ENDPOINT not set: run `make test` to start MinIO")
	}
	region := os.Getenv("LANCECAT_TEST_S3_REGION")
	if region == "" {
		region = "us-east-1"
	}
	return storage.S3Config{
		Endpoint:  endpoint,
		Region:    region,
		AccessKey: os.Getenv("LANCECAT_TEST_S3_ACCESS_KEY"),
		SecretKey: os.Getenv("LANCECAT_TEST_S3_SECRET_KEY"),
		PathStyle: true,
		Insecure:  true,
	}
}

// newS3 returns a bucket view over a fresh bucket, so parallel tests and
// repeated runs never see each other's keys.
func newS3(t *testing.T, cfg storage.S3Config, prefix string) storage.Bucket {
	t.Helper()
	b, err := storage.NewS3(t.Context(), cfg, newTestBucket(t, cfg), prefix)
	assert.NilError(t, err)
	return b
}

func newTestBucket(t *testing.T, cfg storage.S3Config) string {
	t.Helper()
	client := adminClient(t, cfg)
	name := "lancecat-test-" + randHex(8)
	assert.NilError(t, client.MakeBucket(t.Context(), name, minio.MakeBucketOptions{Region: cfg.Region}))
	t.Cleanup(func() {
		// t.Context is already canceled when Cleanup runs.
		ctx := context.WithoutCancel(t.Context())
		objs := client.ListObjects(ctx, name, minio.ListObjectsOptions{Recursive: true})
		for err := range client.RemoveObjects(ctx, name, objs, minio.RemoveObjectsOptions{}) {
			t.Errorf("cleanup %s: %v", name, err.Err)
		}
		if err := client.RemoveBucket(ctx, name); err != nil {
			t.Errorf("cleanup %s: %v", name, err)
		}
	})
	return name
}

// adminClient talks to MinIO directly for what the Bucket interface
// deliberately cannot do: create, inspect and remove whole buckets.
func adminClient(t *testing.T, cfg storage.S3Config) *minio.Client {
	t.Helper()
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Region:       cfg.Region,
		BucketLookup: minio.BucketLookupPath,
	})
	assert.NilError(t, err)
	return client
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
