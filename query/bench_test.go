package query_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/query"
	"github.com/lancecat/lancecat/storage"
)

// The benchmark table of issue 15: 200,000 rows of (id int64, s utf8,
// v float32[128]), written once per test binary with lance's writer.
const (
	benchRows = 200_000
	benchDim  = 128
)

var benchSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "v", Type: arrow.FixedSizeListOf(benchDim, arrow.PrimitiveTypes.Float32), Nullable: true},
}, nil)

// benchStream yields rows [0, n) of the benchmark table, a batch at a
// time (never the whole table in memory).
type benchStream struct {
	n, pos int
	cur    arrow.RecordBatch
}

func (b *benchStream) Schema() *arrow.Schema { return benchSchema }
func (b *benchStream) Err() error            { return nil }
func (b *benchStream) RecordBatch() arrow.RecordBatch {
	return b.cur
}
func (b *benchStream) Record() arrow.RecordBatch { return b.cur }
func (b *benchStream) Retain()                   {}
func (b *benchStream) Release() {
	if b.cur != nil {
		b.cur.Release()
		b.cur = nil
	}
}
func (b *benchStream) Next() bool {
	b.Release()
	if b.pos >= b.n {
		return false
	}
	n := min(8192, b.n-b.pos)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, benchSchema)
	defer rb.Release()
	for i := b.pos; i < b.pos+n; i++ {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row-%d-%s", i, [...]string{"red", "green", "blue", "cyan"}[i%4]))
		vb := rb.Field(2).(*array.FixedSizeListBuilder)
		vb.Append(true)
		fb := vb.ValueBuilder().(*array.Float32Builder)
		for k := range benchDim {
			fb.Append(vecOf(i, k))
		}
	}
	b.cur = rb.NewRecordBatch()
	b.pos += n
	return true
}

var benchOnce struct {
	sync.Once
	dir string
	err error
}

// benchTable opens the benchmark table (written on first use into a
// directory shared by the tests and benchmarks of this run).
// LANCECAT_QUERY_BENCH_TABLE names an existing table of that shape
// instead (e.g. the one the SDK wrote for scripts/query/bench.sh, to
// profile the encodings the SDK chooses).
func benchTable(tb testing.TB) *lance.Dataset {
	tb.Helper()
	benchOnce.Do(func() {
		if dir := os.Getenv("LANCECAT_QUERY_BENCH_TABLE"); dir != "" {
			benchOnce.dir = dir
			return
		}
		dir, err := os.MkdirTemp("", "query-bench-")
		if err != nil {
			benchOnce.err = err
			return
		}
		benchOnce.dir = filepath.Join(dir, "t.lance")
		fs, err := storage.NewFS(benchOnce.dir)
		if err != nil {
			benchOnce.err = err
			return
		}
		_, benchOnce.err = lance.NewDataset(fs).Write(context.Background(), &benchStream{n: benchRows}, lance.WriteOptions{})
	})
	assert.NilError(tb, benchOnce.err)
	fs, err := storage.NewFS(benchOnce.dir)
	assert.NilError(tb, err)
	return lance.NewDataset(fs)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchOnce.dir != "" && os.Getenv("LANCECAT_QUERY_BENCH_TABLE") == "" {
		os.RemoveAll(filepath.Dir(benchOnce.dir))
	}
	os.Exit(code)
}

func drain(b *testing.B, ds *lance.Dataset, req query.Request) int64 {
	rr, err := query.Run(context.Background(), ds, req)
	if err != nil {
		b.Fatal(err)
	}
	defer rr.Release()
	var n int64
	for rr.Next() {
		n += rr.RecordBatch().NumRows()
	}
	if err := rr.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

// The five measurements of issue 15's acceptance, engine only (no HTTP):
// go test -run '^$' -bench . ./query/
func BenchmarkCount(b *testing.B) {
	ds := benchTable(b)
	for b.Loop() {
		n, err := query.Count(context.Background(), ds, nil, "")
		if err != nil || n != benchRows {
			b.Fatal(n, err)
		}
	}
}

// LANCECAT_QUERY_BENCH_FILTER replaces the filter (with
// LANCECAT_QUERY_BENCH_TABLE, e.g. scripts/bench's
// "id % 3 = 0 AND name LIKE 'vector-%'" on its table).
func BenchmarkCountFilter(b *testing.B) {
	ds := benchTable(b)
	filter := "id % 3 = 0 AND s LIKE '%blue'"
	if f := os.Getenv("LANCECAT_QUERY_BENCH_FILTER"); f != "" {
		filter = f
	}
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		if _, err := query.Count(context.Background(), ds, nil, filter); err != nil {
			b.Fatal(err)
		}
	}
	// The CPU of all cores per count (the evaluation runs in parallel, so
	// ns/op is wall time and hides work moved between cores).
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is the user+system CPU time this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkFilteredQuery(b *testing.B) {
	ds := benchTable(b)
	for b.Loop() {
		if n := drain(b, ds, query.Request{Filter: "id > 150000 AND s LIKE '%red'", Columns: []string{"id", "s"}}); n != 12499 {
			b.Fatal(n)
		}
	}
}

func BenchmarkScanTwoColumns(b *testing.B) {
	ds := benchTable(b)
	for b.Loop() {
		if n := drain(b, ds, query.Request{Columns: []string{"id", "s"}}); n != benchRows {
			b.Fatal(n)
		}
	}
}

func BenchmarkKNNTop10(b *testing.B) {
	ds := benchTable(b)
	q := make([]float32, benchDim)
	for k := range q {
		q[k] = vecOf(-1, k)
	}
	for b.Loop() {
		if n := drain(b, ds, query.Request{Vector: &query.VectorQuery{Vectors: [][]float32{q}, K: 10}, Columns: []string{"id"}}); n != 10 {
			b.Fatal(n)
		}
	}
}

// Filters on id alone over [id, s] (issue 35): the names are taken for the rows that pass (late
// materialization) instead of decoded for every row; "id >= 0" keeps every row and is read the
// plain way. cpu-ns/op is the CPU of all cores per query.
func BenchmarkFilteredQueryLate(b *testing.B) {
	ds := benchTable(b)
	for _, c := range []struct {
		filter string
		rows   int64
	}{
		{"id = 5", 1},
		{"id < 2000", 2000},
		{"id >= 100000 AND id < 124000 AND id % 12 = 0", 2000},
		{"id >= 150000", 50000},
		{"id >= 0", benchRows},
	} {
		b.Run(c.filter, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				if n := drain(b, ds, query.Request{Filter: c.filter, Columns: []string{"id", "s"}}); n != c.rows {
					b.Fatal(n)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
