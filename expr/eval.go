package expr

import (
	"fmt"
	"math"
	"regexp"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// litNode is a constant: a one-row array, broadcast to the batch's length.
type litNode struct {
	val arrow.Array
	// rep is the literal repeated over the last batch length it was
	// evaluated for (Go heap only): batches are mostly of one length, and
	// filling a fresh array per batch for every literal cost as much as
	// the comparison. Arrays are immutable, so evaluations on several
	// goroutines share it. Only where cache is set (binder.lit).
	cache bool
	mu    sync.Mutex
	rep   arrow.Array
}

func (n *litNode) typ() arrow.DataType { return n.val.DataType() }
func (n *litNode) eval(ec *evalCtx) (arrow.Array, error) {
	if n.val.DataType().ID() == arrow.NULL {
		return array.NewNull(ec.n), nil
	}
	_, goHeap := ec.mem.(*memory.GoAllocator)
	goHeap = goHeap && n.cache
	if goHeap {
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.rep != nil && n.rep.Len() == ec.n {
			n.rep.Retain()
			return n.rep, nil
		}
	}
	sc, err := scalar.GetScalar(n.val, 0)
	if err != nil {
		return nil, err
	}
	a, err := scalar.MakeArrayFromScalar(sc, ec.n, ec.mem)
	if err != nil || !goHeap {
		return a, err
	}
	if n.rep != nil {
		n.rep.Release()
	}
	a.Retain()
	n.rep = a
	return a, nil
}

// colNode reads a column, or a field of a struct column (a NULL struct makes its fields NULL).
type colNode struct {
	path []int
	t    arrow.DataType
	name string
}

func (n *colNode) typ() arrow.DataType { return n.t }
func (n *colNode) eval(ec *evalCtx) (arrow.Array, error) {
	if n.path[0] >= int(ec.rec.NumCols()) || !arrow.TypeEqual(ec.rec.Schema().Field(n.path[0]).Type, n.t) && len(n.path) == 1 {
		return nil, errorf(-1, n.name, "the batch does not have the bound schema")
	}
	arr := ec.rec.Column(n.path[0])
	arr.Retain()
	for _, idx := range n.path[1:] {
		st, ok := arr.(*array.Struct)
		if !ok {
			arr.Release()
			return nil, errorf(-1, n.name, "the batch does not have the bound schema")
		}
		child := st.Field(idx)
		merged := withParentNulls(ec.mem, child, st)
		arr.Release()
		arr = merged
	}
	return arr, nil
}

// withParentNulls is child with the rows NULL where its parent struct is NULL.
func withParentNulls(mem memory.Allocator, child arrow.Array, parent arrow.Array) arrow.Array {
	if parent.NullN() == 0 {
		child.Retain()
		return child
	}
	n := child.Len()
	cd := child.Data()
	off := cd.Offset()
	buf := memory.NewResizableBuffer(mem)
	defer buf.Release()
	buf.Resize(int(bitutil.BytesForBits(int64(off + n))))
	bits := buf.Bytes()
	clear(bits)
	nulls := 0
	// No kernel ANDs two validity bitmaps at different offsets: one pass over the bits. The new
	// bitmap keeps the child's offset, so the data buffers are shared as they are.
	for i := 0; i < n; i++ {
		if child.IsValid(i) && parent.IsValid(i) {
			bitutil.SetBit(bits, off+i)
		} else {
			nulls++
		}
	}
	bufs := append([]*memory.Buffer{buf}, cd.Buffers()[1:]...)
	data := array.NewData(cd.DataType(), n, bufs, cd.Children(), nulls, off)
	defer data.Release()
	return array.MakeFromData(data)
}

type notNode struct{ x node }

func (n *notNode) typ() arrow.DataType { return tBool }
func (n *notNode) eval(ec *evalCtx) (arrow.Array, error) {
	if err := ec.live(); err != nil {
		return nil, err
	}
	x, err := evalBool(ec, n.x)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	return call1(ec, "not", nil, x)
}

type negNode struct{ x node }

func (n *negNode) typ() arrow.DataType { return n.x.typ() }
func (n *negNode) eval(ec *evalCtx) (arrow.Array, error) {
	if err := ec.live(); err != nil {
		return nil, err
	}
	x, err := n.x.eval(ec)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	if x.DataType().ID() == arrow.NULL {
		x.Retain()
		return x, nil
	}
	// Wrapping, as DataFusion's negation of the most negative integer.
	return call1(ec, "negate_unchecked", nil, x)
}

// logicNode is AND/OR with SQL's three-valued (Kleene) logic.
type logicNode struct {
	and  bool
	l, r node
}

func (n *logicNode) typ() arrow.DataType { return tBool }

// eval runs a left-deep chain (`p AND q AND r …`) in a loop, as arithNode.eval does.
func (n *logicNode) eval(ec *evalCtx) (arrow.Array, error) {
	spine := logicSpine(n)
	acc, err := evalBool(ec, spine[len(spine)-1].l)
	if err != nil {
		return nil, err
	}
	return applySpine(ec, spine, acc)
}

// applySpine applies a left-deep chain's nodes (spine, the top first) to acc, the innermost
// left operand's value, from the bottom up: one loop for every chain kind, no recursion.
func applySpine[N interface {
	apply(*evalCtx, arrow.Array) (arrow.Array, error)
}](ec *evalCtx, spine []N, acc arrow.Array) (arrow.Array, error) {
	for i := len(spine) - 1; i >= 0; i-- {
		next, err := spine[i].apply(ec, acc)
		acc.Release()
		if err != nil {
			return nil, err
		}
		acc = next
	}
	return acc, nil
}

// logicSpine is n and the logicNodes down its left operands, n first.
func logicSpine(n *logicNode) []*logicNode {
	spine := []*logicNode{n}
	for {
		next, ok := spine[len(spine)-1].l.(*logicNode)
		if !ok {
			return spine
		}
		spine = append(spine, next)
	}
}

// apply is n over its evaluated left operand l.
func (n *logicNode) apply(ec *evalCtx, l arrow.Array) (arrow.Array, error) {
	if err := ec.live(); err != nil {
		return nil, err
	}
	r, err := evalBool(ec, n.r)
	if err != nil {
		return nil, err
	}
	defer r.Release()
	fn := "or_kleene"
	if n.and {
		fn = "and_kleene"
	}
	return call2(ec, fn, nil, l, r)
}

// evalBool evaluates a boolean operand, a NULL-typed one as an all-NULL boolean array.
func evalBool(ec *evalCtx, x node) (arrow.Array, error) {
	a, err := x.eval(ec)
	if err != nil {
		return nil, err
	}
	if a.DataType().ID() == arrow.NULL {
		a.Release()
		return array.MakeArrayOfNull(ec.mem, tBool, ec.n), nil
	}
	return a, nil
}

func call1(ec *evalCtx, fn string, opts compute.FunctionOptions, x arrow.Array) (arrow.Array, error) {
	out, err := compute.CallFunction(ec.ctx, fn, opts, compute.NewDatumWithoutOwning(x))
	if err != nil {
		return nil, evalErr(err)
	}
	return datumArray(out), nil
}

func call2(ec *evalCtx, fn string, opts compute.FunctionOptions, x, y arrow.Array) (arrow.Array, error) {
	out, err := compute.CallFunction(ec.ctx, fn, opts, compute.NewDatumWithoutOwning(x), compute.NewDatumWithoutOwning(y))
	if err != nil {
		return nil, evalErr(err)
	}
	return datumArray(out), nil
}

// datumArray takes the array out of a kernel's result datum (releasing the datum's reference).
func datumArray(d compute.Datum) arrow.Array {
	a := d.(*compute.ArrayDatum).MakeArray()
	d.Release()
	return a
}

func evalErr(err error) error {
	return errorf(-1, "", "evaluation failed: %v", err)
}

var cmpKernel = map[string]string{"=": "equal", "!=": "not_equal", "<": "less", "<=": "less_equal", ">": "greater", ">=": "greater_equal"}

// cmpNode compares two operands of one type.
type cmpNode struct {
	op   string
	l, r node
	fast *intCmp // set when the comparison has intCmp's shape
}

func (n *cmpNode) typ() arrow.DataType { return tBool }
func (n *cmpNode) eval(ec *evalCtx) (arrow.Array, error) {
	if err := ec.live(); err != nil {
		return nil, err
	}
	if n.fast != nil {
		return n.fast.eval(ec)
	}
	l, err := n.l.eval(ec)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	r, err := n.r.eval(ec)
	if err != nil {
		return nil, err
	}
	defer r.Release()
	switch l.DataType().ID() {
	case arrow.FLOAT32:
		return floatCompare(ec, n.op, l.(*array.Float32).Float32Values(), r.(*array.Float32).Float32Values(), l, r, func(v float32) float64 { return float64(v) }), nil
	case arrow.FLOAT64:
		return floatCompare(ec, n.op, l.(*array.Float64).Float64Values(), r.(*array.Float64).Float64Values(), l, r, func(v float64) float64 { return v }), nil
	case arrow.DECIMAL128, arrow.DECIMAL256:
		lf, err := call1(ec, "cast", compute.SafeCastOptions(tFloat64), l)
		if err != nil {
			return nil, err
		}
		defer lf.Release()
		rf, err := call1(ec, "cast", compute.SafeCastOptions(tFloat64), r)
		if err != nil {
			return nil, err
		}
		defer rf.Release()
		return floatCompare(ec, n.op, lf.(*array.Float64).Float64Values(), rf.(*array.Float64).Float64Values(), lf, rf, func(v float64) float64 { return v }), nil
	}
	return call2(ec, cmpKernel[n.op], nil, l, r)
}

// floatCompare compares floats in the order arrow-rs (so Lance) uses: IEEE's totalOrder, except that
// -0 and +0 are equal. NaN equals NaN and is above +Inf (a NaN with the sign bit, as 0/0 makes on
// x86, is below -Inf). arrow-go's comparison kernels follow IEEE (NaN compares false), so this is a
// loop over the two value buffers.
func floatCompare[T float32 | float64](ec *evalCtx, op string, lv, rv []T, l, r arrow.Array, f func(T) float64) arrow.Array {
	bl := array.NewBooleanBuilder(ec.mem)
	defer bl.Release()
	bl.Reserve(len(lv))
	for i := range lv {
		if l.IsNull(i) || r.IsNull(i) {
			bl.UnsafeAppendBoolToBitmap(false)
			continue
		}
		c := totalCmp(f(lv[i]), f(rv[i]))
		var v bool
		switch op {
		case "=":
			v = c == 0
		case "!=":
			v = c != 0
		case "<":
			v = c < 0
		case "<=":
			v = c <= 0
		case ">":
			v = c > 0
		case ">=":
			v = c >= 0
		}
		bl.UnsafeAppend(v)
	}
	return bl.NewArray()
}

func totalCmp(a, b float64) int {
	if a == 0 && b == 0 {
		return 0
	}
	ka, kb := totalKey(a), totalKey(b)
	switch {
	case ka < kb:
		return -1
	case ka > kb:
		return 1
	}
	return 0
}

func totalKey(f float64) uint64 {
	u := math.Float64bits(f)
	if u>>63 == 1 {
		return ^u
	}
	return u | 1<<63
}

// arithNode is + - * / % on one numeric type. Integers wrap on overflow (DataFusion's default);
// integer division or remainder by zero is an error; float division by zero gives ±Inf or NaN.
type arithNode struct {
	op   string
	l, r node
	t    arrow.DataType
}

func (n *arithNode) typ() arrow.DataType { return n.t }

// eval runs a left-deep chain (`a + b + c …`) in a loop from its bottom, not as a recursion as
// deep as the chain (see binder.chain).
func (n *arithNode) eval(ec *evalCtx) (arrow.Array, error) {
	spine := []*arithNode{n}
	for {
		next, ok := spine[len(spine)-1].l.(*arithNode)
		if !ok {
			break
		}
		spine = append(spine, next)
	}
	acc, err := spine[len(spine)-1].l.eval(ec)
	if err != nil {
		return nil, err
	}
	return applySpine(ec, spine, acc)
}

// apply is n over its evaluated left operand l.
func (n *arithNode) apply(ec *evalCtx, l arrow.Array) (arrow.Array, error) {
	if err := ec.live(); err != nil {
		return nil, err
	}
	r, err := n.r.eval(ec)
	if err != nil {
		return nil, err
	}
	defer r.Release()
	switch n.op {
	case "+":
		return call2(ec, "add_unchecked", nil, l, r)
	case "-":
		return call2(ec, "sub_unchecked", nil, l, r)
	case "*":
		return call2(ec, "multiply_unchecked", nil, l, r)
	case "/":
		if isInt(n.t) {
			if err := checkNoZero(r, l); err != nil {
				return nil, err
			}
			return call2(ec, "divide_unchecked", nil, l, r)
		}
		return call2(ec, "divide_unchecked", nil, l, r)
	case "%":
		return remainder(ec, l, r)
	}
	return nil, fmt.Errorf("unknown operator %s", n.op)
}

// checkNoZero fails when a non-NULL divisor is zero where the dividend is not NULL.
func checkNoZero(div, num arrow.Array) error {
	for i := 0; i < div.Len(); i++ {
		if div.IsNull(i) || num.IsNull(i) {
			continue
		}
		if IntAt(div, i) == 0 {
			return errorf(-1, "", "Divide by zero error")
		}
	}
	return nil
}

// IntAt reads row i of an integer-like array (integers, dates, times, timestamps, durations,
// booleans as 0/1) as int64; uint64 values above MaxInt64 wrap, other types read 0. The one
// reader of "this value as an integer" for the expression engine and the views' aggregates.
func IntAt(a arrow.Array, i int) int64 {
	switch a := a.(type) {
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Uint8:
		return int64(a.Value(i))
	case *array.Uint16:
		return int64(a.Value(i))
	case *array.Uint32:
		return int64(a.Value(i))
	case *array.Uint64:
		return int64(a.Value(i))
	case *array.Date32:
		return int64(a.Value(i))
	case *array.Date64:
		return int64(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	case *array.Time32:
		return int64(a.Value(i))
	case *array.Time64:
		return int64(a.Value(i))
	case *array.Duration:
		return int64(a.Value(i))
	case *array.Boolean:
		if a.Value(i) {
			return 1
		}
		return 0
	}
	return 0
}

// remainder is %: arrow-go has no modulo kernel, so a loop over the values (in int64 or float64,
// cast back to the operand type). The sign follows the dividend, as in Rust and Go.
func remainder(ec *evalCtx, l, r arrow.Array) (arrow.Array, error) {
	t := l.DataType()
	n := l.Len()
	if isFloat(t) {
		lf, err := call1(ec, "cast", compute.SafeCastOptions(tFloat64), l)
		if err != nil {
			return nil, err
		}
		defer lf.Release()
		rf, err := call1(ec, "cast", compute.SafeCastOptions(tFloat64), r)
		if err != nil {
			return nil, err
		}
		defer rf.Release()
		a, b := lf.(*array.Float64), rf.(*array.Float64)
		bl := array.NewFloat64Builder(ec.mem)
		defer bl.Release()
		for i := 0; i < n; i++ {
			if a.IsNull(i) || b.IsNull(i) {
				bl.AppendNull()
				continue
			}
			bl.Append(math.Mod(a.Value(i), b.Value(i)))
		}
		out := bl.NewArray()
		defer out.Release()
		return call1(ec, "cast", compute.UnsafeCastOptions(t), out)
	}
	if t.ID() == arrow.UINT64 {
		a, b := l.(*array.Uint64), r.(*array.Uint64)
		bl := array.NewUint64Builder(ec.mem)
		defer bl.Release()
		for i := 0; i < n; i++ {
			if a.IsNull(i) || b.IsNull(i) {
				bl.AppendNull()
				continue
			}
			if b.Value(i) == 0 {
				return nil, errorf(-1, "", "Divide by zero error")
			}
			bl.Append(a.Value(i) % b.Value(i))
		}
		return bl.NewArray(), nil
	}
	if a, ok := l.(*array.Int64); ok && l.NullN() == 0 && r.NullN() == 0 {
		if b, ok := r.(*array.Int64); ok && b.Len() == n {
			return remainderInt64(ec, a.Int64Values(), b.Int64Values())
		}
	}
	bl := array.NewInt64Builder(ec.mem)
	defer bl.Release()
	for i := 0; i < n; i++ {
		if l.IsNull(i) || r.IsNull(i) {
			bl.AppendNull()
			continue
		}
		x, y := IntAt(l, i), IntAt(r, i)
		switch {
		case y == 0:
			return nil, errorf(-1, "", "Divide by zero error")
		case y == -1:
			bl.Append(0)
		default:
			bl.Append(x % y)
		}
	}
	out := bl.NewArray()
	defer out.Release()
	if t.ID() == arrow.INT64 {
		out.Retain()
		return out, nil
	}
	return call1(ec, "cast", compute.UnsafeCastOptions(t), out)
}

// remainderInt64 is remainder over two int64 columns without NULLs: a
// loop over the value slices into one buffer (the builder's append per
// row cost more than the division).
func remainderInt64(ec *evalCtx, a, b []int64) (arrow.Array, error) {
	buf := memory.NewResizableBuffer(ec.mem)
	buf.Resize(len(a) * 8)
	out := arrow.Int64Traits.CastFromBytes(buf.Bytes())
	for i, x := range a {
		switch y := b[i]; y {
		case 0:
			buf.Release()
			return nil, errorf(-1, "", "Divide by zero error")
		case -1:
			out[i] = 0
		default:
			out[i] = x % y
		}
	}
	data := array.NewData(arrow.PrimitiveTypes.Int64, len(a), []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	defer data.Release()
	return array.MakeFromData(data), nil
}

// isNode is IS [NOT] NULL|TRUE|FALSE: never NULL itself.
type isNode struct {
	x    node
	what string
	not  bool
}

func (n *isNode) typ() arrow.DataType { return tBool }
func (n *isNode) eval(ec *evalCtx) (arrow.Array, error) {
	if err := ec.live(); err != nil {
		return nil, err
	}
	x, err := n.x.eval(ec)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	if n.what == "NULL" {
		fn := "is_null"
		if n.not {
			fn = "is_not_null"
		}
		if x.DataType().ID() == arrow.NULL {
			return constBool(ec, !n.not), nil
		}
		return call1(ec, fn, nil, x)
	}
	want := n.what == "TRUE"
	bl := array.NewBooleanBuilder(ec.mem)
	defer bl.Release()
	// No kernel for IS TRUE (a NULL-free result); one pass over the booleans.
	b, _ := x.(*array.Boolean)
	for i := 0; i < ec.n; i++ {
		v := b != nil && b.IsValid(i) && b.Value(i) == want
		bl.Append(v != n.not)
	}
	return bl.NewArray(), nil
}

func constBool(ec *evalCtx, v bool) arrow.Array {
	bl := array.NewBooleanBuilder(ec.mem)
	defer bl.Release()
	for i := 0; i < ec.n; i++ {
		bl.Append(v)
	}
	return bl.NewArray()
}

// likeNode matches a string column against a LIKE pattern compiled to a regular expression. arrow-go
// has no match_like kernel: a loop over the strings.
type likeNode struct {
	x     node
	re    *regexp.Regexp
	match func(string) bool // the pattern's fast form (likeFast), else re.MatchString
	// prefix, when isPrefix, is the whole pattern 'prefix%': tested on the
	// string bytes in place (mapUTF8Prefix), no string made per row.
	prefix   string
	isPrefix bool
}

func (n *likeNode) typ() arrow.DataType { return tBool }
func (n *likeNode) eval(ec *evalCtx) (arrow.Array, error) {
	if err := ec.live(); err != nil {
		return nil, err
	}
	x, err := n.x.eval(ec)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	if a, ok := x.(*array.String); ok && n.isPrefix && a.Len() == ec.n {
		return mapUTF8Prefix(ec, a, n.prefix), nil
	}
	match := n.match
	if match == nil {
		match = n.re.MatchString
	}
	return mapStringsBool(ec, x, match)
}

// castNode is CAST/TRY_CAST/:: with arrow-go's cast kernel; a value that does not convert is an
// error (NULL with TRY_CAST).
type castNode struct {
	x        node
	to       arrow.DataType
	try      bool
	implicit bool
}

func (n *castNode) typ() arrow.DataType { return n.to }
func (n *castNode) eval(ec *evalCtx) (arrow.Array, error) {
	if err := ec.live(); err != nil {
		return nil, err
	}
	x, err := n.x.eval(ec)
	if err != nil {
		return nil, err
	}
	defer x.Release()
	if x.DataType().ID() == arrow.NULL {
		return array.MakeArrayOfNull(ec.mem, n.to, ec.n), nil
	}
	return castArray(ec, x, n.to, n.implicit, n.try)
}

// castArray casts x to t. Implicit casts (operands brought to a common type) may lose precision, as
// DataFusion's; explicit ones fail on a value that does not convert, or give NULL for it with TRY_CAST.
func castArray(ec *evalCtx, x arrow.Array, t arrow.DataType, implicit, try bool) (arrow.Array, error) {
	if isString(x.DataType()) && isTemporal(t) {
		return parseTemporal(ec, x, t, try)
	}
	opts := compute.SafeCastOptions(t)
	if implicit || isNumeric(x.DataType()) && isFloat(t) {
		opts = compute.UnsafeCastOptions(t)
	}
	out, err := compute.CastArray(ec.ctx, x, opts)
	if err != nil && try {
		// The kernel fails the whole array for one bad value: retry value by value (only on this
		// error path) so only the bad ones become NULL.
		bl := array.NewBuilder(ec.mem, t)
		defer bl.Release()
		for i := 0; i < x.Len(); i++ {
			one := array.NewSlice(x, int64(i), int64(i+1))
			c, err := compute.CastArray(ec.ctx, one, opts)
			one.Release()
			if err != nil || c.IsNull(0) {
				bl.AppendNull()
			} else {
				if err := bl.AppendValueFromString(c.ValueStr(0)); err != nil {
					bl.AppendNull()
				}
			}
			if c != nil {
				c.Release()
			}
		}
		out, err = bl.NewArray(), nil
	}
	if err != nil {
		return nil, errorf(-1, "", "cannot cast to %s: %v", t, err)
	}
	if isString(x.DataType()) && isFloat(t) {
		canonicalNaN(out)
	}
	return out, nil
}

// canonicalNaN gives the NaNs parsed from strings the bits Rust's parser gives them (0x7ff8…0), not
// Go's (0x7ff8…1): Lance orders floats by their bits (totalOrder), so 'NaN' must equal a stored NaN.
func canonicalNaN(a arrow.Array) {
	switch a := a.(type) {
	case *array.Float64:
		vals := a.Float64Values()
		for i, v := range vals {
			if v != v {
				vals[i] = math.Float64frombits(0x7ff8000000000000 | math.Float64bits(v)&(1<<63))
			}
		}
	case *array.Float32:
		vals := a.Float32Values()
		for i, v := range vals {
			if v != v {
				vals[i] = math.Float32frombits(0x7fc00000 | math.Float32bits(v)&(1<<31))
			}
		}
	}
}

// parseTemporal casts strings to a date or timestamp (arrow-go's cast kernel has no such cast): a
// loop parsing each value.
func parseTemporal(ec *evalCtx, x arrow.Array, t arrow.DataType, try bool) (arrow.Array, error) {
	s := asStrs(x)
	bl := array.NewBuilder(ec.mem, t)
	defer bl.Release()
	for i := 0; i < x.Len(); i++ {
		if s.IsNull(i) {
			bl.AppendNull()
			continue
		}
		tm, err := parseTimestamp(s.Value(i))
		if err != nil {
			if try {
				bl.AppendNull()
				continue
			}
			return nil, errorf(-1, "", "cannot cast %q to %s", s.Value(i), t)
		}
		switch b := bl.(type) {
		case *array.Date32Builder:
			b.Append(arrow.Date32FromTime(tm))
		case *array.Date64Builder:
			b.Append(arrow.Date64FromTime(tm))
		case *array.TimestampBuilder:
			v, err := arrow.TimestampFromTime(tm, t.(*arrow.TimestampType).Unit)
			if err != nil {
				return nil, errorf(-1, "", "timestamp %q out of range", s.Value(i))
			}
			b.Append(v)
		}
	}
	return bl.NewArray(), nil
}

// caseNode is CASE WHEN: the arms are evaluated whole, then each row takes the value of its first true
// condition (else the ELSE arm) through one take over the concatenated arms.
type caseNode struct {
	conds []node
	vals  []node // len(conds)+1: the last is ELSE
	t     arrow.DataType
}

func (n *caseNode) typ() arrow.DataType { return n.t }
func (n *caseNode) eval(ec *evalCtx) (arrow.Array, error) {
	if err := ec.live(); err != nil {
		return nil, err
	}
	choice := make([]int, ec.n)
	for i := range choice {
		choice[i] = -1
	}
	for k, c := range n.conds {
		a, err := evalBool(ec, c)
		if err != nil {
			return nil, err
		}
		b := a.(*array.Boolean)
		for i := 0; i < ec.n; i++ {
			if choice[i] < 0 && b.IsValid(i) && b.Value(i) {
				choice[i] = k
			}
		}
		a.Release()
	}
	for i := range choice {
		if choice[i] < 0 {
			choice[i] = len(n.conds)
		}
	}
	return pick(ec, n.vals, n.t, choice)
}

// pick evaluates vals (each of type t) and returns, for each row i, row i of vals[choice[i]]: a
// concatenation and one take kernel.
func pick(ec *evalCtx, vals []node, t arrow.DataType, choice []int) (arrow.Array, error) {
	if t.ID() == arrow.NULL {
		return array.NewNull(ec.n), nil
	}
	arrs := make([]arrow.Array, len(vals))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	for k, v := range vals {
		a, err := v.eval(ec)
		if err != nil {
			return nil, err
		}
		if a.DataType().ID() == arrow.NULL {
			a.Release()
			a = array.MakeArrayOfNull(ec.mem, t, ec.n)
		}
		arrs[k] = a
	}
	all, err := array.Concatenate(arrs, ec.mem)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	ib := array.NewInt64Builder(ec.mem)
	defer ib.Release()
	for i, k := range choice {
		ib.Append(int64(k*ec.n + i))
	}
	idx := ib.NewArray()
	defer idx.Release()
	out, err := compute.TakeArray(ec.ctx, all, idx)
	if err != nil {
		return nil, evalErr(err)
	}
	return out, nil
}
