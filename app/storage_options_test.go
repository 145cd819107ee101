package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/storage"
)

// secretOptionNames are the storage option names that carry a credential (Lance's and the
// object_store aliases a client would read one from).
var secretOptionNames = []string{
	"aws_access_key_id", "aws_secret_access_key", "aws_session_token", "access_key_id",
	"secret_access_key", "session_token", "aws_token",
}

// TestClientStorageOptions: the options answered with a table location on an S3 root carry the
// connection hints a client needs (endpoint, region, plain HTTP, path style) and, by default, no
// credential; the server's static key and secret only with --vend-static-credentials, and never
// credentials the server took from its environment (no static key configured).
func TestClientStorageOptions(t *testing.T) {
	base := DefaultConfig()
	base.S3Endpoint, base.S3Region = "minio:9000", "eu-west-1"
	base.S3AccessKey, base.S3SecretKey = "AKIASERVER", "server-secret"
	base.S3PathStyle, base.S3AllowHTTP = true, true
	hints := map[string]string{
		"aws_endpoint": "http://minio:9000", "aws_region": "eu-west-1",
		"allow_http": "true", "aws_virtual_hosted_style_request": "false",
	}
	withKeys := map[string]string{"aws_access_key_id": "AKIASERVER", "aws_secret_access_key": "server-secret"}
	for k, v := range hints {
		withKeys[k] = v
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		root string
		want map[string]string
	}{
		{"default: hints, no credentials", func(*Config) {}, "s3://b/catalog", hints},
		{"opt-in: the server's static keys", func(c *Config) { c.VendStaticCredentials = true }, "s3://b/catalog", withKeys},
		{"opt-in without static keys: nothing to vend (chain credentials never leave)",
			func(c *Config) { c.VendStaticCredentials, c.S3AccessKey, c.S3SecretKey = true, "", "" }, "s3://b/catalog", hints},
		{"local root: no options", func(c *Config) { c.VendStaticCredentials = true }, "/data/root", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			tc.edit(&cfg)
			assert.DeepEqual(t, clientStorageOptions(cfg, tc.root), tc.want)
		})
	}
}

func TestVendStaticCredentialsFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want bool
	}{
		{"off by default", nil, nil, false},
		{"flag", []string{"--vend-static-credentials"}, nil, true},
		{"environment", nil, map[string]string{"LANCECAT_VEND_STATIC_CREDENTIALS": "true"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			errs := cfg.BindFlags(fs, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			assert.NilError(t, fs.Parse(tc.args))
			assert.NilError(t, errs.Err())
			assert.Equal(t, cfg.VendStaticCredentials, tc.want)
			// The help says what the opt-in gives away.
			usage := fs.Lookup("vend-static-credentials").Usage
			assert.Assert(t, strings.Contains(usage, "server's own S3 access key and secret"), usage)
		})
	}
}

// TestStorageOptionsKeepServerCredentials serves an S3 (MinIO) catalog with a warehouse and, on
// the catalog root and in the warehouse's bucket, creates, declares and describes tables: with
// default flags no answer holds the server's access key, its secret or any credential option;
// with --vend-static-credentials they do (the opt-in is the only way they leave).
func TestStorageOptionsKeepServerCredentials(t *testing.T) {
	s3, rootBucket := testenv.S3Bucket(t)
	for _, vend := range []bool{false, true} {
		name := "default"
		if vend {
			name = "vend-static-credentials"
		}
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.LogLevel = "error"
			useS3(&cfg, s3, "s3://"+rootBucket+"/"+name)
			cfg.VendStaticCredentials = vend
			whBucket := newWarehouseBucketName(t, s3)
			base := runServer(t, cfg)

			call := func(method, path, contentType string, body []byte) string {
				t.Helper()
				status, out := send(t, method, base+path, contentType, body, nil)
				assert.Equal(t, status, 200, "%s %s: %s", method, path, out)
				return string(out)
			}
			const jsonType = "application/json"
			call("POST", "/v1/projects", jsonType, []byte(`{"id":"p"}`))
			call("POST", "/v1/warehouses", jsonType, []byte(`{"id":"w","project":"p","bucket":"`+whBucket+`"}`))
			call("POST", "/v1/warehouses/w/namespaces", jsonType, []byte(`{"namespace":"wns"}`))
			call("POST", "/v1/namespace/cns/create", jsonType, []byte(`{}`))

			var answers []string
			for _, ns := range []string{"cns", "wns"} { // the catalog root, the warehouse's bucket
				answers = append(answers,
					call("POST", "/v1/table/"+ns+"$t/create", "application/vnd.apache.arrow.stream", int64Stream(t, 3)),
					call("POST", "/v1/table/"+ns+"$d/declare", jsonType, []byte(`{}`)),
					call("POST", "/v1/table/"+ns+"$t/describe", jsonType, []byte(`{}`)),
					call("POST", "/v1/table/"+ns+"$d/describe", jsonType, []byte(`{}`)),
				)
			}
			for _, body := range answers {
				// Every answer still tells a client where the store is.
				assert.Assert(t, strings.Contains(body, `"aws_endpoint"`), body)
				// The key as a JSON string (the test key is also a prefix of bucket names), the secret
				// anywhere, and any credential option at all.
				leaks := strings.Contains(body, `"`+s3.AccessKey+`"`) || strings.Contains(body, s3.SecretKey)
				for _, n := range secretOptionNames {
					leaks = leaks || strings.Contains(body, `"`+n+`"`)
				}
				if vend {
					assert.Assert(t, strings.Contains(body, `"aws_access_key_id":"`+s3.AccessKey+`"`), body)
					assert.Assert(t, strings.Contains(body, `"aws_secret_access_key":"`+s3.SecretKey+`"`), body)
				} else {
					assert.Assert(t, !leaks, "a server credential left the server by default: %s", body)
				}
			}
		})
	}
}

// newWarehouseBucketName is a fresh bucket name for a warehouse the test creates, removed (with
// what is left in it) when the test ends.
func newWarehouseBucketName(t *testing.T, s3 storage.S3Config) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "lancecat-wh-" + hex.EncodeToString(b[:])
	mc := minioClient(t, s3)
	t.Cleanup(func() {
		ctx := context.Background()
		for o := range mc.ListObjects(ctx, name, minio.ListObjectsOptions{Recursive: true}) {
			_ = mc.RemoveObject(ctx, name, o.Key, minio.RemoveObjectOptions{})
		}
		_ = mc.RemoveBucket(ctx, name)
	})
	return name
}

// minioClient is a MinIO client with the test store's own credentials.
func minioClient(t *testing.T, s3 storage.S3Config) *minio.Client {
	t.Helper()
	mc, err := minio.New(s3.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s3.AccessKey, s3.SecretKey, ""), Region: s3.Region})
	assert.NilError(t, err)
	return mc
}
