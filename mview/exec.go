package mview

// Running a Plan: Exec takes the source's batches (already filtered by WHERE when the caller's
// scan did it) and answers the view's rows.

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/expr"
)

// canonKind is how a value is held while aggregated or compared.
type canonKind int

const (
	canonNone   canonKind = iota
	canonInt              // integers, dates, timestamps, durations: int64
	canonFloat            // float16/32/64: float64
	canonString           // utf8, large utf8
	canonBool
)

func canonOf(t arrow.DataType) canonKind {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64, arrow.DURATION:
		return canonInt
	case arrow.FLOAT32, arrow.FLOAT64:
		return canonFloat
	case arrow.STRING, arrow.LARGE_STRING:
		return canonString
	case arrow.BOOL:
		return canonBool
	}
	return canonNone
}

func floatAt(a arrow.Array, i int) float64 {
	switch a := a.(type) {
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	}
	return float64(expr.IntAt(a, i))
}

func stringAt(a arrow.Array, i int) string {
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	}
	return a.ValueStr(i)
}

// compareAt orders a[i] and b[j] of one canonical kind (neither null). Floats order as Lance
// does: NaN above every number.
func compareAt(k canonKind, a arrow.Array, i int, b arrow.Array, j int) int {
	switch k {
	case canonInt, canonBool:
		return cmp.Compare(expr.IntAt(a, i), expr.IntAt(b, j))
	case canonFloat:
		return compareFloat(floatAt(a, i), floatAt(b, j))
	case canonString:
		return cmp.Compare(stringAt(a, i), stringAt(b, j))
	}
	return cmp.Compare(a.ValueStr(i), b.ValueStr(j))
}

// compareFloat orders x and y as Lance (and Postgres) do: NaN above every number, NaNs equal.
// (cmp.Compare puts NaN below.) So max is NaN once a NaN is seen and min ignores NaN unless
// there is nothing else.
func compareFloat(x, y float64) int {
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	return cmp.Compare(x, y)
}

// acc is one aggregate's state in one group.
type acc struct {
	n        int64 // non-null values seen (count)
	sumI     int64
	sumF     float64
	best     arrow.Array // min/max: a one-row slice of the best value so far
	distinct map[string]struct{}
}

// group is one group: its key values (one-row slices) and its aggregates.
type group struct {
	keys []arrow.Array
	accs []acc
}

// executor runs a plan over batches.
type executor struct {
	p      *Plan
	mem    memory.Allocator
	groups map[string]*group
	order  []*group // first-seen order
	rows   []arrow.RecordBatch
}

func (p *Plan) newExecutor() *executor {
	return &executor{p: p, mem: memory.DefaultAllocator, groups: map[string]*group{}}
}

func (x *executor) release() {
	for _, r := range x.rows {
		r.Release()
	}
	x.rows = nil
	for _, g := range x.order {
		for _, k := range g.keys {
			k.Release()
		}
		for _, a := range g.accs {
			if a.best != nil {
				a.best.Release()
			}
		}
	}
	x.order, x.groups = nil, map[string]*group{}
}

// add runs the per-batch stage over rec (a batch of the source; filtered says WHERE was applied
// by the scan already).
func (x *executor) add(ctx context.Context, rec arrow.RecordBatch, filtered bool) error {
	p := x.p
	if p.where != nil && !filtered {
		f, err := p.where.Filter(ctx, rec)
		if err != nil {
			return exprErr(err)
		}
		defer f.Release()
		rec = f
	}
	if rec.NumRows() == 0 {
		return nil
	}
	if !p.agg {
		out, err := p.proj.Project(ctx, rec)
		if err != nil {
			return exprErr(err)
		}
		x.rows = append(x.rows, out)
		return nil
	}
	keys := make([]arrow.Array, len(p.groups))
	args := make([]arrow.Array, len(p.aggs))
	defer func() {
		for _, a := range append(keys, args...) {
			if a != nil {
				a.Release()
			}
		}
	}()
	var err error
	for i, g := range p.groups {
		if keys[i], err = g.Eval(ctx, rec); err != nil {
			return exprErr(err)
		}
	}
	for i, a := range p.aggs {
		if args[i], err = a.arg.Eval(ctx, rec); err != nil {
			return exprErr(err)
		}
	}
	var kb []byte
	for r := 0; r < int(rec.NumRows()); r++ {
		g, _ := x.groupOf(keys, r, &kb)
		for i, a := range p.aggs {
			x.accumulate(&g.accs[i], a, args[i], r)
		}
	}
	return nil
}

// groupOf answers the group of row r of keys, making it (in first-seen order) when new; kb is
// scratch for the group's key bytes.
func (x *executor) groupOf(keys []arrow.Array, r int, kb *[]byte) (*group, bool) {
	b := (*kb)[:0]
	for _, k := range keys {
		if k.IsNull(r) {
			b = append(b, 0)
			continue
		}
		s := k.ValueStr(r)
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	*kb = b
	g := x.groups[string(b)]
	if g != nil {
		return g, false
	}
	g = &group{keys: make([]arrow.Array, len(keys)), accs: make([]acc, len(x.p.aggs))}
	for i, k := range keys {
		g.keys[i] = array.NewSlice(k, int64(r), int64(r+1))
	}
	x.groups[string(b)] = g
	x.order = append(x.order, g)
	return g, true
}

func (x *executor) accumulate(s *acc, a aggSpec, arg arrow.Array, r int) {
	if arg.IsNull(r) {
		return
	}
	if a.distinct {
		if s.distinct == nil {
			s.distinct = map[string]struct{}{}
		}
		v := arg.ValueStr(r)
		if _, ok := s.distinct[v]; ok {
			return
		}
		s.distinct[v] = struct{}{}
	}
	s.n++
	switch a.fn {
	case "sum", "avg":
		if a.kind == canonFloat {
			s.sumF += floatAt(arg, r)
		} else {
			s.sumI += expr.IntAt(arg, r)
			s.sumF += float64(expr.IntAt(arg, r))
		}
	case "min", "max":
		better := s.best == nil
		if !better {
			c := compareAt(a.kind, arg, r, s.best, 0)
			better = (a.fn == "min" && c < 0) || (a.fn == "max" && c > 0)
		}
		if better {
			if s.best != nil {
				s.best.Release()
			}
			s.best = array.NewSlice(arg, int64(r), int64(r+1))
		}
	}
}

// finish runs the per-group and whole-answer stages and answers the view's rows as one record
// (the caller releases it).
func (x *executor) finish(ctx context.Context) (arrow.RecordBatch, error) {
	p := x.p
	var full arrow.RecordBatch
	var err error
	if !p.agg {
		full, err = concat(x.mem, p.proj.Schema(), x.rows)
	} else {
		full, err = x.groupsRecord(ctx)
	}
	if err != nil {
		return nil, err
	}
	defer full.Release()
	return p.orderAndLimit(ctx, full)
}

// groupsRecord is the per-group record (keys and aggregates) through HAVING and the items.
func (x *executor) groupsRecord(ctx context.Context) (arrow.RecordBatch, error) {
	p := x.p
	if len(p.groups) == 0 && len(x.order) == 0 {
		// A global aggregate over no rows is one row (count 0, the others null).
		x.order = append(x.order, &group{accs: make([]acc, len(p.aggs))})
	}
	cols := make([]arrow.Array, 0, p.aggIn.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for i := range p.groups {
		parts := make([]arrow.Array, len(x.order))
		for j, g := range x.order {
			parts[j] = g.keys[i]
		}
		c, err := concatArrays(x.mem, p.aggIn.Field(i).Type, parts)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	for i, a := range p.aggs {
		c, err := x.aggColumn(i, a)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	rec := array.NewRecordBatch(p.aggIn, cols, int64(len(x.order)))
	defer rec.Release()
	in := rec
	if p.having != nil {
		f, err := p.having.Filter(ctx, rec)
		if err != nil {
			return nil, exprErr(err)
		}
		defer f.Release()
		in = f
	}
	out, err := p.post.Project(ctx, in)
	if err != nil {
		return nil, exprErr(err)
	}
	return out, nil
}

func (x *executor) aggColumn(i int, a aggSpec) (arrow.Array, error) {
	switch a.fn {
	case "min", "max":
		parts := make([]arrow.Array, len(x.order))
		for j, g := range x.order {
			if g.accs[i].best == nil {
				nulls := array.MakeArrayOfNull(x.mem, a.out, 1)
				defer nulls.Release()
				parts[j] = nulls
			} else {
				parts[j] = g.accs[i].best
			}
		}
		return concatArrays(x.mem, a.out, parts)
	case "count":
		b := array.NewInt64Builder(x.mem)
		defer b.Release()
		for _, g := range x.order {
			b.Append(g.accs[i].n)
		}
		return b.NewArray(), nil
	case "avg":
		b := array.NewFloat64Builder(x.mem)
		defer b.Release()
		for _, g := range x.order {
			if s := g.accs[i]; s.n == 0 {
				b.AppendNull()
			} else {
				b.Append(s.sumF / float64(s.n))
			}
		}
		return b.NewArray(), nil
	case "sum":
		if a.kind == canonFloat {
			b := array.NewFloat64Builder(x.mem)
			defer b.Release()
			for _, g := range x.order {
				if s := g.accs[i]; s.n == 0 {
					b.AppendNull()
				} else {
					b.Append(s.sumF)
				}
			}
			return b.NewArray(), nil
		}
		b := array.NewInt64Builder(x.mem)
		defer b.Release()
		for _, g := range x.order {
			if s := g.accs[i]; s.n == 0 {
				b.AppendNull()
			} else {
				b.Append(s.sumI)
			}
		}
		return b.NewArray(), nil
	}
	return nil, fmt.Errorf("mview: unknown aggregate %s", a.fn)
}

// orderAndLimit sorts full by the plan's keys, applies OFFSET and LIMIT and drops the hidden
// order columns.
func (p *Plan) orderAndLimit(ctx context.Context, full arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := int(full.NumRows())
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	if len(p.order) > 0 {
		kinds := make([]canonKind, len(p.order))
		for i, o := range p.order {
			kinds[i] = canonOf(full.Column(o.col).DataType())
			if kinds[i] == canonNone {
				return nil, nserr.InvalidInputf("invalid source_query: ORDER BY over %s is not supported", full.Column(o.col).DataType())
			}
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			for i, o := range p.order {
				c := full.Column(o.col)
				an, bn := c.IsNull(a), c.IsNull(b)
				var r int
				switch {
				case an && bn:
					r = 0
				case an || bn:
					r = 1
					if an == o.nullsFirst {
						r = -1
					}
				default:
					r = compareAt(kinds[i], c, a, c, b)
					if o.desc {
						r = -r
					}
				}
				if r != 0 {
					return r
				}
			}
			return 0
		})
	}
	lo := min(int(p.Query.Offset), n)
	hi := n
	if p.Query.Limit != nil && *p.Query.Limit < int64(hi-lo) {
		hi = lo + int(*p.Query.Limit)
	}
	idx = idx[lo:hi]
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	defer ib.Release()
	for _, i := range idx {
		ib.Append(int64(i))
	}
	ids := ib.NewArray()
	defer ids.Release()
	cols := make([]arrow.Array, p.visible)
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range cols {
		c, err := compute.TakeArray(ctx, full.Column(i), ids)
		if err != nil {
			return nil, fmt.Errorf("mview: take: %w", err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(p.schema, cols, int64(len(idx))), nil
}

func concatArrays(mem memory.Allocator, t arrow.DataType, parts []arrow.Array) (arrow.Array, error) {
	if len(parts) == 0 {
		return array.MakeArrayOfNull(mem, t, 0), nil
	}
	return array.Concatenate(parts, mem)
}

// concat makes one record of recs (of schema).
func concat(mem memory.Allocator, schema *arrow.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	rows := int64(0)
	for _, r := range recs {
		rows += r.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := concatArrays(mem, schema.Field(i).Type, parts)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return array.NewRecordBatch(schema, cols, rows), nil
}

// Batches is what a plan reads: a scan of the source (lance.Scanner, a query's reader).
type Batches interface {
	Next() bool
	RecordBatch() arrow.RecordBatch
	Err() error
}

// Run runs the plan over src (filtered: the scan applied WHERE already) and answers the view's
// rows as one record; the caller releases it.
func (p *Plan) Run(ctx context.Context, src Batches, filtered bool) (arrow.RecordBatch, error) {
	rows, _, err := p.RunState(ctx, src, filtered, nil, false)
	return rows, err
}

// RunState runs the plan over src after seed (a group state RunState answered before for the
// rows before src; nil: none) and answers the view's rows and, when withState (an aggregate
// plan only), the group state after src: the groups' keys and accumulators before HAVING, so a
// later run over further rows continues exactly where this one stopped. Rows are accumulated
// in the order they come, so continuing from a state gives the same values (bit for bit, float
// sums included) and the same group order as one run over all the rows. The caller releases
// both records.
func (p *Plan) RunState(ctx context.Context, src Batches, filtered bool, seed arrow.RecordBatch, withState bool) (rows, state arrow.RecordBatch, err error) {
	x := p.newExecutor()
	defer x.release()
	if seed != nil {
		if err := x.seed(seed); err != nil {
			return nil, nil, err
		}
	}
	if src != nil {
		for src.Next() {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			if err := x.add(ctx, src.RecordBatch(), filtered); err != nil {
				return nil, nil, err
			}
		}
		if err := src.Err(); err != nil {
			return nil, nil, err
		}
	}
	if withState {
		if state, err = x.state(); err != nil {
			return nil, nil, err
		}
	}
	rows, err = x.finish(ctx)
	if err != nil {
		if state != nil {
			state.Release()
		}
		return nil, nil, err
	}
	return rows, state, nil
}
