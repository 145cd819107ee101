package lance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/internal/sdkjson"
	"github.com/lancecat/lancecat/lance/lancetest"
)

// The format both ways with pylance (the `lance` package, scripts/python/versions.txt set
// pylance-14.0.2) through scripts/pylance/dataset.py: datasets it writes with its default and with
// every data_storage_version it offers read in Go to exactly its own values (or, for the versions
// lancecat does not read, refused naming the version), Go appends to its datasets, and it reads and
// appends to datasets Go writes. Its model table (dataset.py) holds every Arrow type Lance stores,
// in value patterns that pick each encoding (constants, three-value strings, sentences, KiB
// strings, all-null, sorted integers, nested lists and structs).

// pylanceRead is what dataset.py read prints.
type pylanceRead struct {
	Lance              string   `json:"lance"`
	Version            uint64   `json:"version"`
	DataStorageVersion string   `json:"data_storage_version"`
	CountRows          int      `json:"count_rows"`
	FileVersions       []string `json:"file_versions"`
	lancetest.SDKRows
}

func pylanceScript() string { return testenv.Script("pylance", "dataset.py") }

// pylanceWrite writes rows [start, start+n) of dataset.py's model into dir (creating it, or
// appending when it exists) in storage version v ("default": pylance's choice).
func pylanceWrite(t *testing.T, venv, dir, v string, start, n, rowsPerFile int) {
	t.Helper()
	var out struct {
		DataStorageVersion string `json:"data_storage_version"`
		CountRows          int    `json:"count_rows"`
	}
	testenv.PythonJSON(t, &out, venv, pylanceScript(), "write", dir, v, fmt.Sprint(start), fmt.Sprint(n), fmt.Sprint(rowsPerFile))
	assert.Assert(t, out.CountRows >= n)
}

func pylanceReadDir(t *testing.T, venv, dir string, queries map[string]any) *pylanceRead {
	t.Helper()
	var out pylanceRead
	testenv.PythonJSON(t, &out, venv, pylanceScript(), "read", dir, testenv.JobFile(t, queries))
	assert.Equal(t, out.Lance, "14.0.2")
	assert.Equal(t, out.Scan.NumRows, out.CountRows)
	return &out
}

// fileVersions is the data file versions of the latest version's fragments, sorted, distinct.
func fileVersions(t *testing.T, ds *lance.Dataset) []string {
	t.Helper()
	v, err := ds.OpenLatest(context.Background())
	assert.NilError(t, err)
	var out []string
	for _, f := range v.Manifest().GetFragments() {
		for _, df := range f.GetFiles() {
			out = append(out, fmt.Sprintf("%d.%d", df.GetFileMajorVersion(), df.GetFileMinorVersion()))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestGoReadsPylanceStorageVersions: every data_storage_version pylance 14 writes (its default,
// 2.0, 2.1, 2.2, 2.3 and legacy 0.1), and datasets mixing versions (pylance appends files of an
// explicit newer version to a dataset of an older default), scanned and taken in Go to exactly
// pylance's values. The versions lancecat does not read (2.3: unstable in Lance 14; 0.1: the
// legacy v1 format) are refused as unsupported (406) with a message naming the version.
func TestGoReadsPylanceStorageVersions(t *testing.T) {
	venv := testenv.Pylance(t)
	for _, tc := range []struct {
		name   string
		writes []string // the version of each write: a create, then appends
		format string   // the dataset's data storage version
		files  []string // its data file versions
		refuse string   // the version a read is refused for ("": read)
	}{
		{name: "default", writes: []string{"default"}, format: "2.2", files: []string{"2.2"}},
		{name: "2.0", writes: []string{"2.0"}, format: "2.0", files: []string{"2.0"}},
		{name: "2.1", writes: []string{"2.1"}, format: "2.1", files: []string{"2.1"}},
		{name: "2.2", writes: []string{"2.2"}, format: "2.2", files: []string{"2.2"}},
		{name: "2.3", writes: []string{"2.3"}, format: "2.3", files: []string{"2.3"}, refuse: "2.3"},
		{name: "legacy", writes: []string{"legacy"}, format: "0.1", files: []string{"0.2"}, refuse: "0.1"},
		{name: "2.1+2.2", writes: []string{"2.1", "2.2"}, format: "2.1", files: []string{"2.1", "2.2"}},
		{name: "2.0+2.1", writes: []string{"2.0", "2.1"}, format: "2.0", files: []string{"2.0", "2.1"}},
		{name: "2.2+2.3", writes: []string{"2.2", "2.3"}, format: "2.2", files: []string{"2.2", "2.3"}, refuse: "2.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := testenv.CheckedAllocator(t)
			dir := filepath.Join(t.TempDir(), "py.lance")
			for i, v := range tc.writes {
				// 5000 rows a write, 2000 a file: three fragments, pages of every kind.
				pylanceWrite(t, venv, dir, v, i*5000, 5000, 2000)
			}
			ds := openDir(t, dir)
			head, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)
			assert.Equal(t, head.Manifest().GetDataFormat().GetVersion(), tc.format)
			assert.DeepEqual(t, fileVersions(t, ds), tc.files)
			rows, err := head.CountRows()
			assert.NilError(t, err)
			assert.Equal(t, rows, uint64(5000*len(tc.writes)))
			if tc.refuse != "" {
				refused(t, goScanErr(ds, mem), tc.refuse)
				_, err = ds.Take(ctx, []uint64{0, rows - 1}, lance.TakeOptions{Mem: mem})
				refused(t, err, tc.refuse)
				return
			}
			res := pylanceReadDir(t, venv, dir, nil)
			assert.Equal(t, res.DataStorageVersion, tc.format)
			got, n := goScan(t, ds, mem)
			assert.Equal(t, n, res.CountRows)
			assert.Equal(t, len(got), 37, "every column of the model")
			sameColumns(t, "scan", res.Scan.Columns, got)
			// Take across fragment and page boundaries.
			take := []uint64{0, 1, 1023, 1024, 1999, 2000, 4095, rows / 2, rows - 1}
			rec, err := ds.Take(ctx, take, lance.TakeOptions{Mem: mem})
			assert.NilError(t, err)
			tk := map[string][]string{}
			goColumns(t, rec, tk)
			rec.Release()
			for name, vals := range got {
				for k, off := range take {
					assert.Equal(t, tk[name][k], vals[off], "take %s row %d", name, off)
				}
			}
		})
	}
}

// goScanErr is the error of a full scan (nil when it reads every row).
func goScanErr(ds *lance.Dataset, mem memory.Allocator) error {
	s, err := ds.Scan(context.Background(), lance.ScanOptions{Mem: mem})
	if err != nil {
		return err
	}
	defer s.Release()
	for s.Next() {
	}
	return s.Err()
}

// refused checks err is the refusal of data files of a version lancecat does not read: 406 code
// 12 (Unsupported), its message naming the version.
func refused(t *testing.T, err error, version string) {
	t.Helper()
	assert.Assert(t, err != nil, "a read of Lance %s data files succeeded", version)
	p := nserr.ProblemFor(err, "", "")
	assert.Equal(t, p.Status, http.StatusNotAcceptable, "%v", err)
	assert.Check(t, is.Contains(p.Detail, "Lance "+version), "%v", err)
}

// TestGoAppendsToPylanceTables: Go appends rows it read (the first 700) to pylance's datasets of
// each version it writes (and to one of mixed versions), in the dataset's own version; pylance 14 reads every value of the mixed
// dataset as Go does, and appends on top, which Go reads. A 2.0 dataset is refused for appends
// (lancecat writes 2.1 and 2.2) with a message saying so.
func TestGoAppendsToPylanceTables(t *testing.T) {
	venv := testenv.Pylance(t)
	for _, writes := range [][]string{{"default"}, {"2.0"}, {"2.1"}, {"2.2"}, {"2.1", "2.2"}} {
		t.Run(strings.Join(writes, "+"), func(t *testing.T) {
			ctx := context.Background()
			mem := testenv.CheckedAllocator(t)
			dir := filepath.Join(t.TempDir(), "py.lance")
			// 3000 rows in all: one write, or a create and an append of a newer version (a
			// dataset of mixed file versions, which Lance 14 flags).
			for i, v := range writes {
				pylanceWrite(t, venv, dir, v, i*3000/len(writes), 3000/len(writes), 2000)
			}
			ds := openDir(t, dir)
			files := fileVersions(t, ds)
			before, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)
			format := before.Manifest().GetDataFormat().GetVersion()
			const k = 700
			s, err := ds.Scan(ctx, lance.ScanOptions{Mem: mem, Limit: k})
			assert.NilError(t, err)
			_, err = ds.Append(ctx, s, lance.WriteOptions{Mem: mem})
			s.Release()
			if format == "2.0" {
				refused(t, err, "2.0")
				return
			}
			assert.NilError(t, err)
			// Go's files are of the dataset's version; the flag of mixed versions is kept.
			assert.DeepEqual(t, fileVersions(t, ds), files)
			after, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)
			assert.Equal(t, after.Manifest().GetReaderFeatureFlags()&lance.FlagMixedFileVersions, before.Manifest().GetReaderFeatureFlags()&lance.FlagMixedFileVersions)
			got, n := goScan(t, ds, mem)
			assert.Equal(t, n, 3000+k)
			for _, vals := range got {
				assert.DeepEqual(t, vals[n-k:], vals[:k])
			}
			res := pylanceReadDir(t, venv, dir, map[string]any{"filters": []string{"id % 7 = 3"}})
			assert.Equal(t, res.CountRows, 3000+k)
			sameColumns(t, "after Go append, read by pylance", res.Scan.Columns, got)
			var want []string // in id order, as dataset.py lists them
			ids := append(seq(0, 3000), seq(0, k)...)
			slices.Sort(ids)
			for _, id := range ids {
				if id%7 == 3 {
					want = append(want, fmt.Sprint(id))
				}
			}
			assert.DeepEqual(t, res.Filters[0].IDs, want)
			// pylance appends on top of Go's commit.
			var app struct {
				CountRows    int      `json:"count_rows"`
				FileVersions []string `json:"file_versions"`
			}
			testenv.PythonJSON(t, &app, venv, pylanceScript(), "append-head", dir, "50")
			assert.Equal(t, app.CountRows, 3000+k+50)
			assert.DeepEqual(t, app.FileVersions, files)
			got, n = goScan(t, ds, mem)
			assert.Equal(t, n, 3000+k+50)
			for _, vals := range got {
				assert.DeepEqual(t, vals[n-50:], vals[:50])
			}
		})
	}
}

func seq(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// TestPylanceReadsAndAppendsGoTables: Go writes a dataset of every type pylance's model holds (the
// rows it read from pylance's own dataset) in each version lancecat writes (2.1, 2.2), with a
// deletion; pylance 14 reads exactly the values it wrote, filters, and appends; Go reads the
// append.
func TestPylanceReadsAndAppendsGoTables(t *testing.T) {
	venv := testenv.Pylance(t)
	src := filepath.Join(t.TempDir(), "model.lance")
	pylanceWrite(t, venv, src, "2.2", 0, 6000, 6000)
	model := pylanceReadDir(t, venv, src, nil)
	for _, v := range []string{"2.1", "2.2"} {
		t.Run(v, func(t *testing.T) {
			ctx := context.Background()
			mem := testenv.CheckedAllocator(t)
			dir := filepath.Join(t.TempDir(), "go.lance")
			assert.NilError(t, os.MkdirAll(dir, 0o755))
			s, err := openDir(t, src).Scan(ctx, lance.ScanOptions{Mem: mem, BatchRows: 1000})
			assert.NilError(t, err)
			ds := openDir(t, dir)
			_, err = ds.Write(ctx, s, lance.WriteOptions{Mem: mem, DataStorageVersion: v, MaxRowsPerFile: 2500})
			s.Release()
			assert.NilError(t, err)
			assert.DeepEqual(t, fileVersions(t, ds), []string{v})

			res := pylanceReadDir(t, venv, dir, map[string]any{"filters": []string{"id % 7 = 3", "color = 'blue' AND u8 < 10"}})
			assert.Equal(t, res.DataStorageVersion, v)
			assert.DeepEqual(t, res.FileVersions, []string{v})
			assert.Equal(t, res.CountRows, 6000)
			sameColumns(t, "Go's dataset, read by pylance", model.Scan.Columns, canonical(t, res.Scan.Columns))
			var blue []string
			for i := range 6000 {
				if i%3 == 2 && i%256 < 10 {
					blue = append(blue, fmt.Sprint(i))
				}
			}
			assert.DeepEqual(t, res.Filters[1].IDs, blue)

			var app struct {
				CountRows    int      `json:"count_rows"`
				FileVersions []string `json:"file_versions"`
			}
			testenv.PythonJSON(t, &app, venv, pylanceScript(), "append-head", dir, "300")
			assert.Equal(t, app.CountRows, 6300)
			assert.DeepEqual(t, app.FileVersions, []string{v})
			got, n := goScan(t, ds, mem)
			assert.Equal(t, n, 6300)
			for _, vals := range got {
				assert.DeepEqual(t, vals[n-300:], vals[:300])
			}
			sameColumns(t, "pylance's model", model.Scan.Columns, trimRows(got, 6000))
		})
	}
}

// canonical is columns of JSON values as goColumns encodes Go's.
func canonical(t *testing.T, cols map[string][]json.RawMessage) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for name, vals := range cols {
		out[name] = []string{}
		for _, raw := range vals {
			c, err := sdkjson.Canonical(raw)
			assert.NilError(t, err)
			out[name] = append(out[name], c)
		}
	}
	return out
}

func trimRows(cols map[string][]string, n int) map[string][]string {
	out := map[string][]string{}
	for k, v := range cols {
		out[k] = v[:n]
	}
	return out
}
