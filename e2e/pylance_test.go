package e2e

import (
	"path/filepath"
	"testing"

	"github.com/lancecat/lancecat/internal/testenv"
)

// TestPylance: pylance 14 (the `lance` package, set pylance-14.0.2 of scripts/python/versions.txt)
// against lancecat serve through the REST namespace (lance.namespace.RestNamespace,
// lance.dataset/write_dataset with namespace_client= and table_id=), on a local root and a MinIO
// root, with authorization off and on (an estate admin's API key as the x-api-key header), with
// the catalog's table version management off (plain) and on (managed):
// scripts/e2e/pylance/test_pylance.py, value-checked case by case: tables placed and opened
// through the catalog; every data_storage_version pylance writes read, searched and appended to
// by lancecat (2.3 refused with a 406 naming it); tables lancecat writes read, deleted from and
// appended to by pylance; indices both ways (pylance's IVF_FLAT, IVF_PQ, BTREE, BITMAP, INVERTED
// used by lancecat's query, lancecat's used and optimized by pylance); stable row ids.
func TestPylance(t *testing.T) {
	venv := testenv.Pylance(t)
	dir := filepath.Join(pythonScripts(), "..", "pylance")
	eachRootAndAuthz(t, func(t *testing.T, rk rootKind, authorized bool) {
		for _, mode := range []string{"plain", "managed"} {
			t.Run(mode, func(t *testing.T) {
				cfg, root, dirStorage, key := cellConfig(t, rk, authorized)
				url := serve(t, cfg)
				if mode == "managed" {
					var headers map[string]string
					if key != "" {
						headers = map[string]string{"x-api-key": key}
					}
					enableManagedVersioning(t, url, headers)
				}
				// conftest.py reads the same variables as the lancedb suites'.
				n := runPytestIn(t, dir, venv, pythonEnv(url, "namespace", root, key, dirStorage), "test_pylance.py")
				t.Logf("cell pylance-14.0.2/%s/%s/%s: %s", rk.name, authzName(authorized), mode, n)
			})
		}
	})
}
