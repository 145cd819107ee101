package lance

import (
	"context"
	"os"
	"testing"

	"github.com/lancecat/lancecat/storage"
)

// BenchmarkOpenLatestCount is count_rows without a filter as a request does it (a new Dataset,
// OpenLatest, CountRows), with the shared manifest cache (a dataset with a location) and
// without (NewDataset). LANCECAT_BENCH_DATASET names the table (e.g. the SDK-written one of
// scripts/query/bench.sh); skipped without it.
func BenchmarkOpenLatestCount(b *testing.B) {
	dir := os.Getenv("LANCECAT_BENCH_DATASET")
	if dir == "" {
		b.Skip("set LANCECAT_BENCH_DATASET to a Lance dataset directory")
	}
	store, err := storage.NewFS(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		open func() *Dataset
	}{
		{"uncached", func() *Dataset { return NewDataset(store) }},
		{"cached", func() *Dataset { return NewDatasetAt(store, dir) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				v, err := bc.open().OpenLatest(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := v.CountRows(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
