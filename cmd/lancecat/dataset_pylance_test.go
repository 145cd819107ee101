package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
)

// TestInspectPylanceVersions: `lancecat dataset inspect` on what pylance 14 writes
// (scripts/pylance/dataset.py): its default data format, a dataset of mixed data file versions
// (feature flag 256, named), the unstable 2.3 and the legacy format (said to be unreadable by
// lancecat), and its indices on a dataset with stable row ids (index versions; the BTREE of row
// addresses).
func TestInspectPylanceVersions(t *testing.T) {
	venv := testenv.Pylance(t)
	script := testenv.Script("pylance", "dataset.py")
	dir := t.TempDir()
	write := func(name string, versions ...string) string {
		p := filepath.Join(dir, name)
		for _, v := range versions {
			testenv.PythonJSON(t, nil, venv, script, "write", p, v, "0", "100", "100")
		}
		return p
	}
	stable := filepath.Join(dir, "stable")
	testenv.PythonJSON(t, nil, venv, script, "write", stable, "default", "0", "300", "100", "stable")
	testenv.PythonJSON(t, nil, venv, script, "index", stable)
	for _, tc := range []struct {
		dir  string
		want []string
		json func(t *testing.T, r lance.InspectReport)
	}{
		{write("default", "default"), []string{"writer         lance 14.0.2\n", "data format    lance 2.2\n", "feature flags  reader 0, writer 0\n"}, func(t *testing.T, r lance.InspectReport) {
			assert.DeepEqual(t, r.DataFileVersions, []string{"2.2"})
		}},
		{write("mixed", "2.1", "2.2"), []string{
			"data format    lance 2.1 (data files 2.1, 2.2)\n",
			"feature flags  reader 256 (mixed file versions), writer 256 (mixed file versions)\n",
		}, func(t *testing.T, r lance.InspectReport) {
			assert.DeepEqual(t, r.DataFileVersions, []string{"2.1", "2.2"})
			assert.DeepEqual(t, r.ReaderFlagNames, []string{"mixed file versions"})
		}},
		{write("v23", "2.3"), []string{"data format    lance 2.3; lancecat does not read 2.3\n"}, func(t *testing.T, r lance.InspectReport) {
			assert.DeepEqual(t, r.Unreadable, []string{"2.3"})
		}},
		{write("legacy", "legacy"), []string{"data format    lance 0.1; lancecat does not read 0.1\n"}, nil},
		{stable, []string{
			"feature flags  reader 2 (stable row ids), writer 2 (stable row ids)\n",
			"id_idx     BTree     id     1 segment(s), 3 fragment(s), built at version 1, index version 1, of row addresses\n",
			"color_idx  Bitmap    color  1 segment(s), 3 fragment(s), built at version 2, index version 0\n",
		}, func(t *testing.T, r lance.InspectReport) {
			for _, ix := range r.Indices {
				assert.Equal(t, ix.RowAddresses, ix.Name == "id_idx", ix.Name)
			}
		}},
	} {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			var out, errOut bytes.Buffer
			assert.Equal(t, run([]string{"dataset", "inspect", tc.dir}, &out, &errOut), 0, errOut.String())
			for _, w := range tc.want {
				assert.Check(t, strings.Contains(out.String(), w), "output lacks %q:\n%s", w, out.String())
			}
			if tc.json == nil {
				return
			}
			out.Reset()
			assert.Equal(t, run([]string{"dataset", "inspect", "--json", tc.dir}, &out, &errOut), 0, errOut.String())
			var r lance.InspectReport
			assert.NilError(t, json.Unmarshal(out.Bytes(), &r))
			tc.json(t, r)
		})
	}
}
