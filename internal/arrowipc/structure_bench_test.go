package arrowipc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
)

// requestBody is an Arrow IPC stream of about 8 MB as a LanceDB client sends a write: an id, a
// text and a 768-dimension float32 vector per row, in batches of rows rows.
func requestBody(t testing.TB, rows int, opts ...ipc.Option) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "vector", Type: arrow.FixedSizeListOf(768, arrow.PrimitiveTypes.Float32)},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%10 == 0 {
			b.Field(1).(*array.StringBuilder).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row %d of the body", i))
		}
		vb := b.Field(2).(*array.FixedSizeListBuilder)
		vb.Append(true)
		fb := vb.ValueBuilder().(*array.Float32Builder)
		for j := range 768 {
			fb.Append(float32(i*j%97) / 97)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, append(opts, ipc.WithSchema(schema))...)
	for buf.Len() < 8<<20 {
		assert.NilError(t, w.Write(rec))
	}
	assert.NilError(t, w.Close())
	return buf.Bytes()
}

// BenchmarkStructure: what the structural check costs on an 8 MB request body, against what the
// body's other checks and its decoding cost. structure: checkStructure alone, over layouts parsed
// beforehand; verify: Verify (framing, metadata, layout, compressed sizes, structure);
// decode: what a write door does (Verify, then every batch through the batch reader).
func BenchmarkStructure(b *testing.B) {
	for _, tc := range []struct {
		name string
		rows int
		opts []ipc.Option
	}{
		{"batches of 1024 rows", 1024, nil},
		{"batches of 16 rows", 16, nil},
		{"batches of 1024 rows, lz4", 1024, []ipc.Option{ipc.WithLZ4()}},
	} {
		body := requestBody(b, tc.rows, tc.opts...)
		msgs := splitStream(b, body)
		sch, err := parseSchemaShape(msgs[0].lay.schema)
		assert.NilError(b, err)
		var lays []layout
		for _, m := range msgs[1:] {
			lay := m.lay
			_, err := lay.checkCompressed(func(off int64) (int64, error) {
				return int64(binary.LittleEndian.Uint64(m.body[off:])), nil
			})
			assert.NilError(b, err)
			lays = append(lays, lay)
		}
		b.Run(tc.name+"/structure", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				for i := range lays {
					if err := sch.checkStructure(&lays[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(len(lays)), "batches")
		})
		b.Run(tc.name+"/verify", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := Verify(body); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/decode", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := Verify(body); err != nil {
					b.Fatal(err)
				}
				br, err := NewBatchReader(body, BatchOptions{})
				if err != nil {
					b.Fatal(err)
				}
				for br.Next() {
				}
				if err := br.Err(); err != nil {
					b.Fatal(err)
				}
				br.Release()
			}
		})
	}
}
