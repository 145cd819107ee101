package index

// An existing vector segment (IVF_FLAT/PQ/SQ, IVF_HNSW_*) loaded back into a VectorBuilder,
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
	if !ok {
		return nil, fmt.Errorf("%w: vector segment of kind %s", ErrUnsupported, vr.Kind())
	}
	b := newModelBuilder(r.model(), segmentLoss(ctx, st))
	if !rows {
		return b, nil
	}
	for p := range r.NumPartitions() {
		ids, codes, vecs, err := r.partitionRows(ctx, p)
		if err != nil {
			return nil, err
		}
		b.appendRows(p, ids, codes, vecs)
	}
	return b, nil
}

// segmentLoss is the k-means loss index.idx records (0 when it cannot be
// read: the loss is reported, never used to search).
func segmentLoss(ctx context.Context, st Store) float64 {
	idx, err := openFile(ctx, st, VectorIndexFile)
	if err != nil {
		return 0
	}
	ivf, err := readIVF(ctx, idx, schemaMeta(idx.Schema()))
	if err != nil {
		return 0
	}
	return ivf.GetLoss()
}

// Empty is a builder with b's model and no rows.
func (b *VectorBuilder) Empty() *VectorBuilder { return newModelBuilder(b.model(), b.loss) }

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
		b.opts.NumSubVectors == o.opts.NumSubVectors && eq(b.centroids, o.centroids) && eq(b.codebook, o.codebook) &&
		b.sqStart == o.sqStart && b.sqEnd == o.sqEnd
}

// Merge appends o's rows (a segment of the same model) partition by
// partition.
func (b *VectorBuilder) Merge(o *VectorBuilder) error {
	if !b.SameModel(o) {
		return fmt.Errorf("%w: merging vector segments trained separately", ErrUnsupported)
	}
	for p := range b.ids {
		b.appendRows(p, o.ids[p], o.codes[p], o.vecs[p])
	}
	return nil
}

// Remap maps every row through m, dropping the rows it does not keep.
func (b *VectorBuilder) Remap(m RowMap) {
	w := b.opts.NumSubVectors
	if b.opts.Kind.quant() != IVFPQ {
		w = b.opts.Dim
	}
	coded := b.opts.Kind.quant() == IVFPQ || b.opts.Kind.quant() == IVFSQ
	clear(b.gvecs) // the graph is rebuilt on the decoded codes of the rows kept
	for p := range b.ids {
		j := 0
		for i, id := range b.ids[p] {
			nid, ok := m(id)
			if !ok {
				continue
			}
			b.ids[p][j] = nid
			if coded {
				copy(b.codes[p][j*w:(j+1)*w], b.codes[p][i*w:(i+1)*w])
			} else {
				copy(b.vecs[p][j*w:(j+1)*w], b.vecs[p][i*w:(i+1)*w])
			}
			j++
		}
		b.ids[p] = b.ids[p][:j]
		if coded {
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
