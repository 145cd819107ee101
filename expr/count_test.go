package expr

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
)

// evalCount is the count before CountTrue: the valid true values of Eval's answer.
func evalCount(t *testing.T, b *Bound, rec arrow.RecordBatch) (int, error) {
	t.Helper()
	a, err := b.Eval(context.Background(), rec)
	if err != nil {
		return 0, err
	}
	defer a.Release()
	bl, ok := a.(*array.Boolean)
	if !ok {
		return 0, nil
	}
	n := 0
	for i := 0; i < bl.Len(); i++ {
		if bl.IsValid(i) && bl.Value(i) {
			n++
		}
	}
	return n, nil
}

// TestCountTrueMatchesEval: CountTrue (bitmaps of TRUE rows, the right arm of an AND tested only
// where the left kept the row) counts what Eval's answer holds, with the same errors, for AND/OR/NOT
// with NULLs in either arm (three-valued logic: NULL AND FALSE is FALSE, NULL OR TRUE is TRUE), arms
// that keep nothing or everything, empty strings, failing arms (a remainder by zero, a bad cast)
// behind an arm that keeps nothing, and batches of 0, 1, 63, 64, 65 and 300 rows, sliced at odd
// offsets (validity bitmaps not byte-aligned).
func TestCountTrueMatchesEval(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	names := []string{"", "vector-1", "vector-", "vec", "index-7", "vector-index", "Vector-2", "日本-1"}
	for i := range 400 {
		if i%11 == 5 {
			b.Field(0).(*array.Int64Builder).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(int64(i - 30))
		}
		if i%7 == 2 {
			b.Field(1).(*array.StringBuilder).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(names[i%len(names)])
		}
		if i%13 == 1 {
			b.Field(2).(*array.Float64Builder).AppendNull()
		} else {
			b.Field(2).(*array.Float64Builder).Append(float64(i%17) - 8)
		}
		if i%5 == 0 {
			b.Field(3).(*array.BooleanBuilder).AppendNull()
		} else {
			b.Field(3).(*array.BooleanBuilder).Append(i%3 == 0)
		}
	}
	full := b.NewRecordBatch()
	defer full.Release()
	batches := map[string]arrow.RecordBatch{"full": full}
	for _, s := range [][2]int64{{0, 0}, {3, 4}, {5, 6}, {1, 64}, {7, 71}, {13, 78}, {37, 337}} {
		part := full.NewSlice(s[0], s[1])
		defer part.Release()
		batches[fmt.Sprintf("rows %d..%d", s[0], s[1])] = part
	}
	filters := []string{
		"id % 3 = 0 AND name LIKE 'vector-%'",
		"name LIKE 'vector-%' AND id % 3 = 0",
		"id % 3 = 0 OR name LIKE 'vector-%'",
		"id % 3 = 0 AND name NOT LIKE 'vector-%'",
		"NOT (id % 3 = 0 AND name LIKE 'vector-%')",
		"id % 3 = 0 AND name LIKE '%index%'",
		"id % 3 = 0 AND name LIKE 'v_c%'",     // regular expression
		"id % 3 = 0 AND name LIKE ''",         // only empty strings
		"id % 3 = 0 AND name LIKE '%'",        // every non-NULL string
		"id < -1000 AND name LIKE 'vector-%'", // left keeps nothing
		"id > -1000 AND name LIKE 'vector-%'", // left keeps every non-NULL id
		"id % 3 = 0 AND b",                    // NULLs on both sides
		"b AND id % 3 = 0",                    //
		"b OR id % 2 = 1",                     //
		"b OR name LIKE 'vector-%' OR id = 7", //
		"(b OR f > 0) AND (id % 4 != 1 OR name LIKE 'vec%')",
		"id % 3 = 0 AND f > 0 AND name LIKE 'vector-%'",
		"id % 3 = 0 AND NULL",                          // NULL-typed arm: nothing is TRUE
		"NULL OR id = 4",                               //
		"id IS NULL AND name LIKE 'vector-%'",          //
		"id % 3 = 0 AND name IS NULL",                  //
		"id % 0 = 0 AND name LIKE 'vector-%'",          // fails: remainder by zero
		"id < -1000 AND id % 0 = 0",                    // fails though the left arm keeps nothing (as Eval)
		"id < -1000 AND CAST(name AS INT) = 1",         // fails: the cast of a non-number
		"id < -1000 OR CAST(name AS INT) = 1",          //
		"id % -1 = 0 AND id % 9223372036854775807 = 5", // awkward divisors
		"id % 4294967296 = 1 OR id % 4294967295 = 2",   // divisors at the fast remainder's bound
		"id % -3 = -1 AND id % 3 != 2",                 // negative values keep Go's sign rule
		"id BETWEEN 10 AND 100",                        //
		"id IN (1, 2, 3, 70) AND name LIKE 'vec%'",     //
		"f > 0", // no fast arm at all
		"TRUE", "FALSE", "NULL",
	}
	ctx := context.Background()
	for _, f := range filters {
		bound, err := Compile(f, schema)
		assert.NilError(t, err, f)
		for name, rec := range batches {
			want, werr := evalCount(t, bound, rec)
			got, gerr := bound.CountTrue(ctx, rec)
			if werr != nil || gerr != nil {
				assert.Assert(t, werr != nil && gerr != nil, "%s/%s: Eval: %v, CountTrue: %v", f, name, werr, gerr)
				assert.Equal(t, gerr.Error(), werr.Error(), "%s/%s", f, name)
				continue
			}
			assert.Equal(t, got, want, "%s/%s", f, name)
		}
	}
}

// TestIntRemMatchesDivision: the multiply-only remainder answers v % k for values and divisors on
// both sides of its [0, 2^32) bound, negative values and divisors, and the extremes.
func TestIntRemMatchesDivision(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ks := []int64{1, 2, 3, 7, 10, 1000, 65537, 1<<32 - 1, 1 << 32, 1<<32 + 1, math.MaxInt64, -1, -3, -(1 << 32), math.MinInt64}
	vs := []int64{0, 1, 2, 3, 1<<32 - 1, 1 << 32, 1<<32 + 1, math.MaxInt64, -1, -2, math.MinInt64, math.MinInt64 + 1}
	for range 2000 {
		vs = append(vs, int64(r.Uint32()), r.Int64(), -int64(r.Uint32()))
	}
	for _, k := range ks {
		rem := newIntRem(true, k)
		for _, v := range vs {
			want := int64(0)
			if k != -1 {
				want = v % k
			}
			assert.Equal(t, rem.of(v), want, "%d %% %d", v, k)
		}
	}
}
