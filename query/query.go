// Package query is the read side of the data plane: filtered, projected,
// ordered and vector (flat kNN) queries over a Lance dataset, streamed as
// Arrow record batches; row counts; and the plan as text (explain, analyze).
//
// Without an index a query is a scan of the version's fragments (in
// parallel, bounded by GOMAXPROCS, in manifest order), a filter evaluated
// column-at-a-time by package expr, and, for a vector search, a
// brute-force distance per row kept in a bounded heap (top-k). The
// table's indices serve what they answer: scalar indices the filter's
// conjuncts (index.go), a vector index the nearest-neighbour search
// (ann.go); fragments an index does not cover are scanned as before.
package query

import (
	"context"
	"math"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/lance"
)

// Column names a query adds to its answer.
const (
	DistanceColumn   = "_distance"   // float32, vector search
	RowIDColumn      = "_rowid"      // uint64, Request.WithRowID
	QueryIndexColumn = "query_index" // int32, more than one query vector
)

// Metrics of a vector search (Lance's DistanceType names).
const (
	MetricL2      = "l2"
	MetricCosine  = "cosine"
	MetricDot     = "dot"
	MetricHamming = "hamming"
)

// AllPartitions as VectorQuery.MaxNProbes lets a search go on through
// every partition of the index while it has fewer than K rows.
const AllPartitions = math.MaxInt32

// DefaultK is the top-k of a vector search when VectorQuery.K is 0.
const DefaultK = 10

// OrderBy is one sort key.
type OrderBy struct {
	Column     string
	Descending bool
	NullsFirst bool
}

// Projection is one output column: Name = SQL expression (the {alias: expr}
// form of the clients).
type Projection struct{ Name, Expr string }

// VectorQuery is a nearest-neighbour search: through the column's vector
// index where one covers the fragments (ann.go), flat (brute force) over
// the rest.
type VectorQuery struct {
	// Column is the vector column; "" picks the table's only vector column
	// (fixed_size_list of float16/32/64 or uint8); more than one is an
	// InvalidInput error.
	Column string
	// Vectors are one or more query vectors; more than one adds a
	// query_index (int32) column.
	Vectors [][]float32
	// Metric is "l2" (default), "cosine", "dot" or "hamming".
	Metric string
	// K is the top-k per query vector (0: DefaultK).
	K int
	// LowerBound and UpperBound keep distances in [lower, upper).
	LowerBound, UpperBound *float32
	// NProbes is how many IVF partitions a vector index searches (0: the
	// index's default, Lance's 20).
	NProbes int
	// MaxNProbes, above NProbes, lets a search that found fewer than K rows
	// in NProbes partitions (a selective prefilter) go on to at most this
	// many (Lance's maximum_nprobes; AllPartitions: no bound). 0: exactly
	// NProbes.
	MaxNProbes int
	// RefineFactor > 0 re-ranks k*RefineFactor candidates of the index
	// with exact distances read from the table.
	RefineFactor int
	// Ef is HNSW's search breadth per partition (0: Lance's k + k/2).
	Ef int
	// BypassVectorIndex searches flat even where a vector index exists.
	BypassVectorIndex bool
	// FastSearch searches only what the vector index covers (Lance's
	// fast_search): no flat search of the fragments written since the
	// build, and no rows at all without an index.
	FastSearch bool
}

// Request is one query.
type Request struct {
	At         *lance.Version // the version to read (the caller resolves version/tag/branch); nil: latest
	Filter     string
	Columns    []string     // nil: all columns
	Projection []Projection // instead of Columns when the client sent the alias map
	WithRowID  bool         // adds _rowid (uint64)
	Offset     int64
	Limit      int64 // <= 0: no limit
	OrderBy    []OrderBy
	Vector     *VectorQuery // nil: plain scan
	Prefilter  bool         // vector search: filter before (true) or after (false) the top-k; the SDKs' default is true (vectorSearch().where() prefilters unless .postfilter())
	Mem        memory.Allocator
	FullText   *FullTextQuery // full-text search (query/fts.go); nil: none
}

// Run plans and executes req over ds, streaming the answer. The caller
// Releases the reader. Columns of the answer, as the SDK answers: query_index
// (int32, only for more than one query vector) first, then the requested
// columns or projections, then _distance (vector search), then _rowid
// (WithRowID); _distance and _rowid named in Columns come where named.
// A vector search returns per query vector the K nearest after Offset (K+Offset
// candidates; a postfilter may leave fewer), ordered by distance then row.
func Run(ctx context.Context, ds *lance.Dataset, req Request) (array.RecordReader, error) {
	if req.FullText != nil {
		return runFTS(ctx, ds, req)
	}
	if offs, ok, err := takeOffsets(req); err != nil {
		return nil, err
	} else if ok {
		return runTake(ctx, ds, req, offs)
	}
	p, err := plan(ctx, ds, req)
	if err != nil {
		return nil, err
	}
	defer p.ann.close() // a kNN is answered before run returns
	return p.run(ctx)
}

// Count counts the live rows at version at matching filter ("" = all:
// O(1) from the manifest).
func Count(ctx context.Context, ds *lance.Dataset, at *lance.Version, filter string) (uint64, error) {
	return count(ctx, ds, at, filter)
}

// Explain renders the plan of req as text without running it.
func Explain(ctx context.Context, ds *lance.Dataset, req Request, verbose bool) (string, error) {
	if req.FullText != nil {
		return explainFTS(ctx, ds, req)
	}
	p, err := plan(ctx, ds, req)
	if err != nil {
		return "", err
	}
	p.ann.close()
	return p.explain(verbose, false), nil
}

// Analyze runs req, discarding the rows, and renders the plan with the
// rows and time of each stage.
func Analyze(ctx context.Context, ds *lance.Dataset, req Request) (string, error) {
	return analyze(ctx, ds, req)
}
