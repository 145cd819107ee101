package lancefile

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// RLESchema and RLERecord: fixed-width columns with long runs, the pages
// Lance run-length encodes (fewer runs than half the values): 8- to
// 64-bit integers and floats, runs over 255 values (split into several
// entries), nulls inside runs, and a constant column.
func RLESchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "r64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "r32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "r16", Type: arrow.PrimitiveTypes.Uint16},
		{Name: "r8", Type: arrow.PrimitiveTypes.Int8},
		{Name: "rf", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "k", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
}

// RLERecord builds rows [start, start+n).
func RLERecord(mem memory.Allocator, start, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, RLESchema())
	defer b.Release()
	for i := start; i < start+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Int64Builder).Append(int64(i/10) * -1_000_000_007)
		if r32 := b.Field(2).(*array.Int32Builder); (i/100)%7 == 3 {
			r32.AppendNull()
		} else {
			r32.Append(int32(i / 100))
		}
		b.Field(3).(*array.Uint16Builder).Append(uint16(i / 37))
		b.Field(4).(*array.Int8Builder).Append(int8(i / 700))
		if rf := b.Field(5).(*array.Float64Builder); i%1000 == 999 {
			rf.AppendNull()
		} else {
			rf.Append(float64(i/50) * 1.5)
		}
		b.Field(6).(*array.Int32Builder).Append(-7)
	}
	return b.NewRecordBatch()
}

// FixedDictSchema and FixedDictRecord: wide fixed-width columns of low
// cardinality, which Lance 2.2 dictionary-encodes: dictionaries small
// enough for one inline bit-packed chunk, large ones bit-packed out of
// line, negative values (full width: plain), 128-bit decimals (plain),
// timestamps, and nulls.
func FixedDictSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "small", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "big", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "neg", Type: arrow.PrimitiveTypes.Int64},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	}, nil)
}

// FixedDictRecord builds rows [start, start+n).
func FixedDictRecord(mem memory.Allocator, start, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, FixedDictSchema())
	defer b.Release()
	for i := start; i < start+n; i++ {
		h := uint64(i) * 2654435761
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if s := b.Field(1).(*array.Int64Builder); i%13 == 0 {
			s.AppendNull()
		} else {
			s.Append(int64(h%700) * 1_000_003)
		}
		b.Field(2).(*array.Uint64Builder).Append(h%1200 + 1)
		b.Field(3).(*array.Int64Builder).Append(-int64(h % 50))
		if f := b.Field(4).(*array.Float64Builder); i%17 == 0 {
			f.AppendNull()
		} else {
			f.Append(float64(h%40) / 8)
		}
		b.Field(5).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(h%90) - 45))
		b.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000 + int64(h%200)*3_600_000_000))
	}
	return b.NewRecordBatch()
}
