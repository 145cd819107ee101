package lancefile_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/lancetest"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// Go-written files read by the official SDK: each test writes a one-fragment
// dataset (a data file from lancefile.Writer and a version-1 manifest), has
// scripts/lancedb/read-dataset.mjs read it through @lancedb/lancedb, and
// compares every value, filter results, takeOffsets and a vector search.

// writeDataset writes recs as dir/<name>.lance: one data file, one
// fragment, manifest version 1. It is the smallest dataset Lance opens;
// appends and commits belong to the table layer.
func writeDataset(t *testing.T, dir, name string, schema *arrow.Schema, opts lancefile.WriterOptions, recs ...arrow.RecordBatch) string {
	t.Helper()
	root := filepath.Join(dir, name+".lance")
	assert.NilError(t, os.MkdirAll(filepath.Join(root, "data"), 0o755))
	assert.NilError(t, os.MkdirAll(filepath.Join(root, "_versions"), 0o755))
	fileName := uuid.NewString() + ".lance"
	f, err := os.Create(filepath.Join(root, "data", fileName))
	assert.NilError(t, err)
	w, err := lancefile.NewWriter(f, schema, opts)
	assert.NilError(t, err)
	for _, r := range recs {
		assert.NilError(t, w.Write(r))
	}
	assert.NilError(t, w.Close())
	assert.NilError(t, f.Close())

	ids := w.ColumnFieldIDs()
	cols := make([]int32, len(ids))
	for i := range cols {
		cols[i] = int32(i)
	}
	md := map[string][]byte{}
	for i, k := range schema.Metadata().Keys() {
		md[k] = []byte(schema.Metadata().Values()[i])
	}
	mf := &lance.ManifestFile{Manifest: &tablepb.Manifest{
		Fields:         w.Fields(),
		SchemaMetadata: md,
		Fragments: []*tablepb.DataFragment{{
			Id: 0,
			Files: []*tablepb.DataFile{{
				Path: fileName, Fields: ids, ColumnIndices: cols,
				FileMajorVersion: uint32(w.Version().Major), FileMinorVersion: uint32(w.Version().Minor), FileSizeBytes: uint64(w.Size()),
			}},
			PhysicalRows: w.NumRows(),
		}},
		Version:       1,
		WriterVersion: &tablepb.Manifest_WriterVersion{Library: lance.WriterLibrary, Version: lance.WriterVersion},
		Timestamp:     timestamppb.New(time.Now().UTC()),
		MaxFragmentId: proto.Uint32(0),
		DataFormat:    &tablepb.Manifest_DataStorageFormat{FileFormat: "lance", Version: w.Version().String()},
	}}
	data, err := mf.Encode()
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(root, lance.NamingV2.ManifestKey(1)), data, 0o644))
	return root
}

type sdkResult struct {
	SDK       string `json:"sdk"`
	CountRows int    `json:"count_rows"`
	lancetest.SDKRows
	Nearest *struct {
		IDs       []string          `json:"ids"`
		Distances []json.RawMessage `json:"distances"`
	} `json:"nearest"`
}

type sdkQueries struct {
	Filters []string       `json:"filters,omitempty"`
	Take    []int          `json:"take,omitempty"`
	Nearest map[string]any `json:"nearest,omitempty"`
}

func readWithSDK(t *testing.T, sdk, dataset string, q sdkQueries) *sdkResult {
	t.Helper()
	var res sdkResult
	testenv.NodeJSON(t, &res, testenv.Script("lancedb", "read-dataset.mjs"), sdk, dataset, testenv.JobFile(t, q))
	return &res
}

// compareColumns checks SDK values against rows of recs (in order).
func compareColumns(t *testing.T, got map[string][]json.RawMessage, schema *arrow.Schema, recs []arrow.RecordBatch, rows []int) {
	t.Helper()
	for _, f := range schema.Fields() {
		t.Run(f.Name, func(t *testing.T) {
			vals, ok := got[f.Name]
			assert.Assert(t, ok, "SDK returned no column %q", f.Name)
			assert.Equal(t, len(vals), len(rows))
			for k, row := range rows {
				rec, i := locate(recs, row)
				want, err := json.Marshal(lancefile.JSONValue(rec.Column(rec.Schema().FieldIndices(f.Name)[0]), i))
				assert.NilError(t, err)
				if g := lancefile.CanonicalJSON(t, vals[k]); g != string(want) {
					t.Fatalf("row %d (%s): SDK read %s, wrote %s", row, f.Type, g, want)
				}
			}
		})
	}
}

func locate(recs []arrow.RecordBatch, row int) (arrow.RecordBatch, int) {
	for _, r := range recs {
		if row < int(r.NumRows()) {
			return r, row
		}
		row -= int(r.NumRows())
	}
	panic("row out of range")
}

// rowsWhere is the ids, as the SDK's filters answer them, of the rows
// [0, rows) of recs for which keep holds.
func rowsWhere(recs []arrow.RecordBatch, rows int, keep func(rec arrow.RecordBatch, i int) bool) []string {
	var out []string
	for row := range rows {
		if rec, i := locate(recs, row); keep(rec, i) {
			out = append(out, strconv.Itoa(row))
		}
	}
	return out
}

// sdkReadsAll has the SDK read the dataset ds with q and checks that it
// counts rows rows and reads the values of recs, in its scan and in its
// take of q.Take; its filter answers are the test's to check.
func sdkReadsAll(t *testing.T, sdk, ds string, schema *arrow.Schema, recs []arrow.RecordBatch, rows int, q sdkQueries) *sdkResult {
	t.Helper()
	res := readWithSDK(t, sdk, ds, q)
	assert.Equal(t, res.CountRows, rows)
	compareColumns(t, res.Scan.Columns, schema, recs, seq(rows))
	if res.Take != nil {
		compareColumns(t, res.Take, schema, recs, q.Take)
	}
	return res
}

// pagedVariants are the file formats a page test writes in: 2.1 with one
// page a column, 2.2 with pages of pageBytes.
func pagedVariants(pageBytes int) []struct {
	name string
	opts lancefile.WriterOptions
} {
	return []struct {
		name string
		opts lancefile.WriterOptions
	}{
		{"v2.1", lancefile.WriterOptions{}},
		{"v2.2-pages", lancefile.WriterOptions{Version: lancefile.V2_2, PageBytes: pageBytes}},
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// sdkSchema is every type the writer handles except large_list, which
// arrow-js (and so the Node SDK) cannot represent.
func sdkSchema() *arrow.Schema {
	var fs []arrow.Field
	for _, f := range lancefile.AllTypesSchema().Fields() {
		if f.Type.ID() != arrow.LARGE_LIST {
			fs = append(fs, f)
		}
	}
	return arrow.NewSchema(fs, nil)
}

// filterCase is an SDK filter and the rows it must return, decided in Go.
type filterCase struct {
	where string
	match func(rec arrow.RecordBatch, i int) bool
}

func col[T arrow.Array](rec arrow.RecordBatch, name string) T {
	return rec.Column(rec.Schema().FieldIndices(name)[0]).(T)
}

var filterCases = []filterCase{
	{"id % 7 = 3", func(r arrow.RecordBatch, i int) bool { return col[*array.Int64](r, "id").Value(i)%7 == 3 }},
	{"i32 > 0", func(r arrow.RecordBatch, i int) bool {
		a := col[*array.Int32](r, "i32")
		return a.IsValid(i) && a.Value(i) > 0
	}},
	{"s IS NULL", func(r arrow.RecordBatch, i int) bool { return col[*array.String](r, "s").IsNull(i) }},
	{"b = true", func(r arrow.RecordBatch, i int) bool {
		a := col[*array.Boolean](r, "b")
		return a.IsValid(i) && a.Value(i)
	}},
	{"u64 > 500000000000000", func(r arrow.RecordBatch, i int) bool {
		a := col[*array.Uint64](r, "u64")
		return a.IsValid(i) && a.Value(i) > 500000000000000
	}},
	{"f64 < 0", func(r arrow.RecordBatch, i int) bool {
		a := col[*array.Float64](r, "f64")
		return a.IsValid(i) && a.Value(i) < 0
	}},
	{"long_s LIKE 'a%'", func(r arrow.RecordBatch, i int) bool {
		a := col[*array.String](r, "long_s")
		return a.IsValid(i) && len(a.Value(i)) > 0 && a.Value(i)[0] == 'a'
	}},
	{"st.a > 10", func(r arrow.RecordBatch, i int) bool {
		st := col[*array.Struct](r, "st")
		a := st.Field(0).(*array.Int32)
		return st.IsValid(i) && a.IsValid(i) && a.Value(i) > 10
	}},
	{"dict = 'beta'", func(r arrow.RecordBatch, i int) bool {
		d := col[*array.Dictionary](r, "dict")
		return d.IsValid(i) && d.Dictionary().(*array.String).Value(d.GetValueIndex(i)) == "beta"
	}},
}

func TestSDKReadsGoWrittenTypes(t *testing.T) {
	for _, sdk := range testenv.SDKs(t) {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			schema := sdkSchema()
			var recs []arrow.RecordBatch
			start := 0
			for i, n := range []int{3000, 1500, 37} {
				recs = append(recs, lancefile.RandomRecord(mem, schema, uint64(i+1), start, n, 0.1))
				start += n
			}
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			for _, variant := range []struct {
				name string
				opts lancefile.WriterOptions
			}{
				{"default", lancefile.WriterOptions{PageBytes: 64 << 10}},
				{"plain", lancefile.WriterOptions{PageBytes: 64 << 10, NoCompression: true}},
				// File format 2.2: the large-chunk mini-block grammar.
				{"v2.2", lancefile.WriterOptions{PageBytes: 64 << 10, Version: lancefile.V2_2}},
				{"v2.2-plain", lancefile.WriterOptions{PageBytes: 64 << 10, NoCompression: true, Version: lancefile.V2_2}},
			} {
				t.Run(variant.name, func(t *testing.T) {
					ds := writeDataset(t, t.TempDir(), "types", schema, variant.opts, recs...)
					var q sdkQueries
					cases := slices.DeleteFunc(slices.Clone(filterCases), func(fc filterCase) bool {
						return fc.where == "dict = 'beta'" && len(schema.FieldIndices("dict")) == 0
					})
					for _, fc := range cases {
						q.Filters = append(q.Filters, fc.where)
					}
					q.Take = []int{0, 1, 1023, 1024, 2999, 3000, 4536}
					res := readWithSDK(t, sdk, ds, q)
					assert.Equal(t, res.CountRows, start)
					assert.Equal(t, res.Scan.NumRows, start)
					compareColumns(t, res.Scan.Columns, schema, recs, seq(start))
					for k, fc := range cases {
						want := rowsWhere(recs, start, fc.match)
						got := res.Filters[k].IDs
						assert.Assert(t, len(want) > 0, fc.where)
						assert.DeepEqual(t, got, want)
					}
					if res.Take != nil {
						t.Run("take", func(t *testing.T) {
							compareColumns(t, res.Take, schema, recs, q.Take)
						})
					} else {
						t.Logf("SDK %s has no takeOffsets", res.SDK)
					}
				})
			}
		})
	}
}

func TestSDKVectorSearchOnGoWrittenVectors(t *testing.T) {
	for _, sdk := range testenv.SDKs(t) {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			schema := arrow.NewSchema([]arrow.Field{
				{Name: "id", Type: arrow.PrimitiveTypes.Int64},
				{Name: "vec", Type: arrow.FixedSizeListOf(128, arrow.PrimitiveTypes.Float32)},
				{Name: "emb", Type: arrow.FixedSizeListOf(1536, arrow.PrimitiveTypes.Float32), Nullable: true},
			}, nil)
			const n = 1200
			r := rand.New(rand.NewPCG(3, 4))
			b := array.NewRecordBuilder(mem, schema)
			defer b.Release()
			vecs := make([][]float32, n)
			for i := 0; i < n; i++ {
				b.Field(0).(*array.Int64Builder).Append(int64(i))
				vb := b.Field(1).(*array.FixedSizeListBuilder)
				vb.Append(true)
				vecs[i] = make([]float32, 128)
				for k := range vecs[i] {
					vecs[i][k] = r.Float32()*2 - 1
					vb.ValueBuilder().(*array.Float32Builder).Append(vecs[i][k])
				}
				eb := b.Field(2).(*array.FixedSizeListBuilder)
				if i%11 == 5 {
					eb.AppendNull()
					continue
				}
				eb.Append(true)
				for k := 0; k < 1536; k++ {
					eb.ValueBuilder().(*array.Float32Builder).Append(r.Float32())
				}
			}
			rec := b.NewRecordBatch()
			defer rec.Release()
			ds := writeDataset(t, t.TempDir(), "vectors", schema, lancefile.WriterOptions{PageBytes: 1 << 20}, rec)

			query := slices.Clone(vecs[777])
			for k := range query {
				query[k] += 0.01 * float32(math.Sin(float64(k)))
			}
			type hit struct {
				id   int
				dist float32
			}
			hits := make([]hit, n)
			for i, v := range vecs {
				var d float32
				for k := range v {
					x := v[k] - query[k]
					d += x * x
				}
				hits[i] = hit{i, d}
			}
			sort.Slice(hits, func(a, b int) bool { return hits[a].dist < hits[b].dist })
			var want []string
			for _, h := range hits[:10] {
				want = append(want, strconv.Itoa(h.id))
			}
			qv := make([]float64, len(query))
			for k, x := range query {
				qv[k] = float64(x)
			}
			res := readWithSDK(t, sdk, ds, sdkQueries{
				Filters: []string{"id >= 100 AND id < 110"},
				Nearest: map[string]any{"column": "vec", "query": qv, "k": 10, "distance": "l2"},
			})
			compareColumns(t, res.Scan.Columns, schema, []arrow.RecordBatch{rec}, seq(n))
			assert.DeepEqual(t, res.Filters[0].IDs, []string{"100", "101", "102", "103", "104", "105", "106", "107", "108", "109"})
			assert.Assert(t, res.Nearest != nil)
			assert.DeepEqual(t, res.Nearest.IDs, want)
			assert.Equal(t, want[0], "777")
			fmt.Fprintf(os.Stderr, "nearest to row 777 + noise via %s: %v\n", res.SDK, res.Nearest.IDs)
		})
	}
}

// TestSDKReadsGoWrittenLargeValues: values over 32 KiB (per-value zstd in
// full-zip pages) and 250–600 byte strings (plain full-zip), several pages.
func TestSDKReadsGoWrittenLargeValues(t *testing.T) {
	for _, sdk := range testenv.SDKs(t) {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			schema := arrow.NewSchema([]arrow.Field{
				{Name: "id", Type: arrow.PrimitiveTypes.Int64},
				{Name: "huge", Type: arrow.BinaryTypes.LargeBinary, Nullable: true},
				{Name: "long_s", Type: arrow.BinaryTypes.String, Nullable: true},
			}, nil)
			recs := []arrow.RecordBatch{
				lancefile.RandomRecord(mem, schema, 1, 0, 40, 0.2),
				lancefile.RandomRecord(mem, schema, 2, 40, 25, 0.2),
			}
			defer recs[0].Release()
			defer recs[1].Release()
			ds := writeDataset(t, t.TempDir(), "large", schema, lancefile.WriterOptions{PageBytes: 512 << 10}, recs...)
			res := readWithSDK(t, sdk, ds, sdkQueries{Filters: []string{"huge IS NULL"}})
			compareColumns(t, res.Scan.Columns, schema, recs, seq(65))
			assert.DeepEqual(t, res.Filters[0].IDs, rowsWhere(recs, 65, func(rec arrow.RecordBatch, i int) bool { return rec.Column(1).IsNull(i) }))
		})
	}
}

// longRun: more than 100,000 nulls, null lists and empty lists in a row.
const longRun = 150_000

// TestSDKReadsGoWrittenLongRuns: 150,000 nulls, null lists and empty
// lists in a row, in both file formats, read value for value by the SDK
// (compressed levels; pages split where a run outgrows a chunk).
func TestSDKReadsGoWrittenLongRuns(t *testing.T) {
	for _, sdk := range testenv.SDKs(t) {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			rec := lancefile.LongRunsRecord(mem, longRun)
			defer rec.Release()
			for _, v := range []lancefile.Version{lancefile.V2_1, lancefile.V2_2} {
				t.Run(v.String(), func(t *testing.T) {
					ds := writeDataset(t, t.TempDir(), "runs", lancefile.LongRunsSchema(), lancefile.WriterOptions{Version: v}, rec)
					res := readWithSDK(t, sdk, ds, sdkQueries{Filters: []string{"ni IS NULL"}})
					assert.Equal(t, res.CountRows, int(rec.NumRows()))
					compareColumns(t, res.Scan.Columns, lancefile.LongRunsSchema(), []arrow.RecordBatch{rec}, seq(int(rec.NumRows())))
					assert.Equal(t, len(res.Filters[0].IDs), longRun)
				})
				// Only the run: every page of the list and nullable columns
				// is all null or all empty (2.2: a constant page with
				// compressed levels).
				t.Run(v.String()+"-run-only", func(t *testing.T) {
					run := rec.NewSlice(10, 10+longRun)
					defer run.Release()
					ds := writeDataset(t, t.TempDir(), "run", lancefile.LongRunsSchema(), lancefile.WriterOptions{Version: v}, run)
					res := readWithSDK(t, sdk, ds, sdkQueries{})
					assert.Equal(t, res.CountRows, longRun)
					compareColumns(t, res.Scan.Columns, lancefile.LongRunsSchema(), []arrow.RecordBatch{run}, seq(longRun))
				})
			}
		})
	}
}

// TestSDKReadsGoWrittenFSST: FSST-coded string pages (mini-block and
// full-zip; unicode, empty strings, nulls, random binary with escapes,
// 64-bit offsets, strings in lists), one page and several per column, in
// both file formats, read value for value by the SDK.
func TestSDKReadsGoWrittenFSST(t *testing.T) {
	for _, sdk := range testenv.SDKs(t) {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			recs := []arrow.RecordBatch{lancefile.FSSTRecord(mem, 1, 0, 3000), lancefile.FSSTRecord(mem, 2, 3000, 1500)}
			defer recs[0].Release()
			defer recs[1].Release()
			for _, variant := range pagedVariants(96 << 10) {
				t.Run(variant.name, func(t *testing.T) {
					ds := writeDataset(t, t.TempDir(), "fsst", lancefile.FSSTSchema(), variant.opts, recs...)
					res := sdkReadsAll(t, sdk, ds, lancefile.FSSTSchema(), recs, 4500, sdkQueries{Filters: []string{"uni = ''"}, Take: []int{0, 1, 2999, 3000, 4499}})
					want := rowsWhere(recs, 4500, func(rec arrow.RecordBatch, i int) bool {
						u := rec.Column(1).(*array.String)
						return u.IsValid(i) && u.Value(i) == ""
					})
					assert.Assert(t, len(want) > 0)
					assert.DeepEqual(t, res.Filters[0].IDs, want)
				})
			}
		})
	}
}

// TestSDKReadsGoWrittenRLE: run-length encoded fixed-width pages (8- to
// 64-bit, runs over 255, nulls in runs), one page and several per column,
// in both file formats, read value for value by the SDK.
func TestSDKReadsGoWrittenRLE(t *testing.T) {
	for _, sdk := range testenv.SDKs(t) {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			recs := []arrow.RecordBatch{lancefile.RLERecord(mem, 0, 6000), lancefile.RLERecord(mem, 6000, 777)}
			defer recs[0].Release()
			defer recs[1].Release()
			const rows = 6777
			for _, variant := range pagedVariants(16 << 10) {
				t.Run(variant.name, func(t *testing.T) {
					ds := writeDataset(t, t.TempDir(), "rle", lancefile.RLESchema(), variant.opts, recs...)
					res := sdkReadsAll(t, sdk, ds, lancefile.RLESchema(), recs, rows, sdkQueries{Filters: []string{"r32 IS NULL", "r64 = -3000000021"}, Take: []int{0, 4095, 4096, 6776}})
					assert.DeepEqual(t, res.Filters[0].IDs, rowsWhere(recs, rows, func(rec arrow.RecordBatch, i int) bool { return rec.Column(2).IsNull(i) }))
					assert.DeepEqual(t, res.Filters[1].IDs, rowsWhere(recs, rows, func(rec arrow.RecordBatch, i int) bool {
						return rec.Column(1).(*array.Int64).Value(i) == -3000000021
					}))
				})
			}
		})
	}
}

// TestSDKReadsGoWrittenFixedDictionaries: 2.2 dictionary pages of 64- and
// 128-bit values (inline and out-of-line bit-packed dictionaries, plain
// ones, nulls), read value for value by the SDK.
func TestSDKReadsGoWrittenFixedDictionaries(t *testing.T) {
	for _, sdk := range testenv.SDKs(t) {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			recs := []arrow.RecordBatch{lancefile.FixedDictRecord(mem, 0, 10_000), lancefile.FixedDictRecord(mem, 10_000, 333)}
			defer recs[0].Release()
			defer recs[1].Release()
			const rows = 10_333
			ds := writeDataset(t, t.TempDir(), "fdict", lancefile.FixedDictSchema(), lancefile.WriterOptions{Version: lancefile.V2_2}, recs...)
			res := sdkReadsAll(t, sdk, ds, lancefile.FixedDictSchema(), recs, rows, sdkQueries{Filters: []string{"big = 7"}, Take: []int{0, 1024, 10_332}})
			want := rowsWhere(recs, rows, func(rec arrow.RecordBatch, i int) bool { return rec.Column(2).(*array.Uint64).Value(i) == 7 })
			assert.Assert(t, len(want) > 0)
			assert.DeepEqual(t, res.Filters[0].IDs, want)
		})
	}
}
