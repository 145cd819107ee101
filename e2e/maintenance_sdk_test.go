package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/internal/testenv"
)

// TestSDKIndexMaintenance is issue 17's index acceptance in namespace mode: the SDK
// (connectNamespace("rest") against lancecat; local root with every SDK, MinIO with the newest) makes a table with 100
// small appends, deletes, and a BTREE and an IVF_PQ index it builds; one POST
// /v1/table/{id}/maintenance/run (compact, optimize_indices, cleanup) leaves at most 2
// fragments, every row value identical, both indices listed, used by the SDK's explainPlan,
// answering the same and covering every row; the SDK then appends and optimizes on top.
func TestSDKIndexMaintenance(t *testing.T) {
	dirs := testenv.SDKs(t)
	for _, rk := range roots {
		t.Run(rk.name, func(t *testing.T) {
			for i, dir := range dirs {
				if rk.name != "local" && i != len(dirs)-1 {
					continue // on S3 the newest SDK only: each case is ~10 SDK processes
				}
				t.Run(filepath.Base(dir), func(t *testing.T) {
					cfg := app.DefaultConfig()
					cfg.LogLevel = "warn"
					_, dirStorage := rk.setup(t, &cfg)
					url := serve(t, cfg)
					env := []string{"LANCECAT_SDK_REST=" + url}
					if dirStorage != nil {
						env = append(env, "AWS_ACCESS_KEY_ID="+dirStorage["aws_access_key_id"], "AWS_SECRET_ACCESS_KEY="+dirStorage["aws_secret_access_key"])
					}
					sdk := func(command string, arg any) []byte {
						t.Helper()
						args := []string{dir, "-", "t", command}
						if arg != nil {
							args = append(args, testenv.JSON(t, arg))
						}
						cmd := testenv.NodeCmd(context.Background(), testenv.Script("maintenance", "sdk_idx.mjs"), args...)
						cmd.Env = append(cmd.Env, env...)
						return testenv.Run(t, cmd)
					}
					type probe struct {
						Indices []map[string]any `json:"indices"`
						Stats   map[string]*struct {
							Indexed, Unindexed, Indices int
						} `json:"stats"`
						Filter struct {
							IDs  []string `json:"ids"`
							Plan string   `json:"plan"`
						} `json:"filter"`
						Ann struct {
							IDs  []string `json:"ids"`
							Plan string   `json:"plan"`
						} `json:"ann"`
						Count  int    `json:"count"`
						Digest string `json:"digest"`
					}
					look := func() probe {
						var p probe
						out := sdk("probe", map[string]any{"where": "id >= 300 AND id < 340", "vector": 1234})
						assert.NilError(t, json.Unmarshal(out, &p), string(out))
						return p
					}
					sdk("create", nil)
					var ops []map[string]any
					next := 10
					for i := range 100 {
						n := 20 + i%13
						if i >= 60 {
							n = 5 + i%11
						}
						ops = append(ops, map[string]any{"op": "gen", "from": next, "n": n})
						next += n
						if i == 59 {
							ops = append(ops, map[string]any{"op": "index", "column": "id"},
								map[string]any{"op": "index", "column": "vec", "partitions": 4, "subvectors": 4})
						}
						if i == 80 {
							ops = append(ops, map[string]any{"op": "delete", "where": "id % 10 = 3"})
						}
					}
					ops = append(ops, map[string]any{"op": "delete", "where": "id >= 500 AND id < 560"})
					sdk("ops", ops)
					before := look()
					assert.Equal(t, len(before.Indices), 2)

					body := `{"steps":["compact","optimize_indices","cleanup"],"older_than_seconds":0}`
					resp, err := http.Post(url+"/v1/table/ns$t/maintenance/run?delimiter=%24", "application/json", strings.NewReader(body))
					assert.NilError(t, err)
					var rep struct {
						Steps []struct {
							Step           string `json:"step"`
							Status         string `json:"status"`
							Reason         string `json:"reason"`
							FragmentsAfter int    `json:"fragments_after"`
							Indices        []struct {
								Name   string `json:"name"`
								Status string `json:"status"`
							} `json:"indices"`
						} `json:"steps"`
					}
					raw := new(bytes.Buffer)
					_, _ = raw.ReadFrom(resp.Body)
					resp.Body.Close()
					assert.Equal(t, resp.StatusCode, http.StatusOK, raw.String())
					assert.NilError(t, json.Unmarshal(raw.Bytes(), &rep))
					t.Logf("maintenance: %s", raw.String())
					for _, s := range rep.Steps {
						assert.Equal(t, s.Status, "done", "%s: %s", s.Step, s.Reason)
						if s.Step == "compact" {
							assert.Assert(t, s.FragmentsAfter <= 2, "%d fragments", s.FragmentsAfter)
						}
						if s.Step == "optimize_indices" {
							// The report names what happened to each index (the control spec's MaintenanceIndexResult).
							var names []string
							for _, ix := range s.Indices {
								names = append(names, ix.Name)
							}
							slices.Sort(names)
							assert.DeepEqual(t, names, []string{"id_idx", "vec_idx"})
						}
					}

					after := look()
					assert.Equal(t, after.Count, before.Count)
					assert.Equal(t, after.Digest, before.Digest)
					assert.DeepEqual(t, after.Indices, before.Indices)
					assert.DeepEqual(t, after.Filter.IDs, before.Filter.IDs)
					assert.DeepEqual(t, after.Ann.IDs, before.Ann.IDs)
					assert.Assert(t, strings.Contains(after.Filter.Plan, "@id_idx(BTree)"), after.Filter.Plan)
					assert.Assert(t, strings.Contains(after.Ann.Plan, "name=vec_idx"), after.Ann.Plan)
					for name, st := range after.Stats {
						assert.Equal(t, st.Unindexed, 0, "index %s", name)
					}
					sdk("ops", []map[string]any{{"op": "gen", "from": 5000000, "n": 30}, {"op": "delete", "where": "id = 12"}})
					sdk("optimize", nil)
					again := look()
					assert.Equal(t, again.Count, before.Count+30-1)
					assert.DeepEqual(t, again.Filter.IDs, before.Filter.IDs)
				})
			}
		})
	}
}
