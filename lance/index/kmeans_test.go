package index

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gotest.tools/v3/assert"
)

// clusteredK is n rows of dim values: k centres uniform in [-1, 1] plus
// 0.25 gaussian noise (the shape of sdk-vector.mjs's data).
func clusteredK(n, dim, k int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	centres := make([]float32, k*dim)
	for i := range centres {
		centres[i] = rng.Float32()*2 - 1
	}
	out := make([]float32, n*dim)
	for i := range n {
		for j := range dim {
			out[i*dim+j] = centres[(i%k)*dim+j] + 0.25*float32(rng.NormFloat64())
		}
	}
	return out
}

// Hamerly's bounds only skip scans that cannot change a row's centroid:
// the trained centroids and loss are Lloyd's (up to float rounding at
// ties), on the shapes the index trains (PQ's 16-dim sub-vectors with 256
// codewords, IVF's 128-dim vectors with few partitions), and the same
// seed gives the same centroids.
func TestKMeansHamerlyMatchesLloyd(t *testing.T) {
	for _, tc := range []struct {
		name         string
		n, dim, k, c int
	}{
		{"pq sub-vectors", 8192, 16, 256, 1000},
		{"ivf", 4096, 128, 16, 64},
		{"one centroid", 500, 8, 1, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := clusteredK(tc.n, tc.dim, tc.c, 7)
			p := kmeansParams{K: tc.k, MaxIters: 20, Metric: L2, Seed: 3}
			fast, fl, err := trainKMeans(context.Background(), data, tc.dim, p)
			assert.NilError(t, err)
			again, _, err := trainKMeans(context.Background(), data, tc.dim, p)
			assert.NilError(t, err)
			assert.Assert(t, slices.Equal(fast, again), "deterministic given the seed")
			p.lloyd = true
			slow, sl, err := trainKMeans(context.Background(), data, tc.dim, p)
			assert.NilError(t, err)
			assert.Assert(t, math.Abs(fl-sl) <= 1e-3*sl, "loss %v (Hamerly) vs %v (Lloyd)", fl, sl)
			var maxDiff float64
			for i := range fast {
				maxDiff = math.Max(maxDiff, math.Abs(float64(fast[i]-slow[i])))
			}
			assert.Assert(t, maxDiff < 1e-2, "centroids differ by up to %v", maxDiff)
		})
	}
}

// BenchmarkKMeansPQ is one PQ sub-vector's codebook training at Lance's
// sample size (256 × 256 rows of 16 dims, 256 codewords, 50 iterations).
func BenchmarkKMeansPQ(b *testing.B) {
	data := clusteredK(65536, 16, 16, 20000)
	for _, lloyd := range []bool{false, true} {
		name := "hamerly"
		if lloyd {
			name = "lloyd"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				_, _, err := trainKMeans(context.Background(), data, 16, kmeansParams{K: 256, MaxIters: 50, Metric: L2, Seed: 1, lloyd: lloyd})
				assert.NilError(b, err)
			}
		})
	}
}
