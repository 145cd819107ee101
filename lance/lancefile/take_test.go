package lancefile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/lancecat/lancecat/internal/testenv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"
)

// Take must return exactly the rows Read returns, whichever path serves a
// column: fixed-width full-zip entries, mini-block chunks (sparse takes),
// or whole pages; in any order, with repeats.
func TestTakeMatchesRead(t *testing.T) {
	ctx := context.Background()
	mem := testenv.CheckedAllocator(t)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "vec", Type: arrow.FixedSizeListOf(64, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "big", Type: arrow.BinaryTypes.Binary, Nullable: true},
	}, nil)
	const rows = 50_000
	r := rand.New(rand.NewPCG(1, 2))
	b := array.NewRecordBuilder(mem, schema)
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i) * 3)
		if i%11 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name-%d", r.IntN(1000)))
		}
		vb := b.Field(2).(*array.FixedSizeListBuilder)
		if i%13 == 0 {
			vb.AppendNull() // adds the placeholder items itself
		} else {
			vb.Append(true)
			for k := range 64 {
				vb.ValueBuilder().(*array.Float32Builder).Append(float32(i) + float32(k)/64)
			}
		}
		lb := b.Field(3).(*array.ListBuilder)
		lb.Append(true)
		for k := range i % 4 {
			lb.ValueBuilder().(*array.Int32Builder).Append(int32(k))
		}
		if i%5 == 0 {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.BinaryBuilder).Append(bytes.Repeat([]byte{byte(i)}, 300+i%50))
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	rd := openBytes(t, writeFile(t, schema, WriterOptions{PageBytes: 256 << 10}, rec))
	rec.Release()
	full, err := rd.Read(ctx, mem, ReadOptions{Limit: -1})
	assert.NilError(t, err)
	defer full.Release()

	for _, take := range [][]uint64{
		{0, 1, 2, rows - 1},               // sorted, sparse (mini-block chunks)
		{49_999, 3, 3, 12_345, 0, 40_000}, // unsorted, repeats
		{7, 8, 9, 10, 11, 30_000, 30_001}, // runs
		{},
	} {
		many := append([]uint64(nil), take...)
		if len(take) == 0 {
			for range 2000 { // dense: whole pages
				many = append(many, uint64(r.IntN(rows)))
			}
		}
		got, err := rd.Take(ctx, mem, many, ReadOptions{})
		assert.NilError(t, err)
		assert.Equal(t, int(got.NumRows()), len(many))
		for c := range schema.Fields() {
			for i, row := range many {
				want, _ := json.Marshal(jsonValue(full.Column(c), int(row)))
				have, _ := json.Marshal(jsonValue(got.Column(c), i))
				if string(want) != string(have) {
					t.Fatalf("column %s row %d: take %s, read %s", schema.Field(c).Name, row, have, want)
				}
			}
		}
		got.Release()
	}
	// Projection by field id, and a row past the end.
	got, err := rd.Take(ctx, mem, []uint64{5}, ReadOptions{FieldIDs: []int32{2}})
	assert.NilError(t, err)
	assert.Equal(t, got.Schema().Field(0).Name, "vec")
	got.Release()
	_, err = rd.Take(ctx, mem, []uint64{rows}, ReadOptions{})
	assert.ErrorContains(t, err, "take row")
}

// A Cursor's windows equal Read's.
func TestCursorMatchesRead(t *testing.T) {
	ctx := context.Background()
	mem := testenv.CheckedAllocator(t)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	for i := range 20_000 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		lb := b.Field(1).(*array.ListBuilder)
		if i%7 == 0 {
			lb.AppendNull()
			continue
		}
		lb.Append(true)
		for k := range i % 3 {
			lb.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprint(k))
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	rd := openBytes(t, writeFile(t, schema, WriterOptions{PageBytes: 32 << 10}, rec))
	cur, err := rd.NewCursor(mem, ReadOptions{})
	assert.NilError(t, err)
	defer cur.Close()
	for lo := uint64(0); lo < 20_000; lo += 777 {
		hi := min(lo+777, 20_000)
		got, err := cur.Read(ctx, lo, hi)
		assert.NilError(t, err)
		for c := range 2 {
			for i := range int(hi - lo) {
				want, _ := json.Marshal(jsonValue(rec.Column(c), int(lo)+i))
				have, _ := json.Marshal(jsonValue(got.Column(c), i))
				assert.Equal(t, string(have), string(want), "row %d", int(lo)+i)
			}
		}
		got.Release()
	}
	rec.Release()
}
