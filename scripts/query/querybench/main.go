// Command querybench times package query on the benchmark table the SDK wrote (scripts/query/bench.sh):
// count_rows, count with a filter, a filtered query, a two-column full scan and brute-force top-10
// kNN, best of reps, and prints JSON {"seconds": {...}, "peak_rss": bytes}.
//
//	querybench <dataset-dir> <reps>
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/query"
	"github.com/lancecat/lancecat/storage"
)

// The same ops as scripts/query/bench.mjs: keep the two in step.
const (
	rows        = 200_000
	filter      = "id > 150000 AND s LIKE '%red'"
	countFilter = "id % 3 = 0 AND s LIKE '%blue'"
	dim         = 128
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: querybench <dataset-dir> <reps>")
		os.Exit(2)
	}
	reps, err := strconv.Atoi(os.Args[2])
	check(err)
	fs, err := storage.NewFS(os.Args[1])
	check(err)
	ds := lance.NewDataset(fs)
	ctx := context.Background()
	q := make([]float32, dim)
	for k := range q {
		q[k] = float32(math.Sin(float64(k)*0.37) * 0.5)
	}
	drain := func(req query.Request, want int64) func() {
		return func() {
			rr, err := query.Run(ctx, ds, req)
			check(err)
			defer rr.Release()
			var n int64
			for rr.Next() {
				n += rr.RecordBatch().NumRows()
			}
			check(rr.Err())
			if n != want {
				check(fmt.Errorf("%d rows, want %d", n, want))
			}
		}
	}
	ops := []struct {
		name string
		f    func()
	}{
		{"count", func() {
			n, err := query.Count(ctx, ds, nil, "")
			check(err)
			if n != rows {
				check(fmt.Errorf("count %d", n))
			}
		}},
		{"count_filter", func() { _, err := query.Count(ctx, ds, nil, countFilter); check(err) }},
		{"filtered_query", drain(query.Request{Filter: filter, Columns: []string{"id", "s"}}, 12499)},
		{"scan_2col", drain(query.Request{Columns: []string{"id", "s"}}, rows)},
		{"knn_top10", drain(query.Request{Vector: &query.VectorQuery{Column: "v", Vectors: [][]float32{q}, K: 10}, Columns: []string{"id"}}, 10)},
	}
	out := map[string]float64{}
	for _, op := range ops {
		best := math.Inf(1)
		for range reps {
			start := time.Now()
			op.f()
			best = min(best, time.Since(start).Seconds())
		}
		out[op.name] = best
	}
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	check(json.NewEncoder(os.Stdout).Encode(map[string]any{"seconds": out, "peak_rss": ru.Maxrss * 1024}))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "querybench:", err)
		os.Exit(1)
	}
}
