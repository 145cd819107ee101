package mview

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// benchBatch is n source rows over 100 groups.
func benchBatch(n, seed int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, srcSchema)
	defer b.Release()
	for r := 0; r < n; r++ {
		v := seed*n + r
		b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("g%02d", v%100))
		b.Field(1).(*array.Int32Builder).Append(int32(v % 1000))
		b.Field(2).(*array.Float64Builder).Append(float64(v) * 0.25)
		b.Field(3).(*array.Int64Builder).Append(int64(v))
	}
	return b.NewRecordBatch()
}

// BenchmarkRefresh compares a full recompute of an aggregate view over a 400,000-row source with
// an incremental refresh after a 1,000-row append (the source grows by that much per iteration).
// go test -run '^$' -bench BenchmarkRefresh -benchtime 10x ./mview/
func BenchmarkRefresh(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	store, err := storage.NewFS(dir)
	if err != nil {
		b.Fatal(err)
	}
	ns := namespace.New(store, namespace.Options{RootURI: dir})
	var recs []arrow.RecordBatch
	for i := 0; i < 4; i++ {
		recs = append(recs, benchBatch(100_000, i))
	}
	if _, _, err := ns.CreateTable(ctx, ident.ID{"src"}, catalog.NewTable{Schema: srcSchema, Rows: catalog.Records(srcSchema, recs...)}); err != nil {
		b.Fatal(err)
	}
	sql := "SELECT g, count(*) AS n, sum(x) AS sx, avg(k) AS ak, min(i) AS mi, max(x) AS mx FROM src WHERE k > 10 GROUP BY g ORDER BY g"
	svc := &Service{Catalog: ns, Holder: "bench"}
	if _, _, err := svc.Create(ctx, ident.ID{"v"}, sql, false); err != nil {
		b.Fatal(err)
	}
	svc.Wait()
	views := 0 // the sub-benchmark runs more than once
	b.Run("full", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			views++
			if _, _, err := svc.Create(ctx, ident.ID{fmt.Sprintf("full%d", views)}, sql, false); err != nil {
				b.Fatal(err)
			}
			svc.Wait()
		}
	})
	b.Run("incremental", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			views++
			rec := benchBatch(1000, 1000+views)
			appendTo(b, ns, ident.ID{"src"}, rec)
			rec.Release()
			b.StartTimer()
			if _, err := svc.Refresh(ctx, ident.ID{"v"}, nil); err != nil {
				b.Fatal(err)
			}
			svc.Wait()
		}
	})
}
