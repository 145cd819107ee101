package index

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// clustered is n vectors of dim around 8 random centres (seeded).
func clustered(n, dim int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 2))
	centres := make([]float32, 8*dim)
	for i := range centres {
		centres[i] = rng.Float32()*2 - 1
	}
	out := make([]float32, n*dim)
	for i := range n {
		for j := range dim {
			out[i*dim+j] = centres[(i%8)*dim+j] + float32(rng.NormFloat64()*0.2)
		}
	}
	return out
}

// buildVector trains and writes a small segment over data (row ids 0..n-1).
func buildVector(t testing.TB, data []float32, o VectorBuildOptions) memStore {
	t.Helper()
	n := len(data) / o.Dim
	o, err := o.Resolve(n)
	assert.NilError(t, err)
	b, err := TrainVector(context.Background(), data, o)
	assert.NilError(t, err)
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i)
	}
	b.Add(data, ids)
	st := memStore{}
	_, err = b.Finish(context.Background(), st)
	assert.NilError(t, err)
	return st
}

// bruteForce is the exact top k of data for q under metric.
// recalled is how many of hits are among want, the exact answer, whose
// row w is at address at(w).
func recalled(hits []VectorHit, want []uint64, at func(uint64) uint64) int {
	found := 0
	for _, h := range hits {
		for _, w := range want {
			if at(w) == h.RowID {
				found++
			}
		}
	}
	return found
}

func bruteForce(data, q []float32, dim, k int, metric Metric) []uint64 {
	top := newTopK(k)
	qq := slices.Clone(q)
	for i := 0; i*dim < len(data); i++ {
		v := data[i*dim : (i+1)*dim]
		var d float32
		switch metric {
		case Dot:
			d = 1 - dot(qq, v)
		case Cosine:
			vv := slices.Clone(v)
			normalizeVec(vv)
			qn := slices.Clone(qq)
			normalizeVec(qn)
			d = 1 - dot(qn, vv)
		default:
			d = l2sq(qq, v)
		}
		top.push(uint64(i), d)
	}
	var out []uint64
	for _, h := range top.sorted() {
		out = append(out, h.RowID)
	}
	return out
}

// TestVectorRoundTrip: what the builder writes, the reader opens with the
// same kind, metric and shape; probing every partition, IVF_FLAT returns
// the exact top 10 and IVF_PQ most of it.
func TestVectorRoundTrip(t *testing.T) {
	const dim, n = 16, 1200
	data := clustered(n, dim, 1)
	for _, kind := range []VectorKind{IVFFlat, IVFPQ, IVFSQ} {
		for _, metric := range []Metric{L2, Cosine, Dot} {
			t.Run(fmt.Sprint(kind, "/", metric), func(t *testing.T) {
				st := buildVector(t, data, VectorBuildOptions{Kind: kind, Metric: metric, Dim: dim, NumPartitions: 4, NumSubVectors: 4, MaxIterations: 10, Seed: 3})
				r, err := OpenVector(context.Background(), st)
				assert.NilError(t, err)
				defer r.Close()
				assert.Equal(t, r.Kind(), kind)
				assert.Equal(t, r.Metric(), metric)
				assert.Equal(t, r.Dim(), dim)
				assert.Equal(t, r.NumPartitions(), 4)
				found, total := 0, 0
				for qi := range 10 {
					q := data[qi*37*dim : (qi*37+1)*dim]
					hits, err := r.Search(context.Background(), VectorSearch{Query: q, K: 10, NProbes: 4})
					assert.NilError(t, err)
					assert.Assert(t, is.Len(hits, 10))
					assert.Assert(t, slices.IsSortedFunc(hits, func(a, b VectorHit) int {
						if worse(a, b) {
							return 1
						}
						return -1
					}))
					want := bruteForce(data, q, dim, 10, metric)
					total += len(hits)
					found += recalled(hits, want, func(w uint64) uint64 { return w })
				}
				switch kind {
				case IVFFlat:
					assert.Equal(t, found, total)
				case IVFSQ:
					assert.Assert(t, found*10 >= total*9, "SQ found %d of %d", found, total)
				default:
					assert.Assert(t, found*10 >= total*6, "PQ found %d of %d", found, total)
				}
			})
		}
	}
}

// TestVectorLateSearch: with a prefilter that only rows far from the query
// pass, NProbes partitions hold fewer than K of them; MaxNProbes lets the
// search go on through the partitions up to MaxNProbes (Lance's
// minimum_nprobes/maximum_nprobes); a search that has K after NProbes
// stops there.
func TestVectorLateSearch(t *testing.T) {
	const dim, n = 8, 1600
	data := clustered(n, dim, 5)
	st := buildVector(t, data, VectorBuildOptions{Kind: IVFFlat, Metric: L2, Dim: dim, NumPartitions: 8, MaxIterations: 10, Seed: 3})
	r, err := OpenVector(context.Background(), st)
	assert.NilError(t, err)
	defer r.Close()
	q := data[:dim]                                    // row 0, in cluster 0
	allow := func(id uint64) bool { return id%8 == 4 } // cluster 4 only
	count := func(s VectorSearch) int {
		s.Query, s.K, s.Allow = q, 10, allow
		hits, err := r.Search(context.Background(), s)
		assert.NilError(t, err)
		for _, h := range hits {
			assert.Equal(t, h.RowID%8, uint64(4))
		}
		return len(hits)
	}
	for _, tc := range []struct {
		name string
		s    VectorSearch
		want func(int) bool
	}{
		{"one partition, exact", VectorSearch{NProbes: 1}, func(n int) bool { return n < 10 }},
		{"max at or below nprobes is exact", VectorSearch{NProbes: 1, MaxNProbes: 1}, func(n int) bool { return n < 10 }},
		{"late search up to every partition", VectorSearch{NProbes: 1, MaxNProbes: 1 << 30}, func(n int) bool { return n == 10 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := count(tc.s)
			assert.Assert(t, tc.want(got), "%d hits", got)
		})
	}
	// Short after one partition, the search goes on through every one
	// allowed: the answer of probing them all, or of probing three.
	for _, maxP := range []int{8, 3} {
		want, err := r.Search(context.Background(), VectorSearch{Query: q, K: 10, NProbes: maxP, Allow: allow})
		assert.NilError(t, err)
		late, err := r.Search(context.Background(), VectorSearch{Query: q, K: 10, NProbes: 1, MaxNProbes: maxP, Allow: allow})
		assert.NilError(t, err)
		assert.DeepEqual(t, late, want)
	}
	// With no prefilter the first partition holds K: no late search.
	one, err := r.Search(context.Background(), VectorSearch{Query: q, K: 10, NProbes: 1})
	assert.NilError(t, err)
	late, err := r.Search(context.Background(), VectorSearch{Query: q, K: 10, NProbes: 1, MaxNProbes: 8})
	assert.NilError(t, err)
	assert.DeepEqual(t, late, one)
}

// TestVectorBuildDeterministic: the same data and seed give the same
// files byte for byte, on any number of cores.
func TestVectorBuildDeterministic(t *testing.T) {
	data := clustered(800, 8, 5)
	o := VectorBuildOptions{Kind: IVFPQ, Metric: L2, Dim: 8, NumPartitions: 3, NumSubVectors: 2, MaxIterations: 5, Seed: 11}
	a, b := buildVector(t, data, o), buildVector(t, data, o)
	for name := range a {
		assert.Check(t, bytes.Equal(a[name], b[name]), name)
	}
}

// TestVectorParams: defaults as LanceDB's; bad parameters are
// ErrInvalidParams.
func TestVectorParams(t *testing.T) {
	o, err := VectorBuildOptions{Kind: IVFPQ, Dim: 128}.Resolve(200000)
	assert.NilError(t, err)
	assert.Equal(t, o.NumPartitions, 24)
	assert.Equal(t, o.NumSubVectors, 8)
	assert.Equal(t, o.Metric, L2)
	o, err = VectorBuildOptions{Kind: IVFFlat, Dim: 12}.Resolve(200000)
	assert.NilError(t, err)
	assert.Equal(t, o.NumPartitions, 48)
	assert.Equal(t, DefaultSubVectors(24), 3)
	assert.Equal(t, DefaultSubVectors(7), 1)
	for _, bad := range []VectorBuildOptions{
		{Kind: IVFPQ, Dim: 16, NumSubVectors: 3},
		{Kind: IVFPQ, Dim: 16, Metric: "hamming"},
		{Kind: "IVF_RQ", Dim: 16},
		{Kind: IVFHNSWSQ, Dim: 16, M: 1},
		{Kind: IVFHNSWPQ, Dim: 16, EfConstruction: 1_000_000},
		{Kind: IVFHNSWFlat, Dim: 16, M: -1},
		{Kind: IVFFlat, Dim: 16, NumPartitions: 5000},
	} {
		_, err := bad.Resolve(1000)
		assert.Check(t, is.ErrorIs(err, ErrInvalidParams), "%+v", bad)
	}
	// Too few rows to train is its own error (the caller's 400).
	_, err = TrainVector(context.Background(), clustered(100, 8, 1), VectorBuildOptions{Kind: IVFPQ, Metric: L2, Dim: 8, NumPartitions: 2, NumSubVectors: 2, MaxIterations: 5, SampleRate: 256})
	assert.Check(t, is.ErrorIs(err, ErrNotEnoughRows))
}

// TestParseVectorDetails: the kind and metric come back from the details
// the builder writes and from the SDK's (bytes measured from 0.39.0).
func TestParseVectorDetails(t *testing.T) {
	sdkPQ := []byte("\"\x04\x08\x08\x10\x04J\x1c\n\x15lance.ivf.sample_rate\x12\x03256")
	k, m := ParseVectorDetails(sdkPQ)
	assert.Equal(t, k, IVFPQ)
	assert.Equal(t, m, L2)
	k, m = ParseVectorDetails([]byte("\x08\x02B\x00"))
	assert.Equal(t, k, IVFFlat)
	assert.Equal(t, m, Dot)
	k, _ = ParseVectorDetails(nil)
	assert.Equal(t, k, VectorKind(""))
	// The SDK's IVF_HNSW_SQ (0.39.0): HNSW parameters (field 3) and SQ's (field 5).
	sdkHNSWSQ := []byte("\x1a\x07\x08\x14\x10\xac\x02\x18\x07*\x02\x08\x08J\x1b\n\x14lance.sq.sample_rate\x12\x03256")
	k, m = ParseVectorDetails(sdkHNSWSQ)
	assert.Equal(t, k, IVFHNSWSQ)
	assert.Equal(t, m, L2)
	k, m = ParseVectorDetails([]byte("\x08\x01*\x02\x08\x08"))
	assert.Equal(t, k, IVFSQ)
	assert.Equal(t, m, Cosine)
	b := &VectorBuilder{opts: VectorBuildOptions{Kind: IVFPQ, Metric: Cosine, NumSubVectors: 4, MaxIterations: 50, SampleRate: 256}}
	k, m = ParseVectorDetails(b.Details())
	assert.Equal(t, k, IVFPQ)
	assert.Equal(t, m, Cosine)
}

// FuzzOpenVectorIndex: any bytes in place of either file of a segment
// open with an error or search without panicking.
func FuzzOpenVectorIndex(f *testing.F) {
	data := clustered(300, 8, 7)
	samples := map[string]memStore{
		string(IVFFlat): buildVector(f, data, VectorBuildOptions{Kind: IVFFlat, Metric: L2, Dim: 8, NumPartitions: 2, MaxIterations: 3, SampleRate: 256}),
		string(IVFPQ):   buildVector(f, data, VectorBuildOptions{Kind: IVFPQ, Metric: Dot, Dim: 8, NumPartitions: 2, NumSubVectors: 2, MaxIterations: 3, SampleRate: 256}),
		string(IVFSQ):   buildVector(f, data, VectorBuildOptions{Kind: IVFSQ, Metric: L2, Dim: 8, NumPartitions: 2, MaxIterations: 3, SampleRate: 256}),
		// A graph of a few nodes per partition keeps the seeds small.
		string(IVFHNSWSQ): buildVector(f, data[:8*40], VectorBuildOptions{Kind: IVFHNSWSQ, Metric: L2, Dim: 8, NumPartitions: 2, MaxIterations: 3, SampleRate: 256, M: 4, EfConstruction: 8}),
	}
	for kind, st := range samples {
		for name, b := range st {
			f.Add(kind, name, b)
		}
	}
	f.Fuzz(func(t *testing.T, kind, name string, b []byte) {
		st, ok := samples[kind]
		if !ok {
			return
		}
		hostile := st.with(name, b)
		r, err := OpenVector(context.Background(), hostile)
		if err != nil {
			return
		}
		defer r.Close()
		if r.Dim() <= 0 || r.Dim() > 1<<16 {
			return
		}
		_, _ = r.Search(context.Background(), VectorSearch{Query: make([]float32, r.Dim()), K: 5, NProbes: 3})
	})
}
