package console

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// arrowFile is an Arrow IPC file like the query door answers: ids, names (one null), vectors.
func arrowFile(t testing.TB, rows int) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "vector", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32)},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	vec := b.Field(2).(*array.FixedSizeListBuilder)
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i == 1 {
			b.Field(1).(*array.StringBuilder).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(strings.Repeat("é", i*40))
		}
		vec.Append(true)
		vec.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{float32(i), 0.5}, nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
	assert.NilError(t, err)
	assert.NilError(t, w.Write(rec))
	assert.NilError(t, w.Close())
	return buf.Bytes()
}

// TestDecodePreview: the grid has the schema's columns, at most the limit of rows, nulls shown
// as null, long values cut on a rune boundary.
func TestDecodePreview(t *testing.T) {
	p, err := decodePreview(arrowFile(t, 5), 3)
	assert.NilError(t, err)
	assert.DeepEqual(t, p.Columns, []string{"id", "name", "vector"})
	assert.Assert(t, is.Len(p.Rows, 3))
	assert.Check(t, is.Equal(p.Rows[0][1], ""))
	assert.Check(t, is.Equal(p.Rows[1][1], "null"))
	assert.Check(t, is.Equal(p.Rows[2][2], "[2,0.5]"))
	long := p.Rows[2][1]
	assert.Check(t, strings.HasSuffix(long, "…") && len(long) <= maxCell+len("…"), long)
	assert.Check(t, strings.HasPrefix(long, "éé"))

	_, err = decodePreview([]byte("not arrow"), 3)
	assert.Check(t, err != nil)
}

// FuzzDecodePreview: whatever the bytes, the preview is an error or a grid, never a crash.
func FuzzDecodePreview(f *testing.F) {
	good := arrowFile(f, 3)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte("ARROW1\x00\x00ARROW1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePreview(b, 10)
		if err != nil {
			return
		}
		for _, row := range p.Rows {
			if len(row) != len(p.Columns) {
				t.Fatalf("a row of %d cells under %d columns", len(row), len(p.Columns))
			}
		}
	})
}
