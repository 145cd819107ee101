package storage_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/minio/madmin-go/v3"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/storage"
)

// TestVendAsMinIOUser vends as a non-root MinIO user, as a deployment would (the root user's STS
// sessions are governed by the session policy alone; a user's by its own policy AND the session
// policy). The user, created through the MinIO admin API (madmin-go), may do anything in one
// bucket: its vended reader still cannot write, nor read another table there; and a session
// policy naming a bucket the user may not touch grants nothing there (the session policy narrows,
// never widens).
func TestVendAsMinIOUser(t *testing.T) {
	s3, bucket := testenv.S3Bucket(t)
	_, foreign := testenv.S3Bucket(t)
	ctx := context.Background()
	root, err := minio.New(s3.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s3.AccessKey, s3.SecretKey, ""), Region: s3.Region})
	assert.NilError(t, err)
	for _, b := range []string{bucket, foreign} {
		for _, key := range []string{"cat/a.lance/_versions/1.manifest", "cat/b.lance/_versions/1.manifest"} {
			_, err := root.PutObject(ctx, b, key, strings.NewReader(key), int64(len(key)), minio.PutObjectOptions{})
			assert.NilError(t, err)
		}
	}

	admin, err := madmin.NewWithOptions(s3.Endpoint, &madmin.Options{Creds: credentials.NewStaticV4(s3.AccessKey, s3.SecretKey, "")})
	assert.NilError(t, err)
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	user, secret, policy := "lancecat-vend-"+hex.EncodeToString(rnd[:]), "secret-"+hex.EncodeToString(rnd[:]), "lancecat-vend-"+hex.EncodeToString(rnd[:])
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:*"],"Resource":["arn:aws:s3:::` + bucket + `","arn:aws:s3:::` + bucket + `/*"]}]}`
	assert.NilError(t, admin.AddCannedPolicy(ctx, policy, []byte(doc)))
	t.Cleanup(func() { _ = admin.RemoveCannedPolicy(context.Background(), policy) })
	assert.NilError(t, admin.AddUser(ctx, user, secret))
	t.Cleanup(func() { _ = admin.RemoveUser(context.Background(), user) })
	// SetPolicy, not AttachPolicy: AttachPolicy's answer is encrypted with an Argon2id key,
	// seconds of CPU under -race on a loaded machine; AddUser's body already costs that once.
	//lint:ignore SA1019 AttachPolicy would cost seconds more of Argon2id (above); this MinIO serves SetPolicy.
	assert.NilError(t, admin.SetPolicy(ctx, policy, user, false))

	v, err := storage.NewVendor(storage.VendConfig{Endpoint: "http://" + s3.Endpoint, Region: s3.Region,
		AccessKey: user, SecretKey: secret, Duration: 15 * time.Minute})
	assert.NilError(t, err)
	as := func(uri string, access storage.Access) *minio.Client {
		t.Helper()
		c, err := v.Vend(ctx, uri, access)
		assert.NilError(t, err)
		mc, err := minio.New(s3.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(c.AccessKeyID, c.SecretAccessKey, c.SessionToken), Region: s3.Region})
		assert.NilError(t, err)
		return mc
	}
	get := func(mc *minio.Client, b, key string) error {
		o, err := mc.GetObject(ctx, b, key, minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer o.Close()
		_, err = io.ReadAll(o)
		return err
	}
	put := func(mc *minio.Client, b, key string) error {
		_, err := mc.PutObject(ctx, b, key, bytes.NewReader([]byte("x")), 1, minio.PutObjectOptions{})
		return err
	}
	denied := func(err error, what string) {
		t.Helper()
		assert.Assert(t, err != nil, "%s: allowed", what)
		assert.Equal(t, minio.ToErrorResponse(err).Code, "AccessDenied", "%s: %v", what, err)
	}

	reader := as("s3://"+bucket+"/cat/a.lance", storage.AccessRead)
	assert.NilError(t, get(reader, bucket, "cat/a.lance/_versions/1.manifest"))
	denied(put(reader, bucket, "cat/a.lance/_versions/2.manifest"), "reader writes its table")
	denied(get(reader, bucket, "cat/b.lance/_versions/1.manifest"), "reader reads another table")

	writer := as("s3://"+bucket+"/cat/a.lance", storage.AccessReadWrite)
	assert.NilError(t, put(writer, bucket, "cat/a.lance/_versions/2.manifest"))
	denied(put(writer, bucket, "cat/b.lance/_versions/2.manifest"), "writer writes another table")

	// The session policy names the foreign bucket's table; the user may not touch that bucket.
	outside := as("s3://"+foreign+"/cat/a.lance", storage.AccessReadWrite)
	denied(get(outside, foreign, "cat/a.lance/_versions/1.manifest"), "a session policy widened the user's reach (read)")
	denied(put(outside, foreign, "cat/a.lance/_versions/2.manifest"), "a session policy widened the user's reach (write)")
}
