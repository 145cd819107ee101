package index

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// Float32 kernels of the vector indices: plain Go, unrolled by 4 with
// independent accumulators (the Go compiler does not vectorize; this is
// what keeps k-means and PQ encoding within reach of the SDK's build).

func l2sq(x, y []float32) float32 {
	n := len(x)
	y = y[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		d0 := x[i] - y[i]
		d1 := x[i+1] - y[i+1]
		d2 := x[i+2] - y[i+2]
		d3 := x[i+3] - y[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < n; i++ {
		d := x[i] - y[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

func dot(x, y []float32) float32 {
	n := len(x)
	y = y[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < n; i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// normalizeVec scales x to unit length in place (a zero vector stays zero).
func normalizeVec(x []float32) {
	n := float32(math.Sqrt(float64(dot(x, x))))
	if n == 0 {
		return
	}
	for i := range x {
		x[i] /= n
	}
}

// dot4 is x·a, x·b, x·c, x·d in one pass: x is loaded once for four
// centroids, which is what makes the nearest-centroid searches of k-means
// and PQ encoding fast without SIMD.
func dot4(x, a, b, c, d []float32) (s0, s1, s2, s3 float32) {
	n := len(x)
	a, b, c, d = a[:n], b[:n], c[:n], d[:n]
	for i, xi := range x {
		s0 += xi * a[i]
		s1 += xi * b[i]
		s2 += xi * c[i]
		s3 += xi * d[i]
	}
	return
}

// nearestBy is the centroid minimizing norms[c] - 2 x·c (l2, with norms
// the centroids' squared norms) or 1 - x·c (dot, norms nil), with that
// score.
func nearestBy(x, centroids, norms []float32, dim int) (int, float32) {
	k := len(centroids) / dim
	best, bd := 0, float32(math.MaxFloat32)
	score := func(c int, d float32) {
		if norms != nil {
			d = norms[c] - 2*d
		} else {
			d = 1 - d
		}
		if d < bd {
			best, bd = c, d
		}
	}
	c := 0
	for ; c+4 <= k; c += 4 {
		d0, d1, d2, d3 := dot4(x, centroids[c*dim:(c+1)*dim], centroids[(c+1)*dim:(c+2)*dim], centroids[(c+2)*dim:(c+3)*dim], centroids[(c+3)*dim:(c+4)*dim])
		score(c, d0)
		score(c+1, d1)
		score(c+2, d2)
		score(c+3, d3)
	}
	for ; c < k; c++ {
		score(c, dot(x, centroids[c*dim:(c+1)*dim]))
	}
	return best, bd
}

// sqNorms are the squared norms of the rows of centroids.
func sqNorms(centroids []float32, dim int) []float32 {
	out := make([]float32, len(centroids)/dim)
	for c := range out {
		v := centroids[c*dim : (c+1)*dim]
		out[c] = dot(v, v)
	}
	return out
}

// blockRows is how many rows nearestBlock scores per matrix product.
const blockRows = 64

// transposed is centroids (k × dim, row-major) as dim × k, the layout
// nearestBlock multiplies by.
func transposed(centroids []float32, dim int) []float32 {
	k := len(centroids) / dim
	out := make([]float32, len(centroids))
	for c := range k {
		for j := range dim {
			out[j*k+c] = centroids[c*dim+j]
		}
	}
	return out
}

// nearestBlock scores r ≤ blockRows rows against k centroids at once:
// row i is xs[i*ld : i*ld+dim], ct the centroids transposed (dim × k),
// norms their squared norms. The dot products are one float32 matrix
// product (gonum's Sgemm: SIMD axpy kernels, where Go's own loops are
// scalar); each row's products are summed in the same order whatever
// the other rows, so the result does not depend on how rows are
// grouped. best[i] gets the nearest centroid, score[i] its |c|² - 2x·c
// and second[i] (when not nil) the next best score.
func nearestBlock(xs []float32, ld, r, dim int, ct, norms, scratch []float32, best []int32, score, second []float32) {
	k := len(norms)
	prod := scratch[:r*k]
	blas32.Implementation().Sgemm(blas.NoTrans, blas.NoTrans, r, k, dim, 1, xs, ld, ct, k, 0, prod, k)
	for i := range r {
		row := prod[i*k : (i+1)*k]
		b, bd, sd := 0, float32(math.MaxFloat32), float32(math.MaxFloat32)
		for c, d := range row {
			d = norms[c] - 2*d
			if d < bd {
				b, bd, sd = c, d, bd
			} else if d < sd {
				sd = d
			}
		}
		best[i], score[i] = int32(b), bd
		if second != nil {
			second[i] = sd
		}
	}
}
