package query

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"golang.org/x/sync/errgroup"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/expr"
	"github.com/lancecat/lancecat/lance"
)

// knnPlan is a validated vector search.
type knnPlan struct {
	column  string
	dim     int
	elem    arrow.DataType
	metric  string
	k       int
	vectors [][]float32
	bytes   [][]byte  // hamming: the query vectors as uint8
	norms   []float32 // cosine: |q|
	lower   *float32
	upper   *float32
	fast    bool // VectorQuery.FastSearch
}

// isVector: a fixed-size list of floats or uint8 (Lance's vector column).
func isVector(t arrow.DataType) (*arrow.FixedSizeListType, bool) {
	fsl, ok := t.(*arrow.FixedSizeListType)
	if !ok {
		return nil, false
	}
	switch fsl.Elem().ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.UINT8:
		return fsl, true
	}
	return nil, false
}

func planKNN(full *arrow.Schema, req Request) (*knnPlan, error) {
	vq := req.Vector
	if len(vq.Vectors) == 0 {
		return nil, nserr.InvalidInputf("a vector search needs a query vector")
	}
	dim := len(vq.Vectors[0])
	for i, v := range vq.Vectors {
		if len(v) != dim {
			return nil, nserr.InvalidInputf("query vector %d has %d dimensions, query vector 0 has %d", i, len(v), dim)
		}
		if dim == 0 {
			return nil, nserr.InvalidInputf("query vector %d is empty", i)
		}
	}
	kp := &knnPlan{metric: strings.ToLower(vq.Metric), vectors: vq.Vectors, lower: vq.LowerBound, upper: vq.UpperBound, fast: vq.FastSearch}
	if kp.metric == "" {
		kp.metric = MetricL2
	}
	switch kp.metric {
	case MetricL2, MetricCosine, MetricDot, MetricHamming:
	case "euclidean":
		kp.metric = MetricL2
	default:
		return nil, nserr.InvalidInputf("unknown distance type %q (l2, cosine, dot or hamming)", vq.Metric)
	}
	var fsl *arrow.FixedSizeListType
	if vq.Column != "" {
		i := full.FieldIndices(vq.Column)
		if len(i) == 0 {
			return nil, nserr.InvalidInputf("the vector column %q does not exist in the table", vq.Column)
		}
		f := full.Field(i[0])
		var ok bool
		if fsl, ok = isVector(f.Type); !ok {
			return nil, nserr.InvalidInputf("column %q is %s, not a vector (a fixed-size list of floats or uint8)", vq.Column, f.Type)
		}
		kp.column = f.Name
	} else {
		var all, fit []string
		for _, f := range full.Fields() {
			if t, ok := isVector(f.Type); ok {
				all = append(all, f.Name)
				if int(t.Len()) == dim {
					fit = append(fit, f.Name)
				}
			}
		}
		switch {
		case len(all) == 0:
			return nil, nserr.InvalidInputf("the table has no vector column")
		case len(all) == 1:
			kp.column = all[0]
		case len(fit) == 1:
			kp.column = fit[0]
		default:
			return nil, nserr.InvalidInputf("more than one vector column %v: name the column to search", all)
		}
		fsl, _ = isVector(full.Field(full.FieldIndices(kp.column)[0]).Type)
	}
	kp.dim = int(fsl.Len())
	kp.elem = fsl.Elem()
	if dim != kp.dim {
		return nil, nserr.InvalidInputf("query vector of %d dimensions, column %q has %d", dim, kp.column, kp.dim)
	}
	if kp.metric == MetricHamming && kp.elem.ID() != arrow.UINT8 {
		return nil, nserr.InvalidInputf("hamming distance needs a uint8 vector column, %q is %s", kp.column, fsl)
	}
	if kp.elem.ID() == arrow.UINT8 && kp.metric != MetricHamming {
		return nil, nserr.InvalidInputf("column %q holds uint8 (binary) vectors: use the hamming distance", kp.column)
	}
	for _, v := range vq.Vectors {
		switch kp.metric {
		case MetricCosine:
			kp.norms = append(kp.norms, norm(v))
		case MetricHamming:
			b := make([]byte, len(v))
			for i, x := range v {
				if x < 0 || x > 255 || x != float32(math.Trunc(float64(x))) {
					return nil, nserr.InvalidInputf("a hamming query vector holds bytes (0..255), not %v", x)
				}
				b[i] = byte(x)
			}
			kp.bytes = append(kp.bytes, b)
		}
	}
	kp.k = vq.K
	if kp.k < 0 {
		return nil, nserr.InvalidInputf("k must not be negative, got %d", vq.K)
	}
	if kp.k == 0 {
		kp.k = DefaultK
		if req.Limit > 0 {
			kp.k = int(req.Limit)
		}
	}
	return kp, nil
}

func (kp *knnPlan) describe() string {
	s := fmt.Sprintf("column=%s metric=%s k=%d dim=%d", kp.column, kp.metric, kp.k, kp.dim)
	if len(kp.vectors) > 1 {
		s += fmt.Sprintf(" queries=%d", len(kp.vectors))
	}
	if kp.lower != nil || kp.upper != nil {
		lo, hi := "-inf", "+inf"
		if kp.lower != nil {
			lo = fmt.Sprint(*kp.lower)
		}
		if kp.upper != nil {
			hi = fmt.Sprint(*kp.upper)
		}
		s += fmt.Sprintf(" distance_range=[%s, %s)", lo, hi)
	}
	return s
}

// cand is a candidate row of a vector search.
type cand struct {
	d    float32
	addr uint64
}

func candLess(a, b cand) bool { return a.d < b.d || a.d == b.d && a.addr < b.addr }

// topK keeps the n best candidates: a max-heap on the worst kept.
type topK struct {
	n int
	h []cand
}

func (t *topK) Len() int           { return len(t.h) }
func (t *topK) Less(i, j int) bool { return candLess(t.h[j], t.h[i]) }
func (t *topK) Swap(i, j int)      { t.h[i], t.h[j] = t.h[j], t.h[i] }
func (t *topK) Push(x any)         { t.h = append(t.h, x.(cand)) }
func (t *topK) Pop() any           { x := t.h[len(t.h)-1]; t.h = t.h[:len(t.h)-1]; return x }

func (t *topK) offer(c cand) {
	if len(t.h) < t.n {
		heap.Push(t, c)
		return
	}
	if t.n > 0 && candLess(c, t.h[0]) {
		t.h[0] = c
		heap.Fix(t, 0)
	}
}

func (t *topK) sorted() []cand {
	out := slices.Clone(t.h)
	slices.SortFunc(out, func(a, b cand) int {
		if candLess(a, b) {
			return -1
		}
		if candLess(b, a) {
			return 1
		}
		return 0
	})
	return out
}

// runKNN: phase 1 scans the vector column (and the filter's columns when
// prefiltering) of every fragment in parallel, each task keeping its own
// top-(k+offset) per query vector in a bounded heap; the heaps merge; phase
// 2 takes the winning rows' output columns by address (late
// materialization), postfilters when asked, then cuts offset and k per
// query vector.
func (p *planned) runKNN(ctx context.Context) (array.RecordReader, error) {
	kp := p.knn
	pre := p.req.Prefilter && p.filterText != ""
	post := !p.req.Prefilter && p.filterText != ""
	keep := kp.k + int(p.req.Offset)
	cols := []string{kp.column}
	if pre {
		cols = tableOrder(p.full, cols, p.filterCols)
	}
	var scanFilter, residual *expr.Bound
	tasks := p.tasks(0, -1)
	if pre {
		// the prefilter's rows: an index's selection where one covers
		if err := p.resolveIndex(ctx); err != nil {
			return nil, err
		}
		var err error
		if scanFilter, residual, err = p.taskFilters(cols); err != nil {
			return nil, err
		}
		tasks = p.filterTasks()
	}
	if kp.fast {
		tasks = nil // fast_search: the index alone, or nothing without one
	} else if p.ann != nil {
		// the index searches the fragments it covers; flat the rest
		flat := tasks[:0:0]
		for _, t := range tasks {
			if !p.ann.isCovered(t.frag) {
				flat = append(flat, t)
			}
		}
		tasks = flat
	}
	vi := slices.Index(cols, kp.column)
	results := make([][]*topK, len(tasks))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers())
	filterSt, knnSt := p.stage(stFilter), p.stage(stKNN)
	for ti, t := range tasks {
		g.Go(func() error {
			heaps := make([]*topK, len(kp.vectors))
			for q := range heaps {
				heaps[q] = &topK{n: keep}
			}
			results[ti] = heaps
			var scratch []float32
			filter := filterFor(t, scanFilter, residual)
			return p.readFiltered(gctx, t, cols, true, filter, filterSt, func(rec arrow.RecordBatch) error {
				start := now()
				vec := rec.Column(vi).(*array.FixedSizeList)
				addrs := rec.Column(int(rec.NumCols()) - 1).(*array.Uint64).Values()
				var err error
				scratch, err = kp.scoreBatch(vec, addrs, heaps, scratch)
				knnSt.add(0, since(start))
				return err
			})
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if p.ann != nil {
		start := now()
		heaps, err := p.annSearch(ctx, keep, pre)
		if err != nil {
			return nil, err
		}
		results = append(results, heaps)
		knnSt.add(0, since(start))
	}
	// merge: per query, the best keep of every task's heap
	var addrs []uint64
	var dists []float32
	var qidx []int32
	for q := range kp.vectors {
		all := &topK{n: keep}
		for _, hs := range results {
			for _, c := range hs[q].h {
				all.offer(c)
			}
		}
		for _, c := range all.sorted() {
			addrs = append(addrs, c.addr)
			dists = append(dists, c.d)
			qidx = append(qidx, int32(q))
		}
	}
	knnSt.add(int64(len(addrs)), 0)
	takeCols := tableOrder(p.full, p.outCols, p.orderCols())
	if post {
		takeCols = tableOrder(p.full, p.outCols, p.filterCols, p.orderCols())
	}
	start := now()
	rec, err := p.ds.TakeRowAddresses(ctx, addrs, lance.TakeOptions{At: p.ver, Columns: takeCols, WithRowID: p.needRowID, Mem: p.mem})
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	p.stage(stTake).add(rec.NumRows(), since(start))
	mem := p.mem
	qa := int32Array(mem, qidx)
	defer qa.Release()
	da := float32Array(mem, dists)
	defer da.Release()
	// carry query_index and _distance along as columns through the
	// postfilter
	wide := appendCols(rec, arrow.Field{Name: "\x00qi", Type: arrow.PrimitiveTypes.Int32}, qa,
		arrow.Field{Name: "\x00d", Type: arrow.PrimitiveTypes.Float32}, da)
	defer wide.Release()
	if post {
		start := now()
		bound, err := expr.Compile(p.filterText, wide.Schema())
		if err != nil {
			return nil, err
		}
		f, err := bound.Filter(ctx, wide)
		if err != nil {
			return nil, err
		}
		defer f.Release()
		wide = f
		p.stage(stFilter).add(wide.NumRows(), since(start))
	}
	// offset and k per query vector (each query's rows are contiguous)
	qcol := wide.Column(int(wide.NumCols()) - 2).(*array.Int32)
	var runs [][2]int64
	for lo := 0; lo < qcol.Len(); {
		hi := lo
		for hi < qcol.Len() && qcol.Value(hi) == qcol.Value(lo) {
			hi++
		}
		a := min(hi, lo+int(p.req.Offset))
		b := min(hi, a+kp.k)
		if b > a {
			runs = append(runs, [2]int64{int64(a), int64(b)})
		}
		lo = hi
	}
	cut, err := selectRuns(mem, wide, runs)
	if err != nil {
		return nil, err
	}
	defer cut.Release()
	p.stage(stLimit).add(cut.NumRows(), 0)
	if len(p.order) > 0 {
		// order_by over the nearest rows: a sort of at most k rows per
		// query vector (ties keep the distance order)
		start := now()
		sorted, err := p.sortBatch(ctx, cut)
		if err != nil {
			return nil, err
		}
		defer sorted.Release()
		cut = sorted
		p.stage(stSort).add(cut.NumRows(), since(start))
	}
	n := int(cut.NumCols())
	sh, err := p.newShaper(cut.Schema(), n-2, n-1)
	if err != nil {
		return nil, err
	}
	start = now()
	out, err := sh.shape(compute.WithAllocator(ctx, mem), cut)
	if err != nil {
		return nil, err
	}
	p.stage(stProject).add(out.NumRows(), since(start))
	done := false
	return newGenReader(p.schema, func() (arrow.RecordBatch, error) {
		if done {
			return nil, nil
		}
		done = true
		out.Retain()
		return out, nil
	}, out.Release), nil
}

// sortBatch reorders the rows of rec by the plan's sort keys (stable).
func (p *planned) sortBatch(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	keys, err := p.bindKeys(rec.Schema())
	if err != nil {
		return nil, err
	}
	karr, err := evalKeys(batchCtx(ctx, p), keys, rec)
	if err != nil {
		return nil, err
	}
	defer releaseAll(karr)
	rows := make([]*sortRow, rec.NumRows())
	for r := range rows {
		row := &sortRow{keys: make([]keyVal, len(p.order)), addr: uint64(r)}
		for i, a := range karr {
			row.keys[i] = extractKey(a, p.order[i].kind, r)
		}
		rows[r] = row
	}
	slices.SortFunc(rows, p.cmpRows)
	b := array.NewInt64Builder(p.mem)
	defer b.Release()
	for _, r := range rows {
		b.Append(int64(r.addr))
	}
	idx := b.NewArray()
	defer idx.Release()
	ctx = compute.WithAllocator(ctx, p.mem)
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for c := range cols {
		var err error
		if cols[c], err = compute.TakeArray(ctx, rec.Column(c), idx); err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(rec.Schema(), cols, rec.NumRows()), nil
}

// scoreBatch offers every non-null vector of the batch to each query's
// heap (within the distance range).
func (kp *knnPlan) scoreBatch(vec *array.FixedSizeList, addrs []uint64, heaps []*topK, scratch []float32) ([]float32, error) {
	dim := kp.dim
	off := vec.Data().Offset()
	var f32 []float32
	var u8 []byte
	var f64 []float64
	var f16 *array.Float16
	switch vals := vec.ListValues().(type) {
	case *array.Float32:
		f32 = vals.Float32Values()
	case *array.Uint8:
		u8 = vals.Uint8Values()
	case *array.Float64:
		f64 = vals.Float64Values()
	case *array.Float16:
		f16 = vals
	default:
		return scratch, fmt.Errorf("query: vector values of %s", vals.DataType())
	}
	if cap(scratch) < dim {
		scratch = make([]float32, dim)
	}
	scratch = scratch[:dim]
	for r := 0; r < vec.Len(); r++ {
		if vec.IsNull(r) {
			continue
		}
		base := (off + r) * dim
		var y []float32
		var yb []byte
		switch {
		case f32 != nil:
			y = f32[base : base+dim]
		case u8 != nil:
			yb = u8[base : base+dim]
		case f64 != nil:
			for i := range dim {
				scratch[i] = float32(f64[base+i])
			}
			y = scratch
		default:
			for i := range dim {
				scratch[i] = f16.Value(base + i).Float32()
			}
			y = scratch
		}
		for q, x := range kp.vectors {
			var d float32
			switch kp.metric {
			case MetricL2:
				d = l2sq(x, y)
			case MetricDot:
				d = 1 - dotf(x, y)
			case MetricCosine:
				d = cosine(x, kp.norms[q], y)
			case MetricHamming:
				d = hamming(kp.bytes[q], yb)
			}
			if d != d { // NaN (a zero vector under cosine): no neighbour
				continue
			}
			if kp.lower != nil && d < *kp.lower || kp.upper != nil && d >= *kp.upper {
				continue
			}
			heaps[q].offer(cand{d: d, addr: addrs[r]})
		}
	}
	return scratch, nil
}
