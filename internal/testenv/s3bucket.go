package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/lancecat/lancecat/storage"
)

// S3Config is the test MinIO as lancecat's storage settings (skips like S3).
func (e S3Env) S3Config() storage.S3Config {
	return storage.S3Config{
		Endpoint: e.Endpoint, Region: e.Region, AccessKey: e.AccessKey, SecretKey: e.SecretKey,
		PathStyle: true, Insecure: true,
	}
}

// SDKStorageOptions are the LanceDB storageOptions for the test MinIO. Both SDK versions (0.31.0
// on Lance 8, 0.39.0 on Lance 12) take object_store's AmazonS3 keys; the short aliases (endpoint,
// region, access_key_id, secret_access_key, virtual_hosted_style_request) work as well. allow_http
// is a client option: MinIO here speaks plain HTTP. Commits go through Lance's
// ConditionalPutCommitHandler, i.e. If-None-Match: *.
func (e S3Env) SDKStorageOptions() map[string]string {
	return map[string]string{
		"aws_endpoint":                     e.URL(),
		"aws_region":                       e.Region,
		"aws_access_key_id":                e.AccessKey,
		"aws_secret_access_key":            e.SecretKey,
		"aws_virtual_hosted_style_request": "false",
		"allow_http":                       "true",
	}
}

// S3Bucket creates a fresh, empty bucket on the test MinIO for t and removes it (with its objects)
// when t ends, so tests and repeated runs never see each other's keys.
func S3Bucket(t testing.TB) (storage.S3Config, string) {
	t.Helper()
	env := S3(t)
	client, err := minio.New(env.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(env.AccessKey, env.SecretKey, ""),
		Region: env.Region,
	})
	if err != nil {
		t.Fatalf("testenv: MinIO client: %v", err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	name := "lancecat-t-" + hex.EncodeToString(rnd[:])
	ctx := context.Background()
	if err := client.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: env.Region}); err != nil {
		t.Fatalf("testenv: creating bucket %s: %v", name, err)
	}
	t.Cleanup(func() {
		objs := client.ListObjects(ctx, name, minio.ListObjectsOptions{Recursive: true})
		for rerr := range client.RemoveObjects(ctx, name, objs, minio.RemoveObjectsOptions{}) {
			t.Errorf("testenv: cleaning bucket %s: %v", name, rerr.Err)
		}
		if err := client.RemoveBucket(ctx, name); err != nil {
			t.Errorf("testenv: removing bucket %s: %v", name, err)
		}
	})
	return env.S3Config(), name
}
