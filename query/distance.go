package query

import (
	"math"
	"math/bits"
)

// Distance kernels over float32 vectors, as Lance reports _distance:
// l2 is the squared euclidean distance, cosine is 1 - cos(x, y), dot is
// 1 - x·y, hamming counts differing bits of uint8 vectors. Plain Go loops,
// unrolled by 8 with independent accumulators (BenchmarkKernels compares
// them with the naive loop).

func l2sq(x, y []float32) float32 {
	n := len(x)
	y = y[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		d0 := x[i] - y[i]
		d1 := x[i+1] - y[i+1]
		d2 := x[i+2] - y[i+2]
		d3 := x[i+3] - y[i+3]
		d4 := x[i+4] - y[i+4]
		d5 := x[i+5] - y[i+5]
		d6 := x[i+6] - y[i+6]
		d7 := x[i+7] - y[i+7]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		s4 += d4 * d4
		s5 += d5 * d5
		s6 += d6 * d6
		s7 += d7 * d7
	}
	for ; i < n; i++ {
		d := x[i] - y[i]
		s0 += d * d
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

func dotf(x, y []float32) float32 {
	n := len(x)
	y = y[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
		s4 += x[i+4] * y[i+4]
		s5 += x[i+5] * y[i+5]
		s6 += x[i+6] * y[i+6]
		s7 += x[i+7] * y[i+7]
	}
	for ; i < n; i++ {
		s0 += x[i] * y[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// cosine is 1 - x·y / (|x| |y|); xnorm is |x| (the query's, computed once).
func cosine(x []float32, xnorm float32, y []float32) float32 {
	n := len(x)
	y = y[:n]
	var d0, d1, d2, d3, n0, n1, n2, n3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		d0 += x[i] * y[i]
		d1 += x[i+1] * y[i+1]
		d2 += x[i+2] * y[i+2]
		d3 += x[i+3] * y[i+3]
		n0 += y[i] * y[i]
		n1 += y[i+1] * y[i+1]
		n2 += y[i+2] * y[i+2]
		n3 += y[i+3] * y[i+3]
	}
	for ; i < n; i++ {
		d0 += x[i] * y[i]
		n0 += y[i] * y[i]
	}
	dot := (d0 + d1) + (d2 + d3)
	yn := float32(math.Sqrt(float64((n0 + n1) + (n2 + n3))))
	return 1 - dot/(xnorm*yn)
}

func norm(x []float32) float32 { return float32(math.Sqrt(float64(dotf(x, x)))) }

func hamming(x, y []byte) float32 {
	n := len(x)
	y = y[:n]
	c := 0
	i := 0
	for ; i+8 <= n; i += 8 {
		a := uint64(x[i]) | uint64(x[i+1])<<8 | uint64(x[i+2])<<16 | uint64(x[i+3])<<24 |
			uint64(x[i+4])<<32 | uint64(x[i+5])<<40 | uint64(x[i+6])<<48 | uint64(x[i+7])<<56
		b := uint64(y[i]) | uint64(y[i+1])<<8 | uint64(y[i+2])<<16 | uint64(y[i+3])<<24 |
			uint64(y[i+4])<<32 | uint64(y[i+5])<<40 | uint64(y[i+6])<<48 | uint64(y[i+7])<<56
		c += bits.OnesCount64(a ^ b)
	}
	for ; i < n; i++ {
		c += bits.OnesCount8(x[i] ^ y[i])
	}
	return float32(c)
}

// naive kernels: the reference the unrolled ones are tested and measured
// against.
func l2sqNaive(x, y []float32) float32 {
	var s float32
	for i := range x {
		d := x[i] - y[i]
		s += d * d
	}
	return s
}

func dotNaive(x, y []float32) float32 {
	var s float32
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}
