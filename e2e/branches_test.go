package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/internal/testenv"
)

// TestSDKBranchInterop (issue 18): branches made over lancecat's branch routes are listed, checked
// out, written and deleted by the official SDK, and branches the SDK makes (Table.branches(): the
// SDK writes Lance's refs and tree/<name>/ itself, the namespace client sends no branch request)
// are listed, described, counted, updated, tagged and deleted over REST, on a local root and
// (when MinIO is available) an S3 root, for every SDK version given. Both directions meet in
// the storage: lancecat keeps no branch record of its own.
func TestSDKBranchInterop(t *testing.T) {
	dirs := testenv.SDKs(t)
	for _, rk := range roots {
		t.Run(rk.name, func(t *testing.T) {
			for _, dir := range dirs {
				t.Run(filepath.Base(dir), func(t *testing.T) {
					cfg := app.DefaultConfig()
					cfg.LogLevel = "warn"
					_, dirStorage := rk.setup(t, &cfg)
					url := serve(t, cfg)
					env := append(os.Environ(), "LANCEDB_DIR="+dir)
					if dirStorage != nil {
						env = append(env, "AWS_ACCESS_KEY_ID="+dirStorage["aws_access_key_id"], "AWS_SECRET_ACCESS_KEY="+dirStorage["aws_secret_access_key"])
					}
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
					defer cancel()
					cmd := exec.CommandContext(ctx, "node", script(t, "sdk-branches.mjs"), url)
					cmd.Env = env
					cmd.WaitDelay = 10 * time.Second
					out, err := cmd.CombinedOutput()
					t.Logf("%s", out)
					assert.NilError(t, err, "SDK branch script failed")
				})
			}
		})
	}
}
