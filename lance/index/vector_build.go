package index

// Building an IVF_FLAT, IVF_PQ or IVF_SQ segment (the layout is ivf.go's):
// the caller trains a VectorBuilder on a sample of the column
// (TrainVector), streams every row through Add (partition assignment and
// PQ or SQ encoding on every core), and Finish writes index.idx and
// auxiliary.idx.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/pb/indexpb"
)

// ErrNotEnoughRows: the table has too few vectors to train the index
// (fewer than the partitions, or than PQ's 256 codewords).
var ErrNotEnoughRows = errors.New("lance index: not enough rows to train")

// The defaults LanceDB applies (lance-index's IvfBuildParams and
// PQBuildParams, lancedb's suggested_num_sub_vectors).
const (
	DefaultMaxIterations = 50
	DefaultSampleRate    = 256
	pqCentroids          = 256
	maxPartitions        = 4096
	// MaxIterationsLimit bounds max_iterations: Lance takes any usize,
	// but k-means stops at convergence long before (LanceDB's default is
	// 50); a bound keeps a request from buying unbounded CPU time.
	MaxIterationsLimit = 10_000
)

// VectorBuildOptions are the training parameters of one segment.
type VectorBuildOptions struct {
	Kind   VectorKind
	Metric Metric
	Dim    int
	// NumPartitions, NumSubVectors: 0 means DefaultPartitions and
	// DefaultSubVectors.
	NumPartitions, NumSubVectors int
	MaxIterations, SampleRate    int
	// M and EfConstruction (IVF_HNSW_*): 0 means LanceDB's 20 and 300.
	M, EfConstruction int
	Seed              uint64
	// FileVersion of the two files (0: 2.1, read by every SDK).
	FileVersion lancefile.Version
}

// DefaultPartitions is Lance's recommended_num_partitions: one partition
// per 8192 rows for IVF_PQ (4096 for IVF_FLAT), between 1 and 4096.
func DefaultPartitions(kind VectorKind, rows int) int {
	target := 8192
	if kind == IVFFlat {
		target = 4096
	}
	return min(max(rows/target, 1), maxPartitions)
}

// DefaultSubVectors is LanceDB's suggested_num_sub_vectors: dim/16 when
// 16 divides it, else dim/8 when 8 does, else 1.
func DefaultSubVectors(dim int) int {
	switch {
	case dim%16 == 0:
		return dim / 16
	case dim%8 == 0:
		return dim / 8
	}
	return 1
}

// Resolve fills in the defaults for a table of rows vectors and checks
// the parameters (ErrInvalidParams naming the parameter and its range).
// Every parameter ends bounded by the data or by a constant: the
// partitions by maxPartitions and the rows, the sub-vectors by the
// dimension, the iterations by MaxIterationsLimit, and the sample a
// sample_rate asks for by the rows (SampleSize), so no number in a
// request sizes an allocation.
func (o VectorBuildOptions) Resolve(rows int) (VectorBuildOptions, error) {
	switch o.Kind {
	case IVFFlat, IVFPQ, IVFSQ, IVFHNSWFlat, IVFHNSWSQ, IVFHNSWPQ:
	default:
		return o, fmt.Errorf("%w: vector index type %q (IVF_FLAT, IVF_PQ, IVF_SQ, IVF_HNSW_FLAT, IVF_HNSW_SQ or IVF_HNSW_PQ)", ErrInvalidParams, o.Kind)
	}
	m, err := ParseMetric(string(o.Metric))
	if err != nil {
		return o, fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	o.Metric = m
	if o.Dim <= 0 {
		return o, fmt.Errorf("%w: dimension %d", ErrInvalidParams, o.Dim)
	}
	for _, p := range []struct {
		name string
		v    int
	}{{"num_partitions", o.NumPartitions}, {"num_sub_vectors", o.NumSubVectors}, {"max_iterations", o.MaxIterations}, {"sample_rate", o.SampleRate}, {"m", o.M}, {"ef_construction", o.EfConstruction}} {
		if p.v < 0 {
			return o, fmt.Errorf("%w: %s %d must not be negative (0 is the default)", ErrInvalidParams, p.name, p.v)
		}
	}
	if o.NumPartitions == 0 {
		o.NumPartitions = DefaultPartitions(o.Kind, rows)
	}
	if o.NumPartitions > maxPartitions {
		return o, fmt.Errorf("%w: num_partitions %d is more than %d (1 to %d)", ErrInvalidParams, o.NumPartitions, maxPartitions, maxPartitions)
	}
	// k-means needs a vector per centroid (a table with no rows is left
	// to the training, which says so).
	if rows > 0 && o.NumPartitions > rows {
		return o, fmt.Errorf("%w: num_partitions %d is more than the table's %d rows (1 to %d)", ErrInvalidParams, o.NumPartitions, rows, min(rows, maxPartitions))
	}
	if o.MaxIterations == 0 {
		o.MaxIterations = DefaultMaxIterations
	}
	if o.Kind.hnsw() {
		if o.M == 0 {
			o.M = hnswM
		}
		if o.EfConstruction == 0 {
			o.EfConstruction = hnswEfConstruction
		}
		if o.M < 2 || o.M > hnswMaxM {
			return o, fmt.Errorf("%w: m %d (2 to %d)", ErrInvalidParams, o.M, hnswMaxM)
		}
		if o.EfConstruction < 1 || o.EfConstruction > hnswMaxEfConstruction {
			return o, fmt.Errorf("%w: ef_construction %d (1 to %d)", ErrInvalidParams, o.EfConstruction, hnswMaxEfConstruction)
		}
	} else {
		o.M, o.EfConstruction = 0, 0
	}
	if o.MaxIterations > MaxIterationsLimit {
		return o, fmt.Errorf("%w: max_iterations %d is more than %d (1 to %d)", ErrInvalidParams, o.MaxIterations, MaxIterationsLimit, MaxIterationsLimit)
	}
	if o.SampleRate == 0 {
		o.SampleRate = DefaultSampleRate
	}
	if o.Kind.quant() == IVFPQ {
		if o.NumSubVectors == 0 {
			o.NumSubVectors = DefaultSubVectors(o.Dim)
		}
		if o.Dim%o.NumSubVectors != 0 {
			return o, fmt.Errorf("%w: num_sub_vectors %d does not divide the dimension %d (a divisor of %d)", ErrInvalidParams, o.NumSubVectors, o.Dim, o.Dim)
		}
	} else {
		o.NumSubVectors = 0
	}
	return o, nil
}

// SampleSize is how many vectors TrainVector wants from a table of rows
// vectors: num_partitions × sample_rate for IVF, and 256 × sample_rate
// for PQ (Lance's sample sizes), never more than the rows (Lance trains
// on every row when the table holds fewer than it asks for) nor than
// maxSampleVectors. The products saturate, so a huge sample_rate means
// "every row, up to maxSampleVectors".
func (o VectorBuildOptions) SampleSize(rows int) int {
	n := satMul(max(o.NumPartitions, 0), max(o.SampleRate, 0))
	if o.Kind.quant() == IVFPQ || o.Kind.quant() == IVFSQ {
		// SQ's bounds train on sample_rate × 2^num_bits vectors, as PQ's codebooks do.
		n = max(n, satMul(pqCentroids, max(o.SampleRate, 0)))
	}
	return max(0, min(n, rows, maxSampleVectors))
}

// maxSampleVectors bounds the training sample at the largest one a default request takes
// (maxPartitions × DefaultSampleRate, 1 Mi vectors): a huge sample_rate on a large table would
// otherwise load the whole column (10 M rows of 768 floats are 30 GB) and end the process.
// k-means and PQ train as well on 1 Mi vectors as on more.
const maxSampleVectors = maxPartitions * DefaultSampleRate

// satMul is a × b for non-negative a and b, math.MaxInt when it
// overflows.
func satMul(a, b int) int {
	if a != 0 && b > math.MaxInt/a {
		return math.MaxInt
	}
	return a * b
}

// VectorBuilder holds a trained model and the rows added so far.
type VectorBuilder struct {
	opts      VectorBuildOptions
	centroids []float32
	loss      float64
	subdim    int
	codebook  []float32 // m × 256 × subdim
	// sqStart, sqEnd: SQ's range (sq.go).
	sqStart, sqEnd float64
	// Squared norms of the centroids (l2) and codewords, for Add.
	centNorms, cbNorms []float32
	// The centroids and each sub-vector's codebook transposed
	// (nearestBlock's layout), for Add.
	ctIVF []float32
	ctCB  [][]float32
	// Per partition: row ids, and m-byte codes (PQ), dim-byte codes
	// (SQ) or vectors (FLAT).
	ids   [][]uint64
	codes [][]byte
	vecs  [][]float32
	// gvecs: the (cosine: normalized) vectors of an IVF_HNSW_SQ/PQ
	// partition, which its graph is built on.
	gvecs [][]float32
}

// vectorModel is what a segment was trained into: its parameters, the
// partitions' centroids and PQ's codebook (the part of a segment that
// LoadVectorSegment carries over and Merge compares).
type vectorModel struct {
	opts      VectorBuildOptions
	centroids []float32
	subdim    int
	codebook  []float32 // m × 256 × subdim (PQ)
	// sqStart, sqEnd: SQ's range.
	sqStart, sqEnd float64
}

// model is b's model.
func (b *VectorBuilder) model() vectorModel {
	return vectorModel{opts: b.opts, centroids: b.centroids, subdim: b.subdim, codebook: b.codebook, sqStart: b.sqStart, sqEnd: b.sqEnd}
}

// newModelBuilder is a builder of model m with no rows (Add derives its
// search tables from the model on first use).
func newModelBuilder(m vectorModel, loss float64) *VectorBuilder {
	n := m.opts.NumPartitions
	return &VectorBuilder{
		opts: m.opts, centroids: m.centroids, loss: loss, subdim: m.subdim, codebook: m.codebook,
		sqStart: m.sqStart, sqEnd: m.sqEnd,
		ids: make([][]uint64, n), codes: make([][]byte, n), vecs: make([][]float32, n), gvecs: make([][]float32, n),
	}
}

// appendRows appends rows to partition p: their ids and their codes (m
// bytes per row, PQ) or vectors (dim floats per row, FLAT).
func (b *VectorBuilder) appendRows(p int, ids []uint64, codes []byte, vecs []float32) {
	b.ids[p] = append(b.ids[p], ids...)
	b.gvecs[p] = nil // rows without their float vectors: the graph is built on the decoded codes
	b.codes[p] = append(b.codes[p], codes...)
	b.vecs[p] = append(b.vecs[p], vecs...)
}

// TrainVector trains the partitions (and PQ's codebooks) on sample, a
// uniformly random sample of the column's vectors (rows × dim).
// Training stops with ctx's error when ctx ends.
func TrainVector(ctx context.Context, sample []float32, opts VectorBuildOptions) (*VectorBuilder, error) {
	dim := opts.Dim
	if opts.Metric == Cosine {
		// Only cosine changes the rows (k-means reads them; PQ copies
		// what it changes): the sample may be every row of the table, and
		// a copy would double it.
		sample = slices.Clone(sample)
		for i := 0; i < len(sample); i += dim {
			normalizeVec(sample[i : i+dim])
		}
	}
	b := &VectorBuilder{opts: opts}
	n := len(sample) / dim
	ivfRows := min(n, satMul(opts.NumPartitions, opts.SampleRate))
	var err error
	b.centroids, b.loss, err = trainKMeans(ctx, sample[:ivfRows*dim], dim, kmeansParams{
		K: opts.NumPartitions, MaxIters: opts.MaxIterations, Metric: b.assignMetric(), Seed: opts.Seed,
	})
	if err != nil {
		return nil, err
	}
	switch opts.Kind.quant() {
	case IVFPQ:
		if err := b.trainPQ(ctx, sample); err != nil {
			return nil, err
		}
	case IVFSQ:
		b.sqStart, b.sqEnd = sqBounds(sample[:min(n, satMul(pqCentroids, opts.SampleRate))*dim])
	}
	b.ids = make([][]uint64, opts.NumPartitions)
	b.codes = make([][]byte, opts.NumPartitions)
	b.vecs = make([][]float32, opts.NumPartitions)
	b.gvecs = make([][]float32, opts.NumPartitions)
	return b, nil
}

// assignMetric ranks partitions: l2 for l2 and (normalized) cosine.
func (b *VectorBuilder) assignMetric() Metric {
	if b.opts.Metric == Dot {
		return Dot
	}
	return L2
}

func (b *VectorBuilder) residual() bool { return b.opts.Metric != Dot }

// trainPQ trains one 256-codeword l2 codebook per sub-vector on the
// residuals (l2, cosine) or the vectors (dot) of the sample, as Lance does.
func (b *VectorBuilder) trainPQ(ctx context.Context, sample []float32) error {
	dim, m := b.opts.Dim, b.opts.NumSubVectors
	n := min(len(sample)/dim, satMul(pqCentroids, b.opts.SampleRate))
	if n < pqCentroids {
		return fmt.Errorf("%w: PQ needs %d rows, got %d", ErrNotEnoughRows, pqCentroids, n)
	}
	data := slices.Clone(sample[:n*dim])
	if b.residual() {
		parallelFor(n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				x := data[i*dim : (i+1)*dim]
				c := nearest(x, b.centroids, dim, L2)
				cv := b.centroids[c*dim : (c+1)*dim]
				for j := range x {
					x[j] -= cv[j]
				}
			}
		})
	}
	b.subdim = dim / m
	sd := b.subdim
	b.codebook = make([]float32, m*pqCentroids*sd)
	errs := make([]error, m)
	// One k-means per sub-vector, workers() of them at a time (each is
	// itself parallel): independent trainings without a common barrier
	// keep both cores busy when one training's iteration waits.
	boundedEach(ctx, m, func(s int) {
		sub := make([]float32, n*sd)
		for i := range n {
			copy(sub[i*sd:(i+1)*sd], data[i*dim+s*sd:i*dim+(s+1)*sd])
		}
		cb, _, err := trainKMeans(ctx, sub, sd, kmeansParams{K: pqCentroids, MaxIters: DefaultMaxIterations, Metric: L2, Seed: b.opts.Seed + uint64(s) + 1})
		if err != nil {
			errs[s] = err
			return
		}
		copy(b.codebook[s*pqCentroids*sd:], cb)
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// Add assigns rows (len(rowIDs) vectors of vecs, rows × dim) to their
// partitions and keeps their codes (PQ) or vectors (FLAT).
func (b *VectorBuilder) Add(vecs []float32, rowIDs []uint64) {
	dim, n := b.opts.Dim, len(rowIDs)
	work := slices.Clone(vecs[:n*dim])
	part := make([]int32, n)
	m, sd := b.opts.NumSubVectors, b.subdim
	var codes, sqCodes []byte
	var graphVecs []float32 // the vectors an HNSW graph is built on (FLAT keeps them anyway)
	if b.opts.Kind.hnsw() && b.opts.Kind.quant() != IVFFlat {
		graphVecs = make([]float32, n*dim)
	}
	switch b.opts.Kind.quant() {
	case IVFPQ:
		codes = make([]byte, n*m)
	case IVFSQ:
		sqCodes = make([]byte, n*dim)
	}
	if b.ctIVF == nil {
		// Dot ranks partitions by -x·c: zero "norms" give the same order.
		b.centNorms = make([]float32, len(b.centroids)/dim)
		if b.assignMetric() == L2 {
			b.centNorms = sqNorms(b.centroids, dim)
		}
		b.ctIVF = transposed(b.centroids, dim)
		if codes != nil {
			b.cbNorms = sqNorms(b.codebook, sd)
			b.ctCB = make([][]float32, m)
			for s := range m {
				b.ctCB[s] = transposed(b.codebook[s*pqCentroids*sd:(s+1)*pqCentroids*sd], sd)
			}
		}
	}
	k := len(b.centNorms)
	parallelFor((n+blockRows-1)/blockRows, func(blo, bhi int) {
		scratch := make([]float32, blockRows*max(k, pqCentroids))
		best := make([]int32, blockRows)
		score := make([]float32, blockRows)
		for blk := blo; blk < bhi; blk++ {
			lo, hi := blk*blockRows, min(n, (blk+1)*blockRows)
			r := hi - lo
			if b.opts.Metric == Cosine {
				for i := lo; i < hi; i++ {
					normalizeVec(work[i*dim : (i+1)*dim])
				}
			}
			nearestBlock(work[lo*dim:], dim, r, dim, b.ctIVF, b.centNorms, scratch, part[lo:hi], score, nil)
			if graphVecs != nil {
				copy(graphVecs[lo*dim:hi*dim], work[lo*dim:hi*dim])
			}
			if sqCodes != nil {
				sqEncode(sqCodes[lo*dim:hi*dim], work[lo*dim:hi*dim], b.sqStart, b.sqEnd)
			}
			if codes == nil {
				continue
			}
			if b.residual() {
				for i := lo; i < hi; i++ {
					x := work[i*dim : (i+1)*dim]
					cv := b.centroids[int(part[i])*dim : (int(part[i])+1)*dim]
					for j := range x {
						x[j] -= cv[j]
					}
				}
			}
			for s := range m {
				nearestBlock(work[lo*dim+s*sd:], dim, r, sd, b.ctCB[s], b.cbNorms[s*pqCentroids:(s+1)*pqCentroids], scratch, best, score, nil)
				for i := range r {
					codes[(lo+i)*m+s] = byte(best[i])
				}
			}
		}
	})
	for i, p := range part {
		b.ids[p] = append(b.ids[p], rowIDs[i])
		if graphVecs != nil {
			b.gvecs[p] = append(b.gvecs[p], graphVecs[i*dim:(i+1)*dim]...)
		}
		switch {
		case codes != nil:
			b.codes[p] = append(b.codes[p], codes[i*m:(i+1)*m]...)
		case sqCodes != nil:
			b.codes[p] = append(b.codes[p], sqCodes[i*dim:(i+1)*dim]...)
		default:
			b.vecs[p] = append(b.vecs[p], work[i*dim:(i+1)*dim]...)
		}
	}
}

// Details is the IndexMetadata.index_details value (a
// lance.index.pb.VectorIndexDetails, newer than our protos): metric_type
// = 1 (omitted for l2), the PQ parameters {num_bits = 1,
// num_sub_vectors = 2} as field 4 or an empty flat message as field 8,
// and the build parameters as a map<string, string> at field 9, as the
// SDK writes it.
func (b *VectorBuilder) Details() []byte {
	var out []byte
	switch b.opts.Metric {
	case Cosine:
		out = protowire.AppendTag(out, 1, protowire.VarintType)
		out = protowire.AppendVarint(out, 1)
	case Dot:
		out = protowire.AppendTag(out, 1, protowire.VarintType)
		out = protowire.AppendVarint(out, 2)
	}
	if b.opts.Kind.hnsw() {
		// {m, ef_construction, max_level}: measured on the Node SDK's IVF_HNSW_SQ.
		var h []byte
		h = protowire.AppendTag(h, 1, protowire.VarintType)
		h = protowire.AppendVarint(h, uint64(b.opts.M))
		h = protowire.AppendTag(h, 2, protowire.VarintType)
		h = protowire.AppendVarint(h, uint64(b.opts.EfConstruction))
		h = protowire.AppendTag(h, 3, protowire.VarintType)
		h = protowire.AppendVarint(h, hnswMaxLevel)
		out = protowire.AppendTag(out, 3, protowire.BytesType)
		out = protowire.AppendBytes(out, h)
	}
	params := [][2]string{
		{"lance.ivf.max_iters", strconv.Itoa(b.opts.MaxIterations)},
		{"lance.ivf.sample_rate", strconv.Itoa(b.opts.SampleRate)},
	}
	switch b.opts.Kind.quant() {
	case IVFPQ:
		var pq []byte
		pq = protowire.AppendTag(pq, 1, protowire.VarintType)
		pq = protowire.AppendVarint(pq, 8)
		pq = protowire.AppendTag(pq, 2, protowire.VarintType)
		pq = protowire.AppendVarint(pq, uint64(b.opts.NumSubVectors))
		out = protowire.AppendTag(out, 4, protowire.BytesType)
		out = protowire.AppendBytes(out, pq)
		params = append(params, [2]string{"lance.pq.max_iters", strconv.Itoa(DefaultMaxIterations)},
			[2]string{"lance.pq.sample_rate", strconv.Itoa(b.opts.SampleRate)})
	case IVFSQ:
		// {num_bits = 1}: measured on pylance's IVF_SQ.
		var sq []byte
		sq = protowire.AppendTag(sq, 1, protowire.VarintType)
		sq = protowire.AppendVarint(sq, 8)
		out = protowire.AppendTag(out, 5, protowire.BytesType)
		out = protowire.AppendBytes(out, sq)
		params = append(params, [2]string{"lance.sq.sample_rate", strconv.Itoa(b.opts.SampleRate)})
	default:
		out = protowire.AppendTag(out, 8, protowire.BytesType)
		out = protowire.AppendBytes(out, nil)
	}
	for _, kv := range params {
		var e []byte
		e = protowire.AppendTag(e, 1, protowire.BytesType)
		e = protowire.AppendString(e, kv[0])
		e = protowire.AppendTag(e, 2, protowire.BytesType)
		e = protowire.AppendString(e, kv[1])
		out = protowire.AppendTag(out, 9, protowire.BytesType)
		out = protowire.AppendBytes(out, e)
	}
	return out
}

// Finish writes index.idx and auxiliary.idx into st.
func (b *VectorBuilder) Finish(ctx context.Context, st Store) ([]File, error) {
	o := b.opts
	nparts := o.NumPartitions
	idxMeta, _ := json.Marshal(vectorIndexMeta{Type: string(o.Kind), DistanceType: string(o.Metric)})
	flat, _ := json.Marshal(make([]string, nparts))
	loss := b.loss
	idxIVF := &indexpb.IVF{
		Offsets: make([]uint64, nparts), Lengths: make([]uint32, nparts), Loss: &loss,
		CentroidsTensor: &indexpb.Tensor{DataType: indexpb.Tensor_FLOAT32, Shape: []uint32{uint32(nparts), uint32(o.Dim)}, Data: bytesOf(b.centroids)},
	}
	var f1 File
	if o.Kind.hnsw() {
		graphs, err := b.buildGraphs(ctx)
		if err != nil {
			return nil, err
		}
		metas := make([]string, nparts)
		var total uint64
		for p, g := range graphs {
			m, rows := g.meta()
			js, _ := json.Marshal(m)
			metas[p] = string(js)
			idxIVF.Offsets[p], idxIVF.Lengths[p] = total, uint32(rows)
			total += uint64(rows)
		}
		ivfBuf, err := proto.MarshalOptions{Deterministic: true}.Marshal(idxIVF)
		if err != nil {
			return nil, err
		}
		hm, _ := json.Marshal(metas)
		schema := arrow.NewSchema(hnswFields(), ptrMeta(arrow.NewMetadata([]string{vectorIndexKey, vectorIVFKey, hnswKey}, []string{string(idxMeta), "1", string(hm)})))
		if f1, err = writeVectorFile(ctx, st, VectorIndexFile, schema, func(w *lancefile.Writer) error {
			return writeGraphs(w, schema, graphs)
		}, o.FileVersion, ivfBuf); err != nil {
			return nil, err
		}
	} else {
		ivfBuf, err := proto.MarshalOptions{Deterministic: true}.Marshal(idxIVF)
		if err != nil {
			return nil, err
		}
		marker := arrow.NewSchema([]arrow.Field{{Name: flatMarkerColumn, Type: arrow.PrimitiveTypes.Uint64}},
			ptrMeta(arrow.NewMetadata([]string{vectorIndexKey, vectorIVFKey, vectorFlatKey}, []string{string(idxMeta), "1", string(flat)})))
		if f1, err = writeVectorFile(ctx, st, VectorIndexFile, marker, nil, o.FileVersion, ivfBuf); err != nil {
			return nil, err
		}
	}

	// auxiliary.idx: the partitions in order.
	auxIVF := &indexpb.IVF{Offsets: make([]uint64, nparts), Lengths: make([]uint32, nparts)}
	var total uint64
	for p := range nparts {
		auxIVF.Offsets[p] = total
		auxIVF.Lengths[p] = uint32(len(b.ids[p]))
		total += uint64(len(b.ids[p]))
	}
	auxBuf, err := proto.MarshalOptions{Deterministic: true}.Marshal(auxIVF)
	if err != nil {
		return nil, err
	}
	globals := [][]byte{auxBuf}
	var storage string
	var vecField arrow.Field
	switch o.Kind.quant() {
	case IVFPQ:
		cb, err := proto.MarshalOptions{Deterministic: true}.Marshal(&indexpb.Tensor{
			DataType: indexpb.Tensor_FLOAT32, Shape: []uint32{pqCentroids, uint32(o.Dim)}, Data: bytesOf(b.codebook),
		})
		if err != nil {
			return nil, err
		}
		globals = append(globals, cb)
		sm, _ := json.Marshal(pqStorageMeta{CodebookPosition: 2, NBits: 8, NumSubVectors: o.NumSubVectors, Dimension: o.Dim, CodebookTensor: []int{}, Transposed: true})
		storage = string(sm)
		vecField = arrow.Field{Name: pqCodeColumn, Type: arrow.FixedSizeListOf(int32(o.NumSubVectors), arrow.PrimitiveTypes.Uint8), Nullable: true}
	case IVFSQ:
		var sm sqStorageMeta
		sm.Dim, sm.NumBits, sm.Bounds.Start, sm.Bounds.End = o.Dim, 8, b.sqStart, b.sqEnd
		js, _ := json.Marshal(sm)
		storage = string(js)
		vecField = arrow.Field{Name: sqCodeColumn, Type: arrow.FixedSizeListOf(int32(o.Dim), arrow.PrimitiveTypes.Uint8), Nullable: true}
	default:
		sm, _ := json.Marshal(flatStorageMeta{Dim: o.Dim})
		storage = string(sm)
		vecField = arrow.Field{Name: flatColumn, Type: arrow.FixedSizeListOf(int32(o.Dim), arrow.PrimitiveTypes.Float32)}
	}
	storageList, _ := json.Marshal([]string{storage})
	auxSchema := arrow.NewSchema([]arrow.Field{{Name: rowIDColumn, Type: arrow.PrimitiveTypes.Uint64, Nullable: true}, vecField},
		ptrMeta(arrow.NewMetadata([]string{vectorDistanceKey, vectorIVFKey, vectorStorageKey}, []string{string(o.Metric), "1", string(storageList)})))
	f2, err := writeVectorFile(ctx, st, VectorAuxiliaryFile, auxSchema, func(w *lancefile.Writer) error {
		return b.writePartitions(w, auxSchema)
	}, o.FileVersion, globals...)
	if err != nil {
		return nil, err
	}
	return []File{f2, f1}, nil
}

// writePartitions writes each partition as one record: PQ codes
// transposed within the partition (ivf.go).
func (b *VectorBuilder) writePartitions(w *lancefile.Writer, schema *arrow.Schema) error {
	mem := memory.DefaultAllocator
	m, dim := b.opts.NumSubVectors, b.opts.Dim
	for p := range b.ids {
		n := len(b.ids[p])
		if n == 0 {
			continue
		}
		ids := array.NewUint64Builder(mem)
		ids.AppendValues(b.ids[p], nil)
		idArr := ids.NewArray()
		var vecArr arrow.Array
		switch b.opts.Kind.quant() {
		case IVFSQ:
			// Row-major, as the SDK stores SQ codes.
			vb := array.NewUint8Builder(mem)
			vb.AppendValues(b.codes[p][:n*dim], nil)
			vals := vb.NewArray()
			vecArr = array.NewFixedSizeListData(array.NewData(schema.Field(1).Type, n, []*memory.Buffer{nil}, []arrow.ArrayData{vals.Data()}, 0, 0))
			vals.Release()
		case IVFPQ:
			t := make([]byte, n*m)
			for i := range n {
				for s := range m {
					t[s*n+i] = b.codes[p][i*m+s]
				}
			}
			vb := array.NewUint8Builder(mem)
			vb.AppendValues(t, nil)
			vals := vb.NewArray()
			vecArr = array.NewFixedSizeListData(array.NewData(schema.Field(1).Type, n, []*memory.Buffer{nil}, []arrow.ArrayData{vals.Data()}, 0, 0))
			vals.Release()
		default:
			vb := array.NewFloat32Builder(mem)
			vb.AppendValues(b.vecs[p][:n*dim], nil)
			vals := vb.NewArray()
			vecArr = array.NewFixedSizeListData(array.NewData(schema.Field(1).Type, n, []*memory.Buffer{nil}, []arrow.ArrayData{vals.Data()}, 0, 0))
			vals.Release()
		}
		rec := array.NewRecordBatch(schema, []arrow.Array{idArr, vecArr}, int64(n))
		err := w.Write(rec)
		rec.Release()
		idArr.Release()
		vecArr.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// writeVectorFile writes one index file whose rows, when any, rows writes.
func writeVectorFile(ctx context.Context, st Store, name string, schema *arrow.Schema, rows func(*lancefile.Writer) error, v lancefile.Version, globals ...[]byte) (File, error) {
	var buf bytes.Buffer
	w, err := lancefile.NewWriter(&buf, schema, lancefile.WriterOptions{Version: v, GlobalBuffers: globals})
	if err != nil {
		return File{}, fmt.Errorf("lance index: %s: %w", name, err)
	}
	if rows != nil {
		if err := rows(w); err != nil {
			return File{}, fmt.Errorf("lance index: %s: %w", name, err)
		}
	}
	if err := w.Close(); err != nil {
		return File{}, fmt.Errorf("lance index: %s: %w", name, err)
	}
	size := int64(buf.Len())
	if err := st.Put(ctx, name, &buf, size); err != nil {
		return File{}, fmt.Errorf("lance index: %s: %w", name, err)
	}
	return File{Path: name, Size: size}, nil
}

func ptrMeta(m arrow.Metadata) *arrow.Metadata { return &m }

func bytesOf(f []float32) []byte {
	out := make([]byte, 4*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
	}
	return out
}

// boundedEach runs fn(i) for each i in [0, n), workers() at a time, and
// starts none once ctx is done; it returns when every started one has.
func boundedEach(ctx context.Context, n int, fn func(i int)) {
	sem := make(chan struct{}, workers())
	var wg sync.WaitGroup
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}
