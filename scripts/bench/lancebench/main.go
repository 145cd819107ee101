// Command lancebench generates the benchmark tables as Arrow IPC files and
// times lancecat writing and scanning them (scripts/bench/run.sh runs it
// next to the SDK's bench.mjs on the same files).
//
//	lancebench gen <dir>           writes <dir>/wide.arrow and <dir>/narrow.arrow,
//	                               and <dir>/take-<table>.json (1,000 random row offsets)
//	lancebench run <dir> [reps]    prints timings as JSON (best of reps, default 3)
//	lancebench rest <lancecat> <dir> [reps [-- sdk-command...]]
//	                               times lancecat serve's data plane over REST, each operation
//	                               followed by the SDK's timing of it (rest.go)
//	lancebench engine <dir> [reps] [profile-dir]
//	                               the same in-process with package query, CPU-profiled (engine.go)
//	lancebench serveprof <dir> <profile-dir> [reps]
//	                               rest.go's requests to the server run in this process, CPU-profiled (serveprof.go)
//
// Besides the file writer and reader, run times the dataset layer: creating
// a dataset from the records (ds_write), appending them to it (append), and
// taking the 1,000 rows by offset (take).
//
// wide: 200,000 rows of (id int64, name utf8, vector float32[128]);
// narrow: 1,000,000 rows of (id int64, value float64, label utf8).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/storage"
)

type table struct {
	name     string
	rows     int
	schema   *arrow.Schema
	scanCols []string
	fill     func(r *rand.Rand, b *array.RecordBuilder, row int)
}

var words = []string{"lance", "catalog", "arrow", "vector", "table", "file", "page", "chunk", "row", "column", "index", "query"}

var tables = []table{
	{
		name: "wide", rows: 200_000,
		schema: arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "name", Type: arrow.BinaryTypes.String},
			{Name: "vector", Type: arrow.FixedSizeListOf(128, arrow.PrimitiveTypes.Float32)},
		}, nil),
		scanCols: []string{"id", "vector"},
		fill: func(r *rand.Rand, b *array.RecordBuilder, row int) {
			b.Field(0).(*array.Int64Builder).Append(int64(row))
			b.Field(1).(*array.StringBuilder).Append(words[r.IntN(len(words))] + "-" + strconv.Itoa(r.IntN(1_000_000)))
			vb := b.Field(2).(*array.FixedSizeListBuilder)
			vb.Append(true)
			fb := vb.ValueBuilder().(*array.Float32Builder)
			for k := 0; k < 128; k++ {
				fb.Append(r.Float32()*2 - 1)
			}
		},
	},
	{
		name: "narrow", rows: 1_000_000,
		schema: arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "value", Type: arrow.PrimitiveTypes.Float64},
			{Name: "label", Type: arrow.BinaryTypes.String},
		}, nil),
		scanCols: []string{"id", "value"},
		fill: func(r *rand.Rand, b *array.RecordBuilder, row int) {
			b.Field(0).(*array.Int64Builder).Append(int64(row))
			b.Field(1).(*array.Float64Builder).Append(r.NormFloat64() * 1000)
			b.Field(2).(*array.StringBuilder).Append(words[r.IntN(len(words))] + strconv.Itoa(r.IntN(10_000)))
		},
	},
}

const batchRows = 10_000

func gen(dir string) error {
	mem := memory.NewGoAllocator()
	for _, t := range tables {
		f, err := os.Create(filepath.Join(dir, t.name+".arrow"))
		if err != nil {
			return err
		}
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(t.schema), ipc.WithAllocator(mem))
		if err != nil {
			return err
		}
		r := rand.New(rand.NewPCG(42, uint64(t.rows)))
		b := array.NewRecordBuilder(mem, t.schema)
		for start := 0; start < t.rows; start += batchRows {
			for row := start; row < min(t.rows, start+batchRows); row++ {
				t.fill(r, b, row)
			}
			rec := b.NewRecordBatch()
			err := w.Write(rec)
			rec.Release()
			if err != nil {
				return err
			}
		}
		b.Release()
		if err := w.Close(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		// 1,000 distinct random row offsets, ascending (the SDK's
		// takeOffsets returns rows in offset order).
		seen := map[uint64]bool{}
		var offs []uint64
		for len(offs) < takeRows {
			o := uint64(r.IntN(t.rows))
			if !seen[o] {
				seen[o] = true
				offs = append(offs, o)
			}
		}
		slices.Sort(offs)
		data, err := json.Marshal(offs)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "take-"+t.name+".json"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

const takeRows = 1000

func load(path string) ([]arrow.RecordBatch, *arrow.Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var recs []arrow.RecordBatch
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			return nil, nil, err
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	return recs, r.Schema(), nil
}

type result struct {
	Rows     int     `json:"rows"`
	WriteS   float64 `json:"write_s"`
	Bytes    int64   `json:"bytes"`
	Scan2S   float64 `json:"scan2_s"`
	ScanAllS float64 `json:"scan_all_s"`
	ScanCols string  `json:"scan_cols"`
	DSWriteS float64 `json:"ds_write_s"`
	AppendS  float64 `json:"append_s"`
	TakeS    float64 `json:"take_s"`
}

func best(reps int, f func() error) (float64, error) {
	b := 0.0
	for i := 0; i < reps; i++ {
		runtime.GC()
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		if d := time.Since(start).Seconds(); i == 0 || d < b {
			b = d
		}
	}
	return b, nil
}

func run(dir string, reps int) error {
	ctx := context.Background()
	out := map[string]result{}
	for _, t := range tables {
		recs, schema, err := load(filepath.Join(dir, t.name+".arrow"))
		if err != nil {
			return err
		}
		path := filepath.Join(dir, "go-"+t.name+".lance")
		var res result
		res.Rows, res.ScanCols = t.rows, fmt.Sprint(t.scanCols)
		res.WriteS, err = best(reps, func() error {
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			w, err := lancefile.NewWriter(f, schema, lancefile.WriterOptions{})
			if err != nil {
				return err
			}
			for _, rec := range recs {
				if err := w.Write(rec); err != nil {
					return err
				}
			}
			if err := w.Close(); err != nil {
				return err
			}
			res.Bytes = w.Size()
			return f.Close()
		})
		if err != nil {
			return err
		}
		if err := datasetOps(ctx, dir, t, schema, recs, reps, &res); err != nil {
			return err
		}
		for _, rec := range recs {
			rec.Release()
		}
		scan := func(cols []string) func() error {
			return func() error {
				lf, err := lancefile.OpenLocalFile(path)
				if err != nil {
					return err
				}
				defer lf.Close()
				r, err := lancefile.Open(ctx, lf)
				if err != nil {
					return err
				}
				rec, err := r.Read(ctx, memory.DefaultAllocator, lancefile.ReadOptions{Columns: cols, Limit: -1})
				if err != nil {
					return err
				}
				if int(rec.NumRows()) != t.rows {
					return fmt.Errorf("%s: scanned %d rows, want %d", t.name, rec.NumRows(), t.rows)
				}
				rec.Release()
				return nil
			}
		}
		if res.Scan2S, err = best(reps, scan(t.scanCols)); err != nil {
			return err
		}
		if res.ScanAllS, err = best(reps, scan(nil)); err != nil {
			return err
		}
		out[t.name] = res
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

// datasetOps times the dataset layer: create from the records, take the
// offsets of take-<table>.json, append the records again.
func datasetOps(ctx context.Context, dir string, t table, schema *arrow.Schema, recs []arrow.RecordBatch, reps int, res *result) error {
	var offs []uint64
	data, err := os.ReadFile(filepath.Join(dir, "take-"+t.name+".json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &offs); err != nil {
		return err
	}
	path := filepath.Join(dir, "go-"+t.name+"-ds.lance")
	var ds *lance.Dataset
	write := func(mode lance.WriteMode) func() error {
		return func() error {
			rr, err := array.NewRecordReader(schema, recs)
			if err != nil {
				return err
			}
			defer rr.Release()
			_, err = ds.Write(ctx, rr, lance.WriteOptions{Mode: mode})
			return err
		}
	}
	res.DSWriteS, err = best(reps, func() error {
		if err := os.RemoveAll(path); err != nil {
			return err
		}
		store, err := storage.NewFS(path)
		if err != nil {
			return err
		}
		ds = lance.NewDataset(store)
		return write(lance.WriteCreate)()
	})
	if err != nil {
		return err
	}
	res.TakeS, err = best(reps, func() error {
		rec, err := ds.Take(ctx, offs, lance.TakeOptions{})
		if err != nil {
			return err
		}
		defer rec.Release()
		if int(rec.NumRows()) != len(offs) {
			return fmt.Errorf("%s: took %d rows, want %d", t.name, rec.NumRows(), len(offs))
		}
		return nil
	})
	if err != nil {
		return err
	}
	res.AppendS, err = best(reps, write(lance.WriteAppend))
	return err
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: lancebench gen|run <dir> [reps] | lancebench rest <lancecat-binary> <dir> [reps] | lancebench httpfloor <addr>")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "httpfloor":
		err = serveFloor(os.Args[2])
	case "gen":
		err = gen(os.Args[2])
	case "run":
		reps := 3
		if len(os.Args) > 3 {
			reps, err = strconv.Atoi(os.Args[3])
		}
		if err == nil {
			err = run(os.Args[2], reps)
		}
	case "rest":
		// lancebench rest <lancecat-binary> <dir> [reps [-- sdk-command...]]
		reps := 3
		if len(os.Args) < 4 {
			err = fmt.Errorf("usage: lancebench rest <lancecat-binary> <dir> [reps [-- sdk-command...]]")
			break
		}
		if len(os.Args) > 4 {
			reps, err = strconv.Atoi(os.Args[4])
		}
		var sdkCmd []string
		if len(os.Args) > 6 && os.Args[5] == "--" {
			sdkCmd = os.Args[6:]
		}
		if err == nil {
			err = runREST(os.Args[2], os.Args[3], reps, sdkCmd)
		}
	case "serveprof":
		// lancebench serveprof <dir> <profile-dir> [reps]
		reps := 3
		if len(os.Args) < 4 {
			err = fmt.Errorf("usage: lancebench serveprof <dir> <profile-dir> [reps]")
			break
		}
		if len(os.Args) > 4 {
			reps, err = strconv.Atoi(os.Args[4])
		}
		if err == nil {
			err = runServeProf(os.Args[2], os.Args[3], reps)
		}
	case "engine":
		// lancebench engine <dir> [reps] [profile-dir]
		reps, profileDir := 3, ""
		if len(os.Args) > 3 {
			reps, err = strconv.Atoi(os.Args[3])
		}
		if len(os.Args) > 4 {
			profileDir = os.Args[4]
		}
		if err == nil {
			err = runEngine(os.Args[2], reps, profileDir)
		}
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lancebench:", err)
		os.Exit(1)
	}
}
