package query_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancetest"
	"github.com/lancecat/lancecat/query"
)

// Full-text search of rows appended after the index was built, against
// the SDK (scripts/index/sdk-fts.mjs): the SDK builds the index on the
// first rows and appends more; lancecat's query engine answers each query
// with the SDK's rows and scores.

type ftsDoc struct {
	ID   int64   `json:"id"`
	Text *string `json:"text"`
}

type ftsAnswer struct {
	IDs    []int64   `json:"ids"`
	Scores []float64 `json:"scores"`
}

func sdkFTSJob(t *testing.T, sdk, mode string, job map[string]any, out any) {
	t.Helper()
	testenv.NodeJSON(t, out, testenv.Script("index", "sdk-fts.mjs"), mode, sdk, testenv.JobFile(t, job))
}

// appendCorpus is n short documents over a small skewed vocabulary.
func appendCorpus(n, from int, seed uint64) []ftsDoc {
	r := rand.New(rand.NewPCG(seed, 3))
	vocab := strings.Fields("the quick brown fox jumps over lazy dog data database catalog lance index vector search running runs cats cat of and")
	z := rand.NewZipf(r, 1.2, 2, uint64(len(vocab)-1))
	docs := make([]ftsDoc, n)
	for i := range docs {
		docs[i].ID = int64(from + i)
		if i%41 == 7 {
			continue // null
		}
		var w []string
		for range 2 + r.IntN(15) {
			w = append(w, vocab[z.Uint64()])
		}
		s := strings.Join(w, " ")
		if i%53 == 11 {
			s = "the and of" // only stop words: no tokens
		}
		docs[i].Text = &s
	}
	return docs
}

var appendQueries = []map[string]any{
	{"match": "fox"},
	{"match": "quick brown fox"},
	{"match": "database catalog"},
	{"match": "running cats", "operator": "AND"},
	{"match": "lance", "filter": "id >= 950"},
	{"phrase": "quick brown"},
}

// TestFTSAppendedRowsSDK: rows appended after the SDK built its index are
// found, scored and ranked as SDK 0.39.0 does (the unindexed rows by BM25
// over index plus unindexed statistics, the indexed rows by the index's).
func TestFTSAppendedRowsSDK(t *testing.T) {
	sdks := testenv.SDKs(t)
	for _, sdk := range sdks {
		if !strings.HasSuffix(sdk, "0.39.0") {
			continue // 0.31.0 scores appended rows with older, order-dependent statistics (see the report)
		}
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "t.lance")
			sdkFTSJob(t, sdk, "create", map[string]any{"dir": dir, "docs": appendCorpus(1000, 0, 1), "index": true, "with_position": true}, nil)
			sdkFTSJob(t, sdk, "append", map[string]any{"dir": dir, "docs": appendCorpus(300, 1000, 2)}, nil)
			ds := lancetest.Open(t, dir)
			compareAppended(t, ctx, sdk, dir, ds, false)
			// Deletes in indexed and appended rows: the index still lists
			// the deleted rows, which neither side answers.
			sdkFTSJob(t, sdk, "delete", map[string]any{"dir": dir, "where": "id % 7 = 3"}, nil)
			compareAppended(t, ctx, sdk, dir, ds, true)
		})
	}
}

func compareAppended(t *testing.T, ctx context.Context, sdk, dir string, ds *lance.Dataset, deleted bool) {
	t.Helper()
	var want []ftsAnswer
	sdkFTSJob(t, sdk, "search", map[string]any{"dir": dir, "queries": appendQueries, "limit": 20}, &want)
	{
		{
			for i, q := range appendQueries {
				var leaf map[string]any
				if p, ok := q["phrase"]; ok {
					leaf = map[string]any{"phrase": map[string]any{"terms": p, "column": "text"}}
				} else {
					m := map[string]any{"terms": q["match"], "column": "text"}
					if op, ok := q["operator"]; ok {
						m["operator"] = op
					}
					leaf = map[string]any{"match": m}
				}
				raw, err := json.Marshal(map[string]any{"structured_query": map[string]any{"query": leaf}})
				assert.NilError(t, err)
				ftq, err := query.ParseFullTextQuery(raw)
				assert.NilError(t, err)
				req := query.Request{FullText: ftq, Columns: []string{"id", "_score"}, Limit: 20}
				if f, ok := q["filter"].(string); ok {
					req.Filter = f
				}
				rr, err := query.Run(ctx, ds, req)
				assert.NilError(t, err)
				var got ftsAnswer
				for rr.Next() {
					rec := rr.RecordBatch()
					for j := 0; j < int(rec.NumRows()); j++ {
						got.IDs = append(got.IDs, rec.Column(0).(*array.Int64).Value(j))
						got.Scores = append(got.Scores, float64(rec.Column(1).(*array.Float32).Value(j)))
					}
				}
				assert.NilError(t, rr.Err())
				rr.Release()
				what := fmt.Sprint(q)
				appended := 0
				for _, id := range want[i].IDs {
					if id >= 1000 {
						appended++
					}
				}
				assert.Check(t, appended > 0, "%s: the SDK's answer has no appended row: %v", what, want[i].IDs)
				assert.Assert(t, is.Len(got.IDs, len(want[i].IDs)), "%s: %v vs %v", what, got.IDs, want[i].IDs)
				last := want[i].Scores[len(want[i].Scores)-1]
				for j := range got.IDs {
					assert.Check(t, abs(got.Scores[j]-want[i].Scores[j]) <= 1e-4, "%s: rank %d score %v vs %v (ids %d, %d)", what, j, got.Scores[j], want[i].Scores[j], got.IDs[j], want[i].IDs[j])
					if want[i].Scores[j] > last+1e-4 {
						assert.Check(t, got.IDs[j] == want[i].IDs[j] || abs(got.Scores[j]-want[i].Scores[j]) <= 1e-4, "%s: rank %d id %d vs %d", what, j, got.IDs[j], want[i].IDs[j])
					}
				}
				for _, id := range got.IDs {
					assert.Check(t, !deleted || id%7 != 3, "%s: deleted row %d answered", what, id)
				}
			}
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
