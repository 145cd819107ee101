package expr

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
)

// generalOnly clears the fast paths below n, so it evaluates as the general (kernel) path does.
func generalOnly(n node) {
	switch n := n.(type) {
	case *cmpNode:
		n.fast = nil
	case *likeNode:
		n.isPrefix = false
	case *logicNode:
		generalOnly(n.l)
		generalOnly(n.r)
	case *notNode:
		generalOnly(n.x)
	}
}

// hasFast reports whether some comparison below n took intCmp.
func hasFast(n node) bool {
	switch n := n.(type) {
	case *cmpNode:
		return n.fast != nil
	case *likeNode:
		return n.isPrefix
	case *logicNode:
		return hasFast(n.l) || hasFast(n.r)
	case *notNode:
		return hasFast(n.x)
	}
	return false
}

// TestIntCmpMatchesGeneral: intCmp answers what the general path answers (the same NULLs, the same
// values where not NULL, the same error) for every operator, both operand orders, remainders by
// every awkward divisor, NULLs and extreme values, and a batch that is a slice of a larger one
// (non-zero array offsets).
func TestIntCmpMatchesGeneral(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	edge := []int64{0, 1, -1, 2, -2, 3, -3, 7, -7, 100, 150000, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1}
	for i := range 300 {
		v := edge[i%len(edge)] + int64(i/len(edge))*int64(1-2*(i%2))
		if i%7 == 3 {
			b.Field(0).(*array.Int64Builder).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(v)
		}
		b.Field(1).(*array.Int64Builder).Append(v)
		b.Field(2).(*array.Int32Builder).Append(int32(v))
	}
	full := b.NewRecordBatch()
	defer full.Release()
	part := full.NewSlice(13, 250)
	defer part.Release()
	nulls := full.NewSlice(3, 4) // one row, NULL
	defer nulls.Release()

	var filters []string
	for _, op := range []string{"=", "!=", "<", "<=", ">", ">="} {
		for _, c := range []string{"0", "1", "-1", "2", "150000", "9223372036854775807", "-9223372036854775808"} {
			filters = append(filters, fmt.Sprintf("id %s %s", op, c), fmt.Sprintf("%s %s n", c, op))
			for _, k := range []string{"3", "-3", "1", "-1", "7", "9223372036854775807", "-9223372036854775808"} {
				filters = append(filters, fmt.Sprintf("id %% %s %s %s", k, op, c), fmt.Sprintf("%s %s n %% %s", c, op, k))
			}
		}
	}
	filters = append(filters,
		"id % 3 = 0 AND n > 5", "NOT (id % 2 = 1) OR n < -3", "id % 0 = 0", "n % 0 = 1", "0 = n % 0",
		"id = NULL", "id % 3 = NULL", // not intCmp (NULL literal): the general path, both times
		"i32 % 3 = 0", "id = 2.5", "id % 3 = i32", // other types and shapes stay general
		"0 < 0", "1 >= 1", "3 % 2 = 1") // literal against literal: general (flipping it recursed forever)
	wantFast := 0
	for _, f := range filters {
		for name, rec := range map[string]arrow.RecordBatch{"full": full, "slice": part, "null": nulls} {
			t.Run(name+"/"+f, func(t *testing.T) {
				fast, err := Compile(f, schema)
				if err != nil {
					return // a literal that does not fit: a bind error, no evaluation
				}
				gen, err := Compile(f, schema)
				assert.NilError(t, err)
				generalOnly(gen.root)
				if name == "full" && hasFast(fast.root) {
					wantFast++
				}
				ctx := context.Background()
				got, gerr := fast.Eval(ctx, rec)
				want, werr := gen.Eval(ctx, rec)
				if werr != nil || gerr != nil {
					assert.Check(t, werr != nil && gerr != nil, "general: %v, fast: %v", werr, gerr)
					if werr != nil && gerr != nil {
						assert.Equal(t, gerr.Error(), werr.Error())
					}
					if got != nil {
						got.Release()
					}
					if want != nil {
						want.Release()
					}
					return
				}
				defer got.Release()
				defer want.Release()
				assert.Equal(t, got.Len(), want.Len())
				for i := 0; i < got.Len(); i++ {
					assert.Equal(t, got.IsNull(i), want.IsNull(i), "row %d", i)
					if want.IsValid(i) {
						assert.Equal(t, got.(*array.Boolean).Value(i), want.(*array.Boolean).Value(i), "row %d", i)
					}
				}
			})
		}
	}
	assert.Assert(t, wantFast > 150, "only %d filters took intCmp", wantFast)
}

// TestLikePrefixMatchesGeneral: LIKE 'prefix%' on the string bytes answers what the general
// matcher answers, over NULLs, empty strings, unicode, prefixes longer than the value, a sliced
// batch, and an all-NULL one; patterns that are not a plain prefix keep the general matcher.
func TestLikePrefixMatchesGeneral(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	strs := []string{"", "v", "vector-", "vector-1", "vector-123", "vec", "Vector-1", "xvector-1", "héllo", "hé", "日本語", "日本", "%", "a%", "a_b", "\x00"}
	for i := range 200 {
		if i%9 == 4 {
			b.Field(0).(*array.StringBuilder).AppendNull()
			continue
		}
		b.Field(0).(*array.StringBuilder).Append(strs[i%len(strs)])
	}
	full := b.NewRecordBatch()
	defer full.Release()
	part := full.NewSlice(5, 170)
	defer part.Release()
	nulls := full.NewSlice(4, 5)
	defer nulls.Release()
	prefixes := 0
	for _, pat := range []string{"vector-%", "v%", "%", "%%", "vector-1%%", "hé%", "日本%", "vector-123456789%", "%vector", "v_c%", "vec%1", `a\%%`, "a%%b%"} {
		for _, f := range []string{fmt.Sprintf("s LIKE '%s'", pat), fmt.Sprintf("s NOT LIKE '%s'", pat), fmt.Sprintf("s LIKE '%s' AND s IS NOT NULL", pat)} {
			for name, rec := range map[string]arrow.RecordBatch{"full": full, "slice": part, "null": nulls} {
				fast, err := Compile(f, schema)
				assert.NilError(t, err, f)
				gen, err := Compile(f, schema)
				assert.NilError(t, err)
				generalOnly(gen.root)
				if name == "full" && hasFast(fast.root) {
					prefixes++
				}
				ctx := context.Background()
				got, err := fast.Eval(ctx, rec)
				assert.NilError(t, err)
				want, err := gen.Eval(ctx, rec)
				assert.NilError(t, err)
				assert.Equal(t, got.Len(), want.Len())
				for i := 0; i < got.Len(); i++ {
					assert.Equal(t, got.IsNull(i), want.IsNull(i), "%s/%s row %d", name, f, i)
					if want.IsValid(i) {
						assert.Equal(t, got.(*array.Boolean).Value(i), want.(*array.Boolean).Value(i), "%s/%s row %d", name, f, i)
					}
				}
				got.Release()
				want.Release()
			}
		}
	}
	// vector-%, v%, vector-1%%, hé%, 日本%, vector-123456789% ('%' and '%%' match everything
	// through likeFast), three filters each
	assert.Equal(t, prefixes, 3*6)
}
