package arrowipc

import (
	"testing"

	"gotest.tools/v3/assert"
)

func TestBatchReaderGathers(t *testing.T) {
	body := batches(t, 3000, 1, false)
	br, err := NewBatchReader(body, BatchOptions{})
	assert.NilError(t, err)
	defer br.Release()
	var rows int64
	n := 0
	for br.Next() {
		rows += br.RecordBatch().NumRows()
		n++
	}
	assert.NilError(t, br.Err())
	assert.Equal(t, rows, int64(3000))
	t.Logf("%d batches", n)
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
