package tableindex_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/query"
)

// pylanceVector runs pylance-vector.py mode with job (the index types the Node SDK cannot build).
func pylanceVector(t testing.TB, venv, mode string, job map[string]any, out any) {
	t.Helper()
	testenv.PythonJSON(t, out, venv, testenv.Script("index", "pylance-vector.py"), mode, testenv.JobFile(t, job))
}

// TestIVFSQInteropSDK: IVF_SQ both ways on two tables of the same data. pylance builds IVF_SQ on
// one (the Node SDK has no IVF_SQ builder) and lancecat on the other, at the same partitions;
// then
//   - lancecat's reader searches pylance's index, with a top-10 recall (against the exact answer)
//     no worse than pylance's own search through it, less 0.02, at the same nprobes;
//   - pylance and both Node SDK versions list lancecat's index as they list pylance's, with its
//     distance type, plan their search through it (ANNSubIndex) and find, through it, a recall no
//     worse than through pylance's index less 0.02 (each client against itself);
//   - the query engine plans its kNN through lancecat's index (explain names it).
func TestIVFSQInteropSDK(t *testing.T) {
	sdks := testenv.SDKs(t)
	venv := testenv.Pylance(t)
	for _, metric := range []string{"l2", "cosine", "dot"} {
		t.Run(metric, func(t *testing.T) {
			ctx := context.Background()
			const parts, nprobes = 8, 2
			ours, theirs := sdkTwinTables(t, sdks[len(sdks)-1], map[string]any{"rows": 8000, "dim": 32, "fragments": 2, "seed": 11, "clusters": 32})
			var built struct {
				BuildMS []float64 `json:"build_ms"`
			}
			pylanceVector(t, venv, "index", map[string]any{"dir": theirs, "indices": []map[string]any{{"type": "IVF_SQ", "metric": metric, "num_partitions": parts}}}, &built)

			ds, v, took := buildVectorIndexAt(t, ctx, ours, tableindex.VectorIndexOptions{
				Column: "vec", Kind: index.IVFSQ, Metric: index.Metric(metric), NumPartitions: parts, Seed: 42,
			})
			t.Logf("build: lancecat %v, pylance %.0fms", took, built.BuildMS[0])
			st, err := tableindex.IndexStats(v, "vec_idx")
			assert.NilError(t, err)
			assert.Equal(t, st.Type, "IVF_SQ")
			assert.Equal(t, st.DistanceType, metric)
			assert.Equal(t, st.NumIndexedRows, uint64(8000))

			_, vecs := tableVectors(t, ds)
			queries := queriesNear(vecs, 60, 5)
			check := map[string]any{"queries": queries, "k": 10, "nprobes": nprobes, "metric": metric}
			var truth, sdkOwn, sdkOurs sdkVectorCheck
			check["dir"], check["flat"] = ours, true
			pylanceVector(t, venv, "check", check, &truth)
			delete(check, "flat")
			pylanceVector(t, venv, "check", check, &sdkOurs)
			check["dir"] = theirs
			pylanceVector(t, venv, "check", check, &sdkOwn)
			base := recallAt(sdkOwn.Queries, truth.Queries)
			assert.Check(t, strings.Contains(sdkOurs.Plan, "ANNSubIndex"), sdkOurs.Plan)
			r := recallAt(sdkOurs.Queries, truth.Queries)
			t.Logf("recall@10 at nprobes %d: pylance through its own IVF_SQ %.3f, through lancecat's %.3f", nprobes, base, r)
			assert.Check(t, r >= base-0.02, "pylance through lancecat's index %.3f, through its own %.3f", r, base)

			// Both Node SDKs use lancecat's index.
			for _, sdk := range sdks {
				var got, own sdkVectorCheck
				sdkVector(t, sdk, "check", map[string]any{"dir": ours, "queries": queries, "k": 10, "nprobes": nprobes, "metric": metric}, &got)
				sdkVector(t, sdk, "check", map[string]any{"dir": theirs, "queries": queries, "k": 10, "nprobes": nprobes, "metric": metric}, &own)
				assert.Assert(t, is.Len(got.Indices, 1))
				// The Node SDK names the kind as it names pylance's IVF_SQ ("IvfSq").
				assert.Equal(t, got.Indices[0].IndexType, own.Indices[0].IndexType)
				s := got.Stats["vec_idx"]
				assert.Equal(t, s.IndexType, own.Stats["vec_idx"].IndexType)
				assert.Equal(t, s.DistanceType, metric)
				assert.Equal(t, s.NumIndexedRows, 8000)
				assert.Check(t, strings.Contains(got.Plan, "ANNSubIndex"), got.Plan)
				// Each SDK version against itself: through lancecat's index and through pylance's.
				r, ro := recallAt(got.Queries, truth.Queries), recallAt(own.Queries, truth.Queries)
				t.Logf("recall@10 %s through lancecat's IVF_SQ %.3f, through pylance's %.3f", filepath.Base(sdk), r, ro)
				assert.Check(t, r >= ro-0.02, "%s through lancecat's index %.3f, through pylance's %.3f", filepath.Base(sdk), r, ro)
			}

			// lancecat's reader on pylance's index.
			got, rd := searchWithOurReader(t, ctx, theirs, queries, index.VectorSearch{K: 10, NProbes: nprobes})
			assert.Equal(t, rd.Kind(), index.IVFSQ)
			assert.Equal(t, rd.NumPartitions(), parts)
			mine := recallAt(got, truth.Queries)
			t.Logf("recall@10 lancecat's reader through pylance's IVF_SQ: %.3f", mine)
			assert.Check(t, mine >= base-0.02, "lancecat %.3f, pylance %.3f", mine, base)

			plan, err := query.Explain(ctx, ds, query.Request{At: v, Vector: &query.VectorQuery{Column: "vec", Vectors: queries[:1], K: 10, NProbes: nprobes}}, false)
			assert.NilError(t, err)
			assert.Assert(t, strings.Contains(plan, "ANN index=vec_idx(IVF_SQ)"), plan)
		})
	}
}
