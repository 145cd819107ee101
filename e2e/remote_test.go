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
	eachRootAndAuthz(t, func(t *testing.T, rk rootKind, authorized bool) {
		for _, dir := range dirs {
			t.Run(filepath.Base(dir), func(t *testing.T) {
				cfg, root, dirStorage, key := cellConfig(t, rk, authorized)
				runRemoteScript(t, cfg, dir, root, dirStorage, key)
			})
		}
	})
}

// authorize turns on authorization with a real OpenFGA (skipping without one), with the control
// root outside root (so a dir client's listing of the root shows only namespaces), and returns an
// estate admin's API key.
func authorize(t *testing.T, cfg *app.Config, root string) string {
	t.Helper()
	if strings.HasPrefix(root, "s3://") {
		cfg.ControlRoot = strings.TrimSuffix(root, "/catalog") + "/control"
	} else {
		cfg.ControlRoot = filepath.Join(t.TempDir(), "control")
	}
	useOpenFGA(t, cfg, "sdk-admin")
	return apiKeys(t, *cfg, "sdk e2e", "sdk-admin")[0]
}

// useOpenFGA makes cfg authorize with the test OpenFGA (skipping without one), in a store of its
// own, with user admin its estate admin.
func useOpenFGA(t *testing.T, cfg *app.Config, admin string) {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	cfg.Governance.Authz = app.AuthzOpenFGA
	cfg.Governance.OpenFGAURL = testenv.OpenFGA(t)
	cfg.Governance.OpenFGAStore = "lancecat-e2e-" + hex.EncodeToString(b[:])
	cfg.Governance.EstateAdmins = "user:" + admin
	// CI runs every package at once on two cores; the default 2s would turn a slow OpenFGA answer
	// into a 503 the SDK reports as a failure.
	cfg.Governance.OpenFGATimeout = 20 * time.Second
}

// apiKeys are fresh API keys (named name) of the given users, made in cfg's control root before
// the server starts.
func apiKeys(t *testing.T, cfg app.Config, name string, users ...string) []string {
	t.Helper()
	ctx := context.Background()
	control, _, err := app.OpenControlRoot(ctx, cfg)
	assert.NilError(t, err)
	keys := authz.NewAPIKeys(registry.NewStore(control))
	out := make([]string, len(users))
	for i, u := range users {
		out[i], _, err = keys.Create(ctx, authz.User(u), name)
		assert.NilError(t, err)
	}
	return out
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
