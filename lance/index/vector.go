package index

// The contract between the vector indices (IVF_FLAT, IVF_PQ, ...) and the
// query engine. The readers and writers live beside it; the query engine
// (query/) only uses what is declared here and lance.Dataset's opener.

import "context"

// Metric is a vector distance type, named as Lance's clients name it.
type Metric string

// The distance types of Lance's vector indices. Distances are in the units
// the flat search reports as _distance (l2 is squared L2; cosine is
// 1 - cos; dot is 1 - x·y, as query/distance.go and Lance report it),
// so indexed and flat candidates merge.
const (
	L2     Metric = "l2"
	Cosine Metric = "cosine"
	Dot    Metric = "dot"
)

// VectorKind is the kind of a vector index as LanceDB names it (IVF_FLAT,
// IVF_PQ, ...): its files say which, its index_details only "VECTOR".
type VectorKind string

// The vector index kinds lancecat reads or writes.
const (
	IVFFlat VectorKind = "IVF_FLAT"
	IVFPQ   VectorKind = "IVF_PQ"
	IVFSQ   VectorKind = "IVF_SQ" // sq.go
	// The IVF_HNSW kinds store their rows as IVF_FLAT, IVF_PQ or IVF_SQ do
	// and a graph per partition (hnsw.go).
	IVFHNSWFlat VectorKind = "IVF_HNSW_FLAT"
	IVFHNSWSQ   VectorKind = "IVF_HNSW_SQ"
	IVFHNSWPQ   VectorKind = "IVF_HNSW_PQ"
)

// quant is the kind without its HNSW graph: how its rows are stored.
func (k VectorKind) quant() VectorKind {
	switch k {
	case IVFHNSWFlat:
		return IVFFlat
	case IVFHNSWSQ:
		return IVFSQ
	case IVFHNSWPQ:
		return IVFPQ
	}
	return k
}

// hnsw says whether the kind keeps an HNSW graph per partition.
func (k VectorKind) hnsw() bool { return k != k.quant() }

// VectorHit is one candidate row of a vector search.
type VectorHit struct {
	// RowID is the id the index recorded: a row address
	// (fragment_id << 32 | offset) on a table without stable row ids.
	RowID    uint64
	Distance float32
}

// VectorSearch is one query against one vector index segment.
type VectorSearch struct {
	Query []float32
	// K is how many candidates to return (the engine asks
	// k * refine_factor when it refines with exact distances).
	K int
	// NProbes is how many of the nearest partitions are searched
	// (0: the reader's default, Lance's 20 or every partition if fewer).
	NProbes int
	// MaxNProbes, when above NProbes, lets a search that has fewer than K
	// candidates after NProbes partitions (a selective prefilter) go on
	// through the next ones up to MaxNProbes — Lance's minimum_nprobes and
	// maximum_nprobes. 0 or anything up to NProbes: exactly NProbes.
	MaxNProbes int
	// Ef is an HNSW search's breadth per partition (0: K + K/2, Lance's
	// default; never below K).
	Ef int
	// Allow, when set, is the prefilter: only rows it accepts are
	// candidates. Rows deleted since the build are the caller's to drop.
	Allow func(rowID uint64) bool
}

// VectorReader is an opened vector index segment (_indices/<uuid>/).
type VectorReader interface {
	Kind() VectorKind
	Metric() Metric
	Dim() int
	NumPartitions() int
	// Search returns at most K hits ordered by Distance ascending (ties
	// by RowID ascending). Distances of PQ indices are approximate.
	Search(ctx context.Context, s VectorSearch) ([]VectorHit, error)
	Close() error
}
