package index

// K-means as Lance trains IVF partitions and PQ codebooks: centroids
// initialised with k distinct random rows, Lloyd iterations until the
// loss changes by less than 1e-4 of itself or MaxIters, empty clusters
// refilled by splitting the largest one (Lance's split_clusters), l2 or
// dot assignment. Deterministic given the seed: the random choices come
// from one seeded PCG stream and the parallel sums are merged in worker
// order. Assignment runs on every core (parallelFor).

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// kmeansParams configure one training.
type kmeansParams struct {
	K        int
	MaxIters int
	// Metric is L2 or Dot (cosine is l2 over normalized data).
	Metric Metric
	Seed   uint64
}

const kmeansTolerance = 1e-4

// trainKMeans clusters the n = len(data)/dim rows of data into K
// centroids (K × dim, row-major) and returns them with the final loss.
func trainKMeans(data []float32, dim int, p kmeansParams) ([]float32, float64, error) {
	n := len(data) / dim
	if n < p.K || p.K <= 0 {
		return nil, 0, fmt.Errorf("%w: k-means needs at least %d vectors, got %d", ErrNotEnoughRows, p.K, n)
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x6c616e6365))
	centroids := make([]float32, p.K*dim)
	for i, r := range rng.Perm(n)[:p.K] {
		copy(centroids[i*dim:(i+1)*dim], data[r*dim:(r+1)*dim])
	}
	iters := max(p.MaxIters, 1)
	membership := make([]int32, n)
	counts := make([]int, p.K)
	loss := math.MaxFloat64
	for range iters {
		last := assign(data, dim, centroids, p.Metric, membership)
		// New centroids: the mean of their members.
		sums := make([]float64, p.K*dim)
		clear(counts)
		for i, c := range membership {
			counts[c]++
			row := data[i*dim : (i+1)*dim]
			s := sums[int(c)*dim : (int(c)+1)*dim]
			for j, v := range row {
				s[j] += float64(v)
			}
		}
		for c := range p.K {
			if counts[c] == 0 {
				continue
			}
			inv := 1 / float64(counts[c])
			for j := range dim {
				centroids[c*dim+j] = float32(sums[c*dim+j] * inv)
			}
		}
		splitEmpty(centroids, counts, dim, rng)
		if math.Abs(loss-last) < kmeansTolerance*last {
			loss = last
			break
		}
		loss = last
	}
	return centroids, loss, nil
}

// splitEmpty gives each empty cluster half of a large one: the centroid
// is copied and the two copies pushed apart by 1/1024 (Lance's
// split_clusters, with the cluster picked from the seeded stream in
// proportion to its size).
func splitEmpty(centroids []float32, counts []int, dim int, rng *rand.Rand) {
	total := 0
	for _, c := range counts {
		total += c
	}
	const eps = 1.0 / 1024
	for i := range counts {
		if counts[i] != 0 || total == 0 {
			continue
		}
		// Pick cluster j with probability counts[j]/total.
		r := rng.IntN(total)
		j := 0
		for ; j < len(counts); j++ {
			if r < counts[j] {
				break
			}
			r -= counts[j]
		}
		if counts[j] < 2 {
			continue
		}
		counts[i] = counts[j] / 2
		counts[j] -= counts[i]
		for k := range dim {
			if k%2 == 0 {
				centroids[i*dim+k] = centroids[j*dim+k] * (1 + eps)
				centroids[j*dim+k] *= 1 - eps
			} else {
				centroids[i*dim+k] = centroids[j*dim+k] * (1 - eps)
				centroids[j*dim+k] *= 1 + eps
			}
		}
	}
}

// assign writes each row's nearest centroid into membership and returns
// the summed distance (squared l2, or 1 - x·c for dot).
func assign(data []float32, dim int, centroids []float32, metric Metric, membership []int32) float64 {
	n := len(data) / dim
	k := len(centroids) / dim
	// l2: |x-c|² = |x|² + |c|² - 2x·c; the argmin needs only |c|² - 2x·c.
	norms := make([]float32, k)
	if metric != Dot {
		for c := range k {
			cv := centroids[c*dim : (c+1)*dim]
			norms[c] = dot(cv, cv)
		}
	}
	losses := parallelSum(n, func(lo, hi int) float64 {
		var loss float64
		for i := lo; i < hi; i++ {
			x := data[i*dim : (i+1)*dim]
			best, bd := 0, float32(math.MaxFloat32)
			for c := range k {
				d := dot(x, centroids[c*dim:(c+1)*dim])
				if metric == Dot {
					d = 1 - d
				} else {
					d = norms[c] - 2*d
				}
				if d < bd {
					best, bd = c, d
				}
			}
			membership[i] = int32(best)
			if metric == Dot {
				loss += float64(bd)
			} else {
				loss += math.Max(0, float64(bd+dot(x, x)))
			}
		}
		return loss
	})
	return losses
}

// nearest is the index of the centroid nearest x.
func nearest(x, centroids []float32, dim int, metric Metric) int {
	best, bd := 0, float32(math.MaxFloat32)
	for c := 0; c*dim < len(centroids); c++ {
		cv := centroids[c*dim : (c+1)*dim]
		var d float32
		if metric == Dot {
			d = 1 - dot(x, cv)
		} else {
			d = l2sq(x, cv)
		}
		if d < bd {
			best, bd = c, d
		}
	}
	return best
}

// workers is how many goroutines the training uses: every core.
func workers() int { return max(1, runtime.GOMAXPROCS(0)) }

// parallelFor runs fn over [0, n) split into one contiguous range per
// worker.
func parallelFor(n int, fn func(lo, hi int)) {
	w := min(workers(), max(1, n/64))
	if w <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + w - 1) / w
	for lo := 0; lo < n; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, min(n, lo+step))
	}
	wg.Wait()
}

// parallelSum is parallelFor whose ranges each return a sum; the sums
// are added in range order, so the total does not depend on scheduling.
func parallelSum(n int, fn func(lo, hi int) float64) float64 {
	w := min(workers(), max(1, n/64))
	step := (n + w - 1) / max(w, 1)
	if step == 0 {
		return 0
	}
	parts := make([]float64, (n+step-1)/step)
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			parts[i] = fn(i*step, min(n, (i+1)*step))
		}(i)
	}
	wg.Wait()
	var s float64
	for _, p := range parts {
		s += p
	}
	return s
}
