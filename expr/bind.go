package expr

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	nserr "github.com/lancecat/lancecat/errors"
)

// node is a bound (typed) expression.
type node interface {
	typ() arrow.DataType
	// eval returns an array of ec.n rows; the caller releases it.
	eval(ec *evalCtx) (arrow.Array, error)
}

type evalCtx struct {
	ctx   context.Context // for arrow's kernels
	stop  context.Context // the caller's cancellation (live), nil: none
	rec   arrow.RecordBatch
	n     int
	mem   memory.Allocator
	ticks int // nodes evaluated (live)
}

type interruptKey struct{}

// WithInterrupt is ctx carrying interrupt: Eval, Filter and CountTrue over ctx stop between two
// nodes (never inside one of arrow's kernels) with interrupt's error once it is cancelled. For a
// caller that hands the kernels a context without cancellation (a kernel cancelled half-way can
// leave its buffers unreleased) and still wants a long expression over a batch to stop when the
// request does.
func WithInterrupt(ctx, interrupt context.Context) context.Context {
	return context.WithValue(ctx, interruptKey{}, interrupt)
}

// newEvalCtx is the evaluation of one batch under ctx: stopped by ctx's cancellation, or by the
// interrupt it carries (WithInterrupt).
func newEvalCtx(ctx context.Context, rec arrow.RecordBatch) (*evalCtx, error) {
	stop := ctx
	if i, ok := ctx.Value(interruptKey{}).(context.Context); ok {
		stop = i
	}
	if err := stop.Err(); err != nil {
		return nil, err
	}
	return &evalCtx{ctx: ctx, stop: stop, rec: rec, n: int(rec.NumRows()), mem: compute.GetAllocator(ctx)}, nil
}

// liveEvery is how many nodes are evaluated between two looks at the caller's cancellation.
const liveEvery = 16

// live is the caller's cancellation, looked at every liveEvery nodes: one expression of MaxTerms
// over one batch can run for a second, and a request whose client hung up stops within the batch.
func (ec *evalCtx) live() error {
	if ec.ticks++; ec.ticks%liveEvery != 0 || ec.stop == nil {
		return nil
	}
	return ec.stop.Err()
}

// Bound is an expression resolved against a schema: every column found, every operator typed.
type Bound struct {
	src  string
	expr Expr // printed into src on the first String (most Bounds are never printed)
	once sync.Once
	root node
}

// Type is the Arrow type of the expression's value.
func (b *Bound) Type() arrow.DataType { return b.root.typ() }

// String is the expression's source text (Compile's), else its canonical print.
func (b *Bound) String() string {
	b.once.Do(func() {
		if b.expr != nil {
			b.src = b.expr.String()
		}
	})
	return b.src
}

// Eval evaluates the expression over rec: one value per row.
func (b *Bound) Eval(ctx context.Context, rec arrow.RecordBatch) (arrow.Array, error) {
	ec, err := newEvalCtx(ctx, rec)
	if err != nil {
		return nil, err
	}
	return b.root.eval(ec)
}

// Filter keeps the rows of rec where the predicate is true; NULL drops the row, as in SQL WHERE.
func (b *Bound) Filter(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if b.root.typ().ID() != arrow.BOOL {
		return nil, errorf(0, "", "a filter must be a boolean expression, not %s", b.root.typ())
	}
	mask, err := b.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer mask.Release()
	opts := compute.DefaultFilterOptions()
	opts.NullSelection = compute.SelectionDropNulls
	return compute.FilterRecordBatch(ctx, rec, mask, opts)
}

// Bind resolves e against schema. Lance's rules apply: a literal compared with a column (=, <, IN,
// BETWEEN, …) is converted to the column's type, and one that does not convert exactly is an error;
// other operands are brought to a common type as DataFusion does.
func Bind(e Expr, schema *arrow.Schema) (*Bound, error) {
	b := &binder{schema: schema}
	n, err := b.bind(e)
	if err != nil {
		return nil, err
	}
	return &Bound{expr: e, root: n}, nil
}

// Compile parses and binds s in one step.
func Compile(s string, schema *arrow.Schema) (*Bound, error) {
	e, err := Parse(s)
	if err != nil {
		return nil, err
	}
	b, err := Bind(e, schema)
	if err != nil {
		return nil, err
	}
	b.src, b.expr = s, nil
	return b, nil
}

// Filter compiles the predicate s against rec's schema and applies it.
func Filter(ctx context.Context, s string, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	b, err := Compile(s, rec.Schema())
	if err != nil {
		return nil, err
	}
	return b.Filter(ctx, rec)
}

type binder struct {
	schema *arrow.Schema
	// listTerms counts the values of IN lists bound as a chain of comparisons (not a set
	// lookup): each is evaluated per row like a term, so they share MaxTerms.
	listTerms int
	fields    []arrow.Field // schema.Fields(), read once
	// cached counts the literals that keep a batch-long copy of themselves (litNode.rep).
	cached int
}

func (b *binder) bind(e Expr) (node, error) {
	switch e := e.(type) {
	case *Literal:
		return b.literal(e, nil)
	case *Column:
		return b.column(e)
	case *Unary:
		x, err := b.bind(e.X)
		if err != nil {
			return nil, err
		}
		if e.Op == "NOT" {
			if !boolish(x.typ()) {
				return nil, errorf(e.P, columnName(e.X), "NOT needs a boolean operand, not %s", x.typ())
			}
			return &notNode{x: x}, nil
		}
		if !isNumeric(x.typ()) && x.typ().ID() != arrow.NULL {
			return nil, errorf(e.P, columnName(e.X), "unary %s needs a number, not %s", e.Op, x.typ())
		}
		if e.Op == "+" {
			return x, nil
		}
		return &negNode{x: x}, nil
	case *Binary:
		switch e.Op {
		case "AND", "OR", "+", "-", "*", "/", "%", "||":
			return b.chain(e)
		case "=", "!=", "<", "<=", ">", ">=":
			return b.compare(e.P, e.Op, e.L, e.R)
		}
		return nil, errorf(e.P, "", "unsupported operator %s", e.Op)
	case *Is:
		x, err := b.bind(e.X)
		if err != nil {
			return nil, err
		}
		if e.What != "NULL" && !boolish(x.typ()) {
			return nil, errorf(e.P, columnName(e.X), "IS %s needs a boolean operand, not %s", e.What, x.typ())
		}
		return &isNode{x: x, what: e.What, not: e.Not}, nil
	case *InList:
		if n, ok, err := b.inSet(e); ok || err != nil {
			return n, err
		}
		// x IN (a, b) is x = a OR x = b: the same literal resolution and NULL semantics as =.
		if b.listTerms += len(e.List); b.listTerms > MaxTerms {
			return nil, errorf(e.P, columnName(e.X), "an IN list that is not a set lookup (here %d values) counts each value as a term: more than %d in the expression", len(e.List), MaxTerms)
		}
		var out node
		for _, item := range e.List {
			c, err := b.compare(item.Pos(), "=", e.X, item)
			if err != nil {
				return nil, err
			}
			if out == nil {
				out = c
			} else {
				out = &logicNode{l: out, r: c}
			}
		}
		if e.Not {
			out = &notNode{x: out}
		}
		return out, nil
	case *Between:
		lo, err := b.compare(e.P, ">=", e.X, e.Lo)
		if err != nil {
			return nil, err
		}
		hi, err := b.compare(e.P, "<=", e.X, e.Hi)
		if err != nil {
			return nil, err
		}
		var out node = &logicNode{and: true, l: lo, r: hi}
		if e.Not {
			out = &notNode{x: out}
		}
		return out, nil
	case *Like:
		return b.like(e)
	case *Cast:
		if l, ok := e.X.(*Literal); ok {
			// A cast literal is a literal of the target type (DataFusion folds it before Lance resolves).
			arr, err := literalArray(l)
			if err != nil {
				return nil, err
			}
			defer arr.Release()
			ec := &evalCtx{ctx: context.Background(), n: 1, mem: memory.DefaultAllocator}
			out, err := castArray(ec, arr, e.Type, false, e.Try)
			if err != nil {
				return nil, errorf(e.P, "", "cannot cast %s to %s", l, e.TypeName)
			}
			return b.lit(out), nil
		}
		x, err := b.bind(e.X)
		if err != nil {
			return nil, err
		}
		if !compute.CanCast(x.typ(), e.Type) && x.typ().ID() != arrow.NULL && !(isString(x.typ()) && isTemporal(e.Type)) {
			return nil, errorf(e.P, columnName(e.X), "cannot cast %s to %s", x.typ(), e.TypeName)
		}
		return &castNode{x: x, to: e.Type, try: e.Try}, nil
	case *Case:
		return b.caseExpr(e)
	case *Call:
		return b.call(e)
	}
	return nil, errorf(e.Pos(), "", "unsupported expression %s", e)
}

// maxCachedLiterals is how many literals of one expression keep a batch-long copy of themselves
// between batches (litNode.rep): `id + 1 + 2 + … ` of 10,000 literals kept 10,000 batch-long
// arrays; the rest build theirs per batch, like any other node's result.
const maxCachedLiterals = 64

// lit is a literal node; the first maxCachedLiterals of the expression cache their broadcast.
func (b *binder) lit(val arrow.Array) *litNode {
	n := &litNode{val: val}
	if b.cached < maxCachedLiterals {
		b.cached++
		n.cache = true
	}
	return n
}

func boolish(t arrow.DataType) bool { return t.ID() == arrow.BOOL || t.ID() == arrow.NULL }

// columnName is the dotted name of e if it is a column reference (for error messages).
func columnName(e Expr) string {
	if c, ok := e.(*Column); ok {
		return strings.Join(c.Path, ".")
	}
	return ""
}

// column resolves a column path. A name matches exactly, else case-insensitively when exactly one
// field does (Lance resolves `camelcase` to `CamelCase`).
func (b *binder) column(c *Column) (node, error) {
	if b.fields == nil {
		b.fields = b.schema.Fields() // a copy each call: once per expression, not per reference
	}
	fields := b.fields
	var path []int
	var typ arrow.DataType
	for depth, name := range c.Path {
		idx := findField(fields, name)
		if idx < 0 {
			full := strings.Join(c.Path[:depth+1], ".")
			if depth == 0 {
				return nil, errorf(c.P, full, "no such column %q", full)
			}
			return nil, errorf(c.P, full, "no such field %q in %s", name, strings.Join(c.Path[:depth], "."))
		}
		path = append(path, idx)
		typ = fields[idx].Type
		if depth+1 < len(c.Path) {
			st, ok := typ.(*arrow.StructType)
			if !ok {
				full := strings.Join(c.Path[:depth+1], ".")
				return nil, errorf(c.P, full, "%s is %s, not a struct: it has no field %q", full, typ, c.Path[depth+1])
			}
			fields = st.Fields()
		}
	}
	return &colNode{path: path, t: typ, name: strings.Join(c.Path, ".")}, nil
}

func findField(fields []arrow.Field, name string) int {
	for i, f := range fields {
		if f.Name == name {
			return i
		}
	}
	found := -1
	for i, f := range fields {
		if strings.EqualFold(f.Name, name) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

// literal binds a literal; with want non-nil the value is converted to that type exactly (Lance's
// literal resolution) or it is an error.
func (b *binder) literal(l *Literal, want arrow.DataType) (node, error) {
	arr, err := literalArray(l)
	if err != nil {
		return nil, err
	}
	if want == nil || arrow.TypeEqual(arr.DataType(), want) {
		return b.lit(arr), nil
	}
	defer arr.Release()
	conv, err := convertLiteral(arr, l, want)
	if err != nil {
		return nil, err
	}
	return b.lit(conv), nil
}

// literalArray is the literal as a one-row array of its natural type: integers int64 (float64 when
// they do not fit), other numbers float64, strings utf8, DATE date32, TIMESTAMP timestamp[ns].
func literalArray(l *Literal) (arrow.Array, error) {
	mem := memory.DefaultAllocator
	switch l.Kind {
	case LitNull:
		return array.NewNull(1), nil
	case LitBool:
		bl := array.NewBooleanBuilder(mem)
		defer bl.Release()
		bl.Append(l.Text == "true")
		return bl.NewArray(), nil
	case LitInt:
		// The parser reads the digits without their sign: a number that does not fit an int64
		// unsigned is a float64 (so -9223372036854775808 is a float, as in sqlparser).
		if _, err := strconv.ParseInt(strings.TrimPrefix(l.Text, "-"), 10, 64); err == nil {
			v, _ := strconv.ParseInt(l.Text, 10, 64)
			bl := array.NewInt64Builder(mem)
			defer bl.Release()
			bl.Append(v)
			return bl.NewArray(), nil
		}
		fallthrough
	case LitFloat:
		v, err := strconv.ParseFloat(l.Text, 64)
		if err != nil && !math.IsInf(v, 0) {
			return nil, errorf(l.P, "", "invalid number %s", l.Text)
		}
		bl := array.NewFloat64Builder(mem)
		defer bl.Release()
		bl.Append(v)
		return bl.NewArray(), nil
	case LitString:
		bl := array.NewStringBuilder(mem)
		defer bl.Release()
		bl.Append(l.Text)
		return bl.NewArray(), nil
	case LitDate:
		t, err := time.Parse("2006-01-02", strings.TrimSpace(l.Text))
		if err != nil {
			return nil, errorf(l.P, "", "invalid date %q", l.Text)
		}
		bl := array.NewDate32Builder(mem)
		defer bl.Release()
		bl.Append(arrow.Date32FromTime(t))
		return bl.NewArray(), nil
	case LitTimestamp:
		t, err := parseTimestamp(l.Text)
		if err != nil {
			return nil, errorf(l.P, "", "invalid timestamp %q", l.Text)
		}
		bl := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond})
		defer bl.Release()
		bl.Append(arrow.Timestamp(t.UnixNano()))
		return bl.NewArray(), nil
	case LitDecimal:
		scale := int32(0)
		if i := strings.IndexByte(l.Text, '.'); i >= 0 {
			scale = int32(len(strings.TrimSpace(l.Text)) - i - 1)
		}
		n, err := decimal128.FromString(strings.TrimSpace(l.Text), 38, scale)
		if err != nil || scale > 38 {
			return nil, errorf(l.P, "", "invalid decimal %q", l.Text)
		}
		bl := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: scale})
		defer bl.Release()
		bl.Append(n)
		return bl.NewArray(), nil
	}
	return nil, errorf(l.P, "", "unsupported literal %s", l)
}

var timestampLayouts = []string{
	"2006-01-02 15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02",
}

func parseTimestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	var err error
	for _, layout := range timestampLayouts {
		var t time.Time
		if t, err = time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}

// convertLiteral converts a one-row literal to want, as Lance's literal resolution does: numbers to
// any numeric type they fit exactly (5 to int8, 5 to float32; not 5.5 to int, not 300 to uint8),
// strings only to strings, dates and timestamps to dates and timestamps, NULL to anything.
func convertLiteral(arr arrow.Array, l *Literal, want arrow.DataType) (arrow.Array, error) {
	have := arr.DataType()
	ok := false
	switch {
	case have.ID() == arrow.NULL:
		return array.MakeArrayOfNull(memory.DefaultAllocator, want, 1), nil
	case isNumeric(have) && isNumeric(want):
		ok = !(isFloat(have) && isInt(want))
	case isString(have) && isString(want):
		ok = true
	case isTemporal(have) && isTemporal(want):
		ok = true
	case have.ID() == arrow.BOOL && want.ID() == arrow.BOOL:
		ok = true
	}
	if ok {
		if out, done := convertNumber(arr, want); done {
			if out == nil {
				return nil, errorf(l.P, "", "literal %s cannot be converted to %s", l, want)
			}
			return out, nil
		}
		out, err := compute.CastArray(context.Background(), arr, compute.SafeCastOptions(want))
		if err == nil {
			return out, nil
		}
	}
	return nil, errorf(l.P, "", "literal %s cannot be converted to %s", l, want)
}

// convertNumber is convertLiteral of an int64 or float64 literal to an integer or float type,
// without the cast kernel: its dispatch cost ~20 µs a literal, the most of binding a long chain of
// comparisons (`id > 0 AND …`). done false: not such a conversion (the kernel decides); out nil: it
// does not fit (as the kernel's safe cast would refuse).
func convertNumber(arr arrow.Array, want arrow.DataType) (out arrow.Array, done bool) {
	var iv int64
	var fv float64
	isI := false
	switch a := arr.(type) {
	case *array.Int64:
		iv, isI = a.Value(0), true
	case *array.Float64:
		fv = a.Value(0)
	default:
		return nil, false
	}
	mem := memory.DefaultAllocator
	fits := func(lo, hi int64) bool { return iv >= lo && iv <= hi }
	if isI && (iv > 1<<24 || iv < -(1<<24)) && isFloat(want) {
		return nil, false // exactness of a large integer as a float: the kernel's rule
	}
	switch want.ID() {
	case arrow.FLOAT64:
		if isI {
			fv = float64(iv)
		}
		bl := array.NewFloat64Builder(mem)
		defer bl.Release()
		bl.Append(fv)
		return bl.NewArray(), true
	case arrow.FLOAT32:
		if isI {
			fv = float64(iv)
		}
		bl := array.NewFloat32Builder(mem)
		defer bl.Release()
		bl.Append(float32(fv))
		return bl.NewArray(), true
	}
	if !isI {
		return nil, false
	}
	var ok bool
	switch want.ID() {
	case arrow.INT8:
		ok = fits(math.MinInt8, math.MaxInt8)
	case arrow.INT16:
		ok = fits(math.MinInt16, math.MaxInt16)
	case arrow.INT32:
		ok = fits(math.MinInt32, math.MaxInt32)
	case arrow.INT64:
		ok = true
	case arrow.UINT8:
		ok = fits(0, math.MaxUint8)
	case arrow.UINT16:
		ok = fits(0, math.MaxUint16)
	case arrow.UINT32:
		ok = fits(0, math.MaxUint32)
	case arrow.UINT64:
		ok = iv >= 0
	default:
		return nil, false
	}
	if !ok {
		return nil, true
	}
	bl := array.NewBuilder(mem, want)
	defer bl.Release()
	switch b := bl.(type) {
	case *array.Int8Builder:
		b.Append(int8(iv))
	case *array.Int16Builder:
		b.Append(int16(iv))
	case *array.Int32Builder:
		b.Append(int32(iv))
	case *array.Int64Builder:
		b.Append(iv)
	case *array.Uint8Builder:
		b.Append(uint8(iv))
	case *array.Uint16Builder:
		b.Append(uint16(iv))
	case *array.Uint32Builder:
		b.Append(uint32(iv))
	case *array.Uint64Builder:
		b.Append(uint64(iv))
	}
	return bl.NewArray(), true
}

// compare binds l op r. When one side is a column and the other a literal, the literal takes the
// column's type (an error if it cannot); otherwise both sides go to their common type.
func (b *binder) compare(pos int, op string, le, re Expr) (node, error) {
	l, r, err := b.bindPair(pos, op, le, re)
	if err != nil {
		return nil, err
	}
	t, ok := commonType(l.typ(), r.typ())
	if !ok {
		col := columnName(le)
		if col == "" {
			col = columnName(re)
		}
		return nil, errorf(pos, col, "cannot compare %s with %s", l.typ(), r.typ())
	}
	if t.ID() == arrow.NULL {
		return b.lit(array.NewNull(1)), nil
	}
	if !comparable(t) {
		return nil, errorf(pos, columnName(le), "cannot compare values of type %s", t)
	}
	l, r = b.castTo(l, t), b.castTo(r, t)
	return &cmpNode{op: op, l: l, r: r, fast: fastIntCmp(op, l, r)}, nil
}

func comparable(t arrow.DataType) bool {
	return isNumeric(t) || isString(t) || isTemporal(t) || t.ID() == arrow.BOOL ||
		t.ID() == arrow.BINARY || t.ID() == arrow.LARGE_BINARY
}

// bindPair binds the two operands of a comparison with Lance's literal resolution.
func (b *binder) bindPair(pos int, op string, le, re Expr) (node, node, error) {
	ll, lIsLit := le.(*Literal)
	rl, rIsLit := re.(*Literal)
	_, lIsCol := le.(*Column)
	_, rIsCol := re.(*Column)
	switch {
	case lIsCol && rIsLit:
		l, err := b.bind(le)
		if err != nil {
			return nil, nil, err
		}
		r, err := b.literal(rl, l.typ())
		if err != nil {
			return nil, nil, withColumn(err, columnName(le))
		}
		return l, r, nil
	case rIsCol && lIsLit:
		r, err := b.bind(re)
		if err != nil {
			return nil, nil, err
		}
		l, err := b.literal(ll, r.typ())
		if err != nil {
			return nil, nil, withColumn(err, columnName(re))
		}
		return l, r, nil
	}
	// CAST(col AS wider-or-narrower integer) op literal compares col with the literal when the literal
	// fits col's type: DataFusion's unwrap-cast rule runs before evaluation, so such a cast never
	// overflows.
	if c, ok := le.(*Cast); ok && rIsLit {
		if n, lit, ok := b.unwrapCast(c, rl); ok {
			return n, lit, nil
		}
	}
	if c, ok := re.(*Cast); ok && lIsLit {
		if n, lit, ok := b.unwrapCast(c, ll); ok {
			return lit, n, nil
		}
	}
	l, err := b.bind(le)
	if err != nil {
		return nil, nil, err
	}
	r, err := b.bind(re)
	if err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

func (b *binder) unwrapCast(c *Cast, l *Literal) (node, node, bool) {
	col, ok := c.X.(*Column)
	if !ok || !(isInt(c.Type) || isDecimal(c.Type)) {
		return nil, nil, false
	}
	n, err := b.column(col)
	if err != nil || !isInt(n.typ()) {
		return nil, nil, false
	}
	lit, err := b.literal(l, n.typ())
	if err != nil {
		return nil, nil, false
	}
	return n, lit, true
}

func withColumn(err error, col string) error {
	var e *Error
	if nserr.As(err, &e) && e.Column == "" {
		return errorf(e.Pos, col, "%s", e.Msg)
	}
	return err
}

func (b *binder) castTo(n node, t arrow.DataType) node {
	if arrow.TypeEqual(n.typ(), t) {
		return n
	}
	if lit, ok := n.(*litNode); ok {
		ec := &evalCtx{ctx: context.Background(), n: 1, mem: memory.DefaultAllocator}
		if out, err := castArray(ec, lit.val, t, true, false); err == nil {
			return b.lit(out)
		}
	}
	return &castNode{x: n, to: t, implicit: true}
}

// chain binds a left-deep chain of AND, OR, arithmetic or || operators (`a + b + c`, `p AND q
// AND r`, as the parser builds them) bottom-up in a loop: a recursion as deep as the chain, each
// level allocating, made the collector scan an ever deeper stack (time quadratic in the chain).
func (b *binder) chain(e *Binary) (node, error) {
	var spine []*Binary
	var cur Expr = e
	for {
		bn, ok := cur.(*Binary)
		if !ok || bn.Op == "=" || bn.Op == "!=" || bn.Op == "<" || bn.Op == "<=" || bn.Op == ">" || bn.Op == ">=" {
			break
		}
		spine = append(spine, bn)
		cur = bn.L
	}
	l, err := b.bind(cur)
	if err != nil {
		return nil, err
	}
	for i := len(spine) - 1; i >= 0; i-- {
		if l, err = b.binary(spine[i], l); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// binary binds e, whose left operand is already bound as l.
func (b *binder) binary(e *Binary, l node) (node, error) {
	r, err := b.bind(e.R)
	if err != nil {
		return nil, err
	}
	switch e.Op {
	case "AND", "OR":
		for _, side := range []struct {
			n node
			e Expr
		}{{l, e.L}, {r, e.R}} {
			if !boolish(side.n.typ()) {
				return nil, errorf(side.e.Pos(), columnName(side.e), "%s needs boolean operands, not %s", e.Op, side.n.typ())
			}
		}
		return &logicNode{and: e.Op == "AND", l: l, r: r}, nil
	case "+", "-", "*", "/", "%":
		return b.arith(e, l, r)
	case "||":
		return &funcNode{name: "||", args: []node{l, r}, out: tUtf8, fn: concatOp}, nil
	}
	return nil, errorf(e.P, "", "unsupported operator %s", e.Op)
}

func (b *binder) arith(e *Binary, l, r node) (node, error) {
	lt, rt := l.typ(), r.typ()
	if lt.ID() == arrow.NULL && (isNumeric(rt) || rt.ID() == arrow.NULL) || rt.ID() == arrow.NULL && isNumeric(lt) {
		return b.lit(array.NewNull(1)), nil
	}
	if !isNumeric(lt) || !isNumeric(rt) {
		col := columnName(e.L)
		if col == "" {
			col = columnName(e.R)
		}
		return nil, errorf(e.P, col, "operator %s needs numbers, not %s and %s", e.Op, lt, rt)
	}
	t := numericCommon(lt, rt)
	return &arithNode{op: e.Op, l: b.castTo(l, t), r: b.castTo(r, t), t: t}, nil
}

func (b *binder) like(e *Like) (node, error) {
	x, err := b.bind(e.X)
	if err != nil {
		return nil, err
	}
	if !isString(x.typ()) && x.typ().ID() != arrow.NULL {
		return nil, errorf(e.P, columnName(e.X), "LIKE needs a string, not %s", x.typ())
	}
	pat, ok := e.Pattern.(*Literal)
	if !ok || pat.Kind != LitString && pat.Kind != LitNull {
		return nil, errorf(e.Pattern.Pos(), "", "LIKE needs a string literal pattern")
	}
	if pat.Kind == LitNull {
		return b.lit(array.MakeArrayOfNull(memory.DefaultAllocator, tBool, 1)), nil
	}
	re, err := likeRegexp(pat.Text, e.Escape, e.CaseFold)
	if err != nil {
		return nil, errorf(e.Pattern.Pos(), "", "%v", err)
	}
	ln := &likeNode{x: x, re: re, match: likeFast(pat.Text, e.Escape, e.CaseFold)}
	ln.prefix, ln.isPrefix = likePrefix(pat.Text, e.Escape, e.CaseFold)
	var out node = ln
	if e.Not {
		out = &notNode{x: out}
	}
	return out, nil
}

func (b *binder) caseExpr(e *Case) (node, error) {
	c := &caseNode{}
	var thenTypes []arrow.DataType
	for _, w := range e.Whens {
		var cond node
		var err error
		if e.Operand != nil {
			cond, err = b.compare(w.Cond.Pos(), "=", e.Operand, w.Cond)
		} else {
			cond, err = b.bind(w.Cond)
			if err == nil && !boolish(cond.typ()) {
				err = errorf(w.Cond.Pos(), columnName(w.Cond), "WHEN needs a boolean condition, not %s", cond.typ())
			}
		}
		if err != nil {
			return nil, err
		}
		then, err := b.bind(w.Then)
		if err != nil {
			return nil, err
		}
		c.conds = append(c.conds, cond)
		c.vals = append(c.vals, then)
		thenTypes = append(thenTypes, then.typ())
	}
	if e.Else != nil {
		el, err := b.bind(e.Else)
		if err != nil {
			return nil, err
		}
		c.vals = append(c.vals, el)
		thenTypes = append(thenTypes, el.typ())
	} else {
		c.vals = append(c.vals, b.lit(array.NewNull(1)))
	}
	t := arrow.DataType(tNull)
	for i, tt := range thenTypes {
		var ok bool
		if t, ok = commonType(t, tt); !ok {
			return nil, errorf(e.P, "", "CASE arms have incompatible types %s and %s (arm %d)", t, tt, i+1)
		}
	}
	for i := range c.vals {
		c.vals[i] = b.castTo(c.vals[i], t)
	}
	c.t = t
	return c, nil
}

// inSet binds `column IN (literals)` to one is_in kernel over a value set (ok false: not that shape,
// the caller binds the general form). Only for types whose equality the kernel decides as Lance does
// (not floats: NaN and -0), and only without NULL in the list (which makes a miss NULL, not false).
func (b *binder) inSet(e *InList) (node, bool, error) {
	col, ok := e.X.(*Column)
	if !ok {
		return nil, false, nil
	}
	for _, item := range e.List {
		if l, ok := item.(*Literal); !ok || l.Kind == LitNull {
			return nil, false, nil
		}
	}
	x, err := b.column(col)
	if err != nil {
		return nil, false, err
	}
	t := x.typ()
	if !(isInt(t) || isString(t) || isTemporal(t) || t.ID() == arrow.BOOL) {
		return nil, false, nil
	}
	if set, ok := bulkSet(e.List, t); ok {
		var out node = &isInNode{x: x, set: set}
		if e.Not {
			out = &notNode{x: out}
		}
		return out, true, nil
	}
	vals := make([]arrow.Array, 0, len(e.List))
	defer func() {
		for _, v := range vals {
			v.Release()
		}
	}()
	for _, item := range e.List {
		n, err := b.literal(item.(*Literal), t)
		if err != nil {
			return nil, false, withColumn(err, columnName(e.X))
		}
		vals = append(vals, n.(*litNode).val)
	}
	set, err := array.Concatenate(vals, memory.DefaultAllocator)
	if err != nil {
		return nil, false, errorf(e.P, columnName(e.X), "IN list: %v", err)
	}
	var out node = &isInNode{x: x, set: set}
	if e.Not {
		out = &notNode{x: out}
	}
	return out, true, nil
}

// bulkSet is the value set of an IN list of integers for an integer column, of strings for a
// string column or of booleans for a boolean one, built as one array and converted by one safe
// cast: a literal at a time (a one-row array each, converted, then concatenated) took 1 s for
// 100,000 ids. ok false: another shape, or a value does not convert (the caller's literal at a
// time finds which, for the error).
func bulkSet(list []Expr, t arrow.DataType) (arrow.Array, bool) {
	kind := list[0].(*Literal).Kind
	for _, item := range list {
		if item.(*Literal).Kind != kind {
			return nil, false
		}
	}
	mem := memory.DefaultAllocator
	var nat arrow.Array
	switch {
	case kind == LitInt && isInt(t):
		bl := array.NewInt64Builder(mem)
		defer bl.Release()
		bl.Reserve(len(list))
		for _, item := range list {
			v, err := strconv.ParseInt(item.(*Literal).Text, 10, 64)
			if err != nil {
				return nil, false
			}
			bl.UnsafeAppend(v)
		}
		nat = bl.NewArray()
	case kind == LitString && isString(t):
		bl := array.NewStringBuilder(mem)
		defer bl.Release()
		bl.Reserve(len(list))
		for _, item := range list {
			bl.Append(item.(*Literal).Text)
		}
		nat = bl.NewArray()
	case kind == LitBool && t.ID() == arrow.BOOL:
		bl := array.NewBooleanBuilder(mem)
		defer bl.Release()
		bl.Reserve(len(list))
		for _, item := range list {
			bl.UnsafeAppend(item.(*Literal).Text == "true")
		}
		nat = bl.NewArray()
	default:
		return nil, false
	}
	if arrow.TypeEqual(nat.DataType(), t) {
		return nat, true
	}
	defer nat.Release()
	out, err := compute.CastArray(context.Background(), nat, compute.SafeCastOptions(t))
	if err != nil {
		return nil, false
	}
	return out, true
}

// isInNode is column IN (value set) with arrow-go's is_in kernel (hash lookup): a NULL value gives
// NULL, as x = a OR x = b would.
type isInNode struct {
	x   node
	set arrow.Array
}

func (n *isInNode) typ() arrow.DataType { return tBool }
func (n *isInNode) eval(ec *evalCtx) (arrow.Array, error) {
	if err := ec.live(); err != nil {
		return nil, err
	}
	x, err := n.x.eval(ec)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	opts := compute.SetOptions{ValueSet: compute.NewDatumWithoutOwning(n.set), NullBehavior: compute.NullMatchingEmitNull}
	out, err := compute.IsIn(ec.ctx, opts, compute.NewDatumWithoutOwning(x))
	if err != nil {
		return nil, evalErr(err)
	}
	return datumArray(out), nil
}
