package server

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
)

func TestControlRootDefaults(t *testing.T) {
	cases := []struct {
		root, control, want string
	}{
		{"/data/cat", "", "/data/cat/_lancecat"},
		{"file:///data/cat", "", "file:///data/cat/_lancecat"},
		{"s3://bucket/prefix", "", "s3://bucket/prefix/_lancecat"},
		{"s3://bucket", "", "s3://bucket/_lancecat"},
		{"s3://bucket/prefix/", "", "s3://bucket/prefix/_lancecat"},
		{"/data/cat", "s3://ctl/x", "s3://ctl/x"},
	}
	for _, c := range cases {
		got, err := controlURI(Config{ControlRoot: c.control}, c.root)
		assert.NilError(t, err)
		assert.Equal(t, got, c.want)
	}
	rel, err := resolveURI("lancecat-data")
	assert.NilError(t, err)
	assert.Assert(t, filepath.IsAbs(rel))
}

// runServer serves cfg on a free port until the test ends and returns its base URL.
func runServer(t *testing.T, cfg Config) string {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, nil, ready) }()
	select {
	case addr := <-ready:
		t.Cleanup(func() {
			cancel()
			assert.NilError(t, <-done)
		})
		return "http://" + addr.String()
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
		return ""
	}
}

func TestServeOnLocalAndS3Roots(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.Root = filepath.Join(t.TempDir(), "data")
		base := runServer(t, cfg)
		resp, err := http.Get(base + "/readyz")
		assert.NilError(t, err)
		resp.Body.Close()
		assert.Equal(t, resp.StatusCode, 200)
	})
	t.Run("minio", func(t *testing.T) {
		s3, bucket := testenv.S3Bucket(t)
		cfg := DefaultConfig()
		cfg.Root = "s3://" + bucket + "/catalog"
		cfg.S3Endpoint, cfg.S3Region, cfg.S3AccessKey, cfg.S3SecretKey = s3.Endpoint, s3.Region, s3.AccessKey, s3.SecretKey
		cfg.S3PathStyle, cfg.S3AllowHTTP = true, true
		base := runServer(t, cfg)
		resp, err := http.Get(base + "/readyz")
		assert.NilError(t, err)
		resp.Body.Close()
		assert.Equal(t, resp.StatusCode, 200)
	})
}
