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

// idStream is a stream of batches of an int64 id column holding 0, 1, …; sizes are the batches'
// rows.
func idStream(t testing.TB, sizes []int, opts ...ipc.Option) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, append(opts, ipc.WithSchema(schema))...)
	next := int64(0)
	for _, n := range sizes {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		for range n {
			b.Append(next)
			next++
		}
		col := b.NewArray()
		b.Release()
		rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(n))
		col.Release()
		assert.NilError(t, w.Write(rec))
		rec.Release()
	}
	assert.NilError(t, w.Close())
	return buf.Bytes()
}

// readIDs reads every batch of body, checks the ids run 0, 1, … in order, and returns the rows of
// each batch handed out and what was charged.
func readIDs(t *testing.T, body []byte, retain bool) (rows []int64, charged int64) {
	t.Helper()
	br, err := NewBatchReader(body, BatchOptions{Retain: retain, Charge: func(n int64) error {
		assert.Assert(t, n > 0)
		charged += n
		return nil
	}})
	assert.NilError(t, err)
	defer br.Release()
	next := int64(0)
	for br.Next() {
		rec := br.RecordBatch()
		ids := rec.Column(0).(*array.Int64)
		for i := range ids.Len() {
			assert.Equal(t, ids.Value(i), next)
			next++
		}
		rows = append(rows, rec.NumRows())
	}
	assert.NilError(t, br.Err())
	return rows, charged
}

// Small batches are gathered into groups (of at most groupParts batches), in order; a large batch
// goes on as it is, after the group gathered before it; uncompressed, a large batch is the body's
// own bytes and charges nothing.
func TestBatchReaderGathers(t *testing.T) {
	ones := make([]int, 3000)
	for i := range ones {
		ones[i] = 1
	}
	rows, charged := readIDs(t, idStream(t, ones), false)
	assert.DeepEqual(t, rows, []int64{groupParts, groupParts, 3000 - 2*groupParts})
	assert.Assert(t, charged > 0 && charged < 64<<10, "a group of one-row batches is charged for what it copies: %d", charged)

	rows, charged = readIDs(t, idStream(t, []int{3, 4, passRows, 5, 2*passRows + 1}), false)
	assert.DeepEqual(t, rows, []int64{7, passRows, 5, 2*passRows + 1})
	assert.Assert(t, charged <= 2*64, "the large batches are the body's bytes: %d charged", charged)

	rows, _ = readIDs(t, idStream(t, []int{0, 2, 0}), false)
	assert.DeepEqual(t, rows, []int64{2}) // empty batches are dropped
}

// What decoding allocates is charged: a compressed batch before it is decompressed; streaming,
// the bytes of one batch at a time (what was charged is reused), retained, all of them.
func TestBatchReaderCharges(t *testing.T) {
	sizes := []int{passRows, passRows, passRows, passRows}
	decoded := int64(passRows * 8)
	body := idStream(t, sizes, ipc.WithLZ4())

	_, streamed := readIDs(t, body, false)
	assert.Assert(t, streamed >= decoded && streamed < 2*decoded, "streaming charges about one batch: %d", streamed)
	_, retained := readIDs(t, body, true)
	assert.Assert(t, retained >= 4*decoded, "retained, every batch stays charged: %d", retained)

	// A refusal ends the stream before the batch is decompressed, with the refusal as it is.
	refused := errors.New("over budget")
	var asked []int64
	br, err := NewBatchReader(body, BatchOptions{Charge: func(n int64) error {
		asked = append(asked, n)
		return refused
	}})
	assert.NilError(t, err)
	defer br.Release()
	assert.Assert(t, !br.Next())
	assert.Assert(t, errors.Is(br.Err(), refused), "%v", br.Err())
	assert.DeepEqual(t, asked, []int64{decoded})
}

// Every truncation and many corruptions of a valid stream of small batches are refused with
// ErrInvalid (or decoded), never a panic, in both modes.
func TestBatchReaderHostile(t *testing.T) {
	good := batches(t, 5, 2, false)
	try := func(body []byte, retain bool) {
		t.Helper()
		br, err := NewBatchReader(body, BatchOptions{Retain: retain})
		if err == nil {
			var recs []arrow.RecordBatch
			for br.Next() {
				rec := br.RecordBatch()
				rec.Retain()
				recs = append(recs, rec)
			}
			err = br.Err()
			br.Release()
			for _, r := range recs {
				r.Release()
			}
		}
		if err != nil {
			assert.Assert(t, errors.Is(err, ErrInvalid), "%v", err)
		}
	}
	for n := range len(good) {
		try(good[:n], n%2 == 0)
	}
	for i := range good {
		for _, v := range []byte{0x00, 0xff} {
			bad := bytes.Clone(good)
			bad[i] = v
			try(bad, i%2 == 0)
		}
	}
}

func BenchmarkBatchReaderOneRow(b *testing.B) {
	body := batches(b, 10000, 1, false)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for range b.N {
		br, _ := NewBatchReader(body, BatchOptions{})
		for br.Next() {
		}
		br.Release()
	}
}
