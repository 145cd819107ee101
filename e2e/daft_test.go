package e2e

import (
	"testing"
	"time"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/internal/testenv"
)

// DaftVenvEnv is the venv of set daft-0.7.26 (scripts/python/versions.txt), exported by
// scripts/with-fixtures.sh.
const DaftVenvEnv = "LANCECAT_PYTHON_DAFT"

// TestDaft: Daft 0.7.26 with daft-lance 0.6.0 against lancecat serve through the REST namespace:
// a table declared and written by write_lance, read back with a filter and a projection, appended
// to and compacted (scripts/e2e/daft/test_daft.py, value-checked in Daft and in the catalog), on a
// local root and on a MinIO root whose only credentials are those the catalog vends, with
// authorization off and on (an estate admin's API key).
func TestDaft(t *testing.T) {
	venv := testenv.PythonVenv(t, DaftVenvEnv)
	for _, rk := range roots {
		t.Run(rk.name, func(t *testing.T) {
			for _, authorized := range []bool{false, true} {
				name := "authz-off"
				if authorized {
					name = "authz-on"
				}
				t.Run(name, func(t *testing.T) {
					cfg := app.DefaultConfig()
					cfg.LogLevel = "warn"
					root, dirStorage := rk.setup(t, &cfg)
					env := []string{"LANCECAT_E2E_ROOT=" + root}
					if dirStorage != nil {
						cfg.Vend.Credentials, cfg.Vend.Duration = true, 15*time.Minute
						env = append(env, "LANCECAT_E2E_VENDED=1")
					}
					if authorized {
						env = append(env, "LANCECAT_E2E_API_KEY="+authorize(t, &cfg, root))
					}
					env = append(env, "LANCECAT_URL="+serve(t, cfg))
					n := runPytestIn(t, engineScripts("daft"), venv, env, "test_daft.py")
					t.Logf("cell daft-0.7.26+daft-lance-0.6.0/%s/%s: %s", rk.name, name, n)
				})
			}
		})
	}
}
