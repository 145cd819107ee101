package conformance_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/conformance"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/registry"
)

// serve runs lancecat with cfg on a free port until the test ends.
func serve(t *testing.T, cfg app.Config) string {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	cfg.LogLevel = "warn"
	ready := make(chan net.Addr, 1)
	return testenv.Serve(t, ready, func(ctx context.Context) error { return app.Run(ctx, cfg, nil, ready) })
}

// run runs the whole suite against url and fails t on any failed check, logging the table.
func run(t *testing.T, url string, header http.Header) conformance.Report {
	t.Helper()
	rep, err := conformance.Run(context.Background(), conformance.Config{URL: url, Header: header})
	assert.NilError(t, err)
	var buf bytes.Buffer
	assert.NilError(t, rep.WriteTable(&buf))
	t.Logf("\n%s", buf.String())
	assert.Check(t, rep.OK(), "%d checks failed", rep.Failed)
	assert.Check(t, rep.Passed > 40, "only %d checks passed", rep.Passed)
	return rep
}

// TestLancecatLocal: the suite is green against lancecat on a local root, and leaves nothing of
// its run behind (every table directory is gone with the run's namespace).
func TestLancecatLocal(t *testing.T) {
	t.Parallel()
	cfg := app.DefaultConfig()
	cfg.Root = filepath.Join(t.TempDir(), "root")
	run(t, serve(t, cfg), nil)
	entries, err := os.ReadDir(cfg.Root)
	assert.NilError(t, err)
	for _, e := range entries {
		switch e.Name() {
		case "__manifest", "_lancecat", ".lancecat-tmp":
		default:
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestLancecatMinIO: the suite is green against lancecat on an S3 (MinIO) root.
func TestLancecatMinIO(t *testing.T) {
	t.Parallel()
	env := testenv.S3(t)
	_, bucket := testenv.S3Bucket(t)
	cfg := app.DefaultConfig()
	cfg.Root = "s3://" + bucket + "/catalog"
	cfg.S3Endpoint, cfg.S3Region = env.Endpoint, env.Region
	cfg.S3AccessKey, cfg.S3SecretKey = env.AccessKey, env.SecretKey
	cfg.S3PathStyle, cfg.S3AllowHTTP = true, true
	run(t, serve(t, cfg), nil)
}

// TestLancecatAuthorization: the suite is green against lancecat with authorization on (real
// OpenFGA), the caller an estate admin sending an API key. Its capabilities check sends every
// unbacked operation and wants 406 code 0, the same answer as with authorization off (issue 18:
// an unbacked door used to answer 403 "no authorization rule" here). A caller without a key is
// refused (401 code 16) before the suite can make its namespace.
func TestLancecatAuthorization(t *testing.T) {
	t.Parallel()
	fga := testenv.OpenFGA(t)
	cfg := app.DefaultConfig()
	cfg.Root = filepath.Join(t.TempDir(), "root")
	cfg.ControlRoot = filepath.Join(t.TempDir(), "control")
	var b [6]byte
	_, _ = rand.Read(b[:])
	cfg.Governance.Authz = app.AuthzOpenFGA
	cfg.Governance.OpenFGAURL = fga
	cfg.Governance.OpenFGAStore = "lancecat-conformance-" + hex.EncodeToString(b[:])
	cfg.Governance.EstateAdmins = "user:conformance"
	cfg.Governance.OpenFGATimeout = 20 * time.Second
	ctx := context.Background()
	control, _, err := app.OpenControlRoot(ctx, cfg)
	assert.NilError(t, err)
	key, _, err := authz.NewAPIKeys(registry.NewStore(control)).Create(ctx, authz.User("conformance"), "conformance suite")
	assert.NilError(t, err)
	url := serve(t, cfg)
	_, err = conformance.Run(ctx, conformance.Config{URL: url})
	assert.ErrorContains(t, err, "401")
	run(t, url, http.Header{"x-api-key": {key}})
}
