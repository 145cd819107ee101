package dml

import (
	"context"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
)

// TestCastZonedTimestamp: a string naming its zone is stored in a timestamp column without one
// as the same instant in UTC, as Lance stores it (arrow-rs's cast): the remote SDK sends a JS
// Date in update({values}) as '2030-05-06T07:08:09.000Z', which the SDK embedded stores as
// 2030-05-06 07:08:09. Strings without a zone cast as before; one that is no timestamp is
// still refused.
func TestCastZonedTimestamp(t *testing.T) {
	mem := testenv.CheckedAllocator(t)
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.AppendValues([]string{"2030-05-06T07:08:09.000Z", "2030-05-06T09:08:09+02:00", "2030-05-06 07:08:09", "2030-05-06T07:08:09.5Z"}, nil)
	b.AppendNull()
	in := b.NewArray()
	defer in.Release()
	out, err := castTo(context.Background(), in, &arrow.TimestampType{Unit: arrow.Millisecond}, "ts")
	assert.NilError(t, err)
	defer out.Release()
	ts := out.(*array.Timestamp)
	const at = 1904281689000 // 2030-05-06T07:08:09Z in ms
	assert.DeepEqual(t, ts.TimestampValues()[:4], []arrow.Timestamp{at, at, at, at + 500})
	assert.Assert(t, ts.IsNull(4))

	b.Append("not a time")
	bad := b.NewArray()
	defer bad.Release()
	_, err = castTo(context.Background(), bad, &arrow.TimestampType{Unit: arrow.Millisecond}, "ts")
	assert.ErrorContains(t, err, `column "ts": cannot store a utf8 value as timestamp[ms]`)
}

// TestCastListToFixedSizeList: a list (the remote SDK's list literal for a vector in
// update({values})) is stored in a fixed-size list column when every list has its length, and
// a float32 vector casts to float16 (alterColumns), as Lance casts them; a list of another
// length is refused.
func TestCastListToFixedSizeList(t *testing.T) {
	ctx := context.Background()
	mem := testenv.CheckedAllocator(t)
	lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int64)
	defer lb.Release()
	vb := lb.ValueBuilder().(*array.Int64Builder)
	lb.Append(true)
	vb.AppendValues([]int64{1, 2, 3}, nil)
	lb.AppendNull()
	lb.Append(true)
	vb.AppendValues([]int64{4, 5, 6}, nil)
	in := lb.NewArray()
	defer in.Release()
	f32 := arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)
	f16 := arrow.FixedSizeListOf(3, arrow.FixedWidthTypes.Float16)
	assert.Assert(t, canCast(in.DataType(), f32))
	assert.Assert(t, canCast(f32, f16))
	out, err := castTo(ctx, in, f32, "vector")
	assert.NilError(t, err)
	defer out.Release()
	assert.Equal(t, out.String(), "[[1 2 3] (null) [4 5 6]]")

	half, err := castTo(ctx, out, f16, "vector")
	assert.NilError(t, err)
	defer half.Release()
	assert.Assert(t, arrow.TypeEqual(half.DataType(), f16))
	assert.Equal(t, half.String(), "[[1 2 3] (null) [4 5 6]]")

	lb.Append(true)
	vb.AppendValues([]int64{1, 2}, nil)
	short := lb.NewArray()
	defer short.Release()
	_, err = castTo(ctx, short, f32, "vector")
	assert.ErrorContains(t, err, `column "vector": cannot store a list of 2 values as fixed_size_list`)
}

// TestHalfBits: float32 → half rounds to nearest, ties to even, with subnormals, as arrow-rs
// (the half crate) converts.
func TestHalfBits(t *testing.T) {
	for _, tc := range []struct {
		f    float32
		want uint16
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0x8000}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00}, {1e6, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00}, {1.0009765625, 0x3c01}, // exactly representable
		{1.00048828125, 0x3c00}, // a tie: to even (down)
		{1.00146484375, 0x3c02}, // a tie: to even (up)
		{1.0006, 0x3c01},        // above the tie: up (truncation gives 0x3c00)
		{5.960464477539063e-08, 0x0001}, {2.9802322387695312e-08, 0}, {4.5e-08, 0x0001}, {6.097555160522461e-05, 0x03ff}, {6.103515625e-05, 0x0400},
		{0.33333334, 0x3555}, // the SDK embedded casts the vector value sin(0.74) to 0x3965 (14693)
		{float32(math.Sin(2 * 0.37)), 0x3965},
	} {
		assert.Equal(t, halfBits(tc.f), tc.want, "%v", tc.f)
	}
	assert.Equal(t, halfBits(float32(math.NaN()))&0x7c00, uint16(0x7c00))
}
