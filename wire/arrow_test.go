package wire

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
)

// arrowStream is a small valid IPC stream: an int64, a string, a list and a dictionary column.
func arrowStream(t testing.TB, rows int) []byte {
	mem := memory.NewGoAllocator()
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "xs", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "tag", Type: dictType, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append("row")
		lb := b.Field(2).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Float32Builder).Append(float32(i))
		assert.NilError(t, b.Field(3).(*array.BinaryDictionaryBuilder).AppendString([]string{"a", "b"}[i%2]))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if rows > 0 {
		assert.NilError(t, w.Write(rec))
	}
	assert.NilError(t, w.Close())
	return buf.Bytes()
}

// readArrowBody decodes body as the write doors do (ArrowRows), every batch at once.
func readArrowBody(body []byte, retain bool) (*arrow.Schema, []arrow.RecordBatch, error) {
	rs, err := ArrowRows(body, retain, nil)
	if err != nil {
		return nil, nil, err
	}
	defer rs.Release()
	recs, _, err := rs.All()
	return rs.Schema(), recs, err
}

func TestReadArrowBody(t *testing.T) {
	for _, retain := range []bool{false, true} {
		schema, recs, err := readArrowBody(arrowStream(t, 5), retain)
		assert.NilError(t, err)
		assert.Equal(t, len(recs), 1)
		assert.Equal(t, recs[0].NumRows(), int64(5))
		assert.Equal(t, schema.Field(3).Type.ID(), arrow.STRING, "dictionary columns are decoded")
		assert.Equal(t, recs[0].Column(3).(*array.String).Value(3), "b")
		ReleaseAll(recs)

		schema, recs, err = readArrowBody(arrowStream(t, 0), retain)
		assert.NilError(t, err)
		assert.Equal(t, len(recs), 0, "a stream with only a schema is an empty table")
		assert.Equal(t, schema.NumFields(), 4)
	}
}

// Every truncation and many corruptions of a valid stream are refused with InvalidInput (or
// decoded), never a panic.
func TestReadArrowBodyHostile(t *testing.T) {
	good := arrowStream(t, 20)
	try := func(body []byte) {
		t.Helper()
		_, recs, err := readArrowBody(body, true)
		ReleaseAll(recs)
		if err != nil {
			assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "%v", err)
		}
	}
	for n := 1; n < len(good); n++ {
		try(good[:n])
	}
	for i := range good {
		for _, v := range []byte{0x00, 0x7f, 0xff} {
			bad := bytes.Clone(good)
			bad[i] = v
			try(bad)
		}
	}
}

func FuzzReadArrowBody(f *testing.F) {
	f.Add(arrowStream(f, 3))
	f.Add(arrowStream(f, 0))
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) == 0 {
			return // the doors refuse an empty body before decoding
		}
		_, recs, err := readArrowBody(body, false)
		ReleaseAll(recs)
		if err != nil && !nserr.Is(err, nserr.ErrInvalidInput) {
			t.Fatalf("not InvalidInput: %v", err)
		}
	})
}
