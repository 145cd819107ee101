package query

import (
	"math"
	"testing"

	"gotest.tools/v3/assert"
)

// The unrolled kernels agree with the naive loops for every length
// (remainders of the unrolling included).
func TestKernels(t *testing.T) {
	for n := 1; n <= 40; n++ {
		x, y := make([]float32, n), make([]float32, n)
		for i := range n {
			x[i] = float32(math.Sin(float64(i*7 + n)))
			y[i] = float32(math.Cos(float64(i*3 - n)))
		}
		assert.Assert(t, math.Abs(float64(l2sq(x, y)-l2sqNaive(x, y))) < 1e-4, "n=%d", n)
		assert.Assert(t, math.Abs(float64(dotf(x, y)-dotNaive(x, y))) < 1e-4, "n=%d", n)
		want := 1 - dotNaive(x, y)/float32(math.Sqrt(float64(dotNaive(x, x)*dotNaive(y, y))))
		assert.Assert(t, math.Abs(float64(cosine(x, norm(x), y)-want)) < 1e-4, "n=%d", n)
		bx, by := make([]byte, n), make([]byte, n)
		naive := 0
		for i := range n {
			bx[i], by[i] = byte(i*37+n), byte(i*11)
			for v := bx[i] ^ by[i]; v != 0; v &= v - 1 {
				naive++
			}
		}
		assert.Equal(t, hamming(bx, by), float32(naive), "n=%d", n)
	}
}

// BenchmarkKernels: the unrolled kernels against the naive loops, at the
// dimension of the benchmark table (128).
func BenchmarkKernels(b *testing.B) {
	x, y := make([]float32, 128), make([]float32, 128)
	for i := range x {
		x[i], y[i] = float32(i)/128, float32(128-i)/128
	}
	var sink float32
	b.Run("l2/unrolled", func(b *testing.B) {
		for b.Loop() {
			sink += l2sq(x, y)
		}
	})
	b.Run("l2/naive", func(b *testing.B) {
		for b.Loop() {
			sink += l2sqNaive(x, y)
		}
	})
	b.Run("dot/unrolled", func(b *testing.B) {
		for b.Loop() {
			sink += dotf(x, y)
		}
	})
	b.Run("dot/naive", func(b *testing.B) {
		for b.Loop() {
			sink += dotNaive(x, y)
		}
	})
	b.Run("cosine/unrolled", func(b *testing.B) {
		xn := norm(x)
		for b.Loop() {
			sink += cosine(x, xn, y)
		}
	})
	_ = sink
}
