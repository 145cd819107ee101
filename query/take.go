package query

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/expr"
	"github.com/lancecat/lancecat/lance"
)

// RowOffsetColumn is Lance's _rowoffset: a row's position among the live rows of the version,
// in fragment order (deleted rows take no position). The remote client's takeOffsets asks for
// it: a query of the columns and _rowoffset filtered by `_rowoffset IN (…)`.
const RowOffsetColumn = "_rowoffset"

// takeOffsets is the offsets of a takeOffsets query, ascending without repeats: req's filter
// is `_rowoffset IN (n, …)` or `_rowoffset = n` and nothing else. ok is false for any other
// request (a filter naming _rowoffset otherwise is refused by the planner as an unknown
// column).
func takeOffsets(req Request) (offs []uint64, ok bool, err error) {
	if !strings.Contains(req.Filter, RowOffsetColumn) || req.Vector != nil || req.FullText != nil {
		return nil, false, nil
	}
	e, err := expr.Parse(req.Filter)
	if err != nil {
		return nil, false, nil // the planner words the syntax error
	}
	isOffset := func(x expr.Expr) bool {
		c, ok := x.(*expr.Column)
		return ok && len(c.Path) == 1 && c.Path[0] == RowOffsetColumn
	}
	var lits []expr.Expr
	switch x := e.(type) {
	case *expr.InList:
		if x.Not || !isOffset(x.X) {
			return nil, false, nil
		}
		lits = x.List
	case *expr.Binary:
		if x.Op != "=" || !isOffset(x.L) {
			return nil, false, nil
		}
		lits = []expr.Expr{x.R}
	default:
		return nil, false, nil
	}
	for _, l := range lits {
		lit, ok := l.(*expr.Literal)
		if !ok || lit.Kind != expr.LitInt {
			return nil, true, nserr.InvalidInputf("_rowoffset is compared with integers, got %s", l)
		}
		n, err := strconv.ParseUint(lit.Text, 10, 64)
		if err != nil {
			return nil, true, nserr.InvalidInputf("_rowoffset %s: %v", lit.Text, err)
		}
		offs = append(offs, n)
	}
	slices.Sort(offs)
	return slices.Compact(offs), true, nil
}

// runTake answers a takeOffsets query: the rows at offs (ascending; offsets past the last row
// are no rows, as Lance's take answers them), with _rowoffset where req's columns name it.
// Each run of consecutive offsets in one fragment is one read of that fragment's rows.
func runTake(ctx context.Context, ds *lance.Dataset, req Request, offs []uint64) (array.RecordReader, error) {
	rest := req
	rest.Filter = ""
	at := -1
	if req.Columns != nil {
		at = slices.Index(req.Columns, RowOffsetColumn)
		rest.Columns = slices.DeleteFunc(slices.Clone(req.Columns), func(c string) bool { return c == RowOffsetColumn })
	}
	if len(req.OrderBy) > 0 {
		return nil, nserr.InvalidInputf("a take by _rowoffset has no order of its own to sort")
	}
	p, err := plan(ctx, ds, rest)
	if err != nil {
		return nil, err
	}
	if !p.windowable() {
		return nil, nserr.InvalidInputf("a take by _rowoffset needs every fragment's row count in the manifest")
	}
	tasks, starts := p.offsetTasks(offs)
	cols := tableOrder(p.full, p.outCols)
	sh, err := p.newShaper(p.scanSchema(cols), -1, -1)
	if err != nil {
		return nil, err
	}
	schema := p.schema
	if at >= 0 {
		fs := slices.Insert(slices.Clone(schema.Fields()), min(at, len(schema.Fields())),
			arrow.Field{Name: RowOffsetColumn, Type: arrow.PrimitiveTypes.Uint64})
		schema = arrow.NewSchema(fs, nil)
	}
	limit := int64(-1)
	if req.Limit > 0 {
		limit = req.Limit
	}
	return runOrdered(compute.WithAllocator(ctx, p.mem), schema, tasks, req.Offset, limit,
		func(ctx context.Context, t task, emit func(arrow.RecordBatch) error) error {
			next := starts[[2]uint64{t.frag, uint64(t.off)}]
			return p.readTask(ctx, t, cols, p.needRowID, false, func(rec arrow.RecordBatch) error {
				out, err := sh.shape(batchCtx(ctx, p), rec)
				if err != nil {
					return err
				}
				defer out.Release()
				if at < 0 {
					return emit(out)
				}
				b := array.NewUint64Builder(p.mem)
				defer b.Release()
				for range out.NumRows() {
					b.Append(next)
					next++
				}
				o := b.NewArray()
				defer o.Release()
				cs := slices.Insert(slices.Clone(out.Columns()), min(at, int(out.NumCols())), arrow.Array(o))
				withOffsets := array.NewRecordBatch(schema, cs, out.NumRows())
				defer withOffsets.Release()
				return emit(withOffsets)
			})
		}), nil
}

// offsetTasks cuts offs (ascending) into tasks, one per run of consecutive offsets within a
// fragment, and the offset of each task's first row, by its fragment and in-fragment offset.
func (p *planned) offsetTasks(offs []uint64) ([]task, map[[2]uint64]uint64) {
	var out []task
	starts := map[[2]uint64]uint64{}
	var base uint64 // offset of the fragment's first live row
	i := 0
	for _, f := range p.ver.Fragments() {
		live := f.LiveRows()
		for i < len(offs) && offs[i] < base+live {
			j := i + 1
			for j < len(offs) && offs[j] == offs[j-1]+1 && offs[j] < base+live {
				j++
			}
			t := task{frag: f.ID, off: int64(offs[i] - base), n: int64(j - i)}
			out = append(out, t)
			starts[[2]uint64{t.frag, uint64(t.off)}] = offs[i]
			i = j
		}
		base += live
	}
	return out, starts
}
