package arrowipc

import (
	"bytes"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
)

// stream is a small valid IPC stream: an int64, a string, a list and a dictionary column.
func stream(t testing.TB, rows int) []byte {
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

func TestReadStream(t *testing.T) {
	schema, recs, err := ReadStream(stream(t, 5))
	assert.NilError(t, err)
	assert.Equal(t, len(recs), 1)
	assert.Equal(t, recs[0].NumRows(), int64(5))
	assert.Equal(t, schema.Field(3).Type.ID(), arrow.STRING, "dictionary columns are decoded")
	assert.Equal(t, recs[0].Column(3).(*array.String).Value(3), "b")

	schema, recs, err = ReadStream(stream(t, 0))
	assert.NilError(t, err)
	assert.Equal(t, len(recs), 0, "a stream with only a schema has no records")
	assert.Equal(t, schema.NumFields(), 4)

	schema, _, err = ReadStream(nil)
	assert.NilError(t, err)
	assert.Assert(t, schema == nil)
}

// Every truncation and many corruptions of a valid stream are refused with ErrInvalid (or
// decoded), never a panic, and never allocate more than the cap. Without Verify, arrow-go's
// reader dies of a fatal out-of-memory error (no recover catches it) on one of these.
func TestReadStreamHostile(t *testing.T) {
	good := stream(t, 20)
	try := func(body []byte) {
		t.Helper()
		_, recs, err := ReadStream(body)
		for _, r := range recs {
			r.Release()
		}
		if err != nil {
			assert.Assert(t, errors.Is(err, ErrInvalid), "%v", err)
		}
	}
	for n := range len(good) {
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

// A valid stream verifies; a message whose metadata claims more bytes than the stream holds,
// or a body past its end, does not.
func TestVerify(t *testing.T) {
	good := stream(t, 3)
	assert.NilError(t, Verify(good))
	assert.NilError(t, Verify(nil))
	bad := bytes.Clone(good)
	bad[4], bad[5], bad[6], bad[7] = 0xff, 0xff, 0xff, 0x7f // the schema message's length
	assert.Check(t, Verify(bad) != nil)
	assert.Check(t, Verify(good[:len(good)-20]) != nil, "a record batch body cut short")
}

func FuzzReadStream(f *testing.F) {
	f.Add(stream(f, 3))
	f.Add(stream(f, 0))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, recs, err := ReadStream(body)
		for _, r := range recs {
			r.Release()
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("not ErrInvalid: %v", err)
		}
	})
}

// TestReadStreamCompressed: the LZ4_FRAME-compressed bodies the LanceDB remote client sends decode,
// including data that compresses far beyond the uncompressed allowance (a column of zeros, as a
// default or a zero vector gives: about 250:1). (ZSTD can go further than ipcCompressedFactor; no
// client we serve sends it.)
func TestReadStreamCompressed(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.FixedSizeListOf(16, arrow.PrimitiveTypes.Float32)},
	}, nil)
	const rows = 200_000
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	vb := b.Field(1).(*array.FixedSizeListBuilder)
	for range rows {
		b.Field(0).(*array.Int64Builder).Append(0)
		vb.Append(true)
		vb.ValueBuilder().(*array.Float32Builder).AppendValues(make([]float32, 16), nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	for name, opt := range map[string]ipc.Option{"lz4": ipc.WithLZ4()} {
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, ipc.WithSchema(schema), opt)
		assert.NilError(t, w.Write(rec))
		assert.NilError(t, w.Close())
		assert.Assert(t, int64(buf.Len())*ipcAllocFactor+ipcAllocSlack < rows*72, "%s: %d bytes is not compressed enough to test the allowance", name, buf.Len())
		_, recs, err := ReadStream(buf.Bytes())
		assert.NilError(t, err, name)
		assert.Equal(t, len(recs), 1, name)
		assert.Equal(t, recs[0].NumRows(), int64(rows), name)
		recs[0].Release()
	}
	// Bounded all the same: the allowance of a compressed body never passes ipcCompressedMax.
	assert.Equal(t, allocLimit(1<<30, true), int64(1<<30)*ipcAllocFactor+ipcAllocSlack)
	assert.Equal(t, allocLimit(16<<20, true), int64(ipcCompressedMax))
	assert.Equal(t, allocLimit(1000, false), int64(1000*ipcAllocFactor+ipcAllocSlack))
}
