package tableindex_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/maintenance"
	"github.com/lancecat/lancecat/storage"
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
			work := t.TempDir()
			dir := filepath.Join(work, "t.lance")
			ref := filepath.Join(work, "ref.lance")
			sdkFTS(t, sdk, "create", map[string]any{"dir": dir, "docs": docs, "index": true, "with_position": true}, nil)
			sdkFTS(t, sdk, "delete", map[string]any{"dir": dir, "where": "id % 5 = 0"}, nil)
			out, err := exec.Command("cp", "-r", dir, ref).CombinedOutput()
			assert.NilError(t, err, "%s", out)
			sdkFTS(t, sdk, "optimize", map[string]any{"dir": ref}, nil)

			fs, err := storage.NewFS(dir)
			assert.NilError(t, err)
			ds := lance.NewDataset(fs)
			rep, err := maintenance.Compact(ctx, ds, maintenance.CompactOptions{})
			assert.NilError(t, err)
			assert.Check(t, len(rep.Excluded) == 0, "%+v", rep.Excluded)
			assert.Equal(t, rep.IndicesRemapped, 1)
			assert.Equal(t, rep.FragmentsAfter, 1)

			var mine, want []ftsAnswer
			job := map[string]any{"queries": ftsRemapQueries, "limit": 10}
			job["dir"] = dir
			sdkFTS(t, sdk, "search", job, &mine)
			job["dir"] = ref
			sdkFTS(t, sdk, "search", job, &want)
			ours := goFTSByID(t, ds, ftsRemapQueries)
			for i, q := range ftsRemapQueries {
				what := fmt.Sprint(filepath.Base(sdk), " ", q)
				assert.Check(t, strings.Contains(mine[i].Plan, "text_idx") || strings.Contains(mine[i].Plan, "MatchQuery") || strings.Contains(mine[i].Plan, "PhraseQuery"),
					"%s: plan\n%s", what, mine[i].Plan)
				checkFTSAnswers(t, "SDK after lancecat's compaction vs after its own "+what, mine[i], want[i])
				checkFTSAnswers(t, "lancecat after its compaction vs SDK after its own "+what, ours[i], want[i])
			}
		})
	}
}

// goFTSByID answers queries with lancecat's reader of the table's index,
// rows named by their id column (row addresses move in a compaction).
func goFTSByID(t *testing.T, ds *lance.Dataset, queries []map[string]any) []ftsAnswer {
	t.Helper()
	ctx := context.Background()
	v, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	_, segs, err := tableindex.FTSIndexFor(v, "text")
	assert.NilError(t, err)
	assert.Equal(t, len(segs), 1)
	r, err := tableindex.OpenFTSIndex(ctx, ds, v, segs[0])
	assert.NilError(t, err)
	defer r.Close()
	var out []ftsAnswer
	for _, q := range queries {
		var fq index.FTSQuery
		if ph, ok := q["phrase"].(string); ok {
			fq = index.FTSQuery{Kind: index.Phrase, Terms: ph}
		} else {
			fq = index.FTSQuery{Kind: index.Match, Terms: q["match"].(string)}
		}
		if op, ok := q["operator"].(string); ok {
			fq.Operator = op
		}
		hits, err := r.Search(ctx, fq, 10, nil)
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
