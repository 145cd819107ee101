package index

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestResolveBounds: every parameter a request carries is refused (ErrInvalidParams naming it
// and its range) or ends bounded by the data; the sample a sample_rate asks for never exceeds
// the rows, however the products overflow.
func TestResolveBounds(t *testing.T) {
	bad := []struct {
		opts VectorBuildOptions
		rows int
		want string
	}{
		{VectorBuildOptions{Kind: IVFPQ, Dim: 8, NumPartitions: -1}, 1000, "num_partitions -1 must not be negative"},
		{VectorBuildOptions{Kind: IVFPQ, Dim: 8, NumSubVectors: math.MinInt}, 1000, "num_sub_vectors"},
		{VectorBuildOptions{Kind: IVFPQ, Dim: 8, MaxIterations: -5}, 1000, "max_iterations -5"},
		{VectorBuildOptions{Kind: IVFPQ, Dim: 8, SampleRate: -1}, 1000, "sample_rate -1"},
		{VectorBuildOptions{Kind: IVFPQ, Dim: 8, NumPartitions: math.MaxInt}, 1000, "num_partitions 9223372036854775807 is more than 4096 (1 to 4096)"},
		{VectorBuildOptions{Kind: IVFFlat, Dim: 8, NumPartitions: 1001}, 1000, "num_partitions 1001 is more than the table's 1000 rows (1 to 1000)"},
		{VectorBuildOptions{Kind: IVFPQ, Dim: 8, MaxIterations: math.MaxInt}, 1000, "max_iterations 9223372036854775807 is more than 10000 (1 to 10000)"},
		{VectorBuildOptions{Kind: IVFPQ, Dim: 8, NumSubVectors: math.MaxInt}, 1000, "num_sub_vectors 9223372036854775807 does not divide the dimension 8"},
		{VectorBuildOptions{Kind: IVFPQ, Dim: 8, NumSubVectors: 16}, 1000, "num_sub_vectors 16 does not divide"},
	}
	for _, tc := range bad {
		_, err := tc.opts.Resolve(tc.rows)
		assert.Check(t, is.ErrorIs(err, ErrInvalidParams), "%+v", tc.opts)
		assert.Check(t, is.ErrorContains(err, tc.want), "%+v", tc.opts)
	}

	good := []struct {
		opts       VectorBuildOptions
		rows       int
		sample     int
		partitions int
	}{
		// The request: sample_rate 2e9 is "train on every row".
		{VectorBuildOptions{Kind: IVFPQ, Dim: 8, NumPartitions: 2, NumSubVectors: 2, SampleRate: 2_000_000_000}, 600, 600, 2},
		// Products that overflow int saturate to the rows.
		{VectorBuildOptions{Kind: IVFPQ, Dim: 8, NumPartitions: 4096, SampleRate: math.MaxInt}, 10_000, 10_000, 4096},
		{VectorBuildOptions{Kind: IVFFlat, Dim: 8, NumPartitions: 3, SampleRate: math.MaxInt / 2}, 50, 50, 3},
		// Lance's sample sizes when the table holds more.
		{VectorBuildOptions{Kind: IVFFlat, Dim: 8, NumPartitions: 4}, 1 << 20, 4 * 256, 4},
		{VectorBuildOptions{Kind: IVFPQ, Dim: 8, NumPartitions: 4}, 1 << 20, 256 * 256, 4},
		{VectorBuildOptions{Kind: IVFPQ, Dim: 8, NumPartitions: 4, SampleRate: 1}, 1 << 20, 256, 4},
		// The most a request may ask for is accepted.
		{VectorBuildOptions{Kind: IVFPQ, Dim: 8, NumPartitions: 4096, NumSubVectors: 8, MaxIterations: MaxIterationsLimit}, 1 << 24, 1 << 20, 4096},
		// A huge sample_rate on a large table samples no more than the largest default sample
		// (4096 partitions × 256): it used to load every row, the whole column in memory.
		{VectorBuildOptions{Kind: IVFPQ, Dim: 8, NumPartitions: 2, NumSubVectors: 2, SampleRate: 2_000_000_000}, 1 << 24, 1 << 20, 2},
		{VectorBuildOptions{Kind: IVFFlat, Dim: 8, NumPartitions: 4096, SampleRate: math.MaxInt}, 1 << 24, 1 << 20, 4096},
		// An empty table is the training's to refuse (it says "not enough rows").
		{VectorBuildOptions{Kind: IVFFlat, Dim: 8}, 0, 0, 1},
	}
	for _, tc := range good {
		o, err := tc.opts.Resolve(tc.rows)
		assert.NilError(t, err, "%+v", tc.opts)
		assert.Check(t, is.Equal(o.SampleSize(tc.rows), tc.sample), "%+v", tc.opts)
		assert.Check(t, is.Equal(o.NumPartitions, tc.partitions), "%+v", tc.opts)
	}
}

// TestTrainVectorHugeSampleRate: a sample_rate whose products overflow int trains on the
// sample it is given (the products used to go negative and slice out of range).
func TestTrainVectorHugeSampleRate(t *testing.T) {
	data := clustered(300, 8, 3)
	for _, kind := range []VectorKind{IVFFlat, IVFPQ} {
		o, err := VectorBuildOptions{Kind: kind, Dim: 8, NumPartitions: 4, NumSubVectors: 2, MaxIterations: 5, SampleRate: math.MaxInt / 3}.Resolve(300)
		assert.NilError(t, err)
		b, err := TrainVector(context.Background(), data[:o.SampleSize(300)*8], o)
		assert.NilError(t, err, kind)
		b.Add(data, make([]uint64, 300))
		assert.Equal(t, b.Rows(), 300)
	}
}

// TestKMeansBounds: training ends when ctx does, and a loss of 0 (no more distinct rows than
// centroids) is convergence, not max_iterations more iterations.
func TestKMeansBounds(t *testing.T) {
	data := clusteredK(4096, 16, 64, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := trainKMeans(ctx, data, 16, kmeansParams{K: 64, MaxIters: MaxIterationsLimit, Metric: L2, Seed: 1})
	assert.Check(t, is.ErrorIs(err, context.Canceled))
	_, err = TrainVector(ctx, data, VectorBuildOptions{Kind: IVFPQ, Metric: L2, Dim: 16, NumPartitions: 2, NumSubVectors: 2, MaxIterations: 5, SampleRate: 256})
	assert.Check(t, is.ErrorIs(err, context.Canceled))

	// 512 equal rows (a column of one value) and one centroid: the first iteration's loss is 0.
	same := make([]float32, 512*4)
	for i := range same {
		same[i] = 0.5
	}
	done := make(chan error, 1)
	go func() {
		_, loss, err := trainKMeans(context.Background(), same, 4, kmeansParams{K: 1, MaxIters: math.MaxInt, Metric: L2, Seed: 2})
		if err == nil && loss != 0 {
			err = errors.New("loss is not 0")
		}
		done <- err
	}()
	select {
	case err := <-done:
		assert.NilError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("k-means at loss 0 ran on for 20s: it stops only at max_iterations")
	}
}

// FuzzVectorBuildOptions: any parameters either Resolve to a set bounded by the data (the
// partitions by the rows and 4096, the iterations by MaxIterationsLimit, the sample by the
// rows, the sub-vectors dividing the dimension) or are ErrInvalidParams; and any
// max_token_length is in Lance's uint32 or refused.
func FuzzVectorBuildOptions(f *testing.F) {
	f.Add(true, 8, 2, 2, 0, 2_000_000_000, 600, 40)
	f.Add(false, 128, 4096, 0, 50, math.MaxInt, 1<<30, math.MaxInt)
	f.Add(true, 1, -1, -1, -1, -1, -1, -1)
	f.Add(true, 16, 0, 0, 0, 0, 0, 0)
	f.Fuzz(func(t *testing.T, pq bool, dim, parts, subs, iters, rate, rows, maxTok int) {
		kind := IVFFlat
		if pq {
			kind = IVFPQ
		}
		o, err := VectorBuildOptions{Kind: kind, Dim: dim, NumPartitions: parts, NumSubVectors: subs, MaxIterations: iters, SampleRate: rate}.Resolve(rows)
		if err != nil {
			if !errors.Is(err, ErrInvalidParams) {
				t.Fatalf("%v is not ErrInvalidParams", err)
			}
		} else {
			if o.NumPartitions < 1 || o.NumPartitions > maxPartitions || (rows > 0 && o.NumPartitions > rows) {
				t.Fatalf("num_partitions %d for %d rows", o.NumPartitions, rows)
			}
			if o.MaxIterations < 1 || o.MaxIterations > MaxIterationsLimit || o.SampleRate < 1 {
				t.Fatalf("max_iterations %d, sample_rate %d", o.MaxIterations, o.SampleRate)
			}
			if n := o.SampleSize(rows); n < 0 || n > max(rows, 0) {
				t.Fatalf("sample of %d vectors for %d rows", n, rows)
			}
			if pq && (o.NumSubVectors < 1 || o.Dim%o.NumSubVectors != 0) {
				t.Fatalf("num_sub_vectors %d for dimension %d", o.NumSubVectors, o.Dim)
			}
		}
		p := DefaultTokenizerParams()
		p.MaxTokenLength = &maxTok
		_, err = NewTokenizer(p)
		if ok := maxTok >= 1 && maxTok <= math.MaxUint32; ok != (err == nil) {
			t.Fatalf("max_token_length %d: %v", maxTok, err)
		}
	})
}
