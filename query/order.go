package query

import (
	"cmp"
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

// orderKey is a validated sort key: a field path (top-level or nested
// a.b) and the top-level column it reads.
type orderKey struct {
	OrderBy
	path expr.Expr
	top  string
	kind keyKind
}

type keyKind uint8

const (
	kInt keyKind = iota
	kUint
	kFloat
	kString
)

func keyKindOf(t arrow.DataType) (keyKind, bool) {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DATE32, arrow.DATE64,
		arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64, arrow.DURATION, arrow.BOOL:
		return kInt, true
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return kUint, true
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return kFloat, true
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY, arrow.STRING_VIEW, arrow.BINARY_VIEW:
		return kString, true
	}
	return 0, false
}

// planOrder resolves order_by as the spec says: a missing field is
// TableColumnNotFound, a path that is not a field or a type that does not
// sort is InvalidInput.
func planOrder(full *arrow.Schema, obs []OrderBy) ([]orderKey, error) {
	var out []orderKey
	for _, ob := range obs {
		if strings.TrimSpace(ob.Column) == "" {
			return nil, nserr.InvalidInputf("order_by: a column name is required")
		}
		e, err := expr.Parse(ob.Column)
		if err != nil {
			return nil, nserr.InvalidInputf("order_by: %q is not a field path: %v", ob.Column, err)
		}
		c, ok := e.(*expr.Column)
		if !ok {
			return nil, nserr.InvalidInputf("order_by: %q is not a field path", ob.Column)
		}
		if findField(full, c.Path[0]) < 0 {
			return nil, nserr.TableColumnNotFoundf("order_by: no column %q in the table", ob.Column)
		}
		b, err := expr.Bind(e, full)
		if err != nil {
			return nil, nserr.TableColumnNotFoundf("order_by: %v", err)
		}
		k, ok := keyKindOf(b.Type())
		if !ok {
			return nil, nserr.InvalidInputf("order_by: column %q is %s, which does not sort", ob.Column, b.Type())
		}
		out = append(out, orderKey{OrderBy: ob, path: e, top: full.Field(findField(full, c.Path[0])).Name, kind: k})
	}
	return out, nil
}

// orderCols are the top-level columns the sort keys read.
func (p *planned) orderCols() []string {
	var out []string
	for _, k := range p.order {
		out = append(out, k.top)
	}
	return out
}

// bindKeys binds the sort keys against the schema of a batch.
func (p *planned) bindKeys(schema *arrow.Schema) ([]*expr.Bound, error) {
	out := make([]*expr.Bound, len(p.order))
	for i, k := range p.order {
		b, err := expr.Bind(k.path, schema)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// evalKeys evaluates the sort keys over rec; release the arrays.
func evalKeys(ctx context.Context, keys []*expr.Bound, rec arrow.RecordBatch) ([]arrow.Array, error) {
	out := make([]arrow.Array, 0, len(keys))
	for _, k := range keys {
		a, err := k.Eval(ctx, rec)
		if err != nil {
			releaseAll(out)
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func releaseAll(as []arrow.Array) {
	for _, a := range as {
		a.Release()
	}
}

func describeOrder(keys []orderKey) string {
	var parts []string
	for _, k := range keys {
		s := k.Column + " ASC"
		if k.Descending {
			s = k.Column + " DESC"
		}
		if k.NullsFirst {
			s += " NULLS FIRST"
		} else {
			s += " NULLS LAST"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// keyVal is one sort key of one row.
type keyVal struct {
	null bool
	i    int64
	u    uint64
	f    float64
	s    string
}

// sortRow is a row's sort keys and address.
type sortRow struct {
	keys []keyVal
	addr uint64
}

func (p *planned) cmpRows(a, b *sortRow) int {
	for i, k := range p.order {
		x, y := a.keys[i], b.keys[i]
		if x.null || y.null {
			if x.null && y.null {
				continue
			}
			if x.null == k.NullsFirst {
				return -1
			}
			return 1
		}
		var c int
		switch k.kind {
		case kInt:
			c = cmp.Compare(x.i, y.i)
		case kUint:
			c = cmp.Compare(x.u, y.u)
		case kFloat:
			c = cmpFloat(x.f, y.f)
		case kString:
			c = strings.Compare(x.s, y.s)
		}
		if c != 0 {
			if k.Descending {
				return -c
			}
			return c
		}
	}
	return cmp.Compare(a.addr, b.addr)
}

// cmpFloat is the IEEE 754 total order (-NaN < -Inf < … < -0 < +0 < … <
// +Inf < +NaN), as the spec's order_by asks.
func cmpFloat(a, b float64) int {
	return cmp.Compare(totalKey(a), totalKey(b))
}

func totalKey(f float64) int64 {
	k := int64(math.Float64bits(f))
	if k < 0 {
		k ^= math.MaxInt64
	}
	return k
}

// extractKeys reads row r of a key column.
func extractKey(col arrow.Array, kind keyKind, r int) keyVal {
	if col.IsNull(r) {
		return keyVal{null: true}
	}
	switch c := col.(type) {
	case *array.Int8:
		return keyVal{i: int64(c.Value(r))}
	case *array.Int16:
		return keyVal{i: int64(c.Value(r))}
	case *array.Int32:
		return keyVal{i: int64(c.Value(r))}
	case *array.Int64:
		return keyVal{i: c.Value(r)}
	case *array.Date32:
		return keyVal{i: int64(c.Value(r))}
	case *array.Date64:
		return keyVal{i: int64(c.Value(r))}
	case *array.Timestamp:
		return keyVal{i: int64(c.Value(r))}
	case *array.Time32:
		return keyVal{i: int64(c.Value(r))}
	case *array.Time64:
		return keyVal{i: int64(c.Value(r))}
	case *array.Duration:
		return keyVal{i: int64(c.Value(r))}
	case *array.Boolean:
		if c.Value(r) {
			return keyVal{i: 1}
		}
		return keyVal{}
	case *array.Uint8:
		return keyVal{u: uint64(c.Value(r))}
	case *array.Uint16:
		return keyVal{u: uint64(c.Value(r))}
	case *array.Uint32:
		return keyVal{u: uint64(c.Value(r))}
	case *array.Uint64:
		return keyVal{u: c.Value(r)}
	case *array.Float16:
		return keyVal{f: float64(c.Value(r).Float32())}
	case *array.Float32:
		return keyVal{f: float64(c.Value(r))}
	case *array.Float64:
		return keyVal{f: c.Value(r)}
	case *array.String:
		return keyVal{s: c.Value(r)}
	case *array.LargeString:
		return keyVal{s: c.Value(r)}
	case *array.Binary:
		return keyVal{s: string(c.Value(r))}
	case *array.LargeBinary:
		return keyVal{s: string(c.Value(r))}
	case *array.StringView:
		return keyVal{s: c.Value(r)}
	case *array.BinaryView:
		return keyVal{s: string(c.Value(r))}
	}
	panic(fmt.Sprintf("query: sort key of %s", col.DataType()))
}

// rowHeap keeps the n first rows in sort order: a max-heap on the last.
type rowHeap struct {
	p    *planned
	n    int
	rows []*sortRow
}

func (h *rowHeap) Len() int           { return len(h.rows) }
func (h *rowHeap) Less(i, j int) bool { return h.p.cmpRows(h.rows[i], h.rows[j]) > 0 }
func (h *rowHeap) Swap(i, j int)      { h.rows[i], h.rows[j] = h.rows[j], h.rows[i] }
func (h *rowHeap) Push(x any)         { h.rows = append(h.rows, x.(*sortRow)) }
func (h *rowHeap) Pop() any {
	x := h.rows[len(h.rows)-1]
	h.rows = h.rows[:len(h.rows)-1]
	return x
}

// offer adds r; false when r did not make it (its slot can be reused).
func (h *rowHeap) offer(r *sortRow) bool {
	if h.n < 0 || len(h.rows) < h.n {
		if h.n < 0 {
			h.rows = append(h.rows, r)
		} else {
			heap.Push(h, r)
		}
		return true
	}
	if h.n > 0 && h.p.cmpRows(r, h.rows[0]) < 0 {
		h.rows[0] = r
		heap.Fix(h, 0)
		return true
	}
	return false
}

// takeChunk is how many rows phase 2 of a sort takes at a time.
const takeChunk = 8192

// runOrder: phase 1 scans the sort keys (and the filter's columns) in
// parallel; with a limit each task keeps its first offset+limit rows in a
// bounded heap (top-k), without one every key is kept; the rows are merged
// in order. Phase 2 takes the output columns of the ordered rows by
// address, a chunk at a time, streaming.
func (p *planned) runOrder(ctx context.Context) (array.RecordReader, error) {
	cols := tableOrder(p.full, p.orderCols(), p.filterCols)
	if err := p.resolveIndex(ctx); err != nil {
		return nil, err
	}
	scanFilter, residual, err := p.taskFilters(cols)
	if err != nil {
		return nil, err
	}
	keys, err := p.bindKeys(p.scanSchema(cols))
	if err != nil {
		return nil, err
	}
	n := -1
	if p.req.Limit > 0 {
		n = int(p.req.Offset + p.req.Limit)
	}
	tasks := p.filterTasks()
	results := make([]*rowHeap, len(tasks))
	g, gctx := errgroup.WithContext(compute.WithAllocator(ctx, p.mem))
	g.SetLimit(workers())
	filterSt, sortSt := p.stage(stFilter), p.stage(stSort)
	for ti, t := range tasks {
		g.Go(func() error {
			h := &rowHeap{p: p, n: n}
			results[ti] = h
			var spare *sortRow
			filter := filterFor(t, scanFilter, residual)
			return p.readFiltered(gctx, t, cols, true, filter, filterSt, func(rec arrow.RecordBatch) error {
				start := now()
				addrs := rec.Column(int(rec.NumCols()) - 1).(*array.Uint64)
				karr, err := evalKeys(batchCtx(gctx, p), keys, rec)
				if err != nil {
					return err
				}
				defer releaseAll(karr)
				for r := 0; r < int(rec.NumRows()); r++ {
					row := spare
					if row == nil {
						row = &sortRow{keys: make([]keyVal, len(keys))}
					}
					for i, a := range karr {
						row.keys[i] = extractKey(a, p.order[i].kind, r)
					}
					row.addr = addrs.Value(r)
					if h.offer(row) {
						spare = nil
					} else {
						spare = row
					}
				}
				sortSt.add(0, since(start))
				return nil
			})
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	start := now()
	var all []*sortRow
	for _, h := range results {
		all = append(all, h.rows...)
	}
	slices.SortFunc(all, p.cmpRows)
	off := min(len(all), int(p.req.Offset))
	all = all[off:]
	if p.req.Limit > 0 && int64(len(all)) > p.req.Limit {
		all = all[:p.req.Limit]
	}
	p.stage(stSort).add(int64(len(all)), since(start))
	p.stage(stLimit).add(int64(len(all)), 0)
	var sh *shaper
	pos := 0
	return newGenReader(p.schema, func() (arrow.RecordBatch, error) {
		if pos >= len(all) {
			return nil, nil
		}
		end := min(len(all), pos+takeChunk)
		addrs := make([]uint64, 0, end-pos)
		for _, r := range all[pos:end] {
			addrs = append(addrs, r.addr)
		}
		pos = end
		start := now()
		rec, err := p.ds.TakeRowAddresses(ctx, addrs, lance.TakeOptions{At: p.ver, Columns: p.outCols, WithRowID: p.needRowID, Mem: p.mem})
		if err != nil {
			return nil, err
		}
		defer rec.Release()
		p.stage(stTake).add(rec.NumRows(), since(start))
		if sh == nil {
			if sh, err = p.newShaper(rec.Schema(), -1, -1); err != nil {
				return nil, err
			}
		}
		start = now()
		out, err := sh.shape(compute.WithAllocator(ctx, p.mem), rec)
		p.stage(stProject).add(int64(len(addrs)), since(start))
		return out, err
	}, nil), nil
}
