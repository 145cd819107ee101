package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
	"github.com/lancecat/lancecat/query"
	"github.com/lancecat/lancecat/storage"
)

// TestSDKRemoteHybrid: the SDK's hybrid search in remote mode
// (nearestTo(v).fullTextSearch(q), default RRF reranker) through
// lancecat. The client sends a full-text and a vector query, each with
// with_row_id, and fuses them by reciprocal rank (1/(rank+60), rank from
// 0); the test recomputes that fusion from lancecat's own full-text answer
// and an exact kNN, and the SDK's rows and relevance scores must be it.
func TestSDKRemoteHybrid(t *testing.T) {
	dirs := testenv.SDKs(t)
	ctx := context.Background()
	cfg, ns := seededRoot(t)
	const dim = 4
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "vec", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
	words := strings.Fields("the quick brown fox jumps over a lazy dog and runs to the quiet river bank")
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	vecs := make([][dim]float32, 200)
	for i := range 200 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		var s []string
		for j := range 3 + i%9 {
			s = append(s, words[(i*7+j*j*3+j)%len(words)])
		}
		b.Field(1).(*array.StringBuilder).Append(strings.Join(s, " "))
		lb := b.Field(2).(*array.FixedSizeListBuilder)
		lb.Append(true)
		for d := range dim {
			vecs[i][d] = float32((i*31+d*17)%97) / 97
			lb.ValueBuilder().(*array.Float32Builder).Append(vecs[i][d])
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	for i := range dirs {
		_, _, err := ns.CreateTable(ctx, ident.ID{fmt.Sprintf("hy%d", i)}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, rec)})
		assert.NilError(t, err)
	}
	url := serve(t, cfg)
	qv := [dim]float32{0.2, 0.5, 0.1, 0.9}
	const limit = 10
	for i, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			table := fmt.Sprintf("hy%d", i)
			job, err := json.Marshal(map[string]any{"vector": qv[:], "text": "quick fox", "limit": limit})
			assert.NilError(t, err)
			jobPath := filepath.Join(t.TempDir(), "job.json")
			assert.NilError(t, os.WriteFile(jobPath, job, 0o600))
			sc := filepath.Join(filepath.Dir(script(t, "")), "index", "sdk-remote-fts-hybrid.mjs")
			cmd := testenv.NodeCmd(ctx, sc, dir, url, table, jobPath)
			cmd.WaitDelay = 10 * time.Second
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			assert.NilError(t, err, "SDK remote hybrid script failed: %s", stderr.String())
			var got struct {
				IDs       []int64   `json:"ids"`
				Relevance []float64 `json:"relevance"`
				Columns   []string  `json:"columns"`
			}
			assert.NilError(t, json.Unmarshal(out, &got), "%s", out)
			t.Logf("SDK hybrid: %s", out)

			// The two legs as lancecat answers them.
			tfs, err := storage.NewFS(filepath.Join(cfg.Root, table+".lance"))
			assert.NilError(t, err)
			ds := lance.NewDataset(tfs)
			raw, _ := json.Marshal(map[string]any{"query": "quick fox", "columns": []string{"text"}})
			ftq, err := query.ParseFullTextQuery(raw)
			assert.NilError(t, err)
			rr, err := query.Run(ctx, ds, query.Request{FullText: ftq, Columns: []string{"id"}, Limit: limit})
			assert.NilError(t, err)
			var ftsIDs []int64
			for rr.Next() {
				r := rr.RecordBatch()
				for j := 0; j < int(r.NumRows()); j++ {
					ftsIDs = append(ftsIDs, r.Column(0).(*array.Int64).Value(j))
				}
			}
			assert.NilError(t, rr.Err())
			rr.Release()
			type vd struct {
				id int64
				d  float32
			}
			var all []vd
			for id, v := range vecs {
				var d float32
				for k := range dim {
					x := v[k] - qv[k]
					d += x * x
				}
				all = append(all, vd{int64(id), d})
			}
			sort.SliceStable(all, func(a, b int) bool { return all[a].d < all[b].d })
			fused := map[int64]float64{}
			for r, id := range ftsIDs {
				fused[id] += 1 / float64(r+60)
			}
			for r := range limit {
				fused[all[r].id] += 1 / float64(r+60)
			}
			assert.Assert(t, is.Len(got.IDs, limit))
			for k, id := range got.IDs {
				want, ok := fused[id]
				assert.Check(t, ok, "rank %d: id %d is in neither leg", k, id)
				assert.Check(t, abs64(want-got.Relevance[k]) <= 1e-6, "rank %d id %d: relevance %v, fused %v", k, id, got.Relevance[k], want)
			}
			// The best fused rows (no ties at the cut) are the SDK's first rows.
			var best []float64
			for _, s := range fused {
				best = append(best, s)
			}
			sort.Sort(sort.Reverse(sort.Float64Slice(best)))
			for k := range limit {
				assert.Check(t, abs64(best[k]-got.Relevance[k]) <= 1e-6, "rank %d: relevance %v, fused %v", k, got.Relevance[k], best[k])
			}
		})
	}
}
