package query

// Vector indices serving nearest-neighbour searches, as Lance serves
// them: the column's index (IVF_FLAT, IVF_PQ) searches the fragments it
// covers (nprobes partitions; k*refine_factor candidates re-ranked with
// exact distances read from the table when refine_factor is set), the
// fragments it does not cover are searched flat, and the two candidate
// lists merge by distance. Rows deleted since the build are dropped; a
// prefilter restricts the index's candidates to the rows the filter
// keeps (the prefilter's row set, through the scalar indices where they
// serve it); a postfilter runs on the nearest rows as without an index.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"golang.org/x/sync/errgroup"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
)

// DefaultNProbes is how many partitions a vector search probes when the
// request names none (Lance's default minimum_nprobes).
const DefaultNProbes = index.DefaultNProbes

// annPlan is a vector index serving a kNN.
type annPlan struct {
	name    string
	kind    index.VectorKind
	metric  index.Metric
	readers []index.VectorReader
	covered []uint64 // fragments the index covers, manifest order
	nprobes int
	maxProb int // VectorQuery.MaxNProbes
	refine  int
	ef      int          // VectorQuery.Ef (HNSW)
	hits    atomic.Int64 // candidates the index returned (analyze)
}

// planANN picks the column's vector index unless the request bypasses
// it, the index cannot be read (ErrUnsupported), or the request names a
// distance type other than the index's (searched flat, exactly). A
// request without a distance type takes the index's, as Lance does.
func (p *planned) planANN(ctx context.Context) error {
	kp, vq := p.knn, p.req.Vector
	if vq.BypassVectorIndex || kp.metric == MetricHamming {
		return nil
	}
	if vq.NProbes < 0 || vq.MaxNProbes < 0 || vq.RefineFactor < 0 || vq.Ef < 0 {
		return nserr.InvalidInputf("nprobes, maximum_nprobes, refine_factor and ef must not be negative")
	}
	name, segs, err := tableindex.VectorIndexFor(p.ver, kp.column)
	if err != nil {
		if errors.Is(err, index.ErrUnsupported) || errors.Is(err, lance.ErrIndexNotFound) {
			return nil
		}
		return err
	}
	if name == "" || len(segs) == 0 {
		return nil
	}
	ap := &annPlan{name: name, nprobes: vq.NProbes, maxProb: vq.MaxNProbes, refine: vq.RefineFactor, ef: vq.Ef}
	fail := func(err error) error {
		for _, r := range ap.readers {
			r.Close()
		}
		if errors.Is(err, index.ErrUnsupported) || errors.Is(err, lance.ErrUnsupportedFeature) {
			return nil // an index lancecat cannot read: flat
		}
		return err
	}
	for _, seg := range segs {
		r, err := tableindex.OpenVectorIndex(ctx, p.ds, p.ver, seg)
		if err != nil {
			return fail(err)
		}
		ap.readers = append(ap.readers, r)
	}
	r0 := ap.readers[0]
	ap.kind, ap.metric = r0.Kind(), r0.Metric()
	if vq.Metric != "" && string(ap.metric) != kp.metric || r0.Dim() != kp.dim {
		return fail(nil)
	}
	if ap.covered, err = tableindex.IndexCoverage(p.ver, name); err != nil {
		return fail(err)
	}
	kp.metric = string(ap.metric)
	kp.norms = nil
	if kp.metric == MetricCosine {
		for _, v := range kp.vectors {
			kp.norms = append(kp.norms, norm(v))
		}
	}
	p.ann = ap
	return nil
}

// close releases the index readers.
func (ap *annPlan) close() {
	if ap == nil {
		return
	}
	for _, r := range ap.readers {
		r.Close()
	}
	ap.readers = nil
}

func (ap *annPlan) isCovered(frag uint64) bool {
	for _, f := range ap.covered {
		if f == frag {
			return true
		}
	}
	return false
}

func (ap *annPlan) describe(kp *knnPlan) string {
	s := fmt.Sprintf("ANN index=%s(%s) %s", ap.name, ap.kind, kp.describe())
	if ap.nprobes > 0 {
		s += fmt.Sprintf(" nprobes=%d", ap.nprobes)
	}
	eff := ap.nprobes
	if eff <= 0 {
		eff = index.DefaultNProbes
	}
	switch {
	case ap.maxProb >= AllPartitions:
		s += " maximum_nprobes=all"
	case ap.maxProb > eff:
		s += fmt.Sprintf(" maximum_nprobes=%d", ap.maxProb)
	}
	if ap.refine > 0 {
		s += fmt.Sprintf(" refine_factor=%d", ap.refine)
	}
	if ap.ef > 0 && ap.kind != index.IVFFlat && ap.kind != index.IVFPQ && ap.kind != index.IVFSQ {
		s += fmt.Sprintf(" ef=%d", ap.ef)
	}
	return s + fmt.Sprintf(" fragments=%d; flat over the fragments the index does not cover", len(ap.covered))
}

// annSearch runs the index part of a kNN: per query vector, the best keep
// candidates of the covered fragments (exact distances when refining).
// pre: the filter prefilters (allowed rows only).
func (p *planned) annSearch(ctx context.Context, keep int, pre bool) ([]*topK, error) {
	ap, kp := p.ann, p.knn
	res, err := tableindex.NewRowResolver(ctx, p.ds, p.ver, ap.covered)
	if err != nil {
		return nil, err
	}
	var allowed *roaring64.Bitmap
	if pre {
		if allowed, err = p.allowedRows(ctx, ap.covered); err != nil {
			return nil, err
		}
	}
	allow := func(id uint64) bool {
		a, ok := res.Address(id)
		return ok && (allowed == nil || allowed.Contains(a))
	}
	// Lance reports exact distances for every candidate of a quantized
	// index (seen with both SDKs: IVF_PQ answers carry the flat search's
	// distances, without a refine_factor): its candidates are re-ranked
	// with the vectors read from the table, refine_factor 1 by default.
	// With fast_search it does not (measured with both SDKs: IVF_PQ answers carry the PQ
	// distances): no read of the table at all.
	refine := ap.refine
	if refine == 0 && ap.kind != index.IVFFlat && !kp.fast {
		refine = 1
	}
	n := keep
	if refine > 0 {
		n = keep * refine
	}
	out := make([]*topK, len(kp.vectors))
	for q, v := range kp.vectors {
		cands := &topK{n: n}
		for _, r := range ap.readers {
			hits, err := r.Search(ctx, index.VectorSearch{Query: v, K: n, NProbes: ap.nprobes, MaxNProbes: ap.maxProb, Ef: ap.ef, Allow: allow})
			if err != nil {
				return nil, fmt.Errorf("query: vector index %q: %w", ap.name, err)
			}
			ap.hits.Add(int64(len(hits)))
			for _, h := range hits {
				a, ok := res.Address(h.RowID)
				if !ok || allowed != nil && !allowed.Contains(a) {
					continue
				}
				cands.offer(cand{d: h.Distance, addr: a})
			}
		}
		heap := &topK{n: keep}
		out[q] = heap
		if refine == 0 {
			for _, c := range cands.sorted() {
				if kp.lower != nil && c.d < *kp.lower || kp.upper != nil && c.d >= *kp.upper {
					continue
				}
				heap.offer(c)
			}
			continue
		}
		// refine: the candidates' exact distances from the vectors in the
		// table
		sorted := cands.sorted()
		if len(sorted) == 0 {
			continue
		}
		addrs := make([]uint64, len(sorted))
		for i, c := range sorted {
			addrs[i] = c.addr
		}
		rec, err := p.ds.TakeRowAddresses(ctx, addrs, lance.TakeOptions{At: p.ver, Columns: []string{kp.column}, Mem: p.mem})
		if err != nil {
			return nil, err
		}
		one := *kp
		one.vectors = kp.vectors[q : q+1]
		if kp.norms != nil {
			one.norms = kp.norms[q : q+1]
		}
		_, err = one.scoreBatch(rec.Column(0).(*array.FixedSizeList), addrs, []*topK{heap}, nil)
		rec.Release()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// allowedRows is the prefilter's row set over the fragments frags: the
// live rows the filter keeps, through the scalar indices where they
// serve it.
func (p *planned) allowedRows(ctx context.Context, frags []uint64) (*roaring64.Bitmap, error) {
	if err := p.resolveIndex(ctx); err != nil {
		return nil, err
	}
	cols := tableOrder(p.full, p.filterCols)
	scanFilter, residual, err := p.taskFilters(cols)
	if err != nil {
		return nil, err
	}
	want := map[uint64]bool{}
	for _, f := range frags {
		want[f] = true
	}
	out := roaring64.New()
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers())
	for _, t := range p.filterTasks() {
		if !want[t.frag] {
			continue
		}
		filter := filterFor(t, scanFilter, residual)
		if filter == nil && t.addrs != nil {
			mu.Lock()
			out.AddMany(t.addrs)
			mu.Unlock()
			continue
		}
		g.Go(func() error {
			return p.readFiltered(gctx, t, cols, true, filter, nil, func(rec arrow.RecordBatch) error {
				addrs := rec.Column(int(rec.NumCols()) - 1).(*array.Uint64).Values()
				mu.Lock()
				out.AddMany(addrs)
				mu.Unlock()
				return nil
			})
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	p.stage(stFilter).add(int64(out.GetCardinality()), 0)
	return out, nil
}
