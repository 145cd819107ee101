package storage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/storage"
)

// TestSessionPolicy: the policy's statements, per access, and the prefixes it refuses to scope
// (IAM wildcards and variables would widen it; an empty prefix is the whole bucket).
func TestSessionPolicy(t *testing.T) {
	type stmt struct {
		Action    []string
		Resource  []string
		Condition map[string]map[string][]string
	}
	for _, tc := range []struct {
		name    string
		bucket  string
		prefix  string
		access  storage.Access
		actions []string // every action granted, in order
		err     string
	}{
		{name: "read", bucket: "b", prefix: "cat/t.lance", access: storage.AccessRead,
			actions: []string{"s3:ListBucket", "s3:GetObject"}},
		{name: "read-write", bucket: "b", prefix: "/cat/t.lance/", access: storage.AccessReadWrite,
			actions: []string{"s3:ListBucket", "s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"}},
		{name: "wildcard in prefix", bucket: "b", prefix: "cat/t*.lance", access: storage.AccessRead, err: "wildcard"},
		{name: "question mark", bucket: "b", prefix: "cat/t?", access: storage.AccessRead, err: "wildcard"},
		{name: "policy variable", bucket: "b", prefix: "cat/${aws:username}", access: storage.AccessRead, err: "variable"},
		{name: "invalid UTF-8", bucket: "b", prefix: "cat/\x83", access: storage.AccessRead, err: "UTF-8"},
		{name: "whole bucket", bucket: "b", prefix: "/", access: storage.AccessRead, err: "non-empty prefix"},
		{name: "unknown access", bucket: "b", prefix: "t", access: storage.Access(9), err: "unknown access"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := storage.SessionPolicy(tc.bucket, tc.prefix, tc.access)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				if tc.access != storage.Access(9) { // a bad access is the caller's bug, not the location's
					assert.ErrorIs(t, err, storage.ErrUnscopable)
				}
				return
			}
			assert.NilError(t, err)
			var doc struct{ Statement []stmt }
			assert.NilError(t, json.Unmarshal([]byte(p), &doc))
			var actions []string
			for _, s := range doc.Statement {
				actions = append(actions, s.Action...)
				for _, r := range s.Resource {
					// Objects only under "cat/t.lance/" (the slash keeps "cat/t.lance2" out), the
					// bucket itself only for listing.
					if r != "arn:aws:s3:::b" {
						assert.Equal(t, r, "arn:aws:s3:::b/cat/t.lance/*")
					} else {
						assert.DeepEqual(t, s.Action, []string{"s3:ListBucket"})
						assert.DeepEqual(t, s.Condition, map[string]map[string][]string{
							"StringLike": {"s3:prefix": {"cat/t.lance/*", "cat/t.lance/"}}})
					}
				}
			}
			assert.DeepEqual(t, actions, tc.actions)
		})
	}
}

// FuzzSessionPolicy: whatever bucket and prefix come in, a policy is valid JSON that grants
// objects only under "<bucket>/<prefix>/" and holds no wildcard but the trailing one.
func FuzzSessionPolicy(f *testing.F) {
	f.Add("b", "cat/t.lance", true)
	f.Add("b\"x", "a\"}],\"Action\":[\"s3:*\"", false)
	f.Add("b", "a/*", true)
	f.Fuzz(func(t *testing.T, bucket, prefix string, write bool) {
		access := storage.AccessRead
		if write {
			access = storage.AccessReadWrite
		}
		p, err := storage.SessionPolicy(bucket, prefix, access)
		if err != nil {
			return
		}
		var doc struct {
			Statement []struct {
				Action   []string
				Resource []string
			}
		}
		if err := json.Unmarshal([]byte(p), &doc); err != nil {
			t.Fatalf("policy is not JSON: %v\n%s", err, p)
		}
		want := "arn:aws:s3:::" + bucket + "/" + strings.Trim(prefix, "/") + "/*"
		for _, s := range doc.Statement {
			for _, a := range s.Action {
				if strings.Contains(a, "*") {
					t.Fatalf("wildcard action %q", a)
				}
			}
			for _, r := range s.Resource {
				if r != want && r != "arn:aws:s3:::"+bucket {
					t.Fatalf("resource %q outside %q", r, want)
				}
				if base := strings.TrimSuffix(r, "/*"); strings.ContainsAny(base, "*?") || strings.Contains(base, "${") {
					t.Fatalf("resource %q has a wildcard or variable", r)
				}
			}
		}
	})
}

func TestNewVendorRefuses(t *testing.T) {
	ok := storage.VendConfig{Endpoint: "http://minio:9000", AccessKey: "k", SecretKey: "s", Duration: time.Hour}
	for _, tc := range []struct {
		name string
		edit func(*storage.VendConfig)
		err  string
	}{
		{"no key", func(c *storage.VendConfig) { c.AccessKey = "" }, "static access key"},
		{"too short", func(c *storage.VendConfig) { c.Duration = time.Minute }, "outside STS"},
		{"too long", func(c *storage.VendConfig) { c.Duration = 13 * time.Hour }, "outside STS"},
		{"no scheme", func(c *storage.VendConfig) { c.Endpoint = "minio:9000" }, "not an http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.edit(&cfg)
			_, err := storage.NewVendor(cfg)
			assert.ErrorContains(t, err, tc.err)
		})
	}
	_, err := storage.NewVendor(ok)
	assert.NilError(t, err)
}

// TestVendScopedMinIO mints credentials from the real MinIO's STS and uses them: a reader reads
// and lists its table and cannot write it, read another table, a sibling whose name extends its
// own ("a.lance" vs "ab.lance") or list the parent; a writer writes and deletes inside and not
// outside. The expiry is the configured duration from now (MinIO's minimum is 15 min, so the test
// checks the field rather than waiting), and a credential is reused only while more than half its
// life is left.
func TestVendScopedMinIO(t *testing.T) {
	s3, bucket := testenv.S3Bucket(t)
	ctx := context.Background()
	admin, err := minio.New(s3.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s3.AccessKey, s3.SecretKey, ""), Region: s3.Region})
	assert.NilError(t, err)
	for _, key := range []string{"cat/a.lance/_versions/1.manifest", "cat/ab.lance/_versions/1.manifest", "cat/b.lance/data/x.lance"} {
		_, err := admin.PutObject(ctx, bucket, key, strings.NewReader(key), int64(len(key)), minio.PutObjectOptions{})
		assert.NilError(t, err)
	}

	var clock atomic.Int64
	start := time.Now()
	clock.Store(start.UnixNano())
	v, err := storage.NewVendor(storage.VendConfig{
		Endpoint: "http://" + s3.Endpoint, Region: s3.Region, AccessKey: s3.AccessKey, SecretKey: s3.SecretKey,
		Duration: 20 * time.Minute, Now: func() time.Time { return time.Unix(0, clock.Load()) },
	})
	assert.NilError(t, err)
	as := func(c storage.VendedCredentials) *minio.Client {
		mc, err := minio.New(s3.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(c.AccessKeyID, c.SecretAccessKey, c.SessionToken), Region: s3.Region})
		assert.NilError(t, err)
		return mc
	}
	get := func(mc *minio.Client, key string) error {
		o, err := mc.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer o.Close()
		_, err = io.ReadAll(o)
		return err
	}
	put := func(mc *minio.Client, key string) error {
		_, err := mc.PutObject(ctx, bucket, key, bytes.NewReader([]byte("x")), 1, minio.PutObjectOptions{})
		return err
	}
	list := func(mc *minio.Client, prefix string) ([]string, error) {
		var keys []string
		for o := range mc.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
			if o.Err != nil {
				return keys, o.Err
			}
			keys = append(keys, o.Key)
		}
		return keys, nil
	}
	denied := func(t *testing.T, err error, what string) {
		t.Helper()
		assert.Assert(t, err != nil, "%s: allowed", what)
		assert.Equal(t, minio.ToErrorResponse(err).Code, "AccessDenied", "%s: %v", what, err)
	}

	reader, err := v.Vend(ctx, "s3://"+bucket+"/cat/a.lance", storage.AccessRead)
	assert.NilError(t, err)
	assert.Assert(t, reader.SessionToken != "" && reader.AccessKeyID != s3.AccessKey)
	// The expiry is the configured lifetime from now (a minute of slack for clock skew).
	assert.Assert(t, reader.Expires.After(start.Add(19*time.Minute)) && reader.Expires.Before(start.Add(21*time.Minute)), "%v", reader.Expires)

	t.Run("reader", func(t *testing.T) {
		mc := as(reader)
		assert.NilError(t, get(mc, "cat/a.lance/_versions/1.manifest"))
		keys, err := list(mc, "cat/a.lance/")
		assert.NilError(t, err)
		assert.DeepEqual(t, keys, []string{"cat/a.lance/_versions/1.manifest"})
		denied(t, put(mc, "cat/a.lance/_versions/2.manifest"), "reader writes its table")
		denied(t, mc.RemoveObject(ctx, bucket, "cat/a.lance/_versions/1.manifest", minio.RemoveObjectOptions{}), "reader deletes")
		denied(t, get(mc, "cat/b.lance/data/x.lance"), "reader reads another table")
		denied(t, get(mc, "cat/ab.lance/_versions/1.manifest"), "reader reads a sibling sharing its name's prefix")
		_, err = list(mc, "cat/")
		denied(t, err, "reader lists the parent")
		_, err = list(mc, "cat/ab.lance/")
		denied(t, err, "reader lists a sibling")
	})

	t.Run("storage's own S3 bucket takes the temporary credentials", func(t *testing.T) {
		// What the console does with a table's vended options: the session token goes with
		// the keys (without it MinIO refuses the key as invalid).
		b, err := storage.NewS3(ctx, storage.S3Config{Endpoint: "http://" + s3.Endpoint, Region: s3.Region, PathStyle: true,
			AccessKey: reader.AccessKeyID, SecretKey: reader.SecretAccessKey, SessionToken: reader.SessionToken}, bucket, "cat/a.lance")
		assert.NilError(t, err)
		rc, _, err := b.Get(ctx, "_versions/1.manifest")
		assert.NilError(t, err)
		got, err := io.ReadAll(rc)
		rc.Close()
		assert.NilError(t, err)
		assert.Equal(t, string(got), "cat/a.lance/_versions/1.manifest")
		_, err = storage.NewS3(ctx, storage.S3Config{Endpoint: "http://" + s3.Endpoint, Region: s3.Region, PathStyle: true,
			AccessKey: reader.AccessKeyID, SecretKey: reader.SecretAccessKey}, bucket, "cat/a.lance")
		assert.ErrorContains(t, err, "InvalidTokenId") // the temporary key without its session token
	})

	t.Run("writer", func(t *testing.T) {
		writer, err := v.Vend(ctx, "s3://"+bucket+"/cat/a.lance/", storage.AccessReadWrite)
		assert.NilError(t, err)
		assert.Assert(t, writer.AccessKeyID != reader.AccessKeyID)
		mc := as(writer)
		assert.NilError(t, put(mc, "cat/a.lance/_versions/2.manifest"))
		assert.NilError(t, get(mc, "cat/a.lance/_versions/2.manifest"))
		assert.NilError(t, mc.RemoveObject(ctx, bucket, "cat/a.lance/_versions/2.manifest", minio.RemoveObjectOptions{}))
		denied(t, put(mc, "cat/b.lance/data/y.lance"), "writer writes another table")
		denied(t, put(mc, "cat/ab.lance/data/y.lance"), "writer writes a sibling")
		denied(t, put(mc, "cat/x"), "writer writes the parent")
		denied(t, get(mc, "cat/b.lance/data/x.lance"), "writer reads another table")
	})

	t.Run("reuse while more than half the life is left", func(t *testing.T) {
		again, err := v.Vend(ctx, "s3://"+bucket+"/cat/a.lance", storage.AccessRead)
		assert.NilError(t, err)
		assert.Equal(t, again.AccessKeyID, reader.AccessKeyID)
		clock.Store(start.Add(11 * time.Minute).UnixNano())
		fresh, err := v.Vend(ctx, "s3://"+bucket+"/cat/a.lance", storage.AccessRead)
		assert.NilError(t, err)
		assert.Assert(t, fresh.AccessKeyID != reader.AccessKeyID)
	})

	t.Run("refused locations", func(t *testing.T) {
		for _, uri := range []string{"/data/t.lance", "file:///data/t.lance", "s3://" + bucket, "s3://" + bucket + "/"} {
			_, err := v.Vend(ctx, uri, storage.AccessRead)
			assert.ErrorIs(t, err, storage.ErrUnscopable, uri)
		}
	})
}
