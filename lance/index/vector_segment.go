package index

// An existing IVF_FLAT / IVF_PQ segment loaded back into a VectorBuilder,
// so that its model (centroids, PQ codebook) is reused: Lance's
// remap_vector_index (compaction moved rows: the same partitions with
// their row ids mapped) and optimize_vector_indices (unindexed rows
// assigned to the existing partitions and encoded with the existing
// codebook, as a delta segment or merged with older ones).

import (
	"context"
	"fmt"
)

// LoadVectorSegment reads the model and every row of the segment in st.
// With rows false only the model is read (a delta segment starts empty).
func LoadVectorSegment(ctx context.Context, st Store, rows bool) (*VectorBuilder, error) {
	vr, err := OpenVector(ctx, st)
	if err != nil {
		return nil, err
	}
	defer vr.Close()
	r, ok := vr.(*ivfReader)
	if !ok || r.kind != IVFFlat && r.kind != IVFPQ {
		return nil, fmt.Errorf("%w: vector segment of kind %s", ErrUnsupported, vr.Kind())
	}
	nparts := len(r.lengths)
	b := &VectorBuilder{
		opts: VectorBuildOptions{
			Kind: r.kind, Metric: r.metric, Dim: r.dim, NumPartitions: nparts, NumSubVectors: r.m,
			MaxIterations: DefaultMaxIterations, SampleRate: DefaultSampleRate,
		},
		centroids: r.centroids,
		subdim:    r.subdim,
		codebook:  r.codebook,
		ids:       make([][]uint64, nparts),
		codes:     make([][]byte, nparts),
		vecs:      make([][]float32, nparts),
	}
	if idx, err := openFile(ctx, st, VectorIndexFile); err == nil {
		if ivf, err := readIVF(ctx, idx, schemaMeta(idx.Schema())); err == nil {
			b.loss = ivf.GetLoss()
		}
	}
	if !rows {
		return b, nil
	}
	for p := range nparts {
		part, err := r.partition(ctx, p)
		if err != nil {
			return nil, err
		}
		n := len(part.rowIDs)
		b.ids[p] = append(b.ids[p], part.rowIDs...)
		if r.kind == IVFPQ {
			// Stored column-major within the partition; the builder keeps
			// m bytes per row.
			codes := make([]byte, n*r.m)
			for i := range n {
				for s := range r.m {
					codes[i*r.m+s] = part.codes[s*n+i]
				}
			}
			b.codes[p] = codes
		} else {
			b.vecs[p] = append(b.vecs[p], part.flat...)
		}
	}
	return b, nil
}

// Empty is a builder with b's model and no rows.
func (b *VectorBuilder) Empty() *VectorBuilder {
	n := b.opts.NumPartitions
	return &VectorBuilder{
		opts: b.opts, centroids: b.centroids, loss: b.loss, subdim: b.subdim, codebook: b.codebook,
		ids: make([][]uint64, n), codes: make([][]byte, n), vecs: make([][]float32, n),
	}
}

// SameModel reports whether o was trained into the same partitions and
// codebook as b (delta segments of one index are).
func (b *VectorBuilder) SameModel(o *VectorBuilder) bool {
	eq := func(x, y []float32) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	return b.opts.Kind == o.opts.Kind && b.opts.Metric == o.opts.Metric && b.opts.Dim == o.opts.Dim &&
		b.opts.NumSubVectors == o.opts.NumSubVectors && eq(b.centroids, o.centroids) && eq(b.codebook, o.codebook)
}

// Merge appends o's rows (a segment of the same model) partition by
// partition.
func (b *VectorBuilder) Merge(o *VectorBuilder) error {
	if !b.SameModel(o) {
		return fmt.Errorf("%w: merging vector segments trained separately", ErrUnsupported)
	}
	for p := range b.ids {
		b.ids[p] = append(b.ids[p], o.ids[p]...)
		b.codes[p] = append(b.codes[p], o.codes[p]...)
		b.vecs[p] = append(b.vecs[p], o.vecs[p]...)
	}
	return nil
}

// Remap maps every row through m, dropping the rows it does not keep.
func (b *VectorBuilder) Remap(m RowMap) {
	w := b.opts.NumSubVectors
	if b.opts.Kind != IVFPQ {
		w = b.opts.Dim
	}
	for p := range b.ids {
		j := 0
		for i, id := range b.ids[p] {
			nid, ok := m(id)
			if !ok {
				continue
			}
			b.ids[p][j] = nid
			if b.opts.Kind == IVFPQ {
				copy(b.codes[p][j*w:(j+1)*w], b.codes[p][i*w:(i+1)*w])
			} else {
				copy(b.vecs[p][j*w:(j+1)*w], b.vecs[p][i*w:(i+1)*w])
			}
			j++
		}
		b.ids[p] = b.ids[p][:j]
		if b.opts.Kind == IVFPQ {
			b.codes[p] = b.codes[p][:j*w]
		} else {
			b.vecs[p] = b.vecs[p][:j*w]
		}
	}
}

// Rows is the number of rows the builder holds.
func (b *VectorBuilder) Rows() int {
	n := 0
	for _, ids := range b.ids {
		n += len(ids)
	}
	return n
}

// Kind and Dim of the builder's model.
func (b *VectorBuilder) Kind() VectorKind { return b.opts.Kind }

// Dim is the vector dimension.
func (b *VectorBuilder) Dim() int { return b.opts.Dim }
