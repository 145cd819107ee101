package lance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/internal/sdkjson"
	"github.com/lancecat/lancecat/lance/lancetest"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/storage"
)

// Interop of the data operations with the official SDK (both pinned
// versions): SDK-written tables scan and take in Go to exactly the SDK's
// values; Go-written datasets read in the SDK to exactly Go's; each side
// appends to the other's dataset and both read the mixed result. Skipped
// unless scripts/with-fixtures.sh (make test) provides the SDKs.

// node runs scripts/lancedb/script with args and returns what it printed.
func node(t *testing.T, script string, args ...string) []byte {
	t.Helper()
	return testenv.Node(t, testenv.Script("lancedb", script), args...)
}

type sdkRead struct {
	SDK       string `json:"sdk"`
	CountRows int    `json:"count_rows"`
	lancetest.SDKRows
}

func readSDK(t *testing.T, sdk, dir string, queries map[string]any) *sdkRead {
	t.Helper()
	qb, err := json.Marshal(queries)
	assert.NilError(t, err)
	qp := filepath.Join(t.TempDir(), "queries.json")
	assert.NilError(t, os.WriteFile(qp, qb, 0o644))
	var res sdkRead
	assert.NilError(t, json.Unmarshal(node(t, "read-dataset.mjs", sdk, dir, qp), &res))
	return &res
}

// goColumns scans (or takes) with Go and encodes every value as the SDK
// script does.
func goColumns(t *testing.T, rec arrow.RecordBatch, into map[string][]string) {
	t.Helper()
	for c, f := range rec.Schema().Fields() {
		for i := 0; i < int(rec.NumRows()); i++ {
			b, err := json.Marshal(sdkjson.Value(rec.Column(c), i))
			assert.NilError(t, err)
			into[f.Name] = append(into[f.Name], string(b))
		}
	}
}

func goScan(t *testing.T, ds *lance.Dataset, mem memory.Allocator) (map[string][]string, int) {
	t.Helper()
	s, err := ds.Scan(context.Background(), lance.ScanOptions{Mem: mem, BatchRows: 1000})
	assert.NilError(t, err)
	defer s.Release()
	out := map[string][]string{}
	for _, f := range s.Schema().Fields() {
		out[f.Name] = []string{}
	}
	n := 0
	for s.Next() {
		goColumns(t, s.RecordBatch(), out)
		n += int(s.RecordBatch().NumRows())
	}
	assert.NilError(t, s.Err())
	return out, n
}

func sameColumns(t *testing.T, what string, sdk map[string][]json.RawMessage, got map[string][]string) {
	t.Helper()
	assert.Equal(t, len(sdk), len(got), "%s: columns", what)
	for name, vals := range sdk {
		g, ok := got[name]
		assert.Assert(t, ok, "%s: Go has no column %q", what, name)
		assert.Equal(t, len(g), len(vals), "%s: column %q rows", what, name)
		for i, raw := range vals {
			want, err := sdkjson.Canonical(raw)
			assert.NilError(t, err)
			if want != g[i] {
				t.Fatalf("%s: column %q row %d: SDK %s, Go %s", what, name, i, want, g[i])
			}
		}
	}
}

func openDir(t *testing.T, dir string) *lance.Dataset {
	t.Helper()
	ds, err := lance.OpenURI(context.Background(), dir, storage.S3Config{})
	assert.NilError(t, err)
	return ds
}

func copyTable(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	testenv.CopyDir(t, src, dst)
	return dst
}

// openCopy copies the SDK table src into a directory of t's own and opens the copy, with its
// latest version.
func openCopy(t *testing.T, src string) (string, *lance.Dataset, *lance.Version) {
	t.Helper()
	dir := copyTable(t, src)
	ds := openDir(t, dir)
	v, err := ds.OpenLatest(context.Background())
	assert.NilError(t, err)
	return dir, ds, v
}

// sdkTables lists the SDK-written tables of each SDK's table fixtures.
func sdkTables(t *testing.T) map[string]string {
	root := os.Getenv("LANCE_TABLE_FIXTURES")
	if root == "" {
		t.Skip("set LANCE_TABLE_FIXTURES (scripts/with-fixtures.sh)")
	}
	out := map[string]string{}
	versions, err := os.ReadDir(root)
	assert.NilError(t, err)
	for _, v := range versions {
		tables, _ := filepath.Glob(filepath.Join(root, v.Name(), "*.lance"))
		for _, tb := range tables {
			out[v.Name()+"/"+filepath.Base(tb)] = tb
		}
	}
	assert.Assert(t, len(out) > 0, "no tables under %s", root)
	return out
}

func TestSDKTablesScanAndTakeInGo(t *testing.T) {
	sdks := testenv.SDKs(t)
	for name, dir := range sdkTables(t) {
		t.Run(name, func(t *testing.T) {
			mem := testenv.CheckedAllocator(t)
			ds := openDir(t, dir)
			ver, err := ds.OpenLatest(context.Background())
			assert.NilError(t, err)
			rows, err := ver.CountRows()
			assert.NilError(t, err)
			// takeOffsets returns rows in offset order, so ask in that order.
			take := []int{0, 1, 7, int(rows) / 3, int(rows) / 2, int(rows) - 1}
			slices.Sort(take)
			res := readSDK(t, sdks[len(sdks)-1], dir, map[string]any{"take": take})
			got, n := goScan(t, ds, mem)
			assert.Equal(t, n, res.CountRows)
			sameColumns(t, "scan", res.Scan.Columns, got)
			if res.Take != nil {
				offs := make([]uint64, len(take))
				for i, o := range take {
					offs[i] = uint64(o)
				}
				rec, err := ds.Take(context.Background(), offs, lance.TakeOptions{Mem: mem})
				assert.NilError(t, err)
				tk := map[string][]string{}
				goColumns(t, rec, tk)
				rec.Release()
				sameColumns(t, "take", res.Take, tk)
			}
		})
	}
}

func TestSDKAndGoAppendToEachOther(t *testing.T) {
	sdks := testenv.SDKs(t)
	for _, sdk := range sdks {
		t.Run(filepath.Base(sdk), func(t *testing.T) {
			ctx := context.Background()
			mem := testenv.CheckedAllocator(t)
			dir := filepath.Join(t.TempDir(), "go.lance")
			assert.NilError(t, os.MkdirAll(dir, 0o755))
			ds := openDir(t, dir)
			_, err := ds.Write(ctx, lancetest.Stream(t, mem, 0, 1000, 300), lance.WriteOptions{MaxRowsPerFile: 400, Mem: mem})
			assert.NilError(t, err)
			_, err = ds.Append(ctx, lancetest.Stream(t, mem, 1000, 200, 200), lance.WriteOptions{Mem: mem})
			assert.NilError(t, err)
			// Delete every 9th row of fragment 1 (rows 400..799).
			head, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)
			var del []uint32
			for r := uint32(0); r < 400; r += 9 {
				del = append(del, r)
			}
			nf, _, err := lance.MergeDeletions(ctx, ds.Store(), head.Manifest().GetFragments()[1], head.Number(), del)
			assert.NilError(t, err)
			_, err = ds.Commit(ctx, lance.NewDelete([]*tablepb.DataFragment{nf}, nil, "id in fragment 1, every 9th"), lance.CommitOptions{})
			assert.NilError(t, err)

			check := func(what string, wantRows int) {
				t.Helper()
				res := readSDK(t, sdk, dir, map[string]any{"filters": []string{"id % 7 = 3"}})
				got, n := goScan(t, ds, mem)
				assert.Equal(t, n, wantRows, what)
				assert.Equal(t, res.CountRows, wantRows, what)
				sameColumns(t, what, res.Scan.Columns, got)
				var want []string
				for _, id := range got["id"] {
					var s string
					assert.NilError(t, json.Unmarshal([]byte(id), &s))
					var v int64
					fmt.Sscan(s, &v)
					if v%7 == 3 {
						want = append(want, s)
					}
				}
				assert.DeepEqual(t, res.Filters[0].IDs, want)
			}
			check("go-written", 1200-45)

			// The SDK appends over our commits; Go reads the mixed table.
			var app struct {
				Version   uint64 `json:"version"`
				CountRows int    `json:"count_rows"`
			}
			assert.NilError(t, json.Unmarshal(node(t, "append-dataset.mjs", sdk, dir, "50"), &app))
			assert.Equal(t, app.CountRows, 1200-45+50)
			check("after SDK append", 1200-45+50)

			// Go appends over the SDK's commit.
			_, err = ds.Append(ctx, lancetest.Stream(t, mem, 5000, 30, 30), lance.WriteOptions{Mem: mem})
			assert.NilError(t, err)
			check("after Go append", 1200-45+50+30)
		})
	}
}

func TestGoAppendsToSDKTables(t *testing.T) {
	sdks := testenv.SDKs(t)
	for name, src := range sdkTables(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			mem := testenv.CheckedAllocator(t)
			dir, ds, before := openCopy(t, src)
			rows, err := before.CountRows()
			assert.NilError(t, err)
			k := min(100, int(rows))
			s, err := ds.Scan(ctx, lance.ScanOptions{Mem: mem, Limit: int64(k)})
			assert.NilError(t, err)
			_, err = ds.Append(ctx, s, lance.WriteOptions{Mem: mem})
			s.Release()
			// lancecat writes 2.1 and 2.2 data files, each into datasets of
			// its version (the 0.39.0 SDK makes 2.2 tables by default); 2.0
			// datasets are refused.
			format := before.Manifest().GetDataFormat().GetVersion()
			if format == "2.0" {
				assert.Assert(t, nserr.Is(err, nserr.ErrUnsupported), "%v", err)
				return
			}
			assert.NilError(t, err)
			after, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)
			assert.Equal(t, after.Manifest().GetDataFormat().GetVersion(), format)
			added := after.Manifest().GetFragments()[len(after.Manifest().GetFragments())-1].GetFiles()[0]
			assert.Equal(t, fmt.Sprintf("%d.%d", added.GetFileMajorVersion(), added.GetFileMinorVersion()), format)
			got, n := goScan(t, ds, mem)
			assert.Equal(t, n, int(rows)+k)
			// Every SDK reads every value of the mixed table.
			for _, sdk := range sdks {
				res := readSDK(t, sdk, dir, map[string]any{})
				assert.Equal(t, res.CountRows, int(rows)+k)
				sameColumns(t, "after Go append, read by "+res.SDK, res.Scan.Columns, got)
			}
			// The appended rows are the first k again.
			for _, vals := range got {
				assert.DeepEqual(t, vals[n-k:], vals[:k])
			}
			// And the SDK can append on top of ours.
			node(t, "append-dataset.mjs", sdks[0], dir, "10")
			_, n = goScan(t, ds, mem)
			assert.Equal(t, n, int(rows)+k+10)
		})
	}
}

// TestGoOverwritesSDKTables: an overwrite keeps the dataset's data storage
// version (2.2 for the 0.39.0 SDK's default tables), and every SDK reads
// the result value for value.
func TestGoOverwritesSDKTables(t *testing.T) {
	sdks := testenv.SDKs(t)
	for name, src := range sdkTables(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			mem := testenv.CheckedAllocator(t)
			dir, ds, before := openCopy(t, src)
			format := before.Manifest().GetDataFormat().GetVersion()
			if format == "2.0" {
				t.Skip("2.0 datasets are converted to 2.1 by an overwrite")
			}
			rows, err := before.CountRows()
			assert.NilError(t, err)
			k := min(50, int(rows))
			s, err := ds.Scan(ctx, lance.ScanOptions{Mem: mem, Limit: int64(k)})
			assert.NilError(t, err)
			_, err = ds.Overwrite(ctx, s, lance.WriteOptions{Mem: mem})
			s.Release()
			assert.NilError(t, err)
			after, err := ds.OpenLatest(ctx)
			assert.NilError(t, err)
			assert.Equal(t, after.Manifest().GetDataFormat().GetVersion(), format)
			for _, f := range after.Manifest().GetFragments() {
				for _, df := range f.GetFiles() {
					assert.Equal(t, fmt.Sprintf("%d.%d", df.GetFileMajorVersion(), df.GetFileMinorVersion()), format)
				}
			}
			got, n := goScan(t, ds, mem)
			assert.Equal(t, n, k)
			for _, sdk := range sdks {
				res := readSDK(t, sdk, dir, map[string]any{})
				assert.Equal(t, res.CountRows, k)
				sameColumns(t, "after Go overwrite, read by "+res.SDK, res.Scan.Columns, got)
			}
		})
	}
}
