// Command vecbench builds a vector index with lancecat on a Lance table
// (written by scripts/index/sdk-vector.mjs) and prints the build time as
// JSON: lancecat's half of the build-time and recall comparison with the
// SDK (the SDK's half is sdk-vector.mjs create/check on the same data).
//
//	go run ./scripts/index/vecbench -kind IVF_PQ -metric l2 /path/to/table.lance
//
// Measured 2026-12-01 on the shared 2-core machine (load 15 to 47, so the
// wall times are noisy; CPU times are the fairer ratio), 200,000 x 128
// float32, IVF_PQ with LanceDB's defaults (24 partitions, 8 sub-vectors),
// SDK 0.39.0 on the same data:
//
//	data (sdk-vector.mjs)  lancecat CPU / wall   SDK CPU / wall   recall@10 nprobes 20 (ours / SDK)
//	256 clusters           18.3 s / 89 s         13.7 s / 57 s    0.016 / 0.025 (50 queries; PQ cannot
//	                                                              rank 781 near-equidistant cluster mates)
//	20,000 clusters        57.0 s / 246 s        29.0 s / 253 s   1.000 / 1.000 (50 queries)
//
// Query latency through the SDK on lancecat's index vs its own (20,000
// clusters, nprobes 20): 14.2 ms vs 16.3 ms.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"syscall"
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
	prof := flag.String("cpuprofile", "", "write a CPU profile of the build here")
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if err := run(flag.Arg(0), *kind, *metric, *parts, *subs, *seed); err != nil {
		fmt.Fprintln(os.Stderr, err)
		pprof.StopCPUProfile()
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
	start, cpu0 := time.Now(), cpuTime()
	v, err := ds.CreateVectorIndex(ctx, lance.VectorIndexOptions{
		Column: "vec", Kind: index.VectorKind(kind), Metric: index.Metric(metric),
		NumPartitions: parts, NumSubVectors: subs, Seed: seed, Replace: true,
	})
	if err != nil {
		return err
	}
	ms := float64(time.Since(start).Microseconds()) / 1000
	cpu := float64((cpuTime() - cpu0).Microseconds()) / 1000
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"version": v.Number(), "build_ms": ms, "cpu_ms": cpu})
}

// cpuTime is this process's user + system CPU time so far (all threads).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
