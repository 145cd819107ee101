package tableindex_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/lance/lancetest"
)

// ftsPhraseQueries exercise the positions of an index built with_position.
var ftsPhraseQueries = []map[string]any{
	{"phrase": "quick brown"},
	{"phrase": "lazy dog"},
	{"phrase": "data database", "slop": 1},
	{"phrase": "the quick"},
}

// goFTSQueries answers queries with lancecat's reader of the table's index
// (one fragment: a row address is the id).
func goFTSQueries(t *testing.T, ds *lance.Dataset, queries []map[string]any, limit int) []ftsAnswer {
	t.Helper()
	_, r := openFTSText(t, ds)
	var out []ftsAnswer
	for _, q := range queries {
		var allow func(uint64) bool
		if q["filter"] != nil {
			allow = func(id uint64) bool { return id < 1000 } // one fragment: row address = id
		}
		hits, err := r.Search(context.Background(), ftsQueryOf(q), limit, allow)
		assert.NilError(t, err, "%v", q)
		var a ftsAnswer
		for _, h := range hits {
			a.IDs = append(a.IDs, int64(h.RowID))
			a.Scores = append(a.Scores, float64(h.Score))
		}
		out = append(out, a)
	}
	return out
}

// TestGoUsesSDKFTSIndex: an INVERTED index each SDK builds (0.31.0:
// index_version 1, an fst token map and fixed32 posting tails; 0.39.0:
// format 2, varint-delta tails and packed position streams) is listed,
// described and read by lancecat, whose answers to match and phrase
// queries are the SDK's own (same rows, scores within 1e-4).
func TestGoUsesSDKFTSIndex(t *testing.T) {
	docs := ftsCorpus(3000, 5)
	// Tokens of 36 distinct first bytes give the FST a node of more than
	// 32 transitions, which carries the 256-byte input index.
	var wide []string
	for _, c := range "0123456789abcdefghijklmnopqrstuvwxyz" {
		wide = append(wide, string(c)+"zq")
	}
	text := strings.Join(wide, " ")
	docs = append(docs, ftsDoc{ID: int64(len(docs)), Text: &text})
	queries := append(append([]map[string]any{}, ftsQueries...), ftsPhraseQueries...)
	queries = append(queries, map[string]any{"match": "7zq qzq"})
	for _, sdk := range testenv.SDKs(t) {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "t.lance")
			sdkFTS(t, sdk, "create", map[string]any{"dir": dir, "docs": docs, "index": true, "with_position": true}, nil)
			ds := lancetest.Open(t, dir)
			v, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)
			name, segs, err := tableindex.FTSIndexFor(v, "text")
			assert.NilError(t, err)
			assert.Equal(t, name, "text_idx")
			assert.Assert(t, is.Len(segs, 1))
			stats, err := tableindex.IndexStats(v, name)
			assert.NilError(t, err)
			assert.Equal(t, stats.Type, "FTS")
			assert.Equal(t, stats.NumIndexedRows, uint64(len(docs)))
			assert.Equal(t, stats.NumUnindexedRows, uint64(0))

			var want []ftsAnswer
			sdkFTS(t, sdk, "search", map[string]any{"dir": dir, "queries": queries, "limit": 10}, &want)
			got := goFTSQueries(t, ds, queries, 10)
			assert.Assert(t, is.Len(want, len(queries)))
			for i, q := range queries {
				checkFTSAnswers(t, fmt.Sprintf("%s %v", filepath.Base(sdk), q), got[i], want[i])
			}
			nonEmpty := 0
			for _, a := range want {
				if len(a.IDs) > 0 {
					nonEmpty++
				}
			}
			assert.Assert(t, nonEmpty >= len(queries)-2, "the corpus must make most queries match")
		})
	}
}
