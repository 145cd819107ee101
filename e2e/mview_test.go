package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
)

var mvSchema = arrow.NewSchema([]arrow.Field{
	{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

func mvBatch(regions []string, qty []int32, price []float64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, mvSchema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues(regions, nil)
	b.Field(1).(*array.Int32Builder).AppendValues(qty, nil)
	b.Field(2).(*array.Float64Builder).AppendValues(price, nil)
	return b.NewRecordBatch()
}

// mvCall posts body to route and answers the status and the decoded JSON answer.
func mvCall(t *testing.T, url, route string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url+route+"?delimiter=%24", "application/json", bytes.NewReader(b))
	assert.NilError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		assert.NilError(t, json.Unmarshal(raw, &out), "%s", raw)
	} else {
		out = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, out
}

// mvJob waits for task job of table id (GET /v1/table/{id}/tasks) to end and answers it. The
// wait is bounded only to fail instead of hanging: nothing here asserts a duration.
func mvJob(t *testing.T, url, id, job string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(url + "/v1/table/" + id + "/tasks?delimiter=%24")
		assert.NilError(t, err)
		var list struct {
			Tasks []map[string]any `json:"tasks"`
		}
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		assert.NilError(t, err)
		for _, task := range list.Tasks {
			if task["task_id"] == job && task["state"] != "running" {
				assert.Equal(t, task["state"], "succeeded", "%v", task)
				return task
			}
		}
	}
	t.Fatalf("job %s of %s did not end", job, id)
	return nil
}

func mvCount(t *testing.T, url, id, predicate string) float64 {
	t.Helper()
	status, out := mvCall(t, url, "/v1/table/"+id+"/count_rows", map[string]any{"predicate": predicate})
	assert.Equal(t, status, http.StatusOK, "%v", out)
	var n float64
	assert.NilError(t, json.Unmarshal([]byte(out["raw"].(string)), &n))
	return n
}

// TestMaterializedViewsAndBackfill drives the doors of issue 18 items 4 and 5 on a served
// catalog (the tasks door wired as `lancecat serve` wires it): a query view created and filled
// (values checked with count_rows predicates), one created with_no_data then refreshed
// incrementally after an append (and the aggregate one merging the append into its groups), the refusals (bad SQL 400 naming the position, unknown source
// 404, udtf 406 saying why), and a computed column declared and backfilled. With the SDK
// fixtures, the official client reads the view and the backfilled column.
func TestMaterializedViewsAndBackfill(t *testing.T) {
	ctx := context.Background()
	cfg, ns := seededRoot(t)
	_, err := ns.CreateNamespace(ctx, ident.ID{"ns"}, nil, "")
	assert.NilError(t, err)
	first := mvBatch([]string{"eu", "us", "eu", "ap", "us", "eu"}, []int32{1, 2, 3, 4, 5, 6}, []float64{10, 20, 30, 40, 50, 60})
	defer first.Release()
	_, _, err = ns.CreateTable(ctx, ident.ID{"ns", "sales"}, catalog.NewTable{Schema: mvSchema, Rows: catalog.Records(mvSchema, first)})
	assert.NilError(t, err)
	url := serve(t, cfg)

	// A view filled at create: one row per region.
	status, out := mvCall(t, url, "/v1/materialized_view/ns$by_region/create", map[string]any{"kind": "query", "output_schema": "",
		"source_query": "SELECT region, count(*) AS n, sum(qty) AS q, avg(price) AS p FROM sales GROUP BY region ORDER BY region"})
	assert.Equal(t, status, http.StatusCreated, "%v", out)
	job, _ := out["job_id"].(string)
	assert.Assert(t, job != "", "%v", out)
	mvJob(t, url, "ns$by_region", job)
	assert.Equal(t, mvCount(t, url, "ns$by_region", ""), 3.0)
	assert.Equal(t, mvCount(t, url, "ns$by_region", "region = 'eu' AND n = 3 AND q = 10 AND p = 100.0 / 3"), 1.0)
	assert.Equal(t, mvCount(t, url, "ns$by_region", "region = 'us' AND n = 2 AND q = 7 AND p = 35"), 1.0)

	// with_no_data: the table has the query's schema and no rows; a refresh fills it, an append
	// to the source then refreshes incrementally.
	status, out = mvCall(t, url, "/v1/materialized_view/ns$big/create", map[string]any{"kind": "query", "with_no_data": true,
		"source_query": "SELECT region, qty * price AS amount FROM ns.sales WHERE qty > 1"})
	assert.Equal(t, status, http.StatusCreated, "%v", out)
	assert.Assert(t, out["job_id"] == nil)
	assert.Equal(t, mvCount(t, url, "ns$big", ""), 0.0)
	status, out = mvCall(t, url, "/v1/materialized_view/ns$big/refresh", map[string]any{})
	assert.Equal(t, status, http.StatusAccepted, "%v", out)
	mvJob(t, url, "ns$big", out["job_id"].(string))
	assert.Equal(t, mvCount(t, url, "ns$big", ""), 5.0)
	tbl, err := ns.LoadTable(ctx, ident.ID{"ns", "sales"})
	assert.NilError(t, err)
	ds, err := tbl.Dataset()
	assert.NilError(t, err)
	more := mvBatch([]string{"ap", "eu"}, []int32{1, 7}, []float64{1000, 70})
	defer more.Release()
	rr, err := array.NewRecordReader(mvSchema, []arrow.RecordBatch{more})
	assert.NilError(t, err)
	_, err = ds.Append(ctx, rr, lance.WriteOptions{})
	assert.NilError(t, err)
	status, out = mvCall(t, url, "/v1/materialized_view/ns$big/refresh", nil)
	assert.Equal(t, status, http.StatusAccepted, "%v", out)
	task := mvJob(t, url, "ns$big", out["job_id"].(string))
	res := task["result"].(map[string]any)
	assert.Equal(t, res["mode"], "incremental")
	assert.Equal(t, res["rows"], 1.0)
	assert.Equal(t, mvCount(t, url, "ns$big", ""), 6.0)
	assert.Equal(t, mvCount(t, url, "ns$big", "amount = 490"), 1.0)
	// The aggregate view merges the appended rows into its groups (only they are read); the SDK
	// read below sees exactly its declared columns (the group state is no column).
	status, out = mvCall(t, url, "/v1/materialized_view/ns$by_region/refresh", nil)
	assert.Equal(t, status, http.StatusAccepted, "%v", out)
	task = mvJob(t, url, "ns$by_region", out["job_id"].(string))
	res = task["result"].(map[string]any)
	assert.Equal(t, res["mode"], "incremental", "%v", res)
	assert.Equal(t, res["source_rows_read"], 2.0)
	assert.Equal(t, mvCount(t, url, "ns$by_region", "region = 'ap' AND n = 2 AND q = 5 AND p = 520"), 1.0)
	assert.Equal(t, mvCount(t, url, "ns$by_region", "region = 'eu' AND n = 4 AND q = 17 AND p = 42.5"), 1.0)

	// Refusals.
	status, out = mvCall(t, url, "/v1/materialized_view/ns$bad/create", map[string]any{"kind": "query", "source_query": "SELECT region FROM sales WHERE qty >"})
	assert.Equal(t, status, http.StatusBadRequest, "%v", out)
	assert.Equal(t, out["code"], 13.0)
	assert.Assert(t, strings.Contains(fmt.Sprint(out["detail"], out["error"], out["title"]), "position"), "%v", out)
	status, out = mvCall(t, url, "/v1/materialized_view/ns$bad/create", map[string]any{"kind": "query", "source_query": "SELECT a FROM nope"})
	assert.Equal(t, status, http.StatusNotFound, "%v", out)
	status, out = mvCall(t, url, "/v1/materialized_view/ns$bad/create", map[string]any{"kind": "udtf", "source_query": "x"})
	assert.Equal(t, status, http.StatusNotAcceptable, "%v", out)
	assert.Assert(t, strings.Contains(fmt.Sprint(out), "no user-code runtime"), "%v", out)

	// A computed column, declared then backfilled.
	status, out = mvCall(t, url, "/v1/table/ns$sales/add_columns", map[string]any{"new_columns": []map[string]any{{"name": "amount", "computed": "qty * price"}}})
	assert.Equal(t, status, http.StatusOK, "%v", out)
	assert.Equal(t, mvCount(t, url, "ns$sales", "amount IS NULL"), 8.0)
	status, out = mvCall(t, url, "/v1/table/ns$sales/backfill_column", map[string]any{"column": "amount"})
	assert.Equal(t, status, http.StatusAccepted, "%v", out)
	mvJob(t, url, "ns$sales", out["job_id"].(string))
	assert.Equal(t, mvCount(t, url, "ns$sales", "amount = qty * price"), 8.0)

	// The official client reads the view and the backfilled column.
	sdk := os.Getenv(testenv.EnvLanceDBSDK)
	if sdk == "" {
		t.Log("LANCECAT_LANCEDB_SDK unset (scripts/with-fixtures.sh): the SDK read is skipped")
		return
	}
	for _, dir := range filepath.SplitList(sdk) {
		read := func(table, cols string) string {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			args := []string{url, "ns", table}
			if cols != "" {
				args = append(args, cols)
			}
			cmd := testenv.NodeCmd(cctx, script(t, "sdk-mview.mjs"), args...)
			cmd.Env = append(cmd.Env, "LANCEDB_DIR="+dir)
			cmd.WaitDelay = 10 * time.Second
			return strings.TrimSpace(string(testenv.Run(t, cmd)))
		}
		assert.Equal(t, read("by_region", ""), `{"fields":["region","n","q","p"],"rows":[{"region":"ap","n":2,"q":5,"p":520},{"region":"eu","n":4,"q":17,"p":42.5},{"region":"us","n":2,"q":7,"p":35}]}`, dir)
		assert.Equal(t, read("sales", "amount"), `{"fields":["region","qty","price","amount"],"rows":[{"amount":10},{"amount":40},{"amount":90},{"amount":160},{"amount":250},{"amount":360},{"amount":1000},{"amount":490}]}`, dir)
	}
}
