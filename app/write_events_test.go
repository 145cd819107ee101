package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/catalog/catalogtest"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/server"
)

// writeDoorCase is how TestEveryWriteDoorRecordsItsEvent drives one write door: do makes the
// request(s), and want are the events the door must have recorded after it (in order).
type writeDoorCase struct {
	op   string
	do   func(t *testing.T, e *governedEnv)
	want []string
}

// call sends one request to e and fails unless it answers 2xx; it answers the body.
func (e *governedEnv) call(t *testing.T, method, path, contentType string, body []byte) []byte {
	t.Helper()
	status, b := send(t, method, e.url+path, contentType, body, nil)
	assert.Assert(t, status/100 == 2, "%s %s: %d %s", method, path, status, b)
	return b
}

func (e *governedEnv) post(t *testing.T, path string, body any) []byte {
	t.Helper()
	b, err := json.Marshal(body)
	assert.NilError(t, err)
	return e.call(t, http.MethodPost, path, "application/json", b)
}

// eventTypes are the types of every event recorded so far, in order.
func (e *governedEnv) eventTypes(t *testing.T) []string {
	t.Helper()
	evs, _, _, err := e.gov.Events().Since("", 100000)
	assert.NilError(t, err)
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

const arrowStream = "application/vnd.apache.arrow.stream"

// TestEveryWriteDoorRecordsItsEvent (issue 29, item 11): every door of the Lance spec that
// writes (guards.IsReadRequest says it is not a read: the same rule read-only mode and write
// shedding apply) passes the governed catalog, which records its change event. The doors are
// taken from the embedded spec, so a write door added later fails here until it has a case here
// and an event there.
func TestEveryWriteDoorRecordsItsEvent(t *testing.T) {
	e := newGovernedEnv(t, withTrash(7*24*time.Hour), withMaintenance())
	ctx := context.Background()
	var txn string
	cases := []writeDoorCase{
		{"CreateNamespace", func(t *testing.T, e *governedEnv) { e.post(t, "/v1/namespace/w/create", map[string]any{}) }, []string{"namespace_created"}},
		{"CreateTable", func(t *testing.T, e *governedEnv) {
			e.call(t, http.MethodPost, "/v1/table/w$t/create", arrowStream, int64Stream(t, 5))
		}, []string{"table_created"}},
		{"DeclareTable", func(t *testing.T, e *governedEnv) { e.post(t, "/v1/table/w$d/declare", map[string]any{}) }, []string{"table_declared"}},
		{"InsertIntoTable", func(t *testing.T, e *governedEnv) {
			e.call(t, http.MethodPost, "/v1/table/w$t/insert", arrowStream, int64Stream(t, 2))
		}, []string{"table_rows_inserted"}},
		{"MergeInsertIntoTable", func(t *testing.T, e *governedEnv) {
			e.call(t, http.MethodPost, "/v1/table/w$t/merge_insert?on=id&when_matched_update_all=true&when_not_matched_insert_all=true", arrowStream, int64Stream(t, 3))
		}, []string{"table_rows_merged"}},
		{"UpdateTable", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/update", map[string]any{"predicate": "id > 3", "updates": [][]string{{"id", "id + 100"}}})
		}, []string{"table_rows_updated"}},
		{"DeleteFromTable", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/delete", map[string]any{"predicate": "id > 103"})
		}, []string{"table_rows_deleted"}},
		{"AlterTableAddColumns", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/add_columns", map[string]any{"new_columns": []any{map[string]any{"name": "dbl", "expression": "id * 2"}}})
			e.post(t, "/v1/table/w$t/add_columns", map[string]any{"new_columns": []any{map[string]any{"name": "tri", "computed": "id * 3"}}})
		}, []string{"table_columns_added", "table_columns_added"}},
		{"AlterTableBackfillColumns", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/backfill_column", map[string]any{"column": "tri"})
		}, []string{"table_column_backfilled"}},
		{"AlterTableAlterColumns", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/alter_columns", map[string]any{"alterations": []any{map[string]any{"path": "dbl", "rename": "dbl2"}}})
		}, []string{"table_columns_altered"}},
		{"AlterTableDropColumns", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/drop_columns", map[string]any{"columns": []string{"dbl2"}})
		}, []string{"table_columns_dropped"}},
		{"UpdateTableSchemaMetadata", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/schema_metadata/update", map[string]any{"owner": "team-a"})
		}, []string{"table_schema_metadata_updated"}},
		{"UpdateFieldMetadata", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/update_field_metadata", map[string]any{"updates": []any{map[string]any{"path": "id", "metadata": map[string]any{"unit": "n"}}}})
		}, []string{"table_field_metadata_updated"}},
		{"CreateTableTag", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/tags/create", map[string]any{"tag": "v1", "version": 1})
		}, []string{"table_tag_created"}},
		{"UpdateTableTag", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/tags/update", map[string]any{"tag": "v1", "version": 2})
		}, []string{"table_tag_updated"}},
		{"DeleteTableTag", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/tags/delete", map[string]any{"tag": "v1"})
		}, []string{"table_tag_deleted"}},
		{"CreateTableBranch", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/branches/create", map[string]any{"name": "dev"})
		}, []string{"table_branch_created"}},
		{"DeleteTableBranch", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/branches/delete", map[string]any{"name": "dev"})
		}, []string{"table_branch_deleted"}},
		{"CreateTableIndex", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/create_index", map[string]any{"column": "id", "index_type": "BTREE"})
		}, []string{"table_index_created"}},
		{"CreateTableScalarIndex", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/create_scalar_index", map[string]any{"column": "id", "index_type": "BITMAP", "name": "id_bitmap"})
		}, []string{"table_index_created"}},
		{"DropTableIndex", func(t *testing.T, e *governedEnv) { e.post(t, "/v1/table/w$t/index/id_bitmap/drop", map[string]any{}) }, []string{"table_index_dropped"}},
		{"RestoreTable", func(t *testing.T, e *governedEnv) { e.post(t, "/v1/table/w$t/restore", map[string]any{"version": 2}) }, []string{"table_restored"}},
		{"CreateTableVersion", func(t *testing.T, e *governedEnv) {
			en, ok, err := catalogtest.StageNext(ctx, e.catalog, ident.ID{"w", "t"})
			assert.NilError(t, err)
			assert.Assert(t, ok)
			e.post(t, "/v1/table/w$t/version/create", map[string]any{"version": en.Version, "manifest_path": en.ManifestPath})
		}, []string{"table_version_created"}},
		{"BatchCreateTableVersions", func(t *testing.T, e *governedEnv) {
			en, ok, err := catalogtest.StageNext(ctx, e.catalog, ident.ID{"w", "t"})
			assert.NilError(t, err)
			assert.Assert(t, ok)
			e.post(t, "/v1/table/version/batch-create", map[string]any{"entries": []any{map[string]any{"id": []string{"w", "t"}, "version": en.Version, "manifest_path": en.ManifestPath}}})
		}, []string{"table_version_created"}},
		{"BatchDeleteTableVersions", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$t/version/delete", map[string]any{"ranges": []any{map[string]any{"start_version": 1, "end_version": 2}}})
		}, []string{"table_versions_deleted"}},
		{"BatchCommitTables", func(t *testing.T, e *governedEnv) {
			var out struct {
				TransactionID string `json:"transaction_id"`
			}
			b := e.post(t, "/v1/table/batch-commit", map[string]any{"operations": []any{map[string]any{"declare_table": map[string]any{"id": []string{"w", "bd"}}}}})
			assert.NilError(t, json.Unmarshal(b, &out))
			txn = out.TransactionID
		}, []string{"table_declared"}},
		{"AlterTransaction", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/transaction/"+strings.ReplaceAll(txn, "$", "%24")+"/alter", map[string]any{"actions": []any{map[string]any{"setPropertyAction": map[string]any{"key": "note", "value": "x"}}}})
		}, []string{"transaction_altered"}},
		{"CreateMaterializedView", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/materialized_view/w$mv/create", map[string]any{"kind": "query", "source_query": "SELECT id FROM t"})
		}, []string{"table_created", "table_view_refreshed"}},
		{"RefreshMaterializedView", func(t *testing.T, e *governedEnv) {
			// The create's refresh may still hold the view's lease: a second refresh meanwhile is 409.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				b, _ := json.Marshal(map[string]any{})
				res, err := http.Post(e.url+"/v1/materialized_view/w$mv/refresh", "application/json", bytes.NewReader(b))
				assert.NilError(t, err)
				res.Body.Close()
				if res.StatusCode/100 == 2 {
					return
				}
				assert.Assert(t, res.StatusCode == http.StatusConflict && time.Now().Before(deadline), "refresh: %d", res.StatusCode)
			}
		}, []string{"table_view_refreshed"}},
		{"RenameTable", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/table/w$d/rename", map[string]any{"new_table_name": "d2"})
		}, []string{"table_renamed"}},
		{"DeregisterTable", func(t *testing.T, e *governedEnv) {
			e.call(t, http.MethodPost, "/v1/table/w$r/create", arrowStream, int64Stream(t, 1))
			b := e.post(t, "/v1/table/w$r/deregister", map[string]any{})
			var out struct {
				Location string `json:"location"`
			}
			assert.NilError(t, json.Unmarshal(b, &out))
			e.post(t, "/v1/table/w$r2/register", map[string]any{"location": out.Location})
		}, []string{"table_created", "table_deregistered", "table_registered"}},
		{"RegisterTable", func(*testing.T, *governedEnv) {}, nil}, // with DeregisterTable
		{"DropTable", func(t *testing.T, e *governedEnv) { e.post(t, "/v1/table/w$r2/drop", map[string]any{}) }, []string{"table_dropped"}},
		{"DropNamespace", func(t *testing.T, e *governedEnv) {
			e.post(t, "/v1/namespace/w/drop", map[string]any{"behavior": "Cascade"})
		}, []string{"namespace_dropped"}},
	}

	// The cases cover exactly the spec's write doors.
	ops, err := server.SpecOperations()
	assert.NilError(t, err)
	var writes []string
	for _, op := range ops {
		if !guards.IsReadRequest(op.Method, op.EchoPath()) {
			writes = append(writes, op.ID)
		}
	}
	var covered []string
	for _, c := range cases {
		covered = append(covered, c.op)
	}
	slices.Sort(writes)
	slices.Sort(covered)
	assert.DeepEqual(t, covered, writes)

	for _, c := range cases {
		before := len(e.eventTypes(t))
		c.do(t, e)
		// Jobs (a backfill, a view's refresh) commit after their answer: wait for their events.
		var got []string
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			got = e.eventTypes(t)[before:]
			if len(got) >= len(c.want) || time.Now().After(deadline) {
				break
			}
		}
		if len(got) > len(c.want) {
			got = got[:len(c.want)] // a job's later checkpoints
		}
		assert.Check(t, is.DeepEqual(got, c.want, cmpopts.EquateEmpty()), "write door %s", c.op)
	}
}
