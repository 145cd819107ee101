package index

import "math"

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
