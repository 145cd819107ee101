package dml

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
)

// Interop with the official SDK (0.31.0 and 0.39.0, via
// scripts/with-fixtures.sh): the SDK reads exactly what our writes leave,
// at every version of the history, and a table the SDK created (and
// writes to) takes our writes with the same operations Lance records.
// Skipped without LANCECAT_LANCEDB_SDK.

// runSDK runs scripts/dml/sdk.mjs command on table name of the SDK database db, arg (if any)
// its JSON argument, and returns what it printed.
func runSDK(t *testing.T, sdk, db, name, command string, arg any) []byte {
	t.Helper()
	args := []string{sdk, db, name, command}
	if arg != nil {
		args = append(args, testenv.JSON(t, arg))
	}
	return testenv.Node(t, testenv.Script("dml", "sdk.mjs"), args...)
}

type sdkView struct {
	SDK      string           `json:"sdk"`
	Count    int              `json:"count"`
	Schema   []string         `json:"schema"`
	Rows     []map[string]any `json:"rows"`
	Versions []struct {
		Version   uint64 `json:"version"`
		TotalRows int    `json:"total_rows"`
		Count     int    `json:"count"`
	} `json:"versions"`
}

func sdkRead(t *testing.T, sdk, db, name string) sdkView {
	t.Helper()
	var v sdkView
	assert.NilError(t, json.Unmarshal(runSDK(t, sdk, db, name, "read", nil), &v))
	return v
}

// history is the operation Lance recorded for each version, as we read it.
func history(t *testing.T, ds *lance.Dataset) []string {
	t.Helper()
	ctx := context.Background()
	head := latest(t, ds)
	var out []string
	for n := uint64(1); n <= head.Number(); n++ {
		v, err := ds.OpenVersion(ctx, n)
		assert.NilError(t, err)
		txn, err := ds.ReadTransaction(ctx, v)
		assert.NilError(t, err)
		out = append(out, lance.OperationName(txn))
	}
	return out
}

// The same writes, as SDK ops and as ours.
var interopOps = []map[string]any{
	{"op": "delete", "where": "id % 10 = 1"},
	{"op": "update", "where": "grp = 'b' AND id < 30", "values": map[string]string{"val": "val + 1000"}},
	{"op": "merge", "on": []string{"id", "grp"}, "matched": true, "matched_where": "source.val > target.val", "insert": true,
		"rows": []map[string]any{{"id": 2, "grp": "a", "val": 500}, {"id": 4, "grp": "a", "val": -1}, {"id": 4, "grp": "z", "val": 7}, {"id": 100, "grp": "n", "val": 1}}},
	{"op": "add_columns", "columns": []map[string]string{{"name": "x", "sql": "id * 2"}}},
	{"op": "alter_type", "path": "val", "type": "int64"},
	{"op": "merge", "on": []string{"id"}, "by_source_delete": true, "by_source_where": "id > 40",
		"rows": []map[string]any{{"id": 45, "grp": "q", "val": 1}}},
}

func ourOps(t *testing.T, ds *lance.Dataset) {
	t.Helper()
	ctx := context.Background()
	_, err := Delete(ctx, ds, "id % 10 = 1")
	assert.NilError(t, err)
	_, err = Update(ctx, ds, "grp = 'b' AND id < 30", []Assignment{{"val", "val + 1000"}})
	assert.NilError(t, err)
	_, err = Merge(ctx, ds, stream(t, row{2, "a", 500}, row{4, "a", -1}, row{4, "z", 7}, row{100, "n", 1}),
		MergeInsert{On: []string{"id", "grp"}, WhenMatchedUpdateAll: true, WhenMatchedUpdateAllFilter: "source.val > target.val", WhenNotMatchedInsertAll: true})
	assert.NilError(t, err)
	_, err = AddColumns(ctx, ds, []NewColumn{{"x", "id * 2"}})
	assert.NilError(t, err)
	_, err = AlterColumns(ctx, ds, []Alteration{{Path: "val", DataType: arrow.PrimitiveTypes.Int64}})
	assert.NilError(t, err)
	// The source's val is int32, the table's int64 now: cast on the way in.
	_, err = Merge(ctx, ds, stream(t, row{45, "q", 1}), MergeInsert{On: []string{"id"}, WhenNotMatchedBySourceDelete: true, WhenNotMatchedBySourceDeleteFilter: "id > 40"})
	assert.NilError(t, err)
}

func initialRows() []map[string]any {
	var out []map[string]any
	for i := 0; i < 50; i++ {
		g := "a"
		if i%2 == 1 {
			g = "b"
		}
		out = append(out, map[string]any{"id": i, "grp": g, "val": i})
	}
	return out
}

// TestSDKTableTakesOurWrites: the SDK 0.39.0 creates a table (file format
// 2.2); the SDK applies a sequence of writes to one copy, we apply the
// same writes to another. Both SDK versions read the same rows from both
// copies at every version, and the history records the same Lance
// operation per version; the SDK then writes on top of ours.
func TestSDKTableTakesOurWrites(t *testing.T) {
	list := testenv.SDKs(t)
	var newest string
	for _, s := range list {
		if testenv.SDKVersion(s) == "0.39.0" {
			newest = s
		}
	}
	assert.Assert(t, newest != "", "no SDK 0.39.0 in %v", list)
	root := t.TempDir()
	sdkDB, ourDB := filepath.Join(root, "sdk"), filepath.Join(root, "ours")
	runSDK(t, newest, sdkDB, "t", "create", initialRows())
	testenv.CopyDir(t, sdkDB, ourDB)
	ours := openTable(t, filepath.Join(ourDB, "t.lance"), "")
	assert.Equal(t, latest(t, ours).DataStorageVersion(), "2.2")

	runSDK(t, newest, sdkDB, "t", "ops", interopOps)
	ourOps(t, ours)
	theirs := openTable(t, filepath.Join(sdkDB, "t.lance"), "")
	assert.DeepEqual(t, history(t, ours), history(t, theirs))
	t.Logf("history: %v", history(t, ours))
	assert.Equal(t, latest(t, ours).DataStorageVersion(), "2.2")

	for _, sdk := range list {
		t.Run(testenv.SDKVersion(sdk), func(t *testing.T) {
			want := sdkRead(t, newest, sdkDB, "t")
			got := sdkRead(t, sdk, ourDB, "t")
			assert.DeepEqual(t, got.Schema, want.Schema)
			assert.DeepEqual(t, got.Rows, want.Rows)
			assert.DeepEqual(t, got.Versions, want.Versions)
		})
	}

	// The SDK writes on top of our history.
	runSDK(t, newest, ourDB, "t", "ops", []map[string]any{{"op": "delete", "where": "id = 0"}, {"op": "update", "where": "id = 2", "values": map[string]string{"val": "1"}}})
	runSDK(t, newest, sdkDB, "t", "ops", []map[string]any{{"op": "delete", "where": "id = 0"}, {"op": "update", "where": "id = 2", "values": map[string]string{"val": "1"}}})
	assert.DeepEqual(t, sdkRead(t, newest, ourDB, "t").Rows, sdkRead(t, newest, sdkDB, "t").Rows)
}

// TestSDKReadsOurWrites: on a table we created (2.1, two fragments), our
// writes leave rows both SDK versions read exactly as the SDK's own writes
// leave them, and every version of our history counts (checkout, and the
// SDK's total_rows) what we count.
func TestSDKReadsOurWrites(t *testing.T) {
	list := testenv.SDKs(t)
	var newest string
	for _, s := range list {
		if testenv.SDKVersion(s) == "0.39.0" {
			newest = s
		}
	}
	root := t.TempDir()
	refDB, ourDB := filepath.Join(root, "ref"), filepath.Join(root, "ours")
	runSDK(t, newest, refDB, "t", "create", initialRows())
	runSDK(t, newest, refDB, "t", "ops", interopOps)
	want := sdkRead(t, newest, refDB, "t")

	var first []row
	for _, r := range initialRows() {
		first = append(first, row{ID: int64(r["id"].(int)), Grp: r["grp"].(string), Val: int32(r["val"].(int))})
	}
	ds := openTable(t, filepath.Join(ourDB, "t.lance"), "2.1", first[:25], first[25:])
	ourOps(t, ds)
	assert.Equal(t, latest(t, ds).DataStorageVersion(), "2.1")
	var counts []int
	for n := uint64(1); n <= latest(t, ds).Number(); n++ {
		v, err := ds.OpenVersion(context.Background(), n)
		assert.NilError(t, err)
		c, err := v.CountRows()
		assert.NilError(t, err)
		counts = append(counts, int(c))
	}
	for _, sdk := range list {
		t.Run(testenv.SDKVersion(sdk), func(t *testing.T) {
			got := sdkRead(t, sdk, ourDB, "t")
			assert.DeepEqual(t, got.Schema, want.Schema)
			assert.DeepEqual(t, got.Rows, want.Rows)
			assert.Equal(t, got.Count, want.Count)
			assert.Equal(t, len(got.Versions), len(counts))
			for i, v := range got.Versions {
				assert.Equal(t, v.Count, counts[i], "version %d", v.Version)
				assert.Equal(t, v.TotalRows, counts[i], "version %d", v.Version)
			}
		})
	}
}

// TestSDKConcurrentWriters: the SDK 0.39.0 (Lance's own resolver) and
// three Go writers write to one table at the same time, each appending,
// deleting and merging its own rows of the same two fragments. Each side
// rebases over the other's Delete and Update transactions; at the end both
// read every row exactly once with the value its writer gave it.
func TestSDKConcurrentWriters(t *testing.T) {
	list := testenv.SDKs(t)
	var newest string
	for _, s := range list {
		if testenv.SDKVersion(s) == "0.39.0" {
			newest = s
		}
	}
	ctx := context.Background()
	db := t.TempDir()
	var initial []map[string]any
	model := map[int64]row{}
	for i := 0; i < 400; i++ {
		g := fmt.Sprintf("i%d", i%3)
		initial = append(initial, map[string]any{"id": i, "grp": g, "val": i})
		model[int64(i)] = row{int64(i), g, int32(i)}
	}
	runSDK(t, newest, db, "t", "create", initial[:200])
	runSDK(t, newest, db, "t", "ops", []map[string]any{{"op": "add", "rows": initial[200:]}})
	const ops = 6
	// The SDK's writes: rows 300..399 and ids from 5000.
	var sdkOps []map[string]any
	for k := 0; k < ops; k++ {
		base := 300 + k*10
		switch k % 3 {
		case 0:
			var rows []map[string]any
			for i := 0; i < 5; i++ {
				g := fmt.Sprintf("sa%d", i)
				rows = append(rows, map[string]any{"id": 6000 + base + i, "grp": g, "val": k})
				model[int64(6000+base+i)] = row{int64(6000 + base + i), g, int32(k)}
			}
			sdkOps = append(sdkOps, map[string]any{"op": "add", "rows": rows})
		case 1:
			sdkOps = append(sdkOps, map[string]any{"op": "delete", "where": fmt.Sprintf("id >= %d AND id < %d", base, base+5)})
			for i := base; i < base+5; i++ {
				delete(model, int64(i))
			}
		default:
			var rows []map[string]any
			for i := 0; i < 5; i++ {
				g := fmt.Sprintf("su%d", i)
				rows = append(rows, map[string]any{"id": base + i, "grp": g, "val": 2000 + i})
				model[int64(base+i)] = row{int64(base + i), g, int32(2000 + i)}
			}
			rows = append(rows, map[string]any{"id": 5000 + base, "grp": "sm", "val": k})
			model[int64(5000+base)] = row{int64(5000 + base), "sm", int32(k)}
			sdkOps = append(sdkOps, map[string]any{"op": "merge", "on": []string{"id"}, "matched": true, "insert": true, "rows": rows})
		}
	}
	// The Go writers' rows: 0..299 and ids from 10000/20000.
	type goOp struct {
		do     func(*lance.Dataset) error
		record func()
	}
	var goOps [3][]goOp
	for w := 0; w < 3; w++ {
		for k := 0; k < ops; k++ {
			base := int64(w*100 + k*10)
			switch k % 3 {
			case 0:
				rows := rowsN(10000+base, 10000+base+5, fmt.Sprintf("a%d", w))
				goOps[w] = append(goOps[w], goOp{
					func(d *lance.Dataset) error { _, err := Insert(ctx, d, stream(t, rows...), false); return err },
					func() {
						for _, r := range rows {
							model[r.ID] = r
						}
					}})
			case 1:
				goOps[w] = append(goOps[w], goOp{
					func(d *lance.Dataset) error {
						_, err := Delete(ctx, d, fmt.Sprintf("id >= %d AND id < %d", base, base+5))
						return err
					},
					func() {
						for i := base; i < base+5; i++ {
							delete(model, i)
						}
					}})
			default:
				var rows []row
				for i := int64(0); i < 5; i++ {
					rows = append(rows, row{base + i, "u", int32(1000 + w)})
				}
				rows = append(rows, row{20000 + base, fmt.Sprintf("m%d", w), int32(k)})
				goOps[w] = append(goOps[w], goOp{
					func(d *lance.Dataset) error {
						_, err := Merge(ctx, d, stream(t, rows...), MergeInsert{On: []string{"id"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true})
						return err
					},
					func() {
						for _, r := range rows {
							model[r.ID] = r
						}
					}})
			}
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	wg.Go(func() {
		b, _ := json.Marshal(sdkOps)
		cmd := testenv.NodeCmd(context.Background(), testenv.Script("dml", "sdk.mjs"), newest, db, "t", "ops", string(b))
		if out, err := cmd.CombinedOutput(); err != nil {
			errs <- fmt.Errorf("SDK writer: %v\n%s", err, out)
		}
	})
	for w := range 3 {
		wg.Go(func() {
			d := openTable(t, filepath.Join(db, "t.lance"), "")
			for _, op := range goOps[w] {
				var err error
				for attempt := 0; attempt < 5; attempt++ {
					if err = op.do(d); err == nil || nserr.CodeOf(err) != nserr.ConcurrentModification {
						break
					}
				}
				if err != nil {
					errs <- fmt.Errorf("Go writer %d: %w", w, err)
					return
				}
				mu.Lock()
				op.record()
				mu.Unlock()
			}
		})
	}
	want := awaitWriters(t, &wg, errs, model)
	ds := openTable(t, filepath.Join(db, "t.lance"), "")
	assert.DeepEqual(t, readAll(t, ds), want)
	got := sdkRead(t, newest, db, "t")
	assert.Equal(t, got.Count, len(want))
	assert.Equal(t, len(got.Rows), len(want))
	// Who rebased over whom: commits whose read version is behind.
	rebased := map[string]int{}
	for n := uint64(3); n <= latest(t, ds).Number(); n++ {
		v, err := ds.OpenVersion(ctx, n)
		assert.NilError(t, err)
		txn, err := ds.ReadTransaction(ctx, v)
		assert.NilError(t, err)
		if txn.GetReadVersion() < n-1 {
			rebased[v.Manifest().GetWriterVersion().GetLibrary()]++
		}
	}
	t.Logf("history: %v; rebased commits by writer: %v", history(t, ds), rebased)
}

// TestSDKConstantStringPages: the SDK 0.39.0 writes a string column whose
// values are all the same as a 2.2 constant page with the value in a
// buffer (too wide to inline); we read it, with and without nulls and for
// long values, and then write to the table (a regression: such tables
// failed every scan with "def level 1 above 0").
func TestSDKConstantStringPages(t *testing.T) {
	list := testenv.SDKs(t)
	var newest string
	for _, s := range list {
		if testenv.SDKVersion(s) == "0.39.0" {
			newest = s
		}
	}
	long := strings.Repeat("x", 100)
	for _, tc := range []struct {
		name string
		grp  func(i int) any
	}{
		{"constant", func(int) any { return "i" }},
		{"constant with nulls", func(i int) any {
			if i%2 == 0 {
				return nil
			}
			return "i"
		}},
		{"long constant", func(int) any { return long }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := t.TempDir()
			var rows []map[string]any
			for i := 0; i < 50; i++ {
				rows = append(rows, map[string]any{"id": i, "grp": tc.grp(i), "val": i})
			}
			runSDK(t, newest, db, "t", "create", rows)
			ds := openTable(t, filepath.Join(db, "t.lance"), "")
			s, err := ds.Scan(context.Background(), lance.ScanOptions{Columns: []string{"grp"}})
			assert.NilError(t, err)
			i := 0
			for s.Next() {
				c := s.RecordBatch().Column(0)
				for k := 0; k < c.Len(); k++ {
					want := tc.grp(i)
					if want == nil {
						assert.Assert(t, c.IsNull(k), "row %d", i)
					} else {
						assert.Equal(t, c.ValueStr(k), want, "row %d", i)
					}
					i++
				}
			}
			assert.NilError(t, s.Err())
			s.Release()
			assert.Equal(t, i, 50)
			_, err = Update(context.Background(), ds, "id < 5", []Assignment{{"val", "-1"}})
			assert.NilError(t, err)
			assert.Equal(t, sdkRead(t, newest, db, "t").Count, 50)
		})
	}
}
