package expr

import (
	"context"
	"encoding/binary"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// Counting the rows a predicate keeps (count_rows with a filter) needs only
// where it is TRUE: under SQL's three-valued logic `a AND b` is TRUE exactly
// where both are TRUE and `a OR b` where either is, whatever the other side
// (FALSE or NULL) is elsewhere. So a count works on bitmaps of TRUE rows and
// builds no boolean arrays for AND/OR (no and_kleene kernel, no validity
// bitmaps), and the right arm of an AND is tested only on the rows its left
// arm kept — for the comparisons that cannot fail (LIKE over a string
// column, intCmp): `id % 3 = 0 AND name LIKE 'vector-%'` tests the prefix on
// a third of the rows. Every node that can fail is evaluated on the whole
// batch as Eval does, so a count fails exactly when Eval fails.

// mask has bit i set for row i (64 rows a word; bits past the batch are 0).
type mask []uint64

func newMask(n int) mask { return make(mask, (n+63)/64) }

// fullMask is every row of a batch of n.
func fullMask(n int) mask {
	m := newMask(n)
	for i := range m {
		m[i] = ^uint64(0)
	}
	if r := n % 64; r != 0 {
		m[len(m)-1] = 1<<r - 1
	}
	return m
}

func (m mask) count() int {
	c := 0
	for _, w := range m {
		c += bits.OnesCount64(w)
	}
	return c
}

// andArrow clears in m the rows whose bit is 0 in the Arrow bitmap bm,
// which starts at bit off (an array's offset).
func (m mask) andArrow(bm []byte, off, n int) {
	if off%8 != 0 {
		cp := make([]byte, bitutil.BytesForBits(int64(n)))
		bitutil.CopyBitmap(bm, off, n, cp, 0)
		bm, off = cp, 0
	}
	bm = bm[off/8:]
	full := n / 64
	for i := 0; i < full; i++ {
		m[i] &= binary.LittleEndian.Uint64(bm[8*i:])
	}
	if full < len(m) {
		var tail [8]byte
		copy(tail[:], bm[8*full:bitutil.BytesForBits(int64(n))])
		m[full] &= binary.LittleEndian.Uint64(tail[:]) & (1<<(n%64) - 1)
	}
}

// CountTrue counts the rows of rec where the expression is TRUE (FALSE and
// NULL rows do not count): what counting the true values of Eval's answer
// gives, with the same errors.
func (b *Bound) CountTrue(ctx context.Context, rec arrow.RecordBatch) (int, error) {
	ec, err := newEvalCtx(ctx, rec)
	if err != nil {
		return 0, err
	}
	if id := b.root.typ().ID(); id != arrow.BOOL && id != arrow.NULL {
		return b.countEval(ec) // not a predicate: nothing counts, after Eval's errors
	}
	m, ok, err := trueRows(ec, b.root, nil)
	if err != nil {
		return 0, err
	}
	if !ok {
		return b.countEval(ec)
	}
	return m.count(), nil
}

// countEval is CountTrue through Eval: the true values of its answer
// (none when it is not a boolean array, such as a NULL literal's).
func (b *Bound) countEval(ec *evalCtx) (int, error) {
	a, err := b.root.eval(ec)
	if err != nil {
		return 0, err
	}
	defer a.Release()
	bl, ok := a.(*array.Boolean)
	if !ok {
		return 0, nil
	}
	m := fullMask(bl.Len())
	m.andTrue(bl)
	return m.count(), nil
}

// andTrue keeps in m the rows where bl (as long as the batch) is TRUE.
func (m mask) andTrue(bl *array.Boolean) {
	n := bl.Len()
	if n == 0 {
		return // arrays of no rows may have no buffers
	}
	m.andArrow(bl.Data().Buffers()[1].Bytes(), bl.Data().Offset(), n)
	if bl.NullN() > 0 {
		m.andArrow(bl.NullBitmapBytes(), bl.Data().Offset(), n)
	}
}

// trueRows is the rows among sel (nil: all) where x is TRUE. ok is false
// when an operand evaluated to something other than a boolean array (the
// caller counts through Eval instead). Only nodes that cannot fail look at
// sel; the others are evaluated on the whole batch first.
func trueRows(ec *evalCtx, x node, sel mask) (m mask, ok bool, err error) {
	if err := ec.live(); err != nil {
		return nil, false, err
	}
	switch x := x.(type) {
	case *logicNode:
		// A left-deep chain in a loop from its bottom (see binder.chain): every node of the
		// spine sees the same sel.
		spine := logicSpine(x)
		l, ok, err := trueRows(ec, spine[len(spine)-1].l, sel)
		if err != nil || !ok {
			return nil, ok, err
		}
		for i := len(spine) - 1; i >= 0; i-- {
			if l, ok, err = logicTrueRows(ec, spine[i], l, sel); err != nil || !ok {
				return nil, ok, err
			}
		}
		return l, true, nil
	case *cmpNode:
		if x.fast != nil && !(x.fast.mod && x.fast.k == 0) {
			return x.fast.trueRows(ec, sel)
		}
	case *likeNode:
		if m, ok, err := x.trueRows(ec, sel); ok || err != nil {
			return m, ok, err
		}
	}
	a, err := evalBool(ec, x)
	if err != nil {
		return nil, false, err
	}
	defer a.Release()
	bl, isBool := a.(*array.Boolean)
	if !isBool || bl.Len() != ec.n {
		return nil, false, nil
	}
	m = fullMask(ec.n)
	if sel != nil {
		copy(m, sel)
	}
	m.andTrue(bl)
	return m, true, nil
}

// logicTrueRows is trueRows of x (among sel) given l, the TRUE rows of its left operand.
func logicTrueRows(ec *evalCtx, x *logicNode, l, sel mask) (mask, bool, error) {
	if err := ec.live(); err != nil {
		return nil, false, err
	}
	if x.and {
		// TRUE AND r is r; FALSE or NULL AND anything is not TRUE.
		return trueRows(ec, x.r, l)
	}
	// TRUE OR anything is TRUE: r is asked only of the other rows.
	rest := fullMask(ec.n)
	if sel != nil {
		copy(rest, sel)
	}
	for i := range rest {
		rest[i] &^= l[i]
	}
	r, ok, err := trueRows(ec, x.r, rest)
	if err != nil || !ok {
		return nil, ok, err
	}
	for i := range l {
		l[i] |= r[i]
	}
	return l, true, nil
}

// trueRows is intCmp's answer as a mask: the rows of sel where the column
// is not NULL and the comparison holds. Words sel leaves empty are skipped.
// Not for a remainder by zero (an error: the caller evaluates it in full).
func (f *intCmp) trueRows(ec *evalCtx, sel mask) (mask, bool, error) {
	a, err := f.col.eval(ec)
	if err != nil {
		return nil, false, err
	}
	defer a.Release()
	col, ok := a.(*array.Int64)
	if !ok {
		return nil, false, errorf(-1, f.col.name, "the batch does not have the bound schema")
	}
	vals := col.Int64Values()
	n := len(vals)
	if n != ec.n {
		return nil, false, nil
	}
	m := f.words(vals, sel)
	if col.NullN() > 0 && n > 0 {
		m.andArrow(col.NullBitmapBytes(), col.Data().Offset(), n)
	}
	return m, true, nil
}

// words is the comparison over vals (NULLs not cleared) as a mask, only in
// the words sel (nil: all) has rows in.
func (f *intCmp) words(vals []int64, sel mask) mask {
	n := len(vals)
	m := newMask(n)
	rem := newIntRem(f.mod, f.k)
	var vs [64]int64
	for w := range m {
		if sel != nil && sel[w] == 0 {
			continue
		}
		chunk := vals[w*64 : min(n, w*64+64)]
		if rem.on {
			for j, v := range chunk {
				vs[j] = rem.of(v)
			}
			chunk = vs[:len(chunk)]
		}
		word := cmpWord(f.op, chunk, f.c)
		if sel != nil {
			word &= sel[w]
		}
		m[w] = word
	}
	return m
}

// cmpWord is the bits of v[j] op c for up to 64 values (one switch on op
// per 64 rows, a loop without branches per operator).
func cmpWord(op string, v []int64, c int64) uint64 {
	var w uint64
	switch op {
	case "=":
		for j, x := range v {
			w |= b2u(x == c) << j
		}
	case "!=":
		for j, x := range v {
			w |= b2u(x != c) << j
		}
	case "<":
		for j, x := range v {
			w |= b2u(x < c) << j
		}
	case "<=":
		for j, x := range v {
			w |= b2u(x <= c) << j
		}
	case ">":
		for j, x := range v {
			w |= b2u(x > c) << j
		}
	default:
		for j, x := range v {
			w |= b2u(x >= c) << j
		}
	}
	return w
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// intRem computes v % k as Go (and DataFusion) define it, for a fixed
// k: values and k in [0, 2^32) — row ids, counters — take Lemire's
// multiply-only reduction (a 64-bit division costs several times more,
// and `id % 3 = 0` divides every row); others divide.
type intRem struct {
	on    bool
	k     int64
	magic uint64 // ⌈2^64 / k⌉ when 0 < k < 2^32, else 0
}

func newIntRem(on bool, k int64) intRem {
	r := intRem{on: on, k: k}
	if on && k > 0 && k < 1<<32 {
		r.magic = ^uint64(0)/uint64(k) + 1
	}
	return r
}

func (r intRem) of(v int64) int64 {
	switch {
	case r.magic != 0 && uint64(v) < 1<<32:
		hi, _ := bits.Mul64(r.magic*uint64(v), uint64(r.k))
		return int64(hi)
	case r.k == -1:
		return 0 // MinInt64 % -1 overflows in hardware; the general path answers 0 too
	case r.k == 0:
		return v // not reached: a remainder by zero is evaluated in full
	}
	return v % r.k
}

// trueRows is the LIKE's answer as a mask over a plain utf8 operand,
// matching only the rows of sel that are not NULL. ok is false for other
// operands (the caller evaluates it as Eval does). The operand itself is
// evaluated on the whole batch (it may be an expression that can fail).
func (n *likeNode) trueRows(ec *evalCtx, sel mask) (mask, bool, error) {
	x, err := n.x.eval(ec)
	if err != nil {
		return nil, false, err
	}
	defer x.Release()
	a, ok := x.(*array.String)
	if !ok || a.Len() != ec.n {
		return nil, false, nil
	}
	m := fullMask(ec.n)
	if sel != nil {
		copy(m, sel)
	}
	if a.NullN() > 0 && ec.n > 0 {
		m.andArrow(a.NullBitmapBytes(), a.Data().Offset(), ec.n)
	}
	offs := a.ValueOffsets() // n+1 positions in the whole values buffer
	var data []byte
	if bufs := a.Data().Buffers(); len(bufs) > 2 && bufs[2] != nil {
		data = bufs[2].Bytes()
	}
	match := n.match
	if match == nil {
		match = n.re.MatchString
	}
	p := len(n.prefix)
	// a prefix of up to 8 bytes is compared as one masked 8-byte load
	// wherever 8 bytes follow the value's start in the buffer
	var pw, pmask uint64
	if p <= 8 {
		var b [8]byte
		copy(b[:], n.prefix)
		pw, pmask = binary.LittleEndian.Uint64(b[:]), ^uint64(0)>>(64-8*p)
		if p == 0 {
			pmask = 0
		}
	}
	for w, word := range m {
		out := word
		for word != 0 {
			j := bits.TrailingZeros64(word)
			word &= word - 1
			i := w*64 + j
			lo, hi := int(offs[i]), int(offs[i+1])
			var t bool
			switch {
			case !n.isPrefix:
				t = match(a.Value(i))
			case hi-lo < p:
			case p <= 8 && lo+8 <= len(data):
				t = binary.LittleEndian.Uint64(data[lo:])&pmask == pw
			default:
				t = string(data[lo:lo+p]) == n.prefix
			}
			if !t {
				out &^= 1 << j
			}
		}
		m[w] = out
	}
	return m, true, nil
}
