package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// TestSDKRemote: the official SDK in remote mode (lancedb.connect("db://…", {apiKey,
// hostOverride})) against lancecat serve, value-checked (scripts/e2e/sdk-remote.mjs), with the
// cross-client checks: for every SDK version given, on a local root and (when MinIO is available)
// an S3 root, with authorization off and on (when OpenFGA is available).
func TestSDKRemote(t *testing.T) {
	dirs := testenv.SDKs(t)
	for _, rk := range roots {
		t.Run(rk.name, func(t *testing.T) {
			for _, authorized := range []bool{false, true} {
				name := "authz-off"
				if authorized {
					name = "authz-on"
				}
				t.Run(name, func(t *testing.T) {
					for _, dir := range dirs {
						t.Run(filepath.Base(dir), func(t *testing.T) {
							cfg := app.DefaultConfig()
							cfg.LogLevel = "warn"
							root, dirStorage := rk.setup(t, &cfg)
							key := ""
							if authorized {
								key = authorize(t, &cfg, root)
							}
							runRemoteScript(t, cfg, dir, root, dirStorage, key)
						})
					}
				})
			}
		})
	}
}

// authorize turns on authorization with a real OpenFGA (skipping without one) and returns an
// estate admin's API key.
func authorize(t *testing.T, cfg *app.Config, root string) string {
	t.Helper()
	fga := testenv.OpenFGA(t)
	if strings.HasPrefix(root, "s3://") {
		cfg.ControlRoot = strings.TrimSuffix(root, "/catalog") + "/control"
	} else {
		cfg.ControlRoot = filepath.Join(t.TempDir(), "control")
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	cfg.Governance.Authz = app.AuthzOpenFGA
	cfg.Governance.OpenFGAURL = fga
	cfg.Governance.OpenFGAStore = "lancecat-remote-e2e-" + hex.EncodeToString(b[:])
	cfg.Governance.EstateAdmins = "user:sdk-admin"
	cfg.Governance.OpenFGATimeout = 20 * time.Second
	ctx := context.Background()
	control, _, err := app.OpenControlRoot(ctx, *cfg)
	assert.NilError(t, err)
	key, _, err := authz.NewAPIKeys(registry.NewStore(control)).Create(ctx, authz.User("sdk-admin"), "sdk remote e2e")
	assert.NilError(t, err)
	return key
}

// runRemoteScript serves cfg and runs the remote-mode script with the SDK in dir.
func runRemoteScript(t *testing.T, cfg app.Config, dir, root string, dirStorage map[string]string, key string) {
	t.Helper()
	url := serve(t, cfg)
	env := append(os.Environ(), "LANCEDB_DIR="+dir)
	if dirStorage != nil {
		env = append(env, "AWS_ACCESS_KEY_ID="+dirStorage["aws_access_key_id"], "AWS_SECRET_ACCESS_KEY="+dirStorage["aws_secret_access_key"])
	}
	if key != "" {
		env = append(env, "LANCECAT_E2E_API_KEY="+key, "LANCECAT_E2E_AUTHZ=1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script(t, "sdk-remote.mjs"), url)
	cmd.Env = env
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	assert.NilError(t, err, "SDK remote script failed")
	if strings.Contains(root, "://") {
		return
	}
	// The table the namespace-mode SDK created keeps its own data storage version through the
	// remote writes: 2.2 for the SDKs that create 2.2 tables.
	b, err := storage.NewFS(root)
	assert.NilError(t, err)
	n := namespace.New(b, namespace.Options{RootURI: root})
	tbl, err := n.DescribeTable(context.Background(), ident.ID{"crossed"})
	assert.NilError(t, err)
	ver, err := n.Dataset(tbl).OpenLatest(context.Background())
	assert.NilError(t, err)
	t.Logf("crossed: data storage version %s, version %d", ver.DataStorageVersion(), ver.Number())
	if strings.HasSuffix(dir, "0.39.0") {
		assert.Equal(t, ver.DataStorageVersion(), "2.2")
	}
}
