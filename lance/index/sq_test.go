package index

import (
	"bytes"
	"context"
	"testing"

	"gotest.tools/v3/assert"
)

// TestSQEncode: codes scale [start, end] onto 0..255, truncating, saturating outside the range
// and on NaN, as Lance's scale_to_u8; the bounds are the sample's extremes.
func TestSQEncode(t *testing.T) {
	start, end := sqBounds([]float32{0.5, -1, 3, float32(nan()), 1})
	assert.Equal(t, start, -1.0)
	assert.Equal(t, end, 3.0)
	out := make([]byte, 7)
	sqEncode(out, []float32{-1, 3, 1, -5, 9, float32(nan()), 0.999}, start, end)
	assert.DeepEqual(t, out, []byte{0, 255, 127, 0, 255, 0, 127})
	s0, e0 := sqBounds(nil)
	assert.Equal(t, s0, 0.0)
	assert.Equal(t, e0, 0.0)
	sqEncode(out[:2], []float32{1, 2}, 1, 1) // an empty range: every code 0
	assert.DeepEqual(t, out[:2], []byte{0, 0})
}

func nan() float64 { var z float64; return z / z }

// TestSQSegmentReload: an IVF_SQ segment loaded back (its model and rows: what remap and
// optimize start from) and written again is the same bytes, and a delta of the same model
// merges into it.
func TestSQSegmentReload(t *testing.T) {
	ctx := context.Background()
	data := clustered(600, 8, 3)
	for _, m := range []Metric{L2, Cosine, Dot} {
		st := buildVector(t, data, VectorBuildOptions{Kind: IVFSQ, Metric: m, Dim: 8, NumPartitions: 3, MaxIterations: 5, Seed: 1})
		b, err := LoadVectorSegment(ctx, st, true)
		assert.NilError(t, err)
		assert.Equal(t, b.Kind(), IVFSQ)
		assert.Equal(t, b.Rows(), 600)
		again := memStore{}
		_, err = b.Finish(ctx, again)
		assert.NilError(t, err)
		for name, want := range st {
			assert.Assert(t, bytes.Equal(again[name], want), "%s %s differs after a reload", m, name)
		}
		delta := b.Empty()
		ids := []uint64{1000, 1001}
		delta.Add(data[:16], ids)
		assert.Assert(t, b.SameModel(delta))
		assert.NilError(t, b.Merge(delta))
		assert.Equal(t, b.Rows(), 602)
	}
}

// TestHNSWRoundTrip: the IVF_HNSW kinds written and read back search their graphs with recall
// near the exact answer at Lance's default ef (and full at a wide ef), and a prefilter keeping
// few rows still finds them (flat, as Lance does under a tenth).
func TestHNSWRoundTrip(t *testing.T) {
	ctx := context.Background()
	const dim, n = 16, 3000
	data := clustered(n, dim, 5)
	for _, kind := range []VectorKind{IVFHNSWFlat, IVFHNSWSQ, IVFHNSWPQ} {
		for _, m := range []Metric{L2, Cosine, Dot} {
			st := buildVector(t, data, VectorBuildOptions{Kind: kind, Metric: m, Dim: dim, NumPartitions: 2, NumSubVectors: 8, MaxIterations: 5, Seed: 1})
			r, err := OpenVector(ctx, st)
			assert.NilError(t, err)
			assert.Equal(t, r.Kind(), kind)
			found, total := 0, 0
			for qi := range 20 {
				q := data[qi*101*dim : (qi*101+1)*dim]
				hits, want := searchExact(t, r, data, q, dim, m, 100)
				total += len(hits)
				found += recalled(hits, want, func(w uint64) uint64 { return w })
				few, err := r.Search(ctx, VectorSearch{Query: q, K: 10, NProbes: 2, Allow: func(id uint64) bool { return id%50 == 0 }})
				assert.NilError(t, err)
				assert.Equal(t, len(few), 10)
				for _, h := range few {
					assert.Equal(t, h.RowID%50, uint64(0))
				}
			}
			min := 95
			if kind == IVFHNSWPQ {
				min = 60
			}
			assert.Assert(t, found*100 >= total*min, "%s %s found %d of %d", kind, m, found, total)
			r.Close()
		}
	}
}

// TestHNSWSegmentReload: an IVF_HNSW segment loaded back, remapped (every other row dropped,
// the rest moved) and written again has its graphs rebuilt on the rows kept (decoded from their
// codes for SQ and PQ) and still finds the exact neighbors among them; a delta of new rows
// merges in.
func TestHNSWSegmentReload(t *testing.T) {
	ctx := context.Background()
	const dim, n = 16, 2000
	data := clustered(n, dim, 9)
	for _, kind := range []VectorKind{IVFHNSWFlat, IVFHNSWSQ, IVFHNSWPQ} {
		st := buildVector(t, data, VectorBuildOptions{Kind: kind, Metric: L2, Dim: dim, NumPartitions: 2, NumSubVectors: 8, MaxIterations: 5, Seed: 1, M: 12, EfConstruction: 100})
		b, err := LoadVectorSegment(ctx, st, true)
		assert.NilError(t, err)
		b.Remap(func(id uint64) (uint64, bool) { return id + 1<<32, id%2 == 0 })
		delta := b.Empty()
		delta.Add(data[:dim], []uint64{7 << 32})
		assert.NilError(t, b.Merge(delta))
		out := memStore{}
		_, err = b.Finish(ctx, out)
		assert.NilError(t, err)
		r, err := OpenVector(ctx, out)
		assert.NilError(t, err)
		assert.Equal(t, r.Kind(), kind)
		kept := make([]float32, 0, n/2*dim)
		for i := 0; i < n; i += 2 {
			kept = append(kept, data[i*dim:(i+1)*dim]...)
		}
		found, total := 0, 0
		for qi := range 10 {
			q := data[qi*202*dim : (qi*202+1)*dim]
			hits, want := searchExact(t, r, kept, q, dim, L2, 80)
			for _, h := range hits {
				assert.Assert(t, h.RowID>>32 == 1 || h.RowID == 7<<32, "row %x", h.RowID)
			}
			total += len(hits)
			// Row w of kept was row 2w of fragment 1.
			found += recalled(hits, want, func(w uint64) uint64 { return 2*w + 1<<32 })
		}
		min := 90
		if kind == IVFHNSWPQ {
			min = 50
		}
		assert.Assert(t, found*100 >= total*min, "%s found %d of %d", kind, found, total)
		r.Close()
	}
}

// searchExact searches r for q (k 10, nprobes 2, ef) and answers the hits
// with the exact top 10 over data.
func searchExact(t *testing.T, r VectorReader, data, q []float32, dim int, m Metric, ef int) (hits []VectorHit, want []uint64) {
	t.Helper()
	hits, err := r.Search(context.Background(), VectorSearch{Query: q, K: 10, NProbes: 2, Ef: ef})
	assert.NilError(t, err)
	return hits, bruteForce(data, q, dim, 10, m)
}
