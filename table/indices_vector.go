package table

// The vector index types (IVF_FLAT, IVF_PQ, IVF_SQ, IVF_HNSW_FLAT/SQ/PQ) of create_table_index, built in
// Lance's own format by lance.Dataset.CreateVectorIndex.

import (
	"context"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
)

// planVectorIndex resolves a vector index of kind (upper case) on req.Column.
// Bad parameters (an unknown distance type, num_sub_vectors not dividing
// the dimension, a column that is not a vector) are InvalidInput and
// nothing is committed; the kinds lancecat does not build yet are
// Unsupported.
func (h *Table) planVectorIndex(kind string, req catalog.CreateIndexRequest) (indexPlan, error) {
	t := h.t
	switch kind {
	case "VECTOR":
		kind = string(index.IVFPQ) // LanceDB's default vector index
	case string(index.IVFFlat), string(index.IVFPQ), string(index.IVFSQ),
		string(index.IVFHNSWFlat), string(index.IVFHNSWSQ), string(index.IVFHNSWPQ):
	default:
		// IVF_RQ (RaBitQ codes) and a bare HNSW are not written.
		return indexPlan{}, nserr.Unsupportedf("index type %s is not supported: lancecat builds IVF_FLAT, IVF_PQ, IVF_SQ, IVF_HNSW_FLAT, IVF_HNSW_SQ and IVF_HNSW_PQ (not IVF_RQ's RaBitQ codes)", kind)
	}
	if req.Column == "" {
		return indexPlan{}, nserr.InvalidInputf("column must name the vector column to index")
	}
	p := req.Vector
	metric, err := index.ParseMetric(p.DistanceType)
	if err != nil {
		return indexPlan{}, nserr.InvalidInputf("unknown distance_type %q: the vector distance types are l2, cosine and dot", p.DistanceType)
	}
	if p.NumPartitions < 0 || p.NumSubVectors < 0 || p.MaxIterations < 0 || p.SampleRate < 0 || p.M < 0 || p.EfConstruction < 0 {
		return indexPlan{}, nserr.InvalidInputf("num_partitions, num_sub_vectors, max_iterations, sample_rate, m and ef_construction must not be negative")
	}
	if p.NumBits != 0 && p.NumBits != 8 {
		return indexPlan{}, nserr.InvalidInputf("num_bits %d is not supported: PQ and SQ codes are 8 bits", p.NumBits)
	}
	opts := tableindex.VectorIndexOptions{
		Column: req.Column, Kind: index.VectorKind(kind), Metric: metric,
		NumPartitions: p.NumPartitions, NumSubVectors: p.NumSubVectors, NumBits: p.NumBits,
		MaxIterations: p.MaxIterations, SampleRate: p.SampleRate, Name: req.Name, Replace: req.Replace,
		M: p.M, EfConstruction: p.EfConstruction,
	}
	return indexPlan{
		name: defaultIndexName(req), kind: kind, column: req.Column, branch: req.Branch,
		check: func(ctx context.Context, ds *lance.Dataset) error { return tableindex.CheckVectorIndex(ctx, ds, opts) },
		build: func(ctx context.Context, ds *lance.Dataset) (uint64, error) {
			ver, err := tableindex.CreateVectorIndex(ctx, ds, opts)
			if err != nil {
				return 0, indexErr(t, err)
			}
			return ver.Number(), nil
		},
	}, nil
}
