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
	"github.com/lancecat/lancecat/lance/lancetest"
)

// Vector index interop on an S3 root (MinIO), both ways, with each SDK:
// lancecat searches the SDK's IVF_PQ with the SDK's answers, and the SDK
// searches an IVF_FLAT lancecat built (with every partition probed it
// must find exactly the flat search's rows, through the index).
func TestVectorIndicesInteropOnS3(t *testing.T) {
	sdks := testenv.SDKs(t)
	root := lancetest.NewS3Root(t)
	opts := root.Options
	for _, sdk := range sdks {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			ctx := context.Background()
			theirs, theirsURI := root.Open(t, filepath.Base(sdk)+"/theirs.lance")
			ours, oursURI := root.Open(t, filepath.Base(sdk)+"/ours.lance")
			data := map[string]any{"rows": 2000, "dim": 16, "fragments": 2, "seed": 5, "clusters": 16, "storage_options": opts}
			data["dir"], data["indices"] = theirsURI, []map[string]any{{"type": "IVF_PQ", "metric": "l2", "num_partitions": 4, "num_sub_vectors": 4}}
			sdkVector(t, sdk, "create", data, nil)
			data["dir"], data["indices"] = oursURI, nil
			sdkVector(t, sdk, "create", data, nil)

			// lancecat reads the SDK's index on S3.
			idOf, vecs := tableVectors(t, theirs)
			queries := queriesNear(vecs, 10, 3)
			check := map[string]any{"queries": queries, "k": 10, "nprobes": 2, "storage_options": opts, "dir": theirsURI}
			var want sdkVectorCheck
			sdkVector(t, sdk, "check", check, &want)
			v, err := theirs.OpenLatest(ctx)
			assert.NilError(t, err)
			_, segs, err := tableindex.VectorIndexFor(v, "vec")
			assert.NilError(t, err)
			assert.Assert(t, is.Len(segs, 1))
			r, err := tableindex.OpenVectorIndex(ctx, theirs, v, segs[0])
			assert.NilError(t, err)
			defer r.Close()
			same, total := 0, 0
			for i, q := range queries {
				hits, err := r.Search(ctx, index.VectorSearch{Query: q, K: 10, NProbes: 2})
				assert.NilError(t, err)
				got := map[int64]bool{}
				for _, h := range hits {
					got[idOf[h.RowID]] = true
				}
				for _, id := range want.Queries[i].IDs {
					total++
					if got[id] {
						same++
					}
				}
			}
			// PQ ties and summation order may swap a 10th row.
			assert.Assert(t, float64(same) >= 0.95*float64(total), "%d of %d", same, total)

			// The SDK uses lancecat's index on S3.
			_, err = tableindex.CreateVectorIndex(ctx, ours, tableindex.VectorIndexOptions{Column: "vec", Kind: index.IVFFlat, NumPartitions: 4, Seed: 1})
			assert.NilError(t, err)
			check["dir"], check["nprobes"], check["flat"] = oursURI, 4, true
			var truth, got sdkVectorCheck
			sdkVector(t, sdk, "check", check, &truth)
			delete(check, "flat")
			sdkVector(t, sdk, "check", check, &got)
			assert.Check(t, strings.Contains(got.Plan, "ANNSubIndex") && strings.Contains(got.Plan, "vec_idx"), got.Plan)
			assert.Equal(t, got.Stats["vec_idx"].NumIndexedRows, 2000)
			for i := range truth.Queries {
				assert.Check(t, is.DeepEqual(got.Queries[i].IDs, truth.Queries[i].IDs), "query %d", i)
			}
		})
	}
}
