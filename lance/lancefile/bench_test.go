package lancefile

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Write and scan benchmarks on the tables of scripts/bench (which compares
// the same operations with the SDK): 200,000 rows of (id int64, name utf8,
// vector float32[128]) and 1,000,000 rows of (id int64, value float64,
// label utf8).

var benchWords = []string{"lance", "catalog", "arrow", "vector", "table", "file", "page", "chunk", "row", "column", "index", "query"}

func benchTable(b testing.TB, wide bool) (*arrow.Schema, []arrow.RecordBatch) {
	rows := 1_000_000
	if wide {
		rows = 200_000
	}
	return benchTableRows(b, wide, rows)
}

// benchTableRows makes rows rows (a multiple of 10,000) in records of
// 10,000.
func benchTableRows(b testing.TB, wide bool, rows int) (*arrow.Schema, []arrow.RecordBatch) {
	mem := memory.NewGoAllocator()
	var schema *arrow.Schema
	if wide {
		schema = arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "name", Type: arrow.BinaryTypes.String},
			{Name: "vector", Type: arrow.FixedSizeListOf(128, arrow.PrimitiveTypes.Float32)},
		}, nil)
	} else {
		schema = arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "value", Type: arrow.PrimitiveTypes.Float64},
			{Name: "label", Type: arrow.BinaryTypes.String},
		}, nil)
	}
	r := rand.New(rand.NewPCG(42, uint64(rows)))
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	var recs []arrow.RecordBatch
	for start := 0; start < rows; start += 10_000 {
		for row := start; row < start+10_000; row++ {
			bld.Field(0).(*array.Int64Builder).Append(int64(row))
			if wide {
				bld.Field(1).(*array.StringBuilder).Append(benchWords[r.IntN(len(benchWords))] + "-" + strconv.Itoa(r.IntN(1_000_000)))
				vb := bld.Field(2).(*array.FixedSizeListBuilder)
				vb.Append(true)
				fb := vb.ValueBuilder().(*array.Float32Builder)
				for k := 0; k < 128; k++ {
					fb.Append(r.Float32()*2 - 1)
				}
			} else {
				bld.Field(1).(*array.Float64Builder).Append(r.NormFloat64() * 1000)
				bld.Field(2).(*array.StringBuilder).Append(benchWords[r.IntN(len(benchWords))] + strconv.Itoa(r.IntN(10_000)))
			}
		}
		recs = append(recs, bld.NewRecordBatch())
	}
	b.Cleanup(func() {
		for _, r := range recs {
			r.Release()
		}
	})
	return schema, recs
}

func benchWrite(b *testing.B, path string, schema *arrow.Schema, recs []arrow.RecordBatch) int64 {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w, err := NewWriter(f, schema, WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return w.Size()
}

func BenchmarkWrite(b *testing.B) {
	for _, wide := range []bool{true, false} {
		name := map[bool]string{true: "wide-200k", false: "narrow-1M"}[wide]
		b.Run(name, func(b *testing.B) {
			schema, recs := benchTable(b, wide)
			path := filepath.Join(b.TempDir(), "bench.lance")
			var size int64
			for b.Loop() {
				size = benchWrite(b, path, schema, recs)
			}
			b.SetBytes(size)
		})
	}
}

func BenchmarkScan(b *testing.B) {
	for _, tc := range []struct {
		name string
		wide bool
		cols []string
	}{
		{"wide-200k/id,vector", true, []string{"id", "vector"}},
		{"wide-200k/all", true, nil},
		{"narrow-1M/id,value", false, []string{"id", "value"}},
		{"narrow-1M/all", false, nil},
	} {
		b.Run(tc.name, func(b *testing.B) {
			schema, recs := benchTable(b, tc.wide)
			path := filepath.Join(b.TempDir(), "bench.lance")
			size := benchWrite(b, path, schema, recs)
			ctx := context.Background()
			b.SetBytes(size)
			for b.Loop() {
				lf, err := OpenLocalFile(path)
				if err != nil {
					b.Fatal(err)
				}
				r, err := Open(ctx, lf)
				if err != nil {
					b.Fatal(err)
				}
				rec, err := r.Read(ctx, memory.DefaultAllocator, ReadOptions{Columns: tc.cols, Limit: -1})
				if err != nil {
					b.Fatal(err)
				}
				rec.Release()
				lf.Close()
			}
		})
	}
}
