package index

// IVF_FLAT and IVF_PQ segments in Lance's v3 vector index layout, as the
// SDK writes them (measured with scripts/index/vdump on LanceDB 0.31.0 and
// 0.39.0; both write this layout for both kinds):
//
// index.idx: no rows, schema {__flat_marker: uint64}; schema metadata
// lance:index = {"type":"IVF_PQ"|"IVF_FLAT","distance_type":"l2"|
// "cosine"|"dot"}, lance:ivf = "1" and lance:flat = a JSON list of one ""
// per partition. Global buffer 1 is an IVF message: centroids_tensor
// (FLOAT32, shape [partitions, dim]), loss, and offsets/lengths left zero.
//
// auxiliary.idx: the rows of every partition in partition order,
// {_rowid: uint64, flat: fixed_size_list<float32>[dim]} (IVF_FLAT) or
// {_rowid: uint64, __pq_code: fixed_size_list<uint8>[m]} (IVF_PQ);
// schema metadata distance_type, lance:ivf = "1" (global buffer 1: an
// IVF message with the row offset and length of each partition and no
// centroids) and storage_metadata = a JSON list of one JSON string:
// {"dim":D} (FLAT) or {"codebook_position":2,"nbits":8,
// "num_sub_vectors":m,"dimension":D,"codebook_tensor":[],
// "transposed":true} (PQ). The PQ codebook is global buffer 2, a Tensor
// of shape [256, D] whose data is sub-vector major: centroid c of
// sub-vector s is the subdim floats at (s*256 + c)*subdim. With
// transposed, each partition's codes are stored column-major: the n*m
// bytes of a partition of n rows hold sub-vector s of row i at s*n + i.
//
// Distances: cosine indices store normalized vectors (FLAT) or codes of
// normalized residuals (PQ) and search with a normalized query. PQ encodes
// the residual vector - centroid for l2 and cosine, the vector itself for
// dot; its codebooks are trained with l2 in every case.

import (
	"context"
	"encoding/binary"
	"encoding/json"
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

// The file names and metadata keys of a v3 vector index segment.
const (
	VectorIndexFile     = "index.idx"
	VectorAuxiliaryFile = "auxiliary.idx"

	vectorIndexKey    = "lance:index"
	vectorIVFKey      = "lance:ivf"
	vectorFlatKey     = "lance:flat"
	vectorDistanceKey = "distance_type"
	vectorStorageKey  = "storage_metadata"

	flatMarkerColumn = "__flat_marker"
	rowIDColumn      = "_rowid"
	flatColumn       = "flat"
	pqCodeColumn     = "__pq_code"
	sqCodeColumn     = "__sq_code"
)

// VectorDetailsURL is the index_details type URL of every vector index.
const VectorDetailsURL = "/lance.index.pb.VectorIndexDetails"

// DefaultNProbes is Lance's default number of partitions searched.
const DefaultNProbes = 20

// ParseMetric parses a client's distance type (case-insensitive; "" is l2).
func ParseMetric(s string) (Metric, error) {
	switch m := Metric(lower(s)); m {
	case "", L2, "euclidean":
		return L2, nil
	case Cosine, Dot:
		return m, nil
	}
	return "", fmt.Errorf("%w: distance type %q (l2, cosine or dot)", ErrUnsupported, s)
}

type vectorIndexMeta struct {
	Type         string `json:"type"`
	DistanceType string `json:"distance_type"`
}

type pqStorageMeta struct {
	CodebookPosition int   `json:"codebook_position"`
	NBits            int   `json:"nbits"`
	NumSubVectors    int   `json:"num_sub_vectors"`
	Dimension        int   `json:"dimension"`
	CodebookTensor   []int `json:"codebook_tensor"`
	Transposed       bool  `json:"transposed"`
}

type flatStorageMeta struct {
	Dim int `json:"dim"`
}

// sqStorageMeta is an SQ segment's storage_metadata (measured on the
// SDK's IVF_HNSW_SQ): the codes are 8-bit, one per dimension, of the
// (cosine: normalized) vector itself, scaled from [start, end].
type sqStorageMeta struct {
	Dim     int `json:"dim"`
	NumBits int `json:"num_bits"`
	Bounds  struct {
		Start float64 `json:"start"`
		End   float64 `json:"end"`
	} `json:"bounds"`
}

// ivfReader is an opened IVF_FLAT or IVF_PQ segment. Partitions are read
// from auxiliary.idx when first searched and kept.
type ivfReader struct {
	kind      VectorKind
	metric    Metric
	dim       int
	centroids []float32 // partitions × dim
	offsets   []uint64  // row offset of each partition in auxiliary.idx
	lengths   []uint32

	// PQ
	m, subdim int
	codebook  []float32 // m × 256 × subdim

	// SQ
	sqStart, sqEnd float64

	// HNSW: each partition's lance:hnsw entry and its rows in index.idx.
	hnsw         []hnswMeta
	idx          *lancefile.Reader
	graphOffsets []uint64
	graphLengths []uint32

	aux   *lancefile.Reader
	file  ReaderAt
	mu    sync.Mutex
	parts map[int]*ivfPartition
}

type ivfPartition struct {
	rowIDs []uint64
	flat   []float32 // n × dim (FLAT)
	codes  []byte    // m × n, column-major (PQ); n × dim, row-major (SQ)
	graph  *hnswGraph
}

// isSQ says whether kind stores SQ codes.
func isSQ(kind VectorKind) bool { return kind.quant() == IVFSQ }

// OpenVector opens the IVF_FLAT or IVF_PQ segment stored in st.
func OpenVector(ctx context.Context, st Store) (VectorReader, error) {
	idx, err := openFile(ctx, st, VectorIndexFile)
	if err != nil {
		return nil, err
	}
	md := schemaMeta(idx.Schema())
	var im vectorIndexMeta
	if err := json.Unmarshal([]byte(md[vectorIndexKey]), &im); err != nil {
		return nil, fmt.Errorf("%w: %s: %s: %v", ErrCorrupt, VectorIndexFile, vectorIndexKey, err)
	}
	r := &ivfReader{kind: VectorKind(im.Type), parts: map[int]*ivfPartition{}}
	switch r.kind {
	case IVFFlat, IVFPQ, IVFSQ, IVFHNSWFlat, IVFHNSWSQ, IVFHNSWPQ:
	default:
		return nil, fmt.Errorf("%w: vector index type %q", ErrUnsupported, im.Type)
	}
	if r.metric, err = ParseMetric(im.DistanceType); err != nil {
		return nil, err
	}
	ivf, err := readIVF(ctx, idx, md)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", VectorIndexFile, err)
	}
	t := ivf.GetCentroidsTensor()
	shape := t.GetShape()
	if t.GetDataType() != indexpb.Tensor_FLOAT32 || len(shape) != 2 || shape[0] == 0 || shape[1] == 0 ||
		uint64(len(t.GetData())) != 4*uint64(shape[0])*uint64(shape[1]) {
		return nil, fmt.Errorf("%w: %s: centroids tensor %v of %v with %d bytes", ErrCorrupt, VectorIndexFile, shape, t.GetDataType(), len(t.GetData()))
	}
	r.dim = int(shape[1])
	r.centroids = floatsOf(t.GetData())
	nparts := int(shape[0])
	if r.kind.hnsw() {
		if r.hnsw, err = parseHNSWMeta(md[hnswKey], nparts); err != nil {
			return nil, fmt.Errorf("%s: %w", VectorIndexFile, err)
		}
		if len(ivf.GetOffsets()) != nparts || len(ivf.GetLengths()) != nparts {
			return nil, fmt.Errorf("%w: %s: %d graph offsets for %d partitions", ErrCorrupt, VectorIndexFile, len(ivf.GetOffsets()), nparts)
		}
		for p := range nparts {
			o, n := ivf.GetOffsets()[p], uint64(ivf.GetLengths()[p])
			if o > idx.NumRows() || n > idx.NumRows()-o {
				return nil, fmt.Errorf("%w: %s: graph of partition %d at %d+%d of %d rows, level offsets %v", ErrCorrupt, VectorIndexFile, p, o, n, idx.NumRows(), r.hnsw[p].LevelOffsets)
			}
		}
		r.idx, r.graphOffsets, r.graphLengths = idx, ivf.GetOffsets(), ivf.GetLengths()
	}

	f, err := st.Open(ctx, VectorAuxiliaryFile)
	if err != nil {
		return nil, fmt.Errorf("lance index: open %s: %w", VectorAuxiliaryFile, err)
	}
	aux, err := lancefile.Open(ctx, sourceOf{f})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, VectorAuxiliaryFile, err)
	}
	r.aux, r.file = aux, f
	if err := r.openAux(ctx, nparts); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func (r *ivfReader) openAux(ctx context.Context, nparts int) error {
	md := schemaMeta(r.aux.Schema())
	ivf, err := readIVF(ctx, r.aux, md)
	if err != nil {
		return fmt.Errorf("%s: %w", VectorAuxiliaryFile, err)
	}
	if len(ivf.GetOffsets()) != nparts || len(ivf.GetLengths()) != nparts {
		return fmt.Errorf("%w: %s: %d offsets and %d lengths for %d partitions", ErrCorrupt, VectorAuxiliaryFile, len(ivf.GetOffsets()), len(ivf.GetLengths()), nparts)
	}
	r.offsets, r.lengths = ivf.GetOffsets(), ivf.GetLengths()
	rows := r.aux.NumRows()
	for i := range nparts {
		if r.offsets[i] > rows || uint64(r.lengths[i]) > rows-r.offsets[i] {
			return fmt.Errorf("%w: %s: partition %d at %d+%d of %d rows", ErrCorrupt, VectorAuxiliaryFile, i, r.offsets[i], r.lengths[i], rows)
		}
	}
	var list []string
	if err := json.Unmarshal([]byte(md[vectorStorageKey]), &list); err != nil || len(list) != 1 {
		return fmt.Errorf("%w: %s: %s %q", ErrCorrupt, VectorAuxiliaryFile, vectorStorageKey, md[vectorStorageKey])
	}
	if r.kind.quant() == IVFFlat {
		var fm flatStorageMeta
		if err := json.Unmarshal([]byte(list[0]), &fm); err != nil || fm.Dim != r.dim {
			return fmt.Errorf("%w: %s: flat storage %q for dimension %d", ErrCorrupt, VectorAuxiliaryFile, list[0], r.dim)
		}
		return nil
	}
	if isSQ(r.kind) {
		var sm sqStorageMeta
		if err := json.Unmarshal([]byte(list[0]), &sm); err != nil || sm.Dim != r.dim {
			return fmt.Errorf("%w: %s: sq storage %q for dimension %d", ErrCorrupt, VectorAuxiliaryFile, list[0], r.dim)
		}
		if sm.NumBits != 8 {
			return fmt.Errorf("%w: SQ with %d bits", ErrUnsupported, sm.NumBits)
		}
		if math.IsNaN(sm.Bounds.Start) || math.IsNaN(sm.Bounds.End) || math.IsInf(sm.Bounds.Start, 0) || math.IsInf(sm.Bounds.End, 0) || sm.Bounds.End < sm.Bounds.Start {
			return fmt.Errorf("%w: %s: sq bounds [%v, %v]", ErrCorrupt, VectorAuxiliaryFile, sm.Bounds.Start, sm.Bounds.End)
		}
		r.sqStart, r.sqEnd = sm.Bounds.Start, sm.Bounds.End
		return nil
	}
	var pm pqStorageMeta
	if err := json.Unmarshal([]byte(list[0]), &pm); err != nil {
		return fmt.Errorf("%w: %s: pq storage %q: %v", ErrCorrupt, VectorAuxiliaryFile, list[0], err)
	}
	if pm.NBits != 8 {
		return fmt.Errorf("%w: PQ with %d bits", ErrUnsupported, pm.NBits)
	}
	if !pm.Transposed {
		return fmt.Errorf("%w: PQ codes not transposed", ErrUnsupported)
	}
	if pm.Dimension != r.dim || pm.NumSubVectors <= 0 || r.dim%pm.NumSubVectors != 0 {
		return fmt.Errorf("%w: %s: PQ of %d sub-vectors over dimension %d (index dimension %d)", ErrCorrupt, VectorAuxiliaryFile, pm.NumSubVectors, pm.Dimension, r.dim)
	}
	r.m, r.subdim = pm.NumSubVectors, r.dim/pm.NumSubVectors
	if pm.CodebookPosition <= 0 || pm.CodebookPosition >= r.aux.NumGlobalBuffers() {
		return fmt.Errorf("%w: %s: codebook at global buffer %d of %d", ErrCorrupt, VectorAuxiliaryFile, pm.CodebookPosition, r.aux.NumGlobalBuffers())
	}
	b, err := r.aux.GlobalBuffer(ctx, pm.CodebookPosition)
	if err != nil {
		return err
	}
	var t indexpb.Tensor
	if err := proto.Unmarshal(b, &t); err != nil {
		return fmt.Errorf("%w: %s: codebook: %v", ErrCorrupt, VectorAuxiliaryFile, err)
	}
	if t.GetDataType() != indexpb.Tensor_FLOAT32 || len(t.GetData()) != 4*256*r.dim {
		return fmt.Errorf("%w: %s: codebook tensor %v of %v with %d bytes", ErrCorrupt, VectorAuxiliaryFile, t.GetShape(), t.GetDataType(), len(t.GetData()))
	}
	r.codebook = floatsOf(t.GetData())
	return nil
}

// readIVF reads the IVF message the lance:ivf key names.
func readIVF(ctx context.Context, f *lancefile.Reader, md map[string]string) (*indexpb.IVF, error) {
	pos, err := strconv.Atoi(md[vectorIVFKey])
	if err != nil || pos <= 0 || pos >= f.NumGlobalBuffers() {
		return nil, fmt.Errorf("%w: %s %q of %d global buffers", ErrCorrupt, vectorIVFKey, md[vectorIVFKey], f.NumGlobalBuffers())
	}
	b, err := f.GlobalBuffer(ctx, pos)
	if err != nil {
		return nil, err
	}
	var ivf indexpb.IVF
	if err := proto.Unmarshal(b, &ivf); err != nil {
		return nil, fmt.Errorf("%w: IVF message: %v", ErrCorrupt, err)
	}
	return &ivf, nil
}

func schemaMeta(s *arrow.Schema) map[string]string {
	md := map[string]string{}
	m := s.Metadata()
	for i, k := range m.Keys() {
		md[k] = m.Values()[i]
	}
	return md
}

func floatsOf(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func (r *ivfReader) Kind() VectorKind   { return r.kind }
func (r *ivfReader) Metric() Metric     { return r.metric }
func (r *ivfReader) Dim() int           { return r.dim }
func (r *ivfReader) NumPartitions() int { return len(r.lengths) }
func (r *ivfReader) Close() error       { return r.file.Close() }

// model is the segment's model as a builder holds it (IVF_FLAT, IVF_PQ).
func (r *ivfReader) model() vectorModel {
	m, efc := 0, 0
	if r.kind.hnsw() {
		m, efc = hnswM, hnswEfConstruction
		for _, h := range r.hnsw {
			if h.Params.M >= 2 && h.Params.M <= hnswMaxM && h.Params.EfConstruction >= 1 && h.Params.EfConstruction <= hnswMaxEfConstruction {
				m, efc = h.Params.M, h.Params.EfConstruction
				break
			}
		}
	}
	return vectorModel{
		opts: VectorBuildOptions{
			Kind: r.kind, Metric: r.metric, Dim: r.dim, NumPartitions: r.NumPartitions(), NumSubVectors: r.m,
			MaxIterations: DefaultMaxIterations, SampleRate: DefaultSampleRate, M: m, EfConstruction: efc,
		},
		centroids: r.centroids, subdim: r.subdim, codebook: r.codebook, sqStart: r.sqStart, sqEnd: r.sqEnd,
	}
}

// partitionRows are partition p's rows as a builder holds them: their ids
// and their PQ codes m bytes per row (stored column-major within the
// partition: transposed here) or their vectors (FLAT).
func (r *ivfReader) partitionRows(ctx context.Context, p int) (ids []uint64, codes []byte, vecs []float32, err error) {
	part, err := r.partition(ctx, p)
	if err != nil {
		return nil, nil, nil, err
	}
	n := len(part.rowIDs)
	switch r.kind.quant() {
	case IVFPQ:
		codes = make([]byte, n*r.m)
		for i := range n {
			for s := range r.m {
				codes[i*r.m+s] = part.codes[s*n+i]
			}
		}
	case IVFSQ:
		codes = part.codes // n × dim, row-major as a builder holds them
	case IVFFlat:
		vecs = part.flat
	default:
		return nil, nil, nil, fmt.Errorf("%w: rows of a %s segment", ErrUnsupported, r.kind)
	}
	return part.rowIDs, codes, vecs, nil
}

// partition reads partition p's rows (once).
func (r *ivfReader) partition(ctx context.Context, p int) (*ivfPartition, error) {
	r.mu.Lock()
	part, ok := r.parts[p]
	r.mu.Unlock()
	if ok {
		return part, nil
	}
	n := int(r.lengths[p])
	part = &ivfPartition{}
	if n > 0 {
		col := flatColumn
		switch {
		case r.kind.quant() == IVFPQ:
			col = pqCodeColumn
		case isSQ(r.kind):
			col = sqCodeColumn
		}
		rec, err := r.aux.Read(ctx, memory.DefaultAllocator, lancefile.ReadOptions{Columns: []string{rowIDColumn, col}, Offset: int64(r.offsets[p]), Limit: int64(n)})
		if err != nil {
			return nil, fmt.Errorf("%w: %s: partition %d: %v", ErrCorrupt, VectorAuxiliaryFile, p, err)
		}
		defer rec.Release()
		ids, ok := rec.Column(0).(*array.Uint64)
		if !ok || ids.NullN() > 0 {
			return nil, fmt.Errorf("%w: %s: _rowid is %s with nulls", ErrCorrupt, VectorAuxiliaryFile, rec.Column(0).DataType())
		}
		part.rowIDs = slices.Clone(ids.Uint64Values())
		fsl, ok := rec.Column(1).(*array.FixedSizeList)
		if !ok {
			return nil, fmt.Errorf("%w: %s: %s is %s", ErrCorrupt, VectorAuxiliaryFile, col, rec.Column(1).DataType())
		}
		if r.kind.quant() == IVFFlat {
			vals, ok := fsl.ListValues().(*array.Float32)
			if !ok || fsl.DataType().(*arrow.FixedSizeListType).Len() != int32(r.dim) {
				return nil, fmt.Errorf("%w: %s: flat is %s", ErrCorrupt, VectorAuxiliaryFile, fsl.DataType())
			}
			off := fsl.Offset() * r.dim
			part.flat = slices.Clone(vals.Float32Values()[off : off+n*r.dim])
		} else if isSQ(r.kind) {
			vals, ok := fsl.ListValues().(*array.Uint8)
			if !ok || fsl.DataType().(*arrow.FixedSizeListType).Len() != int32(r.dim) {
				return nil, fmt.Errorf("%w: %s: __sq_code is %s", ErrCorrupt, VectorAuxiliaryFile, fsl.DataType())
			}
			off := fsl.Offset() * r.dim
			part.codes = slices.Clone(vals.Uint8Values()[off : off+n*r.dim])
		} else {
			vals, ok := fsl.ListValues().(*array.Uint8)
			if !ok || fsl.DataType().(*arrow.FixedSizeListType).Len() != int32(r.m) {
				return nil, fmt.Errorf("%w: %s: __pq_code is %s", ErrCorrupt, VectorAuxiliaryFile, fsl.DataType())
			}
			off := fsl.Offset() * r.m
			part.codes = slices.Clone(vals.Uint8Values()[off : off+n*r.m])
		}
	}
	if r.kind.hnsw() && n > 0 {
		g, err := r.readGraph(ctx, p, n)
		if err != nil {
			return nil, err
		}
		part.graph = g
	}
	r.mu.Lock()
	r.parts[p] = part
	r.mu.Unlock()
	return part, nil
}

// Search probes the NProbes partitions nearest the query and ranks their
// rows: exactly for IVF_FLAT, by PQ's asymmetric distance for IVF_PQ. With
// MaxNProbes above NProbes, a search that holds fewer than K candidates
// after NProbes partitions goes on through the next ones, nearest first, up
// to MaxNProbes: Lance's late search. Lance runs it concurrently and checks
// its count only between waves, so when to stop depends on its scheduling;
// measured with both SDKs on 2 cores (query.TestVectorIndexDifferentialSDK),
// a search short of K went on through every partition allowed, which is
// what this does.
func (r *ivfReader) Search(ctx context.Context, s VectorSearch) ([]VectorHit, error) {
	if len(s.Query) != r.dim {
		return nil, fmt.Errorf("%w: query of dimension %d for an index of dimension %d", ErrUnsupported, len(s.Query), r.dim)
	}
	if s.K <= 0 {
		return nil, nil
	}
	q := slices.Clone(s.Query)
	if r.metric == Cosine {
		normalizeVec(q)
	}
	nprobes := s.NProbes
	if nprobes <= 0 {
		nprobes = DefaultNProbes
	}
	maxProbes := max(nprobes, s.MaxNProbes)
	probes := nearestCentroids(q, r.centroids, r.dim, r.centroidMetric(), min(maxProbes, r.NumPartitions()))
	top := newTopK(s.K)
	resid := make([]float32, r.dim)
	var table []float32
	var qcode []byte
	if isSQ(r.kind) {
		qcode = r.sqQuantize(q)
	}
	for i, p := range probes {
		if i == nprobes && len(top.h) >= s.K {
			break // enough without the late search
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		part, err := r.partition(ctx, p)
		if err != nil {
			return nil, err
		}
		dist := r.partitionDistance(p, part, q, qcode, &table, resid)
		n := len(part.rowIDs)
		allowed := n
		if s.Allow != nil && part.graph != nil {
			allowed = 0
			for _, id := range part.rowIDs {
				if s.Allow(id) {
					allowed++
				}
			}
		}
		// Lance walks the graph unless the prefilter keeps under a tenth of the partition,
		// which it searches flat.
		if part.graph != nil && allowed*10 >= n {
			ef := s.Ef
			if ef <= 0 {
				ef = s.K + s.K/2
			}
			var allow func(uint32) bool
			if s.Allow != nil {
				allow = func(i uint32) bool { return s.Allow(part.rowIDs[i]) }
			}
			for _, nd := range part.graph.search(s.K, max(ef, s.K), func(i uint32) float32 { return dist(int(i)) }, allow) {
				top.push(part.rowIDs[nd.id], nd.d)
			}
			continue
		}
		for i, id := range part.rowIDs {
			if s.Allow != nil && !s.Allow(id) {
				continue
			}
			top.push(id, dist(i))
		}
	}
	return top.sorted(), nil
}

// partitionDistance is the distance from q to row i of partition p as its storage ranks it:
// exact (FLAT), PQ's asymmetric distance from a table of the partition, or SQ's.
func (r *ivfReader) partitionDistance(p int, part *ivfPartition, q []float32, qcode []byte, table *[]float32, resid []float32) func(i int) float32 {
	switch r.kind.quant() {
	case IVFFlat:
		return func(i int) float32 { return r.flatDistance(q, part.flat[i*r.dim:(i+1)*r.dim]) }
	case IVFPQ:
		key := q
		if r.metric != Dot {
			c := r.centroids[p*r.dim : (p+1)*r.dim]
			for j := range resid {
				resid[j] = q[j] - c[j]
			}
			key = resid
		}
		*table = pqDistanceTable(*table, key, r.codebook, r.m, r.subdim, r.metric == Dot)
		t, n := *table, len(part.rowIDs)
		return func(i int) float32 {
			var d float32
			for sv := 0; sv < r.m; sv++ {
				d += t[sv*256+int(part.codes[sv*n+i])]
			}
			if r.metric == Dot {
				d -= float32(r.m - 1)
			}
			return d
		}
	}
	return func(i int) float32 { return r.sqDistance(q, qcode, part.codes[i*r.dim:(i+1)*r.dim]) }
}

// readGraph reads partition p's graph (n nodes) from index.idx.
func (r *ivfReader) readGraph(ctx context.Context, p, n int) (*hnswGraph, error) {
	m := r.hnsw[p]
	if n > hnswMaxNodes {
		return nil, fmt.Errorf("%w: a graph of %d nodes", ErrUnsupported, n)
	}
	nl := len(m.LevelOffsets) - 1
	g := &hnswGraph{entry: m.EntryPoint, levels: make([][][]uint32, nl)}
	if int(m.EntryPoint) >= n {
		return nil, fmt.Errorf("%w: %s: partition %d: entry point %d of %d nodes", ErrCorrupt, VectorIndexFile, p, m.EntryPoint, n)
	}
	if r.graphLengths[p] == 0 {
		return nil, fmt.Errorf("%w: %s: partition %d: %d rows and no graph", ErrCorrupt, VectorIndexFile, p, n)
	}
	rec, err := r.idx.Read(ctx, memory.DefaultAllocator, lancefile.ReadOptions{Columns: []string{vectorIDColumn, neighborsColumn}, Offset: int64(r.graphOffsets[p]), Limit: int64(r.graphLengths[p])})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: graph of partition %d: %v", ErrCorrupt, VectorIndexFile, p, err)
	}
	defer rec.Release()
	ids, ok := rec.Column(0).(*array.Uint32)
	lists, ok2 := rec.Column(1).(*array.List)
	if !ok || !ok2 || ids.NullN() > 0 {
		return nil, fmt.Errorf("%w: %s: graph columns %s, %s", ErrCorrupt, VectorIndexFile, rec.Column(0).DataType(), rec.Column(1).DataType())
	}
	vals, ok := lists.ListValues().(*array.Uint32)
	if !ok {
		return nil, fmt.Errorf("%w: %s: __neighbors holds %s", ErrCorrupt, VectorIndexFile, lists.ListValues().DataType())
	}
	offs := lists.Offsets()
	bounds := m.LevelOffsets
	if bounds[nl] != ids.Len() {
		// Older Lance (LanceDB 0.31.0) counts node 0, which is on every level, only on level
		// 0 in level_offsets, so they miss rows. Each level lists its nodes in increasing
		// order: a level starts where the ids stop increasing.
		bounds = []int{0}
		for row := 1; row < ids.Len(); row++ {
			if ids.Value(row) <= ids.Value(row-1) {
				bounds = append(bounds, row)
			}
		}
		bounds = append(bounds, ids.Len())
		if len(bounds)-1 > 64 {
			return nil, fmt.Errorf("%w: %s: partition %d: a graph of %d levels", ErrCorrupt, VectorIndexFile, p, len(bounds)-1)
		}
		nl = len(bounds) - 1
		g.levels = make([][][]uint32, nl)
	}
	for l := range nl {
		g.levels[l] = make([][]uint32, n)
		for row := bounds[l]; row < bounds[l+1]; row++ {
			id := ids.Value(row)
			if int(id) >= n || g.levels[l][id] != nil {
				return nil, fmt.Errorf("%w: %s: partition %d level %d: node %d of %d", ErrCorrupt, VectorIndexFile, p, l, id, n)
			}
			nb := []uint32{}
			if lists.IsValid(row) {
				nb = slices.Clone(vals.Uint32Values()[offs[row]:offs[row+1]])
			}
			for _, x := range nb {
				if int(x) >= n {
					return nil, fmt.Errorf("%w: %s: partition %d: neighbor %d of %d nodes", ErrCorrupt, VectorIndexFile, p, x, n)
				}
			}
			g.levels[l][id] = nb
		}
	}
	if nl == 0 || g.levels[0][g.entry] == nil {
		return nil, fmt.Errorf("%w: %s: partition %d: entry point %d not on level 0", ErrCorrupt, VectorIndexFile, p, g.entry)
	}
	return g, nil
}

// sqQuantize is q's SQ code as Lance's scale_to_u8 computes it: (x -
// start) * 255 / (end - start), truncated and saturated to [0, 255].
func (r *ivfReader) sqQuantize(q []float32) []byte {
	out := make([]byte, len(q))
	sqEncode(out, q, r.sqStart, r.sqEnd)
	return out
}

// sqDistance ranks a row by its SQ code: l2 and cosine as Lance does, the
// squared l2 between the two codes scaled back by (span/255)²; dot on the
// decoded vector (1 - q·x̂). The query engine re-ranks the candidates with
// exact distances, so only their order matters here.
func (r *ivfReader) sqDistance(q []float32, qcode, code []byte) float32 {
	span := float32(r.sqEnd - r.sqStart)
	if r.metric == Dot {
		var d float32
		for i, c := range code {
			d += q[i] * (float32(r.sqStart) + float32(c)*span/255)
		}
		return 1 - d
	}
	var sum uint32
	for i, c := range code {
		d := int32(c) - int32(qcode[i])
		sum += uint32(d * d)
	}
	return float32(sum) * span * span / (255 * 255)
}

// centroidMetric is how partitions are ranked: cosine indices rank the
// normalized query by l2 against centroids of normalized vectors.
func (r *ivfReader) centroidMetric() Metric {
	if r.metric == Cosine {
		return L2
	}
	return r.metric
}

func (r *ivfReader) flatDistance(q, v []float32) float32 {
	switch r.metric {
	case Dot:
		return 1 - dot(q, v)
	case Cosine:
		// The stored vectors and the query are normalized.
		return 1 - dot(q, v)
	}
	return l2sq(q, v)
}

// pqDistanceTable fills table (m × 256) with the distance from each
// sub-vector of key to each codeword: squared l2, or 1 - dot for dot
// (summed over the m sub-vectors, less m-1, that is 1 - x·y).
func pqDistanceTable(table, key, codebook []float32, m, subdim int, isDot bool) []float32 {
	table = slices.Grow(table[:0], m*256)[:m*256]
	for s := range m {
		k := key[s*subdim : (s+1)*subdim]
		for c := range 256 {
			cw := codebook[(s*256+c)*subdim : (s*256+c+1)*subdim]
			if isDot {
				table[s*256+c] = 1 - dot(k, cw)
			} else {
				table[s*256+c] = l2sq(k, cw)
			}
		}
	}
	return table
}

// nearestCentroids are the indices of the n centroids nearest q, nearest
// first.
func nearestCentroids(q, centroids []float32, dim int, metric Metric, n int) []int {
	k := len(centroids) / dim
	type cd struct {
		i int
		d float32
	}
	ds := make([]cd, k)
	for i := range k {
		c := centroids[i*dim : (i+1)*dim]
		if metric == Dot {
			ds[i] = cd{i, 1 - dot(q, c)}
		} else {
			ds[i] = cd{i, l2sq(q, c)}
		}
	}
	slices.SortStableFunc(ds, func(a, b cd) int {
		switch {
		case a.d < b.d:
			return -1
		case a.d > b.d:
			return 1
		}
		return 0
	})
	out := make([]int, min(n, k))
	for i := range out {
		out[i] = ds[i].i
	}
	return out
}

// topK keeps the K nearest hits (a max-heap on distance, then row id).
type topK struct {
	k int
	h []VectorHit
}

func newTopK(k int) *topK { return &topK{k: k, h: make([]VectorHit, 0, min(k, 1<<16))} }

func worse(a, b VectorHit) bool {
	if a.Distance != b.Distance {
		return a.Distance > b.Distance
	}
	return a.RowID > b.RowID
}

func (t *topK) push(id uint64, d float32) {
	if d != d { // NaN: never a candidate
		return
	}
	h := VectorHit{RowID: id, Distance: d}
	if len(t.h) < t.k {
		t.h = append(t.h, h)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(t.h[i], t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if !worse(t.h[0], h) {
		return
	}
	t.h[0] = h
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(t.h) && worse(t.h[l], t.h[m]) {
			m = l
		}
		if r < len(t.h) && worse(t.h[r], t.h[m]) {
			m = r
		}
		if m == i {
			break
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

func (t *topK) sorted() []VectorHit {
	out := slices.Clone(t.h)
	slices.SortFunc(out, func(a, b VectorHit) int {
		if worse(a, b) {
			return 1
		}
		if worse(b, a) {
			return -1
		}
		return 0
	})
	return out
}

// ParseVectorDetails reads the kind and distance type a
// VectorIndexDetails value records (see VectorBuilder.Details): the
// compression is PQ parameters (field 4), SQ parameters (field 5) or the
// flat marker (field 8), and HNSW parameters (field 3, measured on the
// SDK's IVF_HNSW_SQ: {m, ef_construction, max_level}) make it an IVF_HNSW_*
// kind; "" for any other layout (RQ, or the legacy empty details). The
// metric is field 1 (l2 when absent).
func ParseVectorDetails(value []byte) (VectorKind, Metric) {
	var comp string
	metric, other, hnsw := L2, false, false
	for len(value) > 0 {
		num, typ, n := protowire.ConsumeTag(value)
		if n < 0 {
			return "", ""
		}
		value = value[n:]
		if num == 1 && typ == protowire.VarintType {
			v, n := protowire.ConsumeVarint(value)
			if n < 0 {
				return "", ""
			}
			switch v {
			case 1:
				metric = Cosine
			case 2:
				metric = Dot
			case 0:
			default:
				metric = ""
			}
			value = value[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, value)
		if n < 0 {
			return "", ""
		}
		value = value[n:]
		switch num {
		case 3:
			hnsw = true
		case 4:
			comp = "PQ"
		case 5:
			comp = "SQ"
		case 8:
			comp = "FLAT"
		case 9:
		default:
			other = true
		}
	}
	if other || comp == "" {
		return "", metric
	}
	if hnsw {
		return VectorKind("IVF_HNSW_" + comp), metric
	}
	return VectorKind("IVF_" + comp), metric
}
