package lancefile

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkSelect measures the reads an index lookup makes on a 200,000-row
// file: a take of 100 random rows and a read of a 10,000-row range, per
// column, so the cost of decoding the pages around the rows shows.
func BenchmarkSelect(b *testing.B) {
	schema, recs := benchTableRows(b, false, 200_000)
	path := filepath.Join(b.TempDir(), "bench.lance")
	benchWrite(b, path, schema, recs)
	ctx := context.Background()
	r := openLocal(b, path)
	rnd := rand.New(rand.NewPCG(7, 8))
	rows := make([]uint64, 100)
	for i := range rows {
		rows[i] = uint64(rnd.IntN(200_000))
	}
	for _, col := range []string{"id", "label"} {
		b.Run("take100/"+col, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec, err := r.Take(ctx, memory.DefaultAllocator, rows, ReadOptions{Columns: []string{col}})
				if err != nil {
					b.Fatal(err)
				}
				rec.Release()
			}
		})
		b.Run("range10k/"+col, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec, err := r.Read(ctx, memory.DefaultAllocator, ReadOptions{Columns: []string{col}, Offset: 95_000, Limit: 10_000})
				if err != nil {
					b.Fatal(err)
				}
				rec.Release()
			}
		})
	}
}
