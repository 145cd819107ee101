package lancefile

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lancecat/lancecat/internal/testenv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
)

// checkSelective compares many random row ranges and row sets, read and
// taken chunk by chunk where the layout allows it, with the same rows of
// full (the whole file decoded at once): selecting the mini-block chunks
// around the rows must not change a value, a null or a list.
func checkSelective(t *testing.T, r *Reader, mem memory.Allocator, full arrow.RecordBatch, seed uint64) {
	ctx := context.Background()
	n := r.NumRows()
	if n == 0 {
		return
	}
	rnd := rand.New(rand.NewPCG(seed, 99))
	same := func(got arrow.RecordBatch, rows []uint64, what string) {
		t.Helper()
		assert.Equal(t, int(got.NumRows()), len(rows), what)
		for k := range full.Schema().Fields() {
			for i, row := range rows {
				a, _ := json.Marshal(jsonValue(got.Column(k), i))
				b, _ := json.Marshal(jsonValue(full.Column(k), int(row)))
				if string(a) != string(b) {
					t.Fatalf("%s: column %q row %d: got %s, want %s", what, full.Schema().Field(k).Name, row, a, b)
				}
			}
		}
	}
	for range 6 {
		lo := rnd.Uint64N(n)
		hi := lo + 1 + rnd.Uint64N(min(n-lo, 1+rnd.Uint64N(1500)))
		hi = min(hi, n)
		rec, err := r.Read(ctx, mem, ReadOptions{Offset: int64(lo), Limit: int64(hi - lo)})
		assert.NilError(t, err, "read %d..%d", lo, hi)
		rows := make([]uint64, 0, hi-lo)
		for i := lo; i < hi; i++ {
			rows = append(rows, i)
		}
		same(rec, rows, "read range")
		rec.Release()
	}
	defer func(f uint64) { chunkTakeFactor = f }(chunkTakeFactor)
	for _, factor := range []uint64{0, 8} {
		chunkTakeFactor = factor
		for _, size := range []int{1, 17, 100} {
			rows := make([]uint64, size)
			for i := range rows {
				rows[i] = rnd.Uint64N(n)
			}
			if size == 17 {
				slices.Sort(rows)
			}
			rec, err := r.Take(ctx, mem, rows, ReadOptions{})
			assert.NilError(t, err, "take %v", rows)
			same(rec, rows, "take")
			rec.Release()
		}
	}
}

// Chunk-selective reads and takes on our own files of every type the
// generator covers (nullable, nested, lists, dictionaries), with pages of
// many chunks, in both 2.1 and 2.2.
func TestSelectiveMatchesFullRead(t *testing.T) {
	ctx := context.Background()
	schema := AllTypesSchema()
	for _, tc := range []struct {
		name    string
		version Version
		nullP   float64
	}{
		{"v2_1", V2_1, 0.1},
		{"v2_2", V2_2, 0.3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			rec := RandomRecord(mem, schema, 5, 0, 4_000, tc.nullP)
			defer rec.Release()
			r := openBytes(t, writeFile(t, schema, WriterOptions{PageBytes: 128 << 10, Version: tc.version}, rec))
			full, err := r.Read(ctx, mem, ReadOptions{Limit: -1})
			assert.NilError(t, err)
			defer full.Release()
			checkSelective(t, r, mem, full, 3)
		})
	}
}
