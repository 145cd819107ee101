package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// intCmp is a comparison of an int64 column, or of `column % k`, with a non-NULL int64 literal
// (`id % 3 = 0`, `id > 150000`): one pass over the column's values straight into the result
// bitmap. The general path builds the remainder as an array, broadcasts the literal to another and
// runs arrow-go's comparison kernel over the two (three batch-sized arrays for one predicate; the
// most common filter shape in count_rows). The answer is the general path's, NULL where the column
// is NULL (TestIntCmpMatchesGeneral).
type intCmp struct {
	col *colNode
	mod bool
	k   int64 // the divisor, when mod
	op  string
	c   int64 // the literal the column (or its remainder) is compared with
}

// flipped is op with its operands swapped (lit < col is col > lit).
var flipped = map[string]string{"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

// fastIntCmp recognises the shapes intCmp evaluates; nil for any other comparison.
func fastIntCmp(op string, l, r node) *intCmp {
	if _, ok := cmpKernel[op]; !ok {
		return nil
	}
	if lit, ok := int64Lit(l); ok {
		if _, both := r.(*litNode); both {
			return nil // literal against literal: flipping would recurse forever (FuzzIndexedFilter: "0<0")
		}
		if f := fastIntCmp(flipped[op], r, &litNode{val: lit}); f != nil {
			return f
		}
		return nil
	}
	lit, ok := int64Lit(r)
	if !ok {
		return nil
	}
	f := &intCmp{op: op, c: lit.(*array.Int64).Value(0)}
	switch x := l.(type) {
	case *colNode:
		f.col = x
	case *arithNode:
		col, ok := x.l.(*colNode)
		k, kok := int64Lit(x.r)
		if x.op != "%" || x.t.ID() != arrow.INT64 || !ok || !kok {
			return nil
		}
		f.col, f.mod, f.k = col, true, k.(*array.Int64).Value(0)
	default:
		return nil
	}
	if f.col.t.ID() != arrow.INT64 {
		return nil
	}
	return f
}

// int64Lit is n's value when n is a non-NULL int64 literal.
func int64Lit(n node) (arrow.Array, bool) {
	lit, ok := n.(*litNode)
	if !ok || lit.val.DataType().ID() != arrow.INT64 || lit.val.Len() != 1 || lit.val.IsNull(0) {
		return nil, false
	}
	return lit.val, true
}

func (f *intCmp) eval(ec *evalCtx) (arrow.Array, error) {
	a, err := f.col.eval(ec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	col, ok := a.(*array.Int64)
	if !ok {
		return nil, errorf(-1, f.col.name, "the batch does not have the bound schema")
	}
	vals := col.Int64Values()
	n := len(vals)
	nulls := col.NullN()
	if f.mod && f.k == 0 && nulls < n {
		return nil, errorf(-1, "", "Divide by zero error") // as remainder: only where a value meets the zero
	}
	nbytes := int(bitutil.BytesForBits(int64(n)))
	out := memory.NewResizableBuffer(ec.mem)
	out.Resize(nbytes)
	bits := out.Bytes()
	clear(bits)
	// the words of intCmp.trueRows (count.go), stored a byte at a time
	m := f.words(vals, nil)
	for i := range bits {
		bits[i] = byte(m[i/8] >> (8 * (i % 8)))
	}
	return boolArray(n, copyValidity(ec, col, bits), out, nulls), nil
}
