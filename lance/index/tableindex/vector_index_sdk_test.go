package tableindex_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/lance/lancetest"
)

// Vector index interop with the official SDK (both pinned versions),
// through scripts/index/sdk-vector.mjs: IVF_FLAT and IVF_PQ segments the
// SDK builds are searched by lancecat's reader with the SDK's own answers
// at the same nprobes, and segments lancecat builds are listed, described
// and used by the SDK (its plan shows the ANN stage on them) with a recall
// close to the SDK's own index of the same parameters.

type sdkVectorCheck struct {
	Indices []struct {
		Name      string   `json:"name"`
		IndexType string   `json:"indexType"`
		Columns   []string `json:"columns"`
	} `json:"indices"`
	Stats map[string]struct {
		NumIndexedRows   int    `json:"numIndexedRows"`
		NumUnindexedRows int    `json:"numUnindexedRows"`
		IndexType        string `json:"indexType"`
		DistanceType     string `json:"distanceType"`
		NumIndices       int    `json:"numIndices"`
	} `json:"stats"`
	Queries []struct {
		IDs       []int64   `json:"ids"`
		Distances []float64 `json:"distances"`
	} `json:"queries"`
	Plan    string  `json:"plan"`
	QueryMS float64 `json:"query_ms"`
}

// sdkVector runs sdk-vector.mjs mode with job and decodes its output into out.
func sdkVector(t testing.TB, sdk, mode string, job map[string]any, out any) {
	t.Helper()
	testenv.NodeJSON(t, out, testenv.Script("index", "sdk-vector.mjs"), mode, sdk, testenv.JobFile(t, job))
}

// tableVectors reads id and vec of every row, keyed by row id.
func tableVectors(t testing.TB, ds *lance.Dataset) (map[uint64]int64, [][]float32) {
	t.Helper()
	sc, err := ds.Scan(context.Background(), lance.ScanOptions{Columns: []string{"id", "vec"}, WithRowID: true})
	assert.NilError(t, err)
	defer sc.Release()
	idOf := map[uint64]int64{}
	var vecs [][]float32
	for sc.Next() {
		rec := sc.RecordBatch()
		fsl := rec.Column(1).(*array.FixedSizeList)
		vals := fsl.ListValues().(*array.Float32).Float32Values()
		dim := len(vals) / fsl.Len()
		for i := range int(rec.NumRows()) {
			idOf[rec.Column(2).(*array.Uint64).Value(i)] = rec.Column(0).(*array.Int64).Value(i)
			vecs = append(vecs, vals[i*dim:(i+1)*dim])
		}
	}
	assert.NilError(t, sc.Err())
	return idOf, vecs
}

// queriesNear are n queries: rows of the table moved by a little noise.
func queriesNear(vecs [][]float32, n int, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([][]float32, n)
	for i := range out {
		v := vecs[rng.IntN(len(vecs))]
		q := make([]float32, len(v))
		for j := range q {
			q[j] = v[j] + float32(rng.NormFloat64()*0.1)
		}
		out[i] = q
	}
	return out
}

func TestGoReadsSDKVectorIndices(t *testing.T) {
	cases := []struct {
		kind   string
		metric string
	}{
		{"IVF_FLAT", "l2"}, {"IVF_PQ", "l2"}, {"IVF_FLAT", "cosine"},
		{"IVF_PQ", "cosine"}, {"IVF_FLAT", "dot"}, {"IVF_PQ", "dot"},
	}
	for _, sdk := range testenv.SDKs(t) {
		for _, c := range cases {
			// Every metric on the newer SDK, two on the older (the layout
			// is the same; the build is what takes the time).
			if strings.HasSuffix(sdk, "0.31.0") && c.metric == "dot" {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s/%s", filepath.Base(sdk), c.kind, c.metric), func(t *testing.T) {
				ctx := context.Background()
				dir := filepath.Join(t.TempDir(), "t.lance")
				sdkVector(t, sdk, "create", map[string]any{"dir": dir, "rows": 3000, "dim": 16, "fragments": 2, "seed": 7, "clusters": 16,
					"indices": []map[string]any{{"type": c.kind, "metric": c.metric, "num_partitions": 6, "num_sub_vectors": 4}}}, nil)
				ds := lancetest.Open(t, dir)
				v, err := ds.OpenLatest(ctx)
				assert.NilError(t, err)
				idOf, vecs := tableVectors(t, ds)
				queries := queriesNear(vecs, 12, 3)
				const nprobes = 2
				var want sdkVectorCheck
				sdkVector(t, sdk, "check", map[string]any{"dir": dir, "queries": queries, "k": 10, "nprobes": nprobes, "metric": c.metric}, &want)

				name, segs, err := tableindex.VectorIndexFor(v, "vec")
				assert.NilError(t, err)
				assert.Equal(t, name, "vec_idx")
				assert.Assert(t, is.Len(segs, 1))
				r, err := tableindex.OpenVectorIndex(ctx, ds, v, segs[0])
				assert.NilError(t, err)
				defer r.Close()
				assert.Equal(t, string(r.Kind()), c.kind)
				assert.Equal(t, string(r.Metric()), c.metric)
				assert.Equal(t, r.Dim(), 16)
				assert.Equal(t, r.NumPartitions(), 6)
				same, total := 0, 0
				for i, q := range queries {
					hits, err := r.Search(ctx, index.VectorSearch{Query: q, K: 10, NProbes: nprobes})
					assert.NilError(t, err)
					got := map[int64]float32{}
					for _, h := range hits {
						got[idOf[h.RowID]] = h.Distance
					}
					w := want.Queries[i]
					for j, id := range w.IDs {
						total++
						d, ok := got[id]
						if !ok {
							continue
						}
						same++
						// IVF_FLAT distances are exact; PQ's are the same
						// table sums in another order.
						assert.Check(t, math.Abs(float64(d)-w.Distances[j]) <= 1e-4*math.Max(1, math.Abs(w.Distances[j])),
							"query %d id %d: distance %v, sdk %v", i, id, d, w.Distances[j])
					}
				}
				// The same candidates: exact for IVF_FLAT; PQ ties and
				// float summation order may swap the 10th.
				if c.kind == "IVF_FLAT" {
					assert.Equal(t, same, total)
				} else {
					assert.Assert(t, float64(same) >= 0.95*float64(total), "%d of %d", same, total)
				}
			})
		}
	}
}

// recallAt is the mean fraction of truth's ids found in got's.
func recallAt(got, truth []sdkVectorResult) float64 {
	var sum float64
	for i := range truth {
		in := map[int64]bool{}
		for _, id := range got[i].IDs {
			in[id] = true
		}
		n := 0
		for _, id := range truth[i].IDs {
			if in[id] {
				n++
			}
		}
		sum += float64(n) / float64(max(1, len(truth[i].IDs)))
	}
	return sum / float64(max(1, len(truth)))
}

type sdkVectorResult = struct {
	IDs       []int64   `json:"ids"`
	Distances []float64 `json:"distances"`
}

func TestSDKUsesGoVectorIndices(t *testing.T) {
	cases := []struct {
		kind, metric string
	}{
		{"IVF_PQ", "l2"}, {"IVF_FLAT", "cosine"}, {"IVF_PQ", "dot"},
	}
	for _, sdk := range testenv.SDKs(t) {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%s/%s", filepath.Base(sdk), c.kind, c.metric), func(t *testing.T) {
				ctx := context.Background()
				tmp := t.TempDir()
				ours, theirs := filepath.Join(tmp, "ours.lance"), filepath.Join(tmp, "theirs.lance")
				job := map[string]any{"rows": 4000, "dim": 16, "fragments": 2, "seed": 9, "clusters": 32}
				ix := map[string]any{"type": c.kind, "metric": c.metric, "num_partitions": 8, "num_sub_vectors": 4}
				job["dir"] = ours
				sdkVector(t, sdk, "create", job, nil)
				job["dir"], job["indices"] = theirs, []map[string]any{ix}
				sdkVector(t, sdk, "create", job, nil)

				ds := lancetest.Open(t, ours)
				_, err := tableindex.CreateVectorIndex(ctx, ds, tableindex.VectorIndexOptions{
					Column: "vec", Kind: index.VectorKind(c.kind), Metric: index.Metric(c.metric),
					NumPartitions: 8, NumSubVectors: 4, Seed: 42,
				})
				assert.NilError(t, err)
				_, vecs := tableVectors(t, ds)
				queries := queriesNear(vecs, 40, 5)
				check := map[string]any{"queries": queries, "k": 10, "nprobes": 2, "metric": c.metric}
				var truth, got, sdkOwn sdkVectorCheck
				check["dir"], check["flat"] = ours, true
				sdkVector(t, sdk, "check", check, &truth)
				delete(check, "flat")
				sdkVector(t, sdk, "check", check, &got)
				check["dir"] = theirs
				sdkVector(t, sdk, "check", check, &sdkOwn)

				assert.Assert(t, is.Len(got.Indices, 1))
				assert.Equal(t, got.Indices[0].Name, "vec_idx")
				assert.Equal(t, got.Indices[0].IndexType, sdkOwn.Indices[0].IndexType)
				assert.Check(t, is.DeepEqual(got.Indices[0].Columns, []string{"vec"}))
				st := got.Stats["vec_idx"]
				assert.Equal(t, st.NumIndexedRows, 4000)
				assert.Equal(t, st.NumUnindexedRows, 0)
				assert.Equal(t, st.IndexType, sdkOwn.Stats["vec_idx"].IndexType)
				assert.Equal(t, st.DistanceType, c.metric)
				// The SDK's plan searches our index (no flat KNN of every row).
				assert.Check(t, strings.Contains(got.Plan, "ANNSubIndex") && strings.Contains(got.Plan, "vec_idx"), got.Plan)
				ours10, theirs10 := recallAt(got.Queries, truth.Queries), recallAt(sdkOwn.Queries, truth.Queries)
				t.Logf("recall@10 at nprobes 2: ours %.3f, the SDK's %.3f", ours10, theirs10)
				// The SDK's own k-means is seeded from the OS: rebuilding its
				// index on this table measured recall 0.600 to 0.655 (IVF_PQ
				// l2, 40 queries), so the bound here is that spread; the 0.02
				// bound is checked at scale by scripts/index/vecbench.
				assert.Check(t, ours10 >= theirs10-0.06, "recall@10 ours %.3f, the SDK's %.3f", ours10, theirs10)
			})
		}
	}
}

// sdkTwinTables creates, with the SDK sdk, two tables of the same data (job: rows, dim, fragments,
// seed, clusters) in a temporary dir: ours, for lancecat's index, and theirs, for the other
// builder's.
func sdkTwinTables(t testing.TB, sdk string, job map[string]any) (ours, theirs string) {
	t.Helper()
	tmp := t.TempDir()
	ours, theirs = filepath.Join(tmp, "ours.lance"), filepath.Join(tmp, "theirs.lance")
	for _, dir := range []string{ours, theirs} {
		job["dir"] = dir
		sdkVector(t, sdk, "create", job, nil)
	}
	return ours, theirs
}

// buildVectorIndexAt builds opts with lancecat on the table at dir and returns the dataset, its
// version after the build and how long the build took.
func buildVectorIndexAt(t testing.TB, ctx context.Context, dir string, opts tableindex.VectorIndexOptions) (*lance.Dataset, *lance.Version, time.Duration) {
	t.Helper()
	ds := lancetest.Open(t, dir)
	t0 := time.Now()
	_, err := tableindex.CreateVectorIndex(ctx, ds, opts)
	assert.NilError(t, err)
	took := time.Since(t0).Round(time.Millisecond)
	v, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	return ds, v, took
}

// searchWithOurReader opens, with lancecat's reader, the first segment of the vector index on vec
// of the table at dir (another client built it) and searches it for each query with search's
// parameters; it returns the ids found per query and the reader (closed when the test ends).
func searchWithOurReader(t testing.TB, ctx context.Context, dir string, queries [][]float32, search index.VectorSearch) ([]sdkVectorResult, index.VectorReader) {
	t.Helper()
	ds := lancetest.Open(t, dir)
	v, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	idOf, _ := tableVectors(t, ds)
	_, segs, err := tableindex.VectorIndexFor(v, "vec")
	assert.NilError(t, err)
	rd, err := tableindex.OpenVectorIndex(ctx, ds, v, segs[0])
	assert.NilError(t, err)
	t.Cleanup(func() { rd.Close() })
	got := make([]sdkVectorResult, len(queries))
	for i, q := range queries {
		search.Query = q
		hits, err := rd.Search(ctx, search)
		assert.NilError(t, err)
		for _, h := range hits {
			got[i].IDs = append(got[i].IDs, idOf[h.RowID])
		}
	}
	return got, rd
}
