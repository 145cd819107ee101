package index

// K-means as Lance trains IVF partitions and PQ codebooks: centroids
// initialised with k distinct random rows, Lloyd iterations until the
// loss changes by less than 1e-4 of itself or MaxIters, empty clusters
// refilled by splitting the largest one (Lance's split_clusters), l2 or
// dot assignment. Deterministic given the seed: the random choices come
// from one seeded PCG stream and the parallel sums are merged in worker
// order. Assignment runs on every core (parallelFor).

import (
	"context"
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
	// lloyd turns Hamerly's bounds off (tests compare the two).
	lloyd bool
}

const kmeansTolerance = 1e-4

// trainKMeans clusters the n = len(data)/dim rows of data into K
// centroids (K × dim, row-major) and returns them with the final loss;
// ctx's error once ctx ends (checked every iteration).
func trainKMeans(ctx context.Context, data []float32, dim int, p kmeansParams) ([]float32, float64, error) {
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
	var hb *hamerly
	if p.Metric != Dot && !p.lloyd {
		hb = newHamerly(n)
	}
	old := make([]float32, len(centroids))
	for range iters {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		var last float64
		if hb != nil {
			last = hb.assign(data, dim, centroids, membership)
		} else {
			last = assign(data, dim, centroids, p.Metric, membership)
		}
		copy(old, centroids)
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
		if hb != nil {
			hb.moved(old, centroids, dim, membership)
		}
		// <=: a loss of 0 (no more distinct rows than centroids) has
		// converged too, and would otherwise run every iteration.
		if math.Abs(loss-last) <= kmeansTolerance*last {
			loss = last
			break
		}
		loss = last
	}
	return centroids, loss, nil
}

// hamerly is the state of Hamerly's exact acceleration of Lloyd's
// assignment step (G. Hamerly, "Making k-means even faster", SDM 2010):
// for each row a lower bound on its distance to every centroid but its
// own. A row whose distance to its own centroid is within that bound (or
// within half the distance from its centroid to the nearest other one)
// keeps its centroid without the scan of all K; after the first few
// iterations almost every row does, which is what makes the PQ codebook
// training (65,536 rows × 256 codewords × 50 iterations per sub-vector)
// cheap. The assignments are Lloyd's (up to float rounding at exact
// ties), so the result stays deterministic given the seed.
type hamerly struct {
	lower []float32 // per row; < 0: scan
	first bool
}

func newHamerly(n int) *hamerly {
	h := &hamerly{lower: make([]float32, n), first: true}
	return h
}

// assign is assign (l2) using the bounds; it returns the summed squared
// distance of the rows to their centroids.
func (h *hamerly) assign(data []float32, dim int, centroids []float32, membership []int32) float64 {
	n := len(data) / dim
	k := len(centroids) / dim
	norms := sqNorms(centroids, dim)
	// half[c]: half the distance from c to its nearest other centroid; a
	// row within it of c cannot be nearer another centroid.
	half := make([]float32, k)
	parallelFor(k, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			best := float32(math.MaxFloat32)
			cv := centroids[c*dim : (c+1)*dim]
			for o := range k {
				if o != c {
					best = min(best, l2sq(cv, centroids[o*dim:(o+1)*dim]))
				}
			}
			half[c] = 0.5 * float32(math.Sqrt(float64(best)))
		}
	})
	first := h.first
	h.first = false
	ct := transposed(centroids, dim)
	return parallelSum(n, func(lo, hi int) float64 {
		var loss float64
		pending := make([]int, 0, blockRows)
		xbuf := make([]float32, blockRows*dim)
		scratch := make([]float32, blockRows*k)
		best := make([]int32, blockRows)
		score := make([]float32, blockRows)
		second := make([]float32, blockRows)
		flush := func() {
			r := len(pending)
			if r == 0 {
				return
			}
			nearestBlock(xbuf, dim, r, dim, ct, norms, scratch, best, score, second)
			for j, i := range pending {
				x := data[i*dim : (i+1)*dim]
				xx := dot(x, x)
				membership[i] = best[j]
				loss += math.Max(0, float64(score[j]+xx))
				if k == 1 {
					h.lower[i] = math.MaxFloat32
				} else {
					h.lower[i] = float32(math.Sqrt(math.Max(0, float64(second[j]+xx))))
				}
			}
			pending = pending[:0]
		}
		for i := lo; i < hi; i++ {
			x := data[i*dim : (i+1)*dim]
			if !first {
				a := membership[i]
				d2 := l2sq(x, centroids[int(a)*dim:(int(a)+1)*dim])
				u := float32(math.Sqrt(float64(d2)))
				if u <= max(half[a], h.lower[i]) {
					loss += float64(d2)
					continue
				}
			}
			copy(xbuf[len(pending)*dim:], x)
			pending = append(pending, i)
			if len(pending) == blockRows {
				flush()
			}
		}
		flush()
		return loss
	})
}

// moved lowers each row's bound by how far the centroids moved: by the
// largest move, or the second largest for the rows of the centroid that
// moved most (the bound is on the other centroids).
func (h *hamerly) moved(old, centroids []float32, dim int, membership []int32) {
	k := len(centroids) / dim
	var m1, m2 float32
	arg := -1
	for c := range k {
		d := float32(math.Sqrt(float64(l2sq(old[c*dim:(c+1)*dim], centroids[c*dim:(c+1)*dim]))))
		switch {
		case d > m1:
			m2, m1, arg = m1, d, c
		case d > m2:
			m2 = d
		}
	}
	if m1 == 0 {
		return
	}
	// A little slack for the float rounding of the bounds themselves.
	m1, m2 = m1*(1+1e-5), m2*(1+1e-5)
	for i, a := range membership {
		if int(a) == arg {
			h.lower[i] -= m2
		} else {
			h.lower[i] -= m1
		}
	}
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
	// l2: |x-c|² = |x|² + |c|² - 2x·c; the argmin needs only |c|² - 2x·c.
	var norms []float32
	if metric != Dot {
		norms = sqNorms(centroids, dim)
	}
	return parallelSum(n, func(lo, hi int) float64 {
		var loss float64
		for i := lo; i < hi; i++ {
			x := data[i*dim : (i+1)*dim]
			best, bd := nearestBy(x, centroids, norms, dim)
			membership[i] = int32(best)
			if metric == Dot {
				loss += float64(bd)
			} else {
				loss += math.Max(0, float64(bd+dot(x, x)))
			}
		}
		return loss
	})
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
