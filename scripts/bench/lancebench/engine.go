package main

// lancebench engine <dir> [reps] [profile-dir]: the data-plane operations of rest.go run
// in-process with package query on <dir>/root/wide.lance (the table `lancebench rest` created), no
// HTTP, best of reps, printed one line per operation next to the REST figure from
// <dir>/dataplane.json when present: what the REST answer costs beyond the engine, and the CPU
// time per run (comparable across builds on a loaded machine, unlike wall time). With
// profile-dir, each operation's timed runs are CPU-profiled into <profile-dir>/<op>.pprof
// (go tool pprof -top lancebench <file>).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/query"
	"github.com/lancecat/lancecat/storage"
)

func runEngine(dir string, reps int, profileDir string) error {
	ctx := context.Background()
	fs, err := storage.NewFS(filepath.Join(dir, "root", dataplaneTable+".lance"))
	if err != nil {
		return err
	}
	ds := lance.NewDataset(fs)
	var rest dataplaneOut
	if data, err := os.ReadFile(filepath.Join(dir, "dataplane.json")); err == nil {
		if err := json.Unmarshal(data, &rest); err != nil {
			return err
		}
	}
	for _, op := range dataplaneOps {
		var rows int64
		f := func() error {
			if op.Kind == "count" {
				n, err := query.Count(ctx, ds, nil, op.Filter)
				rows = int64(n)
				return err
			}
			req := query.Request{Filter: op.Filter, Columns: op.Columns}
			if op.Kind == "knn" {
				req.Vector = &query.VectorQuery{Column: "vector", Vectors: [][]float32{queryVector()}, Metric: "l2", K: op.K}
			}
			rr, err := query.Run(ctx, ds, req)
			if err != nil {
				return err
			}
			defer rr.Release()
			rows = 0
			for rr.Next() {
				rows += rr.RecordBatch().NumRows()
			}
			return rr.Err()
		}
		if err := f(); err != nil { // warm-up, as rest.go
			return fmt.Errorf("%s: %w", op.Name, err)
		}
		var stop func()
		if profileDir != "" {
			pf, err := os.Create(filepath.Join(profileDir, op.Name+".pprof"))
			if err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(pf); err != nil {
				return err
			}
			stop = func() { pprof.StopCPUProfile(); _ = pf.Close() }
		}
		s, err := best(reps, f)
		// best forces a GC before every run; the CPU time is measured on runs without.
		cpu0 := cpuTime()
		for i := 0; i < reps && err == nil; i++ {
			err = f()
		}
		cpu := (cpuTime() - cpu0) / time.Duration(reps)
		if stop != nil {
			stop()
		}
		if err != nil {
			return fmt.Errorf("%s: %w", op.Name, err)
		}
		// CPU time per run (user+sys of this process, GC included) does not depend on how
		// loaded the machine is, unlike the best wall time: compare it across builds.
		line := fmt.Sprintf("%-26s rows %-7d engine %9.1f ms  cpu %8.2f ms/run", op.Label, rows, s*1000, float64(cpu.Microseconds())/1000)
		if r, ok := rest.Lancecat[op.Name]; ok {
			line += fmt.Sprintf("   REST %9.1f ms", r.Seconds*1000)
		}
		fmt.Println(line)
	}
	return nil
}

// cpuTime is the user+sys CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
