package tableindex_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancetest"
	"github.com/lancecat/lancecat/maintenance"
)

// ftsRemapQueries have match, AND and phrase shapes (the indices are built
// with positions).
var ftsRemapQueries = []map[string]any{
	{"match": "fox"},
	{"match": "quick brown fox"},
	{"match": "index vector search", "operator": "AND"},
	{"phrase": "quick brown"},
	{"match": "connection served happily"},
}

// TestFTSCompactionSDK: an INVERTED index the SDK built (both SDKs, with
// positions) on a table with deleted rows goes through lancecat's
// compaction (the deletions materialized, so rows move and some leave the
// index): the index is remapped (not excluded from the plan), the SDK
// still lists it, its explainPlan uses it, and its answers (rows and BM25
// scores) are those of the SDK's own optimize() of the same table;
// lancecat's reader answers the same.
func TestFTSCompactionSDK(t *testing.T) {
	docs := ftsCorpus(3000, 11)
	for _, sdk := range testenv.SDKs(t) {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "t.lance")
			sdkFTS(t, sdk, "create", map[string]any{"dir": dir, "docs": docs, "index": true, "with_position": true}, nil)
			sdkFTS(t, sdk, "delete", map[string]any{"dir": dir, "where": "id % 5 = 0"}, nil)
			ref := sdkOptimizedCopy(t, sdk, dir)

			ds := lancetest.Open(t, dir)
			rep, err := maintenance.Compact(ctx, ds, maintenance.CompactOptions{})
			assert.NilError(t, err)
			assert.Check(t, len(rep.Excluded) == 0, "%+v", rep.Excluded)
			assert.Equal(t, rep.IndicesRemapped, 1)
			assert.Equal(t, rep.FragmentsAfter, 1)

			mine, want := sdkFTSSearch(t, sdk, dir, ftsRemapQueries), sdkFTSSearch(t, sdk, ref, ftsRemapQueries)
			ours := goFTSByID(t, ds, ftsRemapQueries)
			for i, q := range ftsRemapQueries {
				what := fmt.Sprint(filepath.Base(sdk), " ", q)
				checkFTSPlan(t, what, mine[i])
				checkFTSAnswers(t, "SDK after lancecat's compaction vs after its own "+what, mine[i], want[i])
				checkFTSAnswers(t, "lancecat after its compaction vs SDK after its own "+what, ours[i], want[i])
			}
		})
	}
}

// sdkOptimizedCopy copies the table at dir beside it and has the SDK
// optimize() the copy: the reference lancecat's own maintenance of dir is
// compared with. It returns the copy's directory.
func sdkOptimizedCopy(t *testing.T, sdk, dir string) string {
	t.Helper()
	ref := filepath.Join(filepath.Dir(dir), "ref.lance")
	testenv.CopyDir(t, dir, ref)
	sdkFTS(t, sdk, "optimize", map[string]any{"dir": ref}, nil)
	return ref
}

// sdkFTSSearch is the SDK's answers to queries (top 10) on the table at dir.
func sdkFTSSearch(t *testing.T, sdk, dir string, queries []map[string]any) []ftsAnswer {
	t.Helper()
	var out []ftsAnswer
	sdkFTS(t, sdk, "search", map[string]any{"dir": dir, "queries": queries, "limit": 10}, &out)
	return out
}

// checkFTSPlan checks that the SDK's plan for a answered through the
// full-text index.
func checkFTSPlan(t *testing.T, what string, a ftsAnswer) {
	t.Helper()
	assert.Check(t, strings.Contains(a.Plan, "text_idx") || strings.Contains(a.Plan, "MatchQuery") || strings.Contains(a.Plan, "PhraseQuery"),
		"%s: plan\n%s", what, a.Plan)
}

// goFTSByID answers queries with lancecat's reader of the table's index,
// rows named by their id column (row addresses move in a compaction).
func goFTSByID(t *testing.T, ds *lance.Dataset, queries []map[string]any) []ftsAnswer {
	t.Helper()
	ctx := context.Background()
	v, r := openFTSText(t, ds)
	var out []ftsAnswer
	for _, q := range queries {
		hits, err := r.Search(ctx, ftsQueryOf(q), 10, nil)
		assert.NilError(t, err)
		var a ftsAnswer
		if len(hits) > 0 {
			addrs := make([]uint64, len(hits))
			for i, h := range hits {
				addrs[i] = h.RowID
			}
			rec, err := ds.TakeRowAddresses(ctx, addrs, lance.TakeOptions{Columns: []string{"id"}, At: v})
			assert.NilError(t, err)
			ids := rec.Column(0).(*array.Int64)
			for i, h := range hits {
				a.IDs = append(a.IDs, ids.Value(i))
				a.Scores = append(a.Scores, float64(h.Score))
			}
			rec.Release()
		}
		out = append(out, a)
	}
	return out
}
