package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client"
	"github.com/lancecat/lancecat/internal/testenv"
)

// TestRay: lance-ray 0.5.0 on Ray 2.60.0 in a local two-node cluster (scripts/e2e/ray/cluster.py,
// started once for every cell) against lancecat serve through the REST namespace: a distributed
// write of a table the catalog declares, a distributed read with a filter and a projection, a
// distributed append, distributed compaction (lance-ray's compact_files), and with authorization on
// a reader who reads and cannot write (scripts/e2e/ray/test_ray.py, value-checked in Ray, pylance
// and the catalog); then our Go client sees the tables and the newest LanceDB Python SDK reads the
// compacted one. On a local root and a MinIO root, where the catalog vends each caller credentials
// scoped to the table (read-only for a reader) and Ray has none of its own; with authorization off
// and on; plain (Lance commits to storage itself) and managed (every commit is the catalog's
// CreateTableVersion).
func TestRay(t *testing.T) {
	venv := testenv.PythonVenv(t, RayVenvEnv)
	address := rayCluster(t, venv)
	eachRootAndAuthz(t, func(t *testing.T, rk rootKind, authorized bool) {
		for _, mode := range []string{"plain", "managed"} {
			t.Run(mode, func(t *testing.T) {
				n := runRayCell(t, venv, address, rk, authorized, mode)
				t.Logf("cell ray-2.60.0+lance-ray-0.5.0/%s/%s/%s: %s", rk.name, authzName(authorized), mode, n)
			})
		}
	})
}

// runRayCell serves one cell's catalog, runs the suite against it and checks what it left.
func runRayCell(t *testing.T, venv, address string, rk rootKind, authorized bool, mode string) pytestCounts {
	cfg, root, dirStorage, key := cellConfig(t, rk, authorized)
	env := []string{"LANCECAT_RAY_ADDRESS=" + address, "LANCECAT_E2E_ROOT=" + root}
	if dirStorage != nil {
		// The catalog's credentials are the only ones: scoped to each table, read-only for a reader.
		cfg.Vend.Credentials, cfg.Vend.Duration = true, 15*time.Minute
		env = append(env, "LANCECAT_E2E_VENDED=1")
	}
	if authorized {
		reader := apiKeys(t, cfg, "engine e2e", "ray-reader")[0]
		env = append(env, "LANCECAT_E2E_AUTHZ=1", "LANCECAT_E2E_API_KEY="+key, "LANCECAT_E2E_READER_KEY="+reader)
	}
	url, ops := serveWithOps(t, cfg)
	if mode == "managed" {
		var headers map[string]string
		if key != "" {
			headers = map[string]string{"x-api-key": key}
		}
		enableManagedVersioning(t, url, headers)
		env = append(env, "LANCECAT_E2E_MANAGED=1")
	}
	env = append(env, "LANCECAT_URL="+url, "LANCECAT_OPS_URL="+ops)
	n := runPytestIn(t, engineScripts("ray"), venv, env, "test_ray.py")
	if t.Failed() {
		return n
	}
	checkRayTables(t, url, key)
	// The newest LanceDB Python SDK reads what Ray wrote and compacted (the credentials, on MinIO,
	// again only the catalog's).
	sdk := testenv.PythonVenv(t, PythonSDKEnv)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{url}
	if key != "" {
		args = append(args, key)
	}
	cmd := testenv.PythonCmd(ctx, sdk, filepath.Join(engineScripts("ray"), "lancedb_read.py"), args...)
	cmd.Env = withoutAWS(cmd.Env)
	var read struct {
		LanceDB  string `json:"lancedb"`
		Rows     int    `json:"rows"`
		Version  int    `json:"version"`
		Filtered int    `json:"filtered"`
	}
	assert.NilError(t, json.Unmarshal(testenv.Run(t, cmd), &read))
	assert.Equal(t, read.Rows, 2900)
	assert.Equal(t, read.Filtered, 14)
	t.Logf("lancedb %s read the table Ray wrote and compacted at version %d", read.LanceDB, read.Version)
	return n
}

// checkRayTables: our Go client sees what the Ray suite left: its table listed, described at its
// latest listed version, its rows counted by lancecat's reader.
func checkRayTables(t *testing.T, url, key string) {
	t.Helper()
	ctx := context.Background()
	c, err := client.New(url, client.WithAPIKey(key))
	assert.NilError(t, err)
	id := []string{"rayns", "events"}
	listed, err := c.ListTables(ctx, id[:1])
	assert.NilError(t, err)
	assert.Assert(t, slices.Contains(listed, "events"), "events not in %v", listed)
	d, err := c.DescribeTable(ctx, id)
	assert.NilError(t, err)
	versions, err := c.ListVersions(ctx, id)
	assert.NilError(t, err)
	var latest int64
	for _, tv := range versions {
		latest = max(latest, tv.Version)
	}
	assert.Equal(t, d.Version, latest)
	n, err := c.CountRows(ctx, id, "")
	assert.NilError(t, err)
	assert.Equal(t, n, int64(2900))
}

// rayCluster starts the suite's two-node Ray cluster (scripts/e2e/ray/cluster.py) for the rest of
// t and returns its address; the cluster stops when t ends (its standard input closed). Its
// processes have no S3 credentials: on a MinIO root only what the catalog vends reaches the data.
func rayCluster(t *testing.T, venv string) string {
	t.Helper()
	// Ray's session files (with its sockets, whose paths must stay short) under a directory of
	// this test's own.
	tmp, err := os.MkdirTemp("", "ray-e2e-")
	assert.NilError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	cmd := exec.Command(filepath.Join(venv, "bin", "python"), filepath.Join(engineScripts("ray"), "cluster.py"), tmp)
	cmd.Env = withoutAWS(append(os.Environ(), "RAY_USAGE_STATS_ENABLED=0", "PYTHONDONTWRITEBYTECODE=1", "RUST_LOG=error", "LANCE_LOG=error"))
	stdin, err := cmd.StdinPipe()
	assert.NilError(t, err)
	stdout, err := cmd.StdoutPipe()
	assert.NilError(t, err)
	// Its log, read when it fails to start.
	logPath := filepath.Join(t.TempDir(), "cluster.log")
	logFile, err := os.Create(logPath)
	assert.NilError(t, err)
	defer logFile.Close()
	cmd.Stderr = logFile
	stderr := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	assert.NilError(t, cmd.Start())
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-exited:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			<-exited
			t.Logf("ray cluster: killed after a minute of shutting down")
		}
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	var ready struct {
		Address string `json:"address"`
		Nodes   int    `json:"nodes"`
	}
	select {
	case line := <-lines:
		assert.NilError(t, json.Unmarshal([]byte(line), &ready), "cluster.py printed %q:\n%s", line, stderr())
	case <-time.After(3 * time.Minute):
		t.Fatalf("the Ray cluster did not start in 3 minutes:\n%s", stderr())
	}
	assert.Equal(t, ready.Nodes, 2, "%s", stderr())
	return ready.Address
}

// withoutAWS is env less every AWS_* variable.
func withoutAWS(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "AWS_") })
}
