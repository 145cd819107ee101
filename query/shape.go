package query

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/expr"
)

// shaper turns a batch of scanned (or taken) columns into the answer's
// columns: query_index, the output items, _distance, _rowid.
type shaper struct {
	schema *arrow.Schema
	qi     int // input column of query_index, -1: none in the output
	dist   int // input column of _distance, -1: none
	rowid  int // input column of _rowid, -1: none
	// rowIDFirst: _rowid before _distance (planned.rowIDFirst)
	rowIDFirst bool
	items      []shapeItem
}

type shapeItem struct {
	col   int // input column; -1: evaluate bound
	bound *expr.Bound
}

func (p *planned) newShaper(in *arrow.Schema, qi, dist int) (*shaper, error) {
	s := &shaper{schema: p.schema, qi: -1, dist: dist, rowid: -1, rowIDFirst: p.rowIDFirst}
	if p.knn != nil && len(p.knn.vectors) > 1 {
		s.qi = qi
	}
	if p.req.WithRowID && !p.selected(RowIDColumn) {
		for i, f := range in.Fields() {
			if f.Name == RowIDColumn {
				s.rowid = i
			}
		}
	}
	if p.selected(DistanceColumn) {
		s.dist = -1
	}
	for _, it := range p.out {
		if it.special == DistanceColumn {
			s.items = append(s.items, shapeItem{col: dist})
			continue
		}
		if it.expr == nil {
			s.items = append(s.items, shapeItem{col: in.FieldIndices(it.column)[0]})
			continue
		}
		b, err := expr.Bind(it.expr, in)
		if err != nil {
			return nil, err
		}
		s.items = append(s.items, shapeItem{col: -1, bound: b})
	}
	return s, nil
}

func (s *shaper) shape(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, 0, s.schema.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	keep := func(i int) {
		c := rec.Column(i)
		c.Retain()
		cols = append(cols, c)
	}
	if s.qi >= 0 {
		keep(s.qi)
	}
	for _, it := range s.items {
		if it.col >= 0 {
			keep(it.col)
			continue
		}
		c, err := it.bound.Eval(ctx, rec)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	if s.rowid >= 0 && s.rowIDFirst {
		keep(s.rowid)
	}
	if s.dist >= 0 {
		keep(s.dist)
	}
	if s.rowid >= 0 && !s.rowIDFirst {
		keep(s.rowid)
	}
	return array.NewRecordBatch(s.schema, cols, rec.NumRows()), nil
}

func int32Array(mem memory.Allocator, v []int32) arrow.Array {
	b := array.NewInt32Builder(mem)
	defer b.Release()
	b.AppendValues(v, nil)
	return b.NewArray()
}

func float32Array(mem memory.Allocator, v []float32) arrow.Array {
	b := array.NewFloat32Builder(mem)
	defer b.Release()
	b.AppendValues(v, nil)
	return b.NewArray()
}

// appendCols is rec with extra columns (name, array pairs) at its end.
func appendCols(rec arrow.RecordBatch, extra ...any) arrow.RecordBatch {
	fs := append([]arrow.Field{}, rec.Schema().Fields()...)
	cols := append([]arrow.Array{}, rec.Columns()...)
	for i := 0; i < len(extra); i += 2 {
		fs = append(fs, extra[i].(arrow.Field))
		cols = append(cols, extra[i+1].(arrow.Array))
	}
	return array.NewRecordBatch(arrow.NewSchema(fs, nil), cols, rec.NumRows())
}

// selectRuns keeps the row ranges runs of rec, in order.
func selectRuns(mem memory.Allocator, rec arrow.RecordBatch, runs [][2]int64) (arrow.RecordBatch, error) {
	if len(runs) == 1 {
		return rec.NewSlice(runs[0][0], runs[0][1]), nil
	}
	if len(runs) == 0 {
		return rec.NewSlice(0, 0), nil
	}
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var n int64
	for _, r := range runs {
		n += r[1] - r[0]
	}
	pieces := make([]arrow.Array, len(runs))
	for c := range cols {
		for i, r := range runs {
			pieces[i] = array.NewSlice(rec.Column(c), r[0], r[1])
		}
		var err error
		cols[c], err = array.Concatenate(pieces, mem)
		for _, p := range pieces {
			p.Release()
		}
		if err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(rec.Schema(), cols, n), nil
}

// Stages of a plan, for explain and analyze.
const (
	stLimit = iota
	stProject
	stTake
	stSort
	stKNN
	stFilter
	stIndexTake // the rows a scalar index selected, taken
	stIndex     // the scalar index search
	stScan
	nStages
)

// stage is one step of the plan with what it did (analyze).
type stage struct {
	name, detail string
	rows         atomic.Int64
	nanos        atomic.Int64
	used         bool
}

func (s *stage) add(rows int64, d time.Duration) {
	if s == nil {
		return
	}
	s.rows.Add(rows)
	s.nanos.Add(int64(d))
}

func (p *planned) stage(i int) *stage {
	if s := p.stages[i]; s != nil && s.used {
		return s
	}
	return nil
}

func now() time.Time                  { return time.Now() }
func since(t time.Time) time.Duration { return time.Since(t) }

// batchCtx is the context of the compute over one batch: the plan's
// allocator, and no cancellation for arrow's kernels (cancelled half-way
// they can leave buffers unreleased); the expression engine still stops
// between two nodes when ctx ends (expr.WithInterrupt): one expression of
// expr.MaxTerms over a batch is work enough to outlive a hung-up client.
func batchCtx(ctx context.Context, p *planned) context.Context {
	return expr.WithInterrupt(compute.WithAllocator(context.WithoutCancel(ctx), p.mem), ctx)
}
