// Package e2e drives a running lancecat with the official LanceDB SDK.
package e2e

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/server"
)

// SDKDirsEnv lists LanceDB SDK install directories (scripts/lancedb/install.sh prints one),
// separated by ':'. The test runs the SDK script once per directory.
const SDKDirsEnv = "LANCECAT_LANCEDB_SDK"

func sdkDirs(t *testing.T) []string {
	v := os.Getenv(SDKDirsEnv)
	if v == "" {
		t.Skipf("%s is not set: skipping the LanceDB SDK end-to-end test (set it to the dirs scripts/lancedb/install.sh prints, ':'-separated)", SDKDirsEnv)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: skipping the LanceDB SDK end-to-end test")
	}
	return strings.Split(v, ":")
}

// serve runs lancecat on a free port with cfg until the test ends and returns its URL.
func serve(t *testing.T, cfg server.Config) string {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg, nil, ready) }()
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
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("serve: not ready after 30s")
	}
	return ""
}

func script(t *testing.T, name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "scripts", "e2e", name)
}

// TestSDKRestThenDir: namespaces and tables through connectNamespace("rest") against lancecat,
// data written by the SDK at the returned locations, then the same root read and written by
// connectNamespace("dir"), for every SDK version given.
func TestSDKRestThenDir(t *testing.T) {
	for _, dir := range sdkDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			cfg := server.DefaultConfig()
			cfg.Root = root
			url := serve(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", script(t, "sdk-rest.mjs"), url, root)
			cmd.Env = append(os.Environ(), "LANCEDB_DIR="+dir)
			out, err := cmd.CombinedOutput()
			t.Logf("%s", out)
			assert.NilError(t, err, "SDK script failed")
		})
	}
}
