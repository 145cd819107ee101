package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/storage"
)

// TestSDKRemoteFTS: the official SDK in remote mode creates an FTS index
// through lancecat (a bad language is refused and commits nothing), lists
// and describes it, and its full-text searches (match, prefiltered match,
// phrases) through lancecat's query_table return the rows and
// scores lancecat's own reader of that index gives; explainPlan names the
// index. scripts/index/sdk-remote-fts.mjs drives the SDK.
func TestSDKRemoteFTS(t *testing.T) {
	dirs := testenv.SDKs(t)
	ctx := context.Background()
	cfg, ns := seededRoot(t)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	words := strings.Fields("the quick brown fox jumps over a lazy dog and runs to the quiet river bank")
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	for i := range 300 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		var s []string
		for j := range 3 + i%9 {
			s = append(s, words[(i*7+j*j*3+j)%len(words)])
		}
		b.Field(1).(*array.StringBuilder).Append(strings.Join(s, " "))
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	for i := range dirs {
		_, _, err := ns.CreateTable(ctx, ident.ID{fmt.Sprintf("docs%d", i)}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, rec)})
		assert.NilError(t, err)
	}
	url := serve(t, cfg)
	for i, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			table := fmt.Sprintf("docs%d", i)
			script := filepath.Join(filepath.Dir(script(t, "")), "index", "sdk-remote-fts.mjs")
			cmd := testenv.NodeCmd(ctx, script, dir, url, table)
			cmd.WaitDelay = 10 * time.Second
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			t.Logf("stderr: %s", stderr.String())
			t.Logf("%s", out)
			assert.NilError(t, err, "SDK remote FTS script failed")
			var got struct {
				Results []struct {
					IDs    []int64   `json:"ids"`
					Scores []float64 `json:"scores"`
				} `json:"results"`
			}
			assert.NilError(t, json.Unmarshal(out, &got))

			// lancecat's own reader of the index the SDK had built through it
			tfs, err := storage.NewFS(filepath.Join(cfg.Root, table+".lance"))
			assert.NilError(t, err)
			ds := lance.NewDataset(tfs)
			v, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)
			_, segs, err := tableindex.FTSIndexFor(v, "text")
			assert.NilError(t, err)
			r, err := tableindex.OpenFTSIndex(ctx, ds, v, segs[0])
			assert.NilError(t, err)
			defer r.Close()
			queries := []struct {
				q     index.FTSQuery
				allow func(uint64) bool
			}{
				{index.FTSQuery{Kind: index.Match, Terms: "fox"}, nil},
				{index.FTSQuery{Kind: index.Match, Terms: "quick dog"}, func(a uint64) bool { return a < 150 }},
				{index.FTSQuery{Kind: index.Phrase, Terms: "quick jumps"}, nil},
				{index.FTSQuery{Kind: index.Phrase, Terms: "fox lazy"}, nil},
			}
			assert.Assert(t, is.Len(got.Results, len(queries)))
			for qi, q := range queries {
				hits, err := r.Search(ctx, q.q, 10, q.allow)
				assert.NilError(t, err)
				res := got.Results[qi]
				assert.Assert(t, is.Len(res.IDs, len(hits)), "query %d: %v vs %v", qi, res.IDs, hits)
				for k, h := range hits {
					assert.Check(t, abs64(res.Scores[k]-float64(h.Score)) <= 1e-4, "query %d rank %d: %v vs %v", qi, k, res.Scores[k], h.Score)
					if k+1 < len(hits) && hits[k+1].Score == h.Score || k > 0 && hits[k-1].Score == h.Score {
						continue // ties may be ordered differently
					}
					assert.Check(t, is.Equal(res.IDs[k], int64(h.RowID)), "query %d rank %d", qi, k)
				}
			}
		})
	}
}

func abs64(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
