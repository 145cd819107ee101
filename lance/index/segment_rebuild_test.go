package index

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"
)

// TestRebuildMapsRows: a rebuilt scalar segment answers every predicate
// with the old answer passed through the row map (dropped rows gone), and
// a rebuilt vector segment holds the mapped rows in the same partitions.
func TestRebuildMapsRows(t *testing.T) {
	ctx := context.Background()
	// Drop every third row, move the rest 9 fragments on.
	m := func(id uint64) (uint64, bool) {
		if id%3 == 0 {
			return 0, false
		}
		return id + 9<<32, true
	}
	for _, typ := range []Type{BTree, Bitmap, LabelList} {
		t.Run(string(typ), func(t *testing.T) {
			old := buildSample(t, typ)
			info, err := InspectScalar(ctx, typ, old)
			assert.NilError(t, err)
			rb, err := NewScalarRebuild(typ, info.ValueType, BuildOptions{BatchSize: info.BatchSize})
			assert.NilError(t, err)
			assert.NilError(t, rb.AddSegment(ctx, old, m))
			rebuilt := memStore{}
			_, err = rb.Finish(ctx, rebuilt)
			assert.NilError(t, err)
			before, err := Open(ctx, typ, old)
			assert.NilError(t, err)
			after, err := Open(ctx, typ, rebuilt)
			assert.NilError(t, err)
			for _, p := range fuzzPredicates {
				want, err1 := before.Search(ctx, p)
				got, err2 := after.Search(ctx, p)
				assert.Equal(t, err1 == nil, err2 == nil, "%+v", p)
				if err1 != nil {
					continue
				}
				mapped := want.Clone()
				mapped.Clear()
				it := want.Iterator()
				for it.HasNext() {
					if id, ok := m(it.Next()); ok {
						mapped.Add(id)
					}
				}
				assert.Assert(t, mapped.Equals(got), "%s %+v: want %v, got %v", typ, p, mapped.ToArray(), got.ToArray())
			}
		})
	}
	data := clustered(300, 8, 7)
	st := buildVector(t, data, VectorBuildOptions{Kind: IVFPQ, Metric: L2, Dim: 8, NumPartitions: 2, NumSubVectors: 2, MaxIterations: 3, SampleRate: 256})
	b, err := LoadVectorSegment(ctx, st, true)
	assert.NilError(t, err)
	n := b.Rows()
	b.Remap(m)
	assert.Equal(t, b.Rows(), n-(n+2)/3)
	out := memStore{}
	_, err = b.Finish(ctx, out)
	assert.NilError(t, err)
	r, err := OpenVector(ctx, out)
	assert.NilError(t, err)
	defer r.Close()
	hits, err := r.Search(ctx, VectorSearch{Query: data[:8], K: 1000, NProbes: 2})
	assert.NilError(t, err)
	assert.Equal(t, len(hits), b.Rows())
	for _, h := range hits {
		assert.Assert(t, h.RowID>>32 >= 9)
		assert.Assert(t, (h.RowID&(1<<32-1))%3 != 0)
	}
}

// FuzzRebuildSegment: segment files of any bytes (mutations of real ones)
// never panic a rebuild (remap or optimize); it finishes or fails with an
// error.
func FuzzRebuildSegment(f *testing.F) {
	data := clustered(300, 8, 7)
	samples := map[string]memStore{
		string(BTree): buildSample(f, BTree), string(Bitmap): buildSample(f, Bitmap), string(LabelList): buildSample(f, LabelList),
		string(IVFPQ): buildVector(f, data, VectorBuildOptions{Kind: IVFPQ, Metric: L2, Dim: 8, NumPartitions: 2, NumSubVectors: 2, MaxIterations: 3, SampleRate: 256}),
		string(IVFSQ): buildVector(f, data, VectorBuildOptions{Kind: IVFSQ, Metric: Cosine, Dim: 8, NumPartitions: 2, MaxIterations: 3, SampleRate: 256}),
	}
	for kind, st := range samples {
		for name, b := range st {
			f.Add(kind, name, b)
		}
	}
	m := func(id uint64) (uint64, bool) { return id + 1, id%2 == 0 }
	f.Fuzz(func(t *testing.T, kind, name string, b []byte) {
		st, ok := samples[kind]
		if !ok {
			return
		}
		hostile := st.with(name, b)
		ctx := context.Background()
		if kind == string(IVFPQ) || kind == string(IVFSQ) {
			vb, err := LoadVectorSegment(ctx, hostile, true)
			if err != nil {
				return
			}
			vb.Remap(m)
			_, _ = vb.Finish(ctx, memStore{})
			return
		}
		info, err := InspectScalar(ctx, Type(kind), hostile)
		if err != nil {
			return
		}
		rb, err := NewScalarRebuild(Type(kind), info.ValueType, BuildOptions{BatchSize: info.BatchSize})
		if err != nil {
			return
		}
		if err := rb.AddSegment(ctx, hostile, m); err != nil {
			return
		}
		_, _ = rb.Finish(ctx, memStore{})
	})
}
