package index

// Scalar quantization (IVF_SQ) as Lance builds it (measured with pylance
// 14.0.2's IVF_SQ and the Node SDK's IVF_HNSW_SQ, see ivf.go): one 8-bit
// code per dimension of the vector itself (no residual; cosine: of the
// normalized vector), scaled over one range [start, end] shared by every
// dimension: the minimum and maximum of every value of the training
// sample (Lance's SQBuildParams with extend_scale 1). A value outside the
// range saturates to 0 or 255.

import "math"

// sqBounds is the [start, end] of sample's values (0, 0 for none).
func sqBounds(sample []float32) (start, end float64) {
	if len(sample) == 0 {
		return 0, 0
	}
	lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
	for _, x := range sample {
		if x != x { // NaN: no bound
			continue
		}
		lo, hi = min(lo, x), max(hi, x)
	}
	if lo > hi {
		return 0, 0
	}
	return float64(lo), float64(hi)
}

// sqEncode writes the code of each value of x into out (len(x) bytes):
// (x - start) * 255 / (end - start), truncated and saturated, as Lance's
// scale_to_u8 computes it (the reader quantizes a query the same way).
func sqEncode(out []byte, x []float32, start, end float64) {
	span := end - start
	for i, v := range x {
		if span == 0 {
			out[i] = 0
			continue
		}
		c := (float64(v) - start) * 255 / span
		switch {
		case c <= 0 || c != c:
			out[i] = 0
		case c >= 255:
			out[i] = 255
		default:
			out[i] = byte(c)
		}
	}
}
