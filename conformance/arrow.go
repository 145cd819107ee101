package conformance

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// rowsSchema is the suite's tables' schema: id int64, name utf8.
var rowsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// rows is an Arrow IPC stream of ids [from, from+n) with names "row<id>" (n 0: the schema alone).
func rows(from, n int) []byte {
	return ipcStream(rowsSchema, func(b *array.RecordBuilder) {
		for i := from; i < from+n; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append("row" + strconv.Itoa(i))
		}
	})
}

// otherRows is a stream whose schema no suite table has (a float column "x").
func otherRows() []byte {
	s := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}}, nil)
	return ipcStream(s, func(b *array.RecordBuilder) { b.Field(0).(*array.Float64Builder).Append(1.5) })
}

func ipcStream(s *arrow.Schema, fill func(*array.RecordBuilder)) []byte {
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	fill(b)
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(s))
	if rec.NumRows() > 0 {
		_ = w.Write(rec)
	}
	_ = w.Close()
	return buf.Bytes()
}

// readIDs reads an Arrow IPC answer (the file format the spec names for query, or a stream) and
// returns its "id" column's values, sorted, and its number of rows.
func readIDs(body []byte) ([]int64, error) {
	var recs []arrow.RecordBatch
	if f, err := ipc.NewFileReader(bytes.NewReader(body)); err == nil {
		defer f.Close()
		for i := 0; i < f.NumRecords(); i++ {
			rec, err := f.RecordBatch(i)
			if err != nil {
				return nil, err
			}
			// The reader reuses a batch on the next call: keep each until read.
			rec.Retain()
			defer rec.Release()
			recs = append(recs, rec)
		}
		return ids(recs)
	}
	r, err := ipc.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("the answer is neither an Arrow IPC file nor a stream: %w", err)
	}
	defer r.Release()
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		defer rec.Release()
		recs = append(recs, rec)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return ids(recs)
}

func ids(recs []arrow.RecordBatch) ([]int64, error) {
	out := []int64{}
	for _, rec := range recs {
		idx := rec.Schema().FieldIndices("id")
		if len(idx) == 0 {
			return nil, fmt.Errorf("the answer has no column id: %s", rec.Schema())
		}
		col, ok := rec.Column(idx[0]).(*array.Int64)
		if !ok {
			return nil, fmt.Errorf("column id is %s, not int64", rec.Column(idx[0]).DataType())
		}
		out = append(out, col.Int64Values()...)
	}
	slices.Sort(out)
	return out, nil
}

// seq is [from, to).
func seq(from, to int) []int64 {
	out := []int64{}
	for i := from; i < to; i++ {
		out = append(out, int64(i))
	}
	return out
}

// vectorRows is a stream of ids [0, n) with a 2-d float32 vector column vec = [id, 0].
func vectorRows(n int) []byte {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "vec", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32)},
	}, nil)
	return ipcStream(s, func(b *array.RecordBuilder) {
		vb := b.Field(1).(*array.FixedSizeListBuilder)
		vals := vb.ValueBuilder().(*array.Float32Builder)
		for i := range n {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			vb.Append(true)
			vals.AppendValues([]float32{float32(i), 0}, nil)
		}
	})
}
