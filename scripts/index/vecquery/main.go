// Command vecquery times lancecat's indexed vector queries on a Lance
// table (the vector column "vec", with a vector index), with the index
// reader cache on and off, and writes the query vectors into a
// sdk-vector.mjs check job so the SDK times the same queries in the same
// run:
//
//	go run ./scripts/index/vecquery -job /tmp/check.json /path/to/t.lance
//	node scripts/index/sdk-vector.mjs check <sdk-dir> /tmp/check.json
//
// The queries are rows of the table (every rows/queries-th) moved by 0.05
// uniform noise, k = 10, nprobes 20. It prints the mean milliseconds per
// query both ways and the top-10 ids of each query.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/query"
	"github.com/lancecat/lancecat/storage"
)

func main() {
	nq := flag.Int("queries", 50, "query vectors")
	job := flag.String("job", "", "write a sdk-vector.mjs check job with the same queries here")
	flag.Parse()
	if err := run(flag.Arg(0), *nq, *job); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(dir string, nq int, job string) error {
	ctx := context.Background()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	fs, err := storage.NewFS(abs)
	if err != nil {
		return err
	}
	// A located dataset: what the catalog opens (the cache keys on it).
	ds := lance.NewDatasetAt(fs, abs)
	qs, err := queries(ctx, ds, nq)
	if err != nil {
		return err
	}
	if job != "" {
		b, err := json.Marshal(map[string]any{"dir": abs, "dim": len(qs[0]), "queries": qs, "k": 10, "nprobes": 20})
		if err != nil {
			return err
		}
		if err := os.WriteFile(job, b, 0o600); err != nil {
			return err
		}
	}
	timeAll := func() (float64, [][]int64, error) {
		var ids [][]int64
		start := time.Now()
		for _, q := range qs {
			req := query.Request{Columns: []string{"id"}, Vector: &query.VectorQuery{Column: "vec", Vectors: [][]float32{q}, K: 10, NProbes: 20}}
			rr, err := query.Run(ctx, ds, req)
			if err != nil {
				return 0, nil, err
			}
			var got []int64
			for rr.Next() {
				rec := rr.RecordBatch()
				got = append(got, rec.Column(int(rec.Schema().FieldIndices("id")[0])).(*array.Int64).Int64Values()...)
			}
			err = rr.Err()
			rr.Release()
			if err != nil {
				return 0, nil, err
			}
			ids = append(ids, got)
		}
		return float64(time.Since(start).Microseconds()) / 1000 / float64(len(qs)), ids, nil
	}
	prevB, prevE := tableindex.SetIndexCacheLimits(0, 0)
	if _, _, err := timeAll(); err != nil { // warm the page cache
		return err
	}
	off, _, err := timeAll()
	if err != nil {
		return err
	}
	tableindex.SetIndexCacheLimits(prevB, prevE)
	on, ids, err := timeAll()
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"query_ms_cache_off": off, "query_ms_cache_on": on, "ids": ids})
}

// queries are nq rows of the table moved by a little noise.
func queries(ctx context.Context, ds *lance.Dataset, nq int) ([][]float32, error) {
	sc, err := ds.Scan(ctx, lance.ScanOptions{Columns: []string{"vec"}})
	if err != nil {
		return nil, err
	}
	defer sc.Release()
	var all [][]float32
	for sc.Next() {
		col := sc.RecordBatch().Column(0).(*array.FixedSizeList)
		vals := col.ListValues().(*array.Float32).Float32Values()
		dim := int(col.DataType().(*arrow.FixedSizeListType).Len())
		for i := range col.Len() {
			if i%97 == 0 {
				all = append(all, append([]float32(nil), vals[(col.Offset()+i)*dim:(col.Offset()+i+1)*dim]...))
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var out [][]float32
	for i := range nq {
		q := append([]float32(nil), all[(i*len(all))/nq]...)
		for j := range q {
			q[j] += 0.05 * (rng.Float32()*2 - 1)
		}
		out = append(out, q)
	}
	return out, nil
}
