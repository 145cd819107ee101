package e2e

import (
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
)

// DaftVenvEnv is the venv of set daft-0.7.26 (scripts/python/versions.txt), exported by
// scripts/with-fixtures.sh.
const DaftVenvEnv = "LANCECAT_PYTHON_DAFT"

// TestDaft: Daft 0.7.26 with daft-lance 0.6.0 against lancecat serve through the REST namespace:
// a table declared and written by write_lance, read back with a filter and a projection, appended
// to and compacted (scripts/e2e/daft/test_daft.py, value-checked in Daft and in the catalog), on a
// local root and on a MinIO root whose only credentials are those the catalog vends, with
// authorization off and on (an estate admin's API key), plain and managed (every commit the
// catalog's CreateTableVersion, counted in its metrics).
func TestDaft(t *testing.T) {
	venv := testenv.PythonVenv(t, DaftVenvEnv)
	eachRootAndAuthz(t, func(t *testing.T, rk rootKind, authorized bool) {
		for _, mode := range []string{"plain", "managed"} {
			t.Run(mode, func(t *testing.T) {
				cfg, root, dirStorage, key := cellConfig(t, rk, authorized)
				env := []string{"LANCECAT_E2E_ROOT=" + root}
				if dirStorage != nil {
					cfg.Vend.Credentials, cfg.Vend.Duration = true, 15*time.Minute
					env = append(env, "LANCECAT_E2E_VENDED=1")
				}
				var headers map[string]string
				if authorized {
					env = append(env, "LANCECAT_E2E_API_KEY="+key)
					headers = map[string]string{"x-api-key": key}
				}
				url, ops := serveWithOps(t, cfg)
				if mode == "managed" {
					enableManagedVersioning(t, url, headers)
				}
				env = append(env, "LANCECAT_URL="+url)
				n := runPytestIn(t, engineScripts("daft"), venv, env, "test_daft.py")
				// daft-lance opens tables through the namespace and honours managed
				// versioning: on a managed root every commit (the create, three appends,
				// the compaction's) was the catalog's CreateTableVersion; on a plain one
				// none was.
				commits := opCount(t, ops, "CreateTableVersion", "200")
				if mode == "managed" {
					assert.Assert(t, commits >= 5, "CreateTableVersion answered 200 %d times", commits)
				} else {
					assert.Equal(t, commits, 0)
				}
				t.Logf("cell daft-0.7.26+daft-lance-0.6.0/%s/%s/%s: %s (%d catalog commits)", rk.name, authzName(authorized), mode, n, commits)
			})
		}
	})
}
