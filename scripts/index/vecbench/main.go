// Command vecbench builds a vector index with lancecat on a Lance table
// (written by scripts/index/sdk-vector.mjs) and prints the build time as
// JSON: lancecat's half of the build-time and recall comparison with the
// SDK (the SDK's half is sdk-vector.mjs create/check on the same data).
//
//	go run ./scripts/index/vecbench -kind IVF_PQ -metric l2 /path/to/table.lance
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/storage"
)

func main() {
	kind := flag.String("kind", "IVF_PQ", "IVF_PQ or IVF_FLAT")
	metric := flag.String("metric", "l2", "l2, cosine or dot")
	parts := flag.Int("partitions", 0, "num_partitions (0: LanceDB's default)")
	subs := flag.Int("subvectors", 0, "num_sub_vectors (0: LanceDB's default)")
	seed := flag.Int64("seed", 1, "training seed")
	flag.Parse()
	if err := run(flag.Arg(0), *kind, *metric, *parts, *subs, *seed); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(dir, kind, metric string, parts, subs int, seed int64) error {
	ctx := context.Background()
	fs, err := storage.NewFS(dir)
	if err != nil {
		return err
	}
	ds := lance.NewDataset(fs)
	start := time.Now()
	v, err := ds.CreateVectorIndex(ctx, lance.VectorIndexOptions{
		Column: "vec", Kind: index.VectorKind(kind), Metric: index.Metric(metric),
		NumPartitions: parts, NumSubVectors: subs, Seed: seed, Replace: true,
	})
	if err != nil {
		return err
	}
	ms := float64(time.Since(start).Microseconds()) / 1000
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"version": v.Number(), "build_ms": ms})
}
