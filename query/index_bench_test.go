package query_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/query"
	"github.com/lancecat/lancecat/storage"
)

// TestIndexedQueryTimeVsSDK measures (for the notes, not an assertion: it runs only with
// LANCECAT_QIDX_BENCH=1 and without -race) an indexed equality and range query over a table the
// SDK wrote (200,000 rows, BTREE on id, BITMAP on name) three ways: lancecat with the index,
// lancecat scanning the same data (the version before the index was built), the SDK with its
// index. Medians of 20 runs after a warm-up.
func TestIndexedQueryTimeVsSDK(t *testing.T) {
	if os.Getenv("LANCECAT_QIDX_BENCH") == "" || os.Getenv(testenv.EnvLanceDBSDK) == "" {
		t.Skip("a measurement: set LANCECAT_QIDX_BENCH=1 and run under scripts/with-fixtures.sh")
	}
	sdk := testenv.SDKs(t)[1]
	script := testenv.Script("query", "index-oracle.mjs")
	work := t.TempDir()
	oracle(t, script, "big", sdk, work, "200000")
	type bq struct {
		Name   string   `json:"name"`
		Filter string   `json:"filter"`
		Select []string `json:"select"`
		Runs   int      `json:"runs"`
	}
	qs := []bq{
		{Name: "equality (BTREE)", Filter: "id = 123457"},
		{Name: "range of 100 (BTREE)", Filter: "id >= 150000 AND id < 150100"},
		{Name: "range of 10,000 (BTREE)", Filter: "id >= 50000 AND id < 60000"},
		{Name: "equality (BITMAP, 1/150 of the rows)", Filter: "name = 'n042'"},
		{Name: "equality and residual", Filter: "id = 77777 AND score > 1"},
	}
	b, err := json.Marshal(qs)
	assert.NilError(t, err)
	corpus := filepath.Join(work, "bench.json")
	assert.NilError(t, os.WriteFile(corpus, b, 0o600))
	var sdkMS map[string]float64
	out := oracle(t, script, "bench", sdk, work, corpus)
	assert.NilError(t, json.Unmarshal(out, &sdkMS), "%s", out)
	t.Logf("SDK: %s", out)

	ctx := context.Background()
	fs, err := storage.NewFS(filepath.Join(work, "t.lance"))
	assert.NilError(t, err)
	ds := lance.NewDataset(fs)
	head, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	before, err := ds.OpenVersion(ctx, head.Number()-2) // before both indices
	assert.NilError(t, err)
	median := func(at *lance.Version, filter string) (time.Duration, int64, string) {
		req := query.Request{At: at, Filter: filter, Columns: []string{"id"}}
		plan, err := query.Explain(ctx, ds, req, false)
		assert.NilError(t, err)
		var ds_ []time.Duration
		var n int64
		for i := range 21 {
			start := time.Now()
			rec := run(t, ds, req)
			n = rec.NumRows()
			rec.Release()
			if i > 0 {
				ds_ = append(ds_, time.Since(start))
			}
		}
		slices.Sort(ds_)
		return ds_[len(ds_)/2], n, plan
	}
	for _, q := range qs {
		idx, n, plan := median(head, q.Filter)
		assert.Assert(t, strings.Contains(plan, "ScalarIndexQuery"), plan)
		scan, n2, _ := median(before, q.Filter)
		assert.Equal(t, n, n2)
		sdkT := time.Duration(sdkMS[q.Name] * float64(time.Millisecond))
		t.Logf("%-40s rows=%-6d lancecat indexed %8v  scan %8v (%.1fx faster)  SDK indexed %8v  (ours/SDK %.2f)",
			q.Name, n, idx.Round(time.Microsecond), scan.Round(time.Microsecond), float64(scan)/float64(idx), sdkT.Round(time.Microsecond), float64(idx)/float64(sdkT))
	}
}
