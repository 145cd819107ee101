package lancefile

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// LongRunsSchema and LongRunsRecord: a table with runs of n null values,
// n null lists and n empty lists in a row (between a few valued rows), the
// shapes whose levels outgrow one mini-block chunk, and a low-cardinality
// string column.
func LongRunsSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "ni", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "ns", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "el", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "nl", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "es", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true}), Nullable: true},
		// Low-cardinality strings: dictionary pages, as Lance writes them.
		{Name: "level", Type: arrow.BinaryTypes.String},
	}, nil)
}

// LongRunsRecord has 10 valued rows, a run of n, then 10 valued rows.
func LongRunsRecord(mem memory.Allocator, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, LongRunsSchema())
	defer b.Release()
	for i := 0; i < n+20; i++ {
		run := i >= 10 && i < n+10
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		ni := b.Field(1).(*array.Int32Builder)
		ns := b.Field(2).(*array.StringBuilder)
		el := b.Field(3).(*array.ListBuilder)
		nl := b.Field(4).(*array.ListBuilder)
		es := b.Field(5).(*array.ListBuilder)
		st := b.Field(6).(*array.StructBuilder)
		stl := st.FieldBuilder(0).(*array.ListBuilder)
		st.Append(true)
		b.Field(7).(*array.StringBuilder).Append([]string{"INFO", "WARN", "ERROR"}[i%3])
		if run {
			ni.AppendNull()
			ns.AppendNull()
			el.Append(true) // empty
			nl.AppendNull()
			es.Append(true)
			stl.Append(true)
			continue
		}
		ni.Append(int32(i))
		ns.Append("s" + string(rune('a'+i%26)))
		el.Append(true)
		el.ValueBuilder().(*array.Int32Builder).AppendValues([]int32{int32(i), int32(i + 1)}, nil)
		nl.Append(true)
		nl.ValueBuilder().(*array.Int32Builder).Append(int32(i))
		es.Append(true)
		es.ValueBuilder().(*array.StringBuilder).Append("v")
		stl.Append(true)
		stl.ValueBuilder().(*array.Int64Builder).Append(int64(-i))
	}
	return b.NewRecordBatch()
}
