package conformance

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/internal/arrowipc"
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
// returns its "id" column's values, sorted. The answer is the server's, so untrusted: it is read
// with internal/arrowipc, which verifies the flatbuffer metadata before the Arrow reader sees it
// (arrow-go hands a forged vector length to make(): a few bytes could ask for gigabytes). A file
// is read through the stream it embeds (between its magic and its footer), so the footer's
// flatbuffer is never decoded.
func readIDs(body []byte) ([]int64, error) {
	stream := body
	const magic = "ARROW1"
	if n := len(body); n >= 18 && string(body[:6]) == magic && string(body[n-6:]) == magic {
		footer := int64(binary.LittleEndian.Uint32(body[n-10:]))
		end := int64(n) - 10 - footer
		if end < 8 {
			return nil, fmt.Errorf("an Arrow IPC file whose footer (%d bytes) does not fit it", footer)
		}
		stream = body[8:end]
	}
	_, recs, err := arrowipc.ReadStream(stream)
	if err != nil {
		return nil, fmt.Errorf("the answer is not readable Arrow IPC: %w", err)
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
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
