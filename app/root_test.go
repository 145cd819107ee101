package app

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		useS3(&cfg, s3, "s3://"+bucket+"/catalog")
		base := runServer(t, cfg)
		resp, err := http.Get(base + "/readyz")
		assert.NilError(t, err)
		resp.Body.Close()
		assert.Equal(t, resp.StatusCode, 200)
	})
}

// TestRootThatLooksLikeAURIIsRefused: `--root s3:/bad` used to start and serve a local directory
// named `s3:` under the working directory. A root, control root or warehouse root that looks like
// a URI and is not a valid one is refused before anything is opened or created, in one line naming
// the form expected; a path with a colon inside stays a path.
func TestRootThatLooksLikeAURIIsRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		set     func(*Config)
		errText string
	}{
		{func(c *Config) { c.Root = "s3:/bad" }, `--root: "s3:/bad" is not an S3 location: want s3://bucket/prefix`},
		{func(c *Config) { c.Root = "s3:bucket" }, "--root: \"s3:bucket\" is not an S3 location: want s3://bucket/prefix"},
		{func(c *Config) { c.Root = "s3://" }, "want s3://bucket/prefix"},
		{func(c *Config) { c.Root = "gs://bucket/p" }, `--root: "gs://bucket/p": unsupported scheme "gs"`},
		{func(c *Config) { c.Root = "az://c/p" }, `unsupported scheme "az"`},
		{func(c *Config) { c.Root = "file:/x" }, "want file:///absolute/path"},
		{func(c *Config) { c.ControlRoot = "s3:ctl" }, "--control-root: "},
		{func(c *Config) { c.Governance.WarehouseRoot = "file:wh" }, "--warehouse-root: "},
	} {
		cfg := DefaultConfig()
		tc.set(&cfg)
		err := cfg.Validate()
		assert.Check(t, err != nil && strings.Contains(err.Error(), tc.errText) && !strings.Contains(err.Error(), "\n"),
			"%+v: %v", cfg.Root, err)
		cfg.Listen = "127.0.0.1:0"
		// Before, it served: the deadline ends that run with no error.
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		err = Run(ctx, cfg, nil, nil)
		cancel()
		assert.Check(t, err != nil && strings.Contains(err.Error(), tc.errText), "%v", err)
	}
	entries, err := os.ReadDir(".")
	assert.NilError(t, err)
	assert.Check(t, len(entries) == 0, "created %v", entries)

	// A directory whose name has a colon is still a root.
	cfg := DefaultConfig()
	cfg.Root = "./a:b"
	url := runServer(t, cfg)
	resp, err := http.Get(url + "/readyz")
	assert.NilError(t, err)
	resp.Body.Close()
	assert.Equal(t, resp.StatusCode, 200)
	_, err = os.Stat("a:b")
	assert.NilError(t, err)
}
