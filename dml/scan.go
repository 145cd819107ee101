package dml

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"

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
	e, err := expr.Parse(expr.FilterText(src))
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
	if fsl, ok := t.(*arrow.FixedSizeListType); ok {
		if l, ok := a.(array.ListLike); ok {
			return listToFixed(ctx, l, fsl, column)
		}
	}
	if t.ID() == arrow.FLOAT16 && canCast(a.DataType(), t) {
		return toFloat16(ctx, a, column)
	}
	if ts, ok := t.(*arrow.TimestampType); ok && ts.TimeZone == "" {
		if s, ok := a.(*array.String); ok {
			// Arrow's cast refuses a zone offset for a timestamp without a zone; Lance's
			// (arrow-rs) takes the instant in UTC, and the clients send one: the remote SDK
			// writes a JS Date in an update as '2030-05-06T07:08:09.000Z'.
			u := zonedToUTC(ctx, s)
			defer u.Release()
			a = u
		}
	}
	out, err := compute.CastArray(ctx, a, compute.SafeCastOptions(t))
	if err != nil {
		return nil, invalid("column %q: cannot store a %s value as %s: %v", column, a.DataType(), t, err)
	}
	return out, nil
}

// toFloat16 casts a (floats or integers) to float16, rounding to the nearest half; Arrow's
// cast has no float16 target.
func toFloat16(ctx context.Context, a arrow.Array, column string) (arrow.Array, error) {
	f, err := castTo(ctx, a, arrow.PrimitiveTypes.Float32, column)
	if err != nil {
		return nil, err
	}
	defer f.Release()
	src := f.(*array.Float32)
	b := array.NewFloat16Builder(compute.GetAllocator(ctx))
	defer b.Release()
	b.Reserve(src.Len())
	for i := range src.Len() {
		if src.IsNull(i) {
			b.AppendNull()
			continue
		}
		b.Append(float16.FromBits(halfBits(src.Value(i))))
	}
	return b.NewArray(), nil
}

// halfBits is f as an IEEE 754 half, rounded to the nearest (ties to even), with subnormals,
// infinities and NaN: as arrow-rs (the half crate) converts, which Lance's cast uses.
// arrow-go's float16.New truncates and flushes subnormals to zero, one unit off in the last
// place for about half of all values.
func halfBits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00 // NaN
		}
		return sign | 0x7c00 // ±Inf
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00 // too large: ±Inf
	}
	roundShift := func(v uint32, shift uint32) uint32 {
		out, rem, half := v>>shift, v&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > half || rem == half && out&1 == 1 {
			out++
		}
		return out
	}
	if e <= 0 {
		if e < -10 {
			return sign // below half the least subnormal: ±0
		}
		return sign | uint16(roundShift(man|0x800000, uint32(14-e)))
	}
	// a carry out of the mantissa moves into the exponent (and to Inf past the largest half)
	return sign | uint16(uint32(e)<<10+roundShift(man, 13))
}

// canCast: castTo can cast from to to (Arrow's casts, and listToFixed's).
func canCast(from, to arrow.DataType) bool {
	if fsl, ok := to.(*arrow.FixedSizeListType); ok {
		switch l := from.(type) {
		case *arrow.ListType:
			return canCast(l.Elem(), fsl.Elem())
		case *arrow.LargeListType:
			return canCast(l.Elem(), fsl.Elem())
		case *arrow.FixedSizeListType:
			return l.Len() == fsl.Len() && canCast(l.Elem(), fsl.Elem())
		}
	}
	if to.ID() == arrow.FLOAT16 && from.ID() != arrow.FLOAT16 {
		return arrow.IsFloating(from.ID()) || arrow.IsInteger(from.ID())
	}
	return compute.CanCast(from, to)
}

// listToFixed casts a list array (list, large list or fixed-size list) to the fixed-size
// list t, as Lance casts one: every list non-null and of t's length (a null list is a null
// row), its values cast to t's element type. Arrow's cast has no list → fixed-size list (the
// remote SDK sends a vector in update({values}) as a list literal, [1, 2, …]), nor a change
// of element type inside a fixed-size list (alterColumns of a float32 vector to float16).
func listToFixed(ctx context.Context, l array.ListLike, t *arrow.FixedSizeListType, column string) (arrow.Array, error) {
	mem := compute.GetAllocator(ctx)
	n := int64(t.Len())
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	ib.Reserve(l.Len() * int(n))
	valid := make([]bool, l.Len())
	for i := range l.Len() {
		if l.IsNull(i) {
			for range n {
				ib.AppendNull()
			}
			continue
		}
		valid[i] = true
		s, e := l.ValueOffsets(i)
		if e-s != n {
			return nil, invalid("column %q: cannot store a list of %d values as %s", column, e-s, t)
		}
		for k := s; k < e; k++ {
			ib.Append(k)
		}
	}
	idx := ib.NewArray()
	defer idx.Release()
	taken, err := compute.TakeArray(ctx, l.ListValues(), idx)
	if err != nil {
		return nil, invalid("column %q: %v", column, err)
	}
	defer taken.Release()
	child, err := castTo(ctx, taken, t.Elem(), column)
	if err != nil {
		return nil, err
	}
	defer child.Release()
	vb := array.NewBooleanBuilder(mem)
	defer vb.Release()
	vb.AppendValues(valid, nil)
	va := vb.NewBooleanArray()
	defer va.Release()
	// the validity bitmap of the rows is the boolean array's values (bit i set: row i valid)
	data := array.NewData(t, l.Len(), []*memory.Buffer{va.Data().Buffers()[1]}, []arrow.ArrayData{child.Data()}, l.NullN(), 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// zonedToUTC is s with each RFC 3339 timestamp that names a zone (Z, +02:00) rewritten as the
// same instant in UTC without one; other values as they are.
func zonedToUTC(ctx context.Context, s *array.String) arrow.Array {
	b := array.NewStringBuilder(compute.GetAllocator(ctx))
	defer b.Release()
	b.Reserve(s.Len())
	for i := range s.Len() {
		if s.IsNull(i) {
			b.AppendNull()
			continue
		}
		v := s.Value(i)
		if at, err := time.Parse(time.RFC3339Nano, v); err == nil {
			v = at.UTC().Format("2006-01-02T15:04:05.999999999")
		}
		b.Append(v)
	}
	return b.NewArray()
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
