package dml

import (
	"context"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"

	"github.com/lancecat/lancecat/expr"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// predicate is a parsed and bound WHERE clause; nil matches every row.
type predicate struct {
	bound *expr.Bound
	cols  []string // top-level columns it reads
	src   string
	expr  expr.Expr
}

// compilePredicate parses and binds src against schema: a malformed
// predicate, an unknown column or a non-boolean expression is InvalidInput.
func compilePredicate(src string, schema *arrow.Schema) (*predicate, error) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	e, err := expr.Parse(src)
	if err != nil {
		return nil, err
	}
	b, err := expr.Bind(e, schema)
	if err != nil {
		return nil, err
	}
	if b.Type().ID() != arrow.BOOL && b.Type().ID() != arrow.NULL {
		return nil, invalid("the predicate %q is %s, not a boolean expression", src, b.Type())
	}
	return &predicate{bound: b, cols: columnsOf(e, schema), src: src, expr: e}, nil
}

// forColumns rebinds p to a scan of only its own columns (in schema order).
func (p *predicate) forColumns(schema *arrow.Schema) (*predicate, error) {
	if p == nil {
		return nil, nil
	}
	var fields []arrow.Field
	for _, c := range p.cols {
		fields = append(fields, schema.Field(schema.FieldIndices(c)[0]))
	}
	return p.bindTo(arrow.NewSchema(fields, nil))
}

// bindTo rebinds p to batches of schema (which has p's columns).
func (p *predicate) bindTo(schema *arrow.Schema) (*predicate, error) {
	b, err := expr.Bind(p.expr, schema)
	if err != nil {
		return nil, err
	}
	return &predicate{bound: b, cols: p.cols, src: p.src, expr: p.expr}, nil
}

// columnsOf lists the top-level columns of schema that e references, in
// schema order.
func columnsOf(e expr.Expr, schema *arrow.Schema) []string {
	seen := map[string]bool{}
	expr.VisitColumns(e, func(c *expr.Column) { seen[strings.ToLower(c.Path[0])] = true })
	cols := []string{}
	for _, f := range schema.Fields() {
		if seen[strings.ToLower(f.Name)] {
			cols = append(cols, f.Name)
		}
	}
	return cols
}

// mask evaluates p over rec: true where the row matches (NULL does not).
func (p *predicate) mask(ctx context.Context, rec arrow.RecordBatch) ([]bool, error) {
	out := make([]bool, rec.NumRows())
	if p == nil {
		for i := range out {
			out[i] = true
		}
		return out, nil
	}
	a, err := p.bound.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	b, ok := a.(*array.Boolean)
	if !ok {
		return out, nil // NULL literal: nothing matches
	}
	for i := range out {
		out[i] = b.IsValid(i) && b.Value(i)
	}
	return out, nil
}

// readFragments are the fragments of ver by id (the rows a write finds
// are offsets in these).
func readFragments(ver *lance.Version) map[uint64]*tablepb.DataFragment {
	out := map[uint64]*tablepb.DataFragment{}
	for _, f := range ver.Manifest().GetFragments() {
		out[f.GetId()] = f
	}
	return out
}

// addRow records the row at address addr.
func addRow(rows lance.RowDeletes, addr uint64) {
	frag, off := lance.SplitRowAddress(addr)
	rows[frag] = append(rows[frag], off)
}

// rowAddresses is the _rowaddr column of rec (the last one).
func rowAddresses(rec arrow.RecordBatch) *array.Uint64 {
	return rec.Column(int(rec.NumCols()) - 1).(*array.Uint64)
}

// dropLast is rec without the columns a scan adds after schema's
// (_rowid, _rowaddr).
func dropLast(rec arrow.RecordBatch, schema *arrow.Schema) arrow.RecordBatch {
	cols := slices.Clone(rec.Columns()[:schema.NumFields()])
	return array.NewRecordBatch(schema, cols, rec.NumRows())
}

// castTo casts a to t (exactly: an overflow or a value that does not
// convert is an error), or returns a retained a when it already is t.
func castTo(ctx context.Context, a arrow.Array, t arrow.DataType, column string) (arrow.Array, error) {
	if arrow.TypeEqual(a.DataType(), t) {
		a.Retain()
		return a, nil
	}
	out, err := compute.CastArray(ctx, a, compute.SafeCastOptions(t))
	if err != nil {
		return nil, invalid("column %q: cannot store a %s value as %s: %v", column, a.DataType(), t, err)
	}
	return out, nil
}

// sliceStream is a RecordStream over batches held in memory.
type sliceStream struct {
	schema *arrow.Schema
	recs   []arrow.RecordBatch
	i      int
}

func (s *sliceStream) Schema() *arrow.Schema { return s.schema }
func (s *sliceStream) Next() bool {
	if s.i >= len(s.recs) {
		return false
	}
	s.i++
	return true
}
func (s *sliceStream) RecordBatch() arrow.RecordBatch { return s.recs[s.i-1] }
func (s *sliceStream) Err() error                     { return nil }

// rowIDs is the _rowid column of a scan with row ids and addresses (the
// one before _rowaddr).
func rowIDs(rec arrow.RecordBatch) *array.Uint64 {
	return rec.Column(int(rec.NumCols()) - 2).(*array.Uint64)
}
