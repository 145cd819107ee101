// Package e2e drives a running lancecat with the official LanceDB SDK.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// serve runs lancecat on a free port with cfg until the test ends and returns its URL.
func serve(t *testing.T, cfg app.Config) string {
	t.Helper()
	url, _ := serveWithOps(t, cfg)
	return url
}

// serveWithOps is serve, with the operations listener (metrics) on a free port too: its URL.
func serveWithOps(t *testing.T, cfg app.Config) (string, string) {
	t.Helper()
	cfg.Listen, cfg.MetricsAddr = "127.0.0.1:0", "127.0.0.1:0"
	ready, ops := make(chan net.Addr, 1), make(chan net.Addr, 1)
	url := testenv.Serve(t, ready, func(ctx context.Context) error {
		return app.RunAddrs(ctx, cfg, nil, app.Addrs{API: ready, Ops: ops})
	})
	return url, "http://" + (<-ops).String()
}

// seededRoot is a server configuration on a fresh local root and the namespace over that root, for
// the tests that seed tables in process before the server starts.
func seededRoot(t *testing.T) (app.Config, *namespace.Namespace) {
	t.Helper()
	cfg := app.DefaultConfig()
	cfg.LogLevel = "warn"
	cfg.Root = filepath.Join(t.TempDir(), "root")
	assert.NilError(t, os.MkdirAll(cfg.Root, 0o755))
	fs, err := storage.NewFS(cfg.Root)
	assert.NilError(t, err)
	return cfg, namespace.New(fs, namespace.Options{RootURI: cfg.Root})
}

func script(t *testing.T, name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "scripts", "e2e", name)
}

// enableManagedVersioning sets the root property that turns on table version management,
// through the API (CreateNamespace on the root, mode Overwrite).
// headers are sent with the request (an API key, with authorization on).
func enableManagedVersioning(t *testing.T, url string, headers map[string]string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"mode": "Overwrite", "properties": map[string]string{namespace.ManagedVersioningProperty: "true"}})
	req, err := http.NewRequest(http.MethodPost, url+"/v1/namespace/%24/create?delimiter=%24", bytes.NewReader(body))
	assert.NilError(t, err)
	req.Header.Set("content-type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusOK, "enable table_version_management")
}

// opCount is how many requests of operation answered status, from the server's metrics (on its
// operations listener, opsURL).
func opCount(t *testing.T, opsURL, operation, status string) int {
	t.Helper()
	resp, err := http.Get(opsURL + "/metrics")
	assert.NilError(t, err)
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	want := fmt.Sprintf(`lancecat_http_request_duration_seconds_count{code=%q,operation=%q} `, status, operation)
	for line := range strings.SplitSeq(buf.String(), "\n") {
		if v, ok := strings.CutPrefix(line, want); ok {
			n, err := strconv.Atoi(v)
			assert.NilError(t, err)
			return n
		}
	}
	return 0
}

// rootKind is where the catalog root lives.
type rootKind struct {
	name string
	// setup fills cfg's root (and S3 settings) and returns the root as clients address it and
	// the storage options connectNamespace("dir") needs for it.
	setup func(t *testing.T, cfg *app.Config) (root string, dirStorage map[string]string)
}

var roots = []rootKind{
	{"local", func(t *testing.T, cfg *app.Config) (string, map[string]string) {
		cfg.Root = filepath.Join(t.TempDir(), "root")
		return cfg.Root, nil
	}},
	{"minio", func(t *testing.T, cfg *app.Config) (string, map[string]string) {
		env := testenv.S3(t)
		_, bucket := testenv.S3Bucket(t)
		cfg.Root = "s3://" + bucket + "/catalog"
		cfg.S3Endpoint, cfg.S3Region = env.Endpoint, env.Region
		cfg.S3AccessKey, cfg.S3SecretKey = env.AccessKey, env.SecretKey
		cfg.S3PathStyle, cfg.S3AllowHTTP = true, true
		return cfg.Root, map[string]string{
			"aws_endpoint": env.URL(), "aws_region": env.Region,
			"aws_access_key_id": env.AccessKey, "aws_secret_access_key": env.SecretKey,
			"aws_virtual_hosted_style_request": "false", "allow_http": "true",
		}
	}},
}

// eachRootAndAuthz runs cell once per root kind and authorization setting, as subtests
// <root>/authz-off and <root>/authz-on: the matrix every engine's suite runs.
func eachRootAndAuthz(t *testing.T, cell func(t *testing.T, rk rootKind, authorized bool)) {
	for _, rk := range roots {
		t.Run(rk.name, func(t *testing.T) {
			for _, authorized := range []bool{false, true} {
				t.Run(authzName(authorized), func(t *testing.T) { cell(t, rk, authorized) })
			}
		})
	}
}

func authzName(authorized bool) string {
	if authorized {
		return "authz-on"
	}
	return "authz-off"
}

// cellConfig is one cell's server settings: the defaults (logging at warn) on rk's root, with
// authorization on when authorized (key is then an estate admin's API key, else ""). root and
// dirStorage are as rk.setup answers them.
func cellConfig(t *testing.T, rk rootKind, authorized bool) (cfg app.Config, root string, dirStorage map[string]string, key string) {
	t.Helper()
	cfg = app.DefaultConfig()
	cfg.LogLevel = "warn"
	root, dirStorage = rk.setup(t, &cfg)
	if authorized {
		key = authorize(t, &cfg, root)
	}
	return cfg, root, dirStorage, key
}

// TestSDKRestThenDir: namespaces and tables through connectNamespace("rest") against lancecat,
// data written by the SDK at the returned locations, table operations through the catalog,
// concurrent creates and renames, then the same root read and written by
// connectNamespace("dir"): for every SDK version given, in plain and managed-versioning mode,
// on a local root and (when MinIO is available) on an S3 root.
func TestSDKRestThenDir(t *testing.T) { restThenDir(t, false) }

// TestSDKRestThenDirAuthorized: the same SDK suite against lancecat with --authz openfga (a real
// OpenFGA), every request carrying an estate admin's API key: for every SDK version given, in plain
// and managed-versioning mode, on a local root and (when MinIO is available) on an S3 root.
func TestSDKRestThenDirAuthorized(t *testing.T) {
	testenv.OpenFGA(t) // skip here, not in every subtest, without one
	restThenDir(t, true)
}

// restThenDir runs the SDK script in every cell: root kind, mode, SDK version.
func restThenDir(t *testing.T, authorized bool) {
	dirs := testenv.SDKs(t)
	for _, rk := range roots {
		t.Run(rk.name, func(t *testing.T) {
			for _, mode := range []string{"plain", "managed"} {
				t.Run(mode, func(t *testing.T) {
					for _, dir := range dirs {
						t.Run(filepath.Base(dir), func(t *testing.T) {
							cfg, root, dirStorage, key := cellConfig(t, rk, authorized)
							var headers map[string]string
							if key != "" {
								headers = map[string]string{"x-api-key": key}
							}
							runSDKScript(t, cfg, dir, mode, root, dirStorage, headers)
						})
					}
				})
			}
		})
	}
}

// runNodeScript runs scripts/e2e/<name> (args follow) under node with the SDK in dir and env added
// to this process's, within 3 minutes, and asserts it succeeded; its output goes to the test log.
func runNodeScript(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script(t, name)}, args...)...)
	cmd.Env = append(append(os.Environ(), "LANCEDB_DIR="+dir), env...)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	assert.NilError(t, err, "SDK script %s failed", name)
}

// runSDKScript serves cfg and runs the SDK script against it with the SDK in dir, in mode (plain
// or managed), sending headers with every catalog request.
func runSDKScript(t *testing.T, cfg app.Config, dir, mode, root string, dirStorage, headers map[string]string) {
	t.Helper()
	url, opsURL := serveWithOps(t, cfg)
	env := append(os.Environ(), "LANCEDB_DIR="+dir)
	if mode == "managed" {
		enableManagedVersioning(t, url, headers)
		env = append(env, "LANCECAT_E2E_MANAGED=1")
	}
	if dirStorage != nil {
		b, _ := json.Marshal(dirStorage)
		env = append(env, "LANCECAT_E2E_DIR_STORAGE="+string(b))
		// The SDK's own credentials for the REST client's table locations: lancecat never hands
		// out its keys by default, so the client brings them, as any client would.
		env = append(env, "AWS_ACCESS_KEY_ID="+dirStorage["aws_access_key_id"], "AWS_SECRET_ACCESS_KEY="+dirStorage["aws_secret_access_key"])
	}
	if headers != nil {
		b, _ := json.Marshal(headers)
		env = append(env, "LANCECAT_E2E_HEADERS="+string(b))
	}
	if cfg.Governance.Authz == app.AuthzOpenFGA {
		env = append(env, "LANCECAT_E2E_AUTHZ=1")
	}
	// Well under the package timeout, so a hang fails here with the script's output so far.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script(t, "sdk-rest.mjs"), url, root)
	cmd.Env = env
	cmd.WaitDelay = 10 * time.Second // don't wait forever on pipes a killed node left open
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	assert.NilError(t, err, "SDK script failed")
	// In managed mode every SDK commit went through the catalog; in plain mode none did.
	commits := opCount(t, opsURL, "CreateTableVersion", "200")
	if mode == "managed" {
		assert.Assert(t, commits >= 20, "managed mode: only %d create_table_version commits", commits)
	} else {
		assert.Equal(t, commits, 0, "plain mode: the SDK committed through the catalog")
	}
}
