package query_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/query"
	"github.com/lancecat/lancecat/storage"
)

// idxQuery is one query of the indexed differential test (scripts/query/index-oracle.mjs).
type idxQuery struct {
	Name   string   `json:"name"`
	Filter string   `json:"filter,omitempty"`
	Select []string `json:"select,omitempty"`
	Limit  int64    `json:"limit,omitempty"`
	Offset int64    `json:"offset,omitempty"`
	// Index is the index our plan must name ("" = none may serve it).
	Index string `json:"-"`
}

// idxQueries: the filters an index serves (equality, ranges, BETWEEN, IN, IS NULL, a label list,
// NaN and NULL in the indexed column, a literal on the left, conjunctions with a residual, limits
// and offsets over the indexed and the unindexed fragments) and a few it must not.
var idxQueries = []idxQuery{
	{Name: "eq", Filter: "id = 77", Index: "id_idx"},
	{Name: "eq deleted after the build", Filter: "id = 1004", Index: "id_idx"},
	{Name: "eq in the appended rows", Filter: "id = 3210", Index: "id_idx"},
	{Name: "lt", Filter: "id < 25", Index: "id_idx"},
	{Name: "literal on the left", Filter: "25 >= id", Index: "id_idx"},
	{Name: "range across fragments", Filter: "id > 1490 AND id <= 1512", Index: "id_idx"},
	{Name: "range into the appended rows", Filter: "id >= 2990", Index: "id_idx"},
	{Name: "between", Filter: "id BETWEEN 1995 AND 2004", Index: "id_idx"},
	{Name: "in", Filter: "id IN (3, 14, 1500, 2999, 3001, 9999)", Index: "id_idx"},
	{Name: "bitmap eq", Filter: "name = 'n042'", Index: "name_idx"},
	{Name: "bitmap in", Filter: "name IN ('n001', 'n149', 'none')", Index: "name_idx"},
	{Name: "bitmap is null", Filter: "name IS NULL", Index: "name_idx"},
	{Name: "bitmap and residual", Filter: "name = 'n010' AND id % 4 = 0", Index: "name_idx"},
	{Name: "two indices", Filter: "name IS NULL AND id < 700", Index: "id_idx"},
	{Name: "float gt (NaN rows)", Filter: "score > 95", Index: "score_idx"},
	{Name: "float lt", Filter: "score < 2.5", Index: "score_idx"},
	{Name: "float eq", Filter: "score = 50.5", Index: "score_idx"},
	{Name: "float between", Filter: "score BETWEEN 10 AND 11", Index: "score_idx"},
	{Name: "float is null", Filter: "score IS NULL AND id < 100", Index: "score_idx"},
	{Name: "label list", Filter: "array_has(tags, 'buzz') AND id < 400", Index: "tags_idx"},
	{Name: "label list alone", Filter: "array_contains(tags, 'fizz')", Index: "tags_idx"},
	{Name: "limit", Filter: "name = 'n003'", Limit: 4, Index: "name_idx"},
	{Name: "limit offset", Filter: "id > 1400", Limit: 10, Offset: 95, Index: "id_idx"},
	{Name: "limit into the appended rows", Filter: "score < 30", Limit: 20, Offset: 900, Index: "score_idx"},
	{Name: "or is not indexed", Filter: "id = 5 OR id = 3100"},
	{Name: "not is not indexed", Filter: "NOT (id < 2900)"},
	{Name: "not equal is not indexed", Filter: "name != 'n010' AND id > 3400", Index: "id_idx"},
	{Name: "expression is not indexed", Filter: "id * 2 = 84"},
}

// TestIndexedDifferentialSDK: a table with BTREE, BITMAP and LABEL_LIST indices built by the SDK,
// and the same table with them built by lancecat, then appended to (unindexed rows) and deleted
// from (rows the indices still list): every query answers the SDK's rows in the SDK's order, our
// plan names the index (so the rows came from it), and count agrees. Both SDK versions.
func TestIndexedDifferentialSDK(t *testing.T) {
	sdks := testenv.SDKs(t)
	script := testenv.Script("query", "index-oracle.mjs")
	for _, sdk := range sdks {
		for _, builder := range []string{"sdk", "lancecat"} {
			t.Run(filepath.Base(sdk)+"/built by "+builder, func(t *testing.T) {
				ctx := context.Background()
				work := t.TempDir()
				oracle(t, script, "create", sdk, work)
				fs, err := storage.NewFS(filepath.Join(work, "t.lance"))
				assert.NilError(t, err)
				ds := lance.NewDataset(fs)
				if builder == "sdk" {
					oracle(t, script, "index", sdk, work)
				} else {
					for _, o := range []tableindex.ScalarIndexOptions{
						{Column: "id", Type: index.BTree, Name: "id_idx"},
						{Column: "name", Type: index.Bitmap, Name: "name_idx"},
						{Column: "score", Type: index.BTree, Name: "score_idx"},
						{Column: "tags", Type: index.LabelList, Name: "tags_idx"},
					} {
						_, err := tableindex.CreateScalarIndex(ctx, ds, o)
						assert.NilError(t, err)
					}
				}
				oracle(t, script, "mutate", sdk, work)
				corpus := filepath.Join(work, "queries.json")
				b, err := json.Marshal(idxQueries)
				assert.NilError(t, err)
				assert.NilError(t, os.WriteFile(corpus, b, 0o600))
				var got struct {
					Results []struct {
						Name  string  `json:"name"`
						IDs   []int64 `json:"ids"`
						Plan  string  `json:"plan"`
						Error string  `json:"error"`
					} `json:"results"`
				}
				assert.NilError(t, json.Unmarshal(oracle(t, script, "query", sdk, work, corpus), &got))
				assert.Equal(t, len(got.Results), len(idxQueries))
				for i, q := range idxQueries {
					want := got.Results[i]
					t.Run(q.Name, func(t *testing.T) {
						assert.Equal(t, want.Error, "")
						req := query.Request{Filter: q.Filter, Columns: []string{"id"}, Limit: q.Limit, Offset: q.Offset}
						plan, err := query.Explain(ctx, ds, req, false)
						assert.NilError(t, err)
						if q.Index != "" {
							assert.Check(t, strings.Contains(plan, "ScalarIndexQuery") && strings.Contains(plan, "@"+q.Index+"("), plan)
						} else {
							assert.Check(t, !strings.Contains(plan, "ScalarIndexQuery"), plan)
						}
						req.Mem = testenv.CheckedAllocator(t)
						rec := run(t, ds, req)
						defer rec.Release()
						assert.DeepEqual(t, nonNil(int64s(rec, "id")), nonNil(want.IDs))
						if q.Limit == 0 && q.Offset == 0 {
							n, err := query.Count(ctx, ds, nil, q.Filter)
							assert.NilError(t, err)
							assert.Equal(t, n, uint64(len(want.IDs)))
						}
					})
				}
			})
		}
	}
}

// oracle runs index-oracle.mjs and returns its output.
func oracle(t *testing.T, script string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	return testenv.Run(t, testenv.NodeCmd(ctx, script, args...))
}
