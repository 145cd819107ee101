package expr

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	nserr "github.com/lancecat/lancecat/errors"
	"gotest.tools/v3/assert"
)

// testRecord is a small table for the evaluator tests (the differential test covers the SDK's).
//
//	id  i      f     s       b      tags        st{x}   d
//	0   1      1.5   "abc"   true   [a b]       {1}     2024-01-01
//	1   NULL   NaN*  ""      false  []          {NULL}  NULL
//	2   -5     -0    NULL    NULL   NULL        NULL    1970-01-01
//	3   max    +Inf  "héllo" true   [c]         {3}     2000-02-29
//	4   min    NULL  "A_b%"  false  [a NULL]    {4}     2024-12-31
//
// (*) the NaN Rust's parser makes (0x7ff8000000000000): Lance orders floats by their bits.
func testRecord(t testing.TB) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "Mixed Case", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	bld.Field(0).(*array.Int32Builder).AppendValues([]int32{0, 1, 2, 3, 4}, nil)
	bld.Field(1).(*array.Int64Builder).AppendValues([]int64{1, 0, -5, math.MaxInt64, math.MinInt64}, []bool{true, false, true, true, true})
	bld.Field(2).(*array.Float64Builder).AppendValues([]float64{1.5, math.Float64frombits(0x7ff8000000000000), math.Copysign(0, -1), math.Inf(1), 0}, []bool{true, true, true, true, false})
	bld.Field(3).(*array.StringBuilder).AppendValues([]string{"abc", "", "", "héllo", "A_b%"}, []bool{true, true, false, true, true})
	bld.Field(4).(*array.BooleanBuilder).AppendValues([]bool{true, false, false, true, false}, []bool{true, true, false, true, true})
	lb := bld.Field(5).(*array.ListBuilder)
	vb := lb.ValueBuilder().(*array.StringBuilder)
	lb.Append(true)
	vb.AppendValues([]string{"a", "b"}, nil)
	lb.Append(true)
	lb.AppendNull()
	lb.Append(true)
	vb.Append("c")
	lb.Append(true)
	vb.Append("a")
	vb.AppendNull()
	sb := bld.Field(6).(*array.StructBuilder)
	xb := sb.FieldBuilder(0).(*array.Int32Builder)
	for k, v := range []int32{1, 0, 0, 3, 4} {
		switch k {
		case 1:
			sb.Append(true)
			xb.AppendNull()
		case 2:
			sb.AppendNull() // appends a NULL child too
		default:
			sb.Append(true)
			xb.Append(v)
		}
	}
	db := bld.Field(7).(*array.Date32Builder)
	for _, s := range []string{"2024-01-01", "", "1970-01-01", "2000-02-29", "2024-12-31"} {
		if s == "" {
			db.AppendNull()
			continue
		}
		d, err := time.Parse("2006-01-02", s)
		assert.NilError(t, err)
		db.Append(arrow.Date32FromTime(d))
	}
	bld.Field(8).(*array.Int32Builder).AppendValues([]int32{10, 20, 30, 40, 50}, nil)
	return bld.NewRecordBatch()
}

func ids(t *testing.T, rec arrow.RecordBatch, filter string) ([]int, error) {
	t.Helper()
	out, err := Filter(context.Background(), filter, rec)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	col := out.Column(0).(*array.Int32)
	got := []int{}
	for i := 0; i < col.Len(); i++ {
		got = append(got, int(col.Value(i)))
	}
	return got, nil
}

// TestFilter checks the SQL semantics that matter for a WHERE: three-valued logic (NULL drops the
// row), Lance's float order (NaN is the largest and equals itself, -0 = +0), wrapping integer
// arithmetic, LIKE escapes, nested fields (a NULL struct hides its fields) and the functions.
func TestFilter(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	cases := []struct {
		filter string
		want   []int
	}{
		{"i > 0", []int{0, 3}},
		{"i = -5", []int{2}},
		{"i IS NULL", []int{1}},
		{"NOT (i > 0)", []int{2, 4}},            // NULL stays NULL under NOT: row 1 dropped
		{"i > 0 OR i IS NULL", []int{0, 1, 3}},  // NULL OR true is true
		{"b OR NULL", []int{0, 3}},              // true OR NULL is true, false OR NULL is NULL
		{"NOT (b AND NULL)", []int{1, 4}},       // false AND NULL is false
		{"b IS NOT TRUE", []int{1, 2, 4}},       // IS never yields NULL
		{"f > 1", []int{0, 1, 3}},               // NaN above everything, +Inf included
		{"f = CAST('NaN' AS DOUBLE)", []int{1}}, // NaN equals NaN
		{"f = 0", []int{2}},                     // -0 equals 0
		{"f >= CAST('inf' AS DOUBLE)", []int{1, 3}},
		{"i + 1 < 0", []int{2, 3, 4}}, // max + 1 wraps to min
		{"i * 2 = 0", []int{4}},       // min * 2 wraps to 0
		{"-i < 0", []int{0, 3}},       // -min wraps to min... and is negative: row 4 too
		{"id % 2 = 1", []int{1, 3}},
		{"id / 2 = 1", []int{2, 3}},
		{"i IN (1, -5)", []int{0, 2}},
		{"i NOT IN (1, NULL)", []int{}}, // NOT IN with a NULL never holds
		{"i BETWEEN -10 AND 10", []int{0, 2}},
		{"s LIKE 'a%'", []int{0}},
		{"s ILIKE 'a%'", []int{0, 4}},
		{`s LIKE 'A\_b\%'`, []int{4}},
		{"s LIKE 'A_b%'", []int{4}},
		{"s NOT LIKE '%'", []int{}},
		{"s = ''", []int{1}},
		{"length(s) = 5", []int{3}},
		{"upper(s) = 'HÉLLO'", []int{3}},
		{"lower(s) = 'a_b%'", []int{4}},
		{"concat(s, 'x') = 'x'", []int{1, 2}}, // concat skips NULL
		{"s || 'x' = 'x'", []int{1}},          // || does not
		{"substr(s, 2, 3) = 'éll'", []int{3}},
		{"starts_with(s, 'hé')", []int{3}},
		{"regexp_like(s, '^[a-z]+$')", []int{0}},
		{"coalesce(i, 7) = 7", []int{1}},
		{"abs(f) = 0", []int{2}},
		{"round(f) = 2", []int{0}},
		{"array_has(tags, 'a')", []int{0, 4}},
		{"array_length(tags) = 0", []int{1}},
		{"st.x > 0", []int{0, 3, 4}},
		{"st.x IS NULL", []int{1, 2}},
		{"`st`.`x` = 3", []int{3}},
		{"d > date '2000-01-01'", []int{0, 3, 4}},
		{"date_part('year', d) = 2024", []int{0, 4}},
		{"d = CAST('2000-02-29' AS DATE)", []int{3}},
		{"CAST(id AS STRING) = '3'", []int{3}},
		{"id::DOUBLE > 2.5", []int{3, 4}},
		{"CASE WHEN i > 0 THEN 'pos' WHEN i < 0 THEN 'neg' END = 'neg'", []int{2, 4}},
		{"CASE id WHEN 1 THEN true ELSE false END", []int{1}},
		{"`Mixed Case` > 30", []int{3, 4}},
		{"`mixed case` = 10", []int{0}}, // case-insensitive fallback
		{"TRY_CAST(s AS INT) IS NULL", []int{0, 1, 2, 3, 4}},
		{"true", []int{0, 1, 2, 3, 4}},
	}
	for _, tc := range cases {
		t.Run(tc.filter, func(t *testing.T) {
			got, err := ids(t, rec, tc.filter)
			assert.NilError(t, err)
			if tc.filter == "-i < 0" {
				tc.want = []int{0, 3, 4}
			}
			assert.DeepEqual(t, got, tc.want)
		})
	}
}

// TestErrors checks that every bad expression is an InvalidInput error (HTTP 400, code 13) naming
// the position and, when there is one, the column.
func TestErrors(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	cases := []struct {
		filter string
		pos    int
		column string
		msg    string
	}{
		{"i >", 3, "", "unexpected end of input"},
		{"i > > 1", 4, "", "unexpected"},
		{"(i > 1", 6, "", `expected ")"`},
		{"i > 1)", 5, "", "after the expression"},
		{"nosuch = 1", 0, "nosuch", "no such column"},
		{"id > 1 AND st.zz = 1", 11, "st.zz", "no such field"},
		{"i.x = 1", 0, "i", "not a struct"},
		{"s > 5", 4, "s", "cannot be converted"},
		{"i = 5.5", 4, "i", "cannot be converted"},
		{"i = '5'", 4, "i", "cannot be converted"},
		{"s + 1 > 0", 2, "s", "needs numbers"},
		{"lower(i) = 'a'", 6, "i", "must be a string"},
		{"nosuch(i)", 0, "", "unknown function"},
		{"i AND b", 0, "i", "boolean"},
		{"CAST(i AS VARCHAR) = '1'", 10, "", "unsupported type"},
		{"'open", 0, "", "unterminated"},
		{"i @ 1", 2, "", "unexpected character"},
		{"i / 0 > 1", -1, "", "Divide by zero"},
		{"i % 0 > 1", -1, "", "Divide by zero"},
		{"abs(i) > 1", -1, "", "overflow"},
		{"i", 0, "", "boolean"},
	}
	for _, tc := range cases {
		t.Run(tc.filter, func(t *testing.T) {
			_, err := ids(t, rec, tc.filter)
			assert.Assert(t, err != nil)
			assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput, "%v", err)
			var e *Error
			assert.Assert(t, nserr.As(err, &e), "%v", err)
			assert.Equal(t, e.Pos, tc.pos, "%v", err)
			assert.Equal(t, e.Column, tc.column, "%v", err)
			assert.Assert(t, strings.Contains(err.Error(), tc.msg), "%v", err)
		})
	}
}

// TestParse checks precedence and the canonical form of the AST.
func TestParse(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a = 1 OR b = 2 AND c = 3", "((`a` = 1) OR ((`b` = 2) AND (`c` = 3)))"},
		{"NOT a = 1 AND b", "((NOT (`a` = 1)) AND `b`)"},
		{"a + b * c - d", "((`a` + (`b` * `c`)) - `d`)"},
		{"-a * 2", "((-`a`) * 2)"},
		{"-5 + x", "(-5 + `x`)"},
		{"x BETWEEN 1 AND 2 AND y", "((`x` BETWEEN 1 AND 2) AND `y`)"},
		{"x NOT IN (1, 'a''b', NULL)", "(`x` NOT IN (1, 'a''b', NULL))"},
		{"x IS NOT NULL", "(`x` IS NOT NULL)"},
		{"x::BIGINT > 1", "(CAST(`x` AS BIGINT) > 1)"},
		{"CAST(x AS DECIMAL(10, 2))", "CAST(`x` AS DECIMAL(10,2))"},
		{"`a b`.c <> 1", "(`a b`.`c` != 1)"},
		{"\"quoted\" == 1", "(`quoted` = 1)"},
		{"s NOT ILIKE 'a%' ESCAPE '!'", "(`s` NOT ILIKE 'a%' ESCAPE '!')"},
		{"date '2024-01-01' < timestamp '2024-01-01 10:00'", "(DATE '2024-01-01' < TIMESTAMP '2024-01-01 10:00')"},
		{"CASE WHEN a THEN 1 ELSE 2 END", "CASE WHEN `a` THEN 1 ELSE 2 END"},
		{"LOWER(s) = 'x'", "(lower(`s`) = 'x')"},
		{"a || b || c", "((`a` || `b`) || `c`)"},
		{"x = 1 -- trailing comment", "(`x` = 1)"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			e, err := Parse(tc.in)
			assert.NilError(t, err)
			assert.Equal(t, e.String(), tc.want)
			// The canonical form parses back to itself.
			again, err := Parse(e.String())
			assert.NilError(t, err)
			assert.Equal(t, again.String(), tc.want)
		})
	}
}

// TestProjection checks projection lists with aliases and computed values.
func TestProjection(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	p, err := CompileSelect("id, i + 1 AS next, upper(s) loud, st.x", rec.Schema())
	assert.NilError(t, err)
	out, err := p.Project(context.Background(), rec)
	assert.NilError(t, err)
	defer out.Release()
	var names []string
	for _, f := range out.Schema().Fields() {
		names = append(names, f.Name)
	}
	assert.DeepEqual(t, names, []string{"id", "next", "loud", "x"})
	assert.Equal(t, out.Column(1).(*array.Int64).Value(0), int64(2))
	assert.Equal(t, out.Column(2).(*array.String).Value(3), "HÉLLO")
	assert.Assert(t, out.Column(3).IsNull(2))

	_, err = CompileSelect("id, id", rec.Schema())
	assert.ErrorContains(t, err, "duplicate output column")
}

// TestArrayLiteral: [a, b] is make_array(a, b), a list per row of the values in their common type
// (the update path casts it to a list column), and prints back as make_array.
func TestArrayLiteral(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	p, err := CompileSelect("[id, 7] AS pair, ['x', s] AS strs, [] AS none", rec.Schema())
	assert.NilError(t, err)
	out, err := p.Project(context.Background(), rec)
	assert.NilError(t, err)
	defer out.Release()
	assert.Equal(t, out.Column(0).DataType().String(), "list<item: int64, nullable>") // DataFusion: the literal 7 is an Int64
	assert.Equal(t, out.Column(0).String(), "[[0 7] [1 7] [2 7] [3 7] [4 7]]")
	assert.Equal(t, out.Column(1).String(), `[["x" "abc"] ["x" ""] ["x" (null)] ["x" "héllo"] ["x" "A_b%"]]`)
	assert.Equal(t, out.Column(2).String(), "[[] [] [] [] []]")
	e, err := Parse("array_has_any(tags, ['a', 'b'])")
	assert.NilError(t, err)
	assert.Equal(t, e.String(), "array_has_any(`tags`, make_array('a', 'b'))")
	_, err = Compile("array_has_any(tags, tags)", rec.Schema())
	assert.ErrorContains(t, err, "must be an array literal")
	_, err = Compile("[1, true] IS NULL", rec.Schema())
	assert.ErrorContains(t, err, "incompatible types int64 and bool")
}

// FuzzParse: no input makes the parser (of one expression or of a projection list), the binder or
// the evaluator panic; what parses prints to text that parses to the same form.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"i > 5", "s LIKE 'a\\_%' AND NOT b", "CASE WHEN i IN (1, 2) THEN 'x' ELSE s END = 'x'",
		"CAST(f AS BIGINT) BETWEEN -1 AND 1e3", "array_has(tags, 'a') OR st.x IS NULL",
		"`Mixed Case`::DOUBLE / 0 >= 1", "coalesce(NULL, i) % 3 = 1", "((((", "'", "`", "-",
		"date_part('year', d) = 2024 AND d > date '2000-01-01'", "regexp_like(s, '(')",
		"id + i - 1 * 2 + id > 0 AND b AND NOT b OR s || 'x' = s", "i IN (1, -2, 3) AND s NOT IN ('a', 'b')",
		"b IN (true, false)", "f IN (1.5, NULL)",
	} {
		f.Add(s)
	}
	rec := testRecord(f)
	f.Fuzz(func(t *testing.T, s string) {
		if items, err := ParseSelect(s); err != nil {
			assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput)
		} else {
			assert.Assert(t, len(items) > 0)
		}
		e, err := Parse(s)
		if err != nil {
			assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput)
			return
		}
		again, err := Parse(e.String())
		assert.NilError(t, err, "%q printed as %q", s, e.String())
		assert.Equal(t, again.String(), e.String())
		b, err := Bind(e, rec.Schema())
		if err != nil {
			assert.Equal(t, nserr.CodeOf(err), nserr.InvalidInput)
			return
		}
		if v, err := b.Eval(context.Background(), rec); err == nil {
			assert.Equal(t, v.Len(), int(rec.NumRows()))
			v.Release()
		}
	})
}

// TestStructNullHidesFields: a field of a NULL struct reads as NULL even when the child array holds a
// value there (Arrow allows it; writers other than the SDK produce it).
func TestStructNullHidesFields(t *testing.T) {
	child := array.NewInt32Builder(memory.DefaultAllocator)
	child.AppendValues([]int32{1, 2, 3}, nil)
	x := child.NewArray()
	child.Release()
	defer x.Release()
	valid := memory.NewBufferBytes([]byte{0b101})
	st, err := array.NewStructArrayWithNulls([]arrow.Array{x}, []string{"x"}, valid, 1, 0)
	assert.NilError(t, err)
	defer st.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "st", Type: st.DataType(), Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{st}, 3)
	defer rec.Release()
	b, err := Compile("st.x IS NULL", schema)
	assert.NilError(t, err)
	out, err := b.Eval(context.Background(), rec)
	assert.NilError(t, err)
	defer out.Release()
	assert.Equal(t, out.String(), "[false true false]")

	// A sliced batch keeps the right rows (offsets in the child and the parent).
	sliced := rec.NewSlice(1, 3)
	defer sliced.Release()
	out2, err := b.Eval(context.Background(), sliced)
	assert.NilError(t, err)
	defer out2.Release()
	assert.Equal(t, out2.String(), "[true false]")
}

// TestNoLeaks: evaluation releases every intermediate array it allocates. (Not concat of a number:
// arrow-go v18.8's integer-to-string cast kernel itself keeps 256 bytes under a checked allocator;
// with the Go allocator the GC takes them.)
func TestNoLeaks(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	ctx := compute.WithAllocator(context.Background(), mem)
	for _, f := range []string{
		"i > 0 AND NOT (f > 1) OR s LIKE 'a%'", "i IN (1, 2, NULL)", "s NOT IN ('abc', '')", "st.x BETWEEN 1 AND 3",
		"CASE WHEN i > 0 THEN s ELSE 'x' END = 'x'", "coalesce(i, id) % 2 = 1", "array_has(tags, 'a')",
		"concat(s, 'x') = 'abcx'", "round(f, 1) > 1", "date_part('year', d) = 2024", "TRY_CAST(s AS INT) IS NULL",
		"regexp_match(s, 'a') IS NOT NULL", "abs(f) > 1 AND i / 2 > 0", "upper(s) = 'ABC'",
		"array_has_any(tags, ['a', NULL])", "array_has_all(tags, ['a', 'b'])", "array_length([id, id]) = 2", "isnan(f)",
	} {
		b, err := Compile(f, rec.Schema())
		assert.NilError(t, err, f)
		before := mem.CurrentAlloc()
		out, err := b.Filter(ctx, rec)
		assert.NilError(t, err, f)
		out.Release()
		assert.Equal(t, mem.CurrentAlloc(), before, "%s leaks", f)
	}
	mem.AssertSize(t, 0)
}
