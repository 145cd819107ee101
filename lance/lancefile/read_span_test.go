package lancefile

import (
	"context"
	"fmt"
	"testing"

	"github.com/lancecat/lancecat/internal/testenv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
)

// A Cursor decoding mini-block pages by spans of chunks returns exactly
// the rows written, whatever row range it was given and whatever windows
// it is asked for: windows crossing span and page ends, a range starting
// inside a chunk, and reads outside the range it was given (which fetch
// the whole page).
//
// Read on the Go heap and with an accounting allocator: on the Go heap a
// window's string array shares its span's buffer (offsets not from 0),
// elsewhere it holds a copy of its own values. Every window is kept until
// the end, so offsets pooled from one span and decoded into by the next
// (read_span.go) would show in the windows read before.
func TestCursorSpansMatchWritten(t *testing.T) {
	ctx := context.Background()
	checked := testenv.CheckedAllocator(t)
	mem := checked
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "grp", Type: arrow.BinaryTypes.String},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	const rows = 70_000
	b := array.NewRecordBuilder(mem, schema)
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i) * 7)
		if i%9 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("vector-%d-%s", i, []string{"a", "bb", "ccc"}[i%3]))
		}
		b.Field(2).(*array.StringBuilder).Append([]string{"red", "green", "blue"}[i%3])
		if i%5 == 0 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Float64Builder).Append(float64(i) / 3)
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	for _, pageBytes := range []int{64 << 10, 8 << 20} { // many pages; one page per column
		rd := openBytes(t, writeFile(t, schema, WriterOptions{PageBytes: pageBytes}, rec))
		for _, tc := range []struct {
			lo, hi, window uint64 // hi 0: no range given
			from, to       uint64 // the rows read
		}{
			{window: 8192, to: rows},
			{lo: 32768, hi: 65536, window: 8192, from: 32768, to: 65536},
			{lo: 1000, hi: 51_234, window: 777, from: 1000, to: 51_234},
			{lo: 40_000, hi: 41_000, window: 8192, from: 0, to: rows}, // reads outside the range
			{lo: 69_000, hi: rows, window: 300, from: 69_000, to: rows},
		} {
			// the second cursor reuses what the first pooled, while the
			// first one's windows are still held
			var kept [2][]arrow.RecordBatch
			for a, alloc := range []memory.Allocator{checked, memory.DefaultAllocator} {
				cur, err := rd.NewCursor(alloc, ReadOptions{})
				assert.NilError(t, err)
				if tc.hi > 0 {
					cur.SetRowRange(tc.lo, tc.hi)
				}
				for lo := tc.from; lo < tc.to; lo += tc.window {
					hi := min(lo+tc.window, tc.to)
					got, err := cur.Read(ctx, lo, hi)
					assert.NilError(t, err)
					kept[a] = append(kept[a], got)
				}
				cur.Close()
			}
			for a, alloc := range []memory.Allocator{checked, memory.DefaultAllocator} {
				for k, got := range kept[a] {
					lo := tc.from + uint64(k)*tc.window
					hi := min(lo+tc.window, tc.to)
					for c := range schema.NumFields() {
						if !array.SliceEqual(got.Column(c), 0, int64(hi-lo), rec.Column(c), int64(lo), int64(hi)) {
							t.Fatalf("pages of %d bytes, range %+v, allocator %T: column %s rows [%d, %d) differ", pageBytes, tc, alloc, schema.Field(c).Name, lo, hi)
						}
					}
					got.Release()
				}
			}
		}
	}
}

// Buffers a Cursor pooled (span offsets, raw page bytes) are reused by the
// next cursor, of another file here: the windows read before must keep
// their values — on the Go heap, where arrays wrap decoded buffers, with
// plain floats (views of the page bytes: never pooled), FSST strings and
// bit-packed integers (decoded: their page bytes are pooled).
func TestCursorPoolsNothingShared(t *testing.T) {
	ctx := context.Background()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	const rows = 40_000
	file := func(seed int) (arrow.RecordBatch, *Reader) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for i := range rows {
			b.Field(0).(*array.Int64Builder).Append(int64(i*seed) % 100_003)
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("vector-%d-%d", seed, i*seed%9973))
			b.Field(2).(*array.Float64Builder).Append(float64(i*seed) / 7)
		}
		rec := b.NewRecordBatch()
		rd := openBytes(t, writeFile(t, schema, WriterOptions{PageBytes: 8 << 20}, rec))
		return rec, rd
	}
	recA, rdA := file(3)
	defer recA.Release()
	recB, rdB := file(7)
	defer recB.Release()
	// every window of 8192 rows, then a jump to the last rows: a span of
	// one chunk, whose plain floats are views of the page bytes
	var windows [][2]uint64
	for lo := uint64(0); lo < rows; lo += 8192 {
		windows = append(windows, [2]uint64{lo, min(lo+8192, rows)})
	}
	windows = append(windows, [2]uint64{0, 100}, [2]uint64{rows - 10, rows})
	read := func(rd *Reader, windows [][2]uint64) []arrow.RecordBatch {
		var out []arrow.RecordBatch
		cur, err := rd.NewCursor(memory.DefaultAllocator, ReadOptions{})
		assert.NilError(t, err)
		for k, w := range windows {
			if k > 0 && w[0] < windows[k-1][0] {
				cur.Close() // windows ascend within a cursor
				cur, err = rd.NewCursor(memory.DefaultAllocator, ReadOptions{})
				assert.NilError(t, err)
			}
			got, err := cur.Read(ctx, w[0], w[1])
			assert.NilError(t, err)
			out = append(out, got)
		}
		cur.Close()
		return out
	}
	keptA := read(rdA, windows)
	for range 3 {
		for _, r := range read(rdB, windows) {
			r.Release()
		}
	}
	for k, got := range keptA {
		lo := int64(windows[k][0])
		for c := range schema.NumFields() {
			assert.Assert(t, array.SliceEqual(got.Column(c), 0, got.NumRows(), recA.Column(c), lo, lo+got.NumRows()), "column %s rows from %d", schema.Field(c).Name, lo)
		}
		got.Release()
	}
}
