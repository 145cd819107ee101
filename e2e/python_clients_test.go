package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/internal/testenv"
)

// newestPython is the venv of the newest pinned lancedb line (the first set in
// scripts/python/versions.txt); it also holds the spec client lance-namespace-urllib3-client.
func newestPython(t *testing.T) string {
	return pythonVenvs(t)[0]
}

// TestPythonSpecClient: the spec's generated Python client (lance-namespace-urllib3-client 0.13.0)
// against lancecat serve, every operation it offers called and value-checked
// (scripts/e2e/python/test_spec.py), with authorization off and on.
func TestPythonSpecClient(t *testing.T) {
	venv := newestPython(t)
	for _, authorized := range []bool{false, true} {
		t.Run(authzName(authorized), func(t *testing.T) {
			cfg, root, _, key := cellConfig(t, roots[0], authorized)
			url := serve(t, cfg)
			n := runPytest(t, venv, pythonEnv(url, "namespace", root, key, nil), "test_spec.py")
			t.Logf("cell spec-client/local/%s: %s", authzName(authorized), n)
		})
	}
}

// TestPythonNodeCrossClient: a Python client and a Node client on one catalog see each other's
// writes: Python writes (namespace and remote mode), the Node SDK reads them and writes
// (scripts/e2e/python/cross.mjs), Python reads what Node wrote; with authorization off and on.
func TestPythonNodeCrossClient(t *testing.T) {
	venv := newestPython(t)
	nodes := testenv.SDKs(t)
	node := nodes[len(nodes)-1]
	for _, authorized := range []bool{false, true} {
		t.Run(authzName(authorized), func(t *testing.T) {
			cfg, root, _, key := cellConfig(t, roots[0], authorized)
			url := serve(t, cfg)
			env := pythonEnv(url, "namespace", root, key, nil)
			t.Run("python-writes", func(t *testing.T) {
				n := runPytest(t, venv, append(env, "LANCECAT_E2E_PHASE=python-writes"), "test_cross.py")
				assert.Equal(t, n.passed, 1, "%s", n)
			})
			t.Run("node-reads-and-writes", func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, "node", filepath.Join(pythonScripts(), "cross.mjs"), url)
				cmd.Env = append(os.Environ(), "LANCEDB_DIR="+node)
				if key != "" {
					cmd.Env = append(cmd.Env, "LANCECAT_E2E_API_KEY="+key)
				}
				cmd.WaitDelay = 10 * time.Second
				out, err := cmd.CombinedOutput()
				t.Logf("%s", out)
				assert.NilError(t, err, "Node SDK %s", filepath.Base(node))
			})
			t.Run("python-reads", func(t *testing.T) {
				n := runPytest(t, venv, append(env, "LANCECAT_E2E_PHASE=python-reads"), "test_cross.py")
				assert.Equal(t, n.passed, 1, "%s", n)
			})
		})
	}
}

// TestPythonQuickstart runs the Python quickstart snippets (examples/quickstart/*.py, shown on
// docs/clients.md, the copies checked equal to the files by docSnippets) with the newest pinned lancedb
// against a `lancecat serve` started as `make serve` starts it, their output checked.
func TestPythonQuickstart(t *testing.T) {
	venv := newestPython(t)
	repo := repoRoot(t)
	snippets := docSnippets(t, repo)
	bin := lancecatBinary(t)
	work := t.TempDir()
	port := serveAsMakeServe(t, bin, work)
	py := filepath.Join(venv, "bin", "python")
	var names []string
	for name := range snippets {
		if strings.HasSuffix(name, ".py") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	// A new Python snippet in the docs gets its run and checks here.
	assert.DeepEqual(t, names, []string{"examples/quickstart/namespace.py", "examples/quickstart/remote.py"})
	out := runSnippet(t, work, port, snippets["examples/quickstart/namespace.py"], "namespace.py", py)
	assert.Check(t, is.Contains(out, "rows: 2\nnearest: fern\n"))
	out = runSnippet(t, work, port, snippets["examples/quickstart/remote.py"], "remote.py", py)
	assert.Check(t, is.Contains(out, "rows: 2\n"))
}
