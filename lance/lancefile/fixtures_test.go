package lancefile

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancecat/lancecat/internal/testenv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/lance/internal/sdkjson"
)

// The fixtures are written by the official SDK (scripts/lancedb/fixtures.sh);
// every data file must decode to exactly the values the SDK read back.

const fixturesEnv = "LANCECAT_LANCEDB_FIXTURES"

type expectedTable struct {
	Table          string     `json:"table"`
	SDK            string     `json:"sdk"`
	StorageVersion string     `json:"storage_version"`
	NumRows        int        `json:"num_rows"`
	DataFiles      [][]string `json:"data_files"`
	FragmentRows   []int      `json:"fragment_rows"`
	Schema         []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"schema"`
	Columns map[string][]json.RawMessage `json:"columns"`
}

// fixtureFiles lists the expected-JSON files that describe every row of
// their data files: tables without deletes, and the pre-delete snapshot of
// tables with deletes (deleting only writes deletion files).
func fixtureFiles(t *testing.T) []string {
	dir := os.Getenv(fixturesEnv)
	if dir == "" {
		t.Skipf("set %s to a directory written by scripts/lancedb/fixtures.sh to run the SDK fixture tests", fixturesEnv)
	}
	var out []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasSuffix(path, ".lance") {
			return filepath.SkipDir
		}
		name := d.Name()
		if !strings.HasSuffix(name, ".expected.json") {
			return nil
		}
		if strings.HasSuffix(name, ".before-deletes.expected.json") {
			out = append(out, path)
			return nil
		}
		// A table with deletes is checked through its pre-delete snapshot.
		if _, err := os.Stat(strings.TrimSuffix(path, ".expected.json") + ".before-deletes.expected.json"); err == nil {
			return nil
		}
		out = append(out, path)
		return nil
	})
	assert.NilError(t, err)
	if len(out) == 0 {
		t.Fatalf("%s=%s holds no *.expected.json", fixturesEnv, dir)
	}
	return out
}

func TestSDKFixtures(t *testing.T) {
	for _, path := range fixtureFiles(t) {
		rel, _ := filepath.Rel(os.Getenv(fixturesEnv), path)
		t.Run(strings.TrimSuffix(rel, ".expected.json"), func(t *testing.T) {
			checkFixture(t, path)
		})
	}
}

func checkFixture(t *testing.T, path string) {
	raw, err := os.ReadFile(path)
	assert.NilError(t, err)
	var exp expectedTable
	assert.NilError(t, json.Unmarshal(raw, &exp))
	dataDir := filepath.Join(filepath.Dir(path), exp.Table+".lance", "data")

	mem := testenv.CheckedAllocator(t)
	ctx := context.Background()

	var records []arrow.RecordBatch
	defer func() {
		for _, r := range records {
			r.Release()
		}
	}()
	total := 0
	for frag, files := range exp.DataFiles {
		assert.Equal(t, len(files), 1, "fragment %d: one data file per fragment expected", frag)
		lf, err := OpenLocalFile(filepath.Join(dataDir, files[0]))
		assert.NilError(t, err)
		defer lf.Close()
		r, err := Open(ctx, lf)
		assert.NilError(t, err, "open fragment %d", frag)
		assert.Equal(t, r.Version().String(), exp.StorageVersion)
		assert.Equal(t, int(r.NumRows()), exp.FragmentRows[frag])
		rec, err := r.Read(ctx, mem, ReadOptions{Limit: -1})
		assert.NilError(t, err, "read fragment %d", frag)
		records = append(records, rec)
		total += int(rec.NumRows())
		checkRanges(t, r, mem, rec)
		checkTakes(t, r, mem, rec)
		checkSelective(t, r, mem, rec, uint64(frag))
	}
	assert.Equal(t, total, exp.NumRows)

	for _, col := range exp.Schema {
		t.Run(col.Name, func(t *testing.T) {
			want := exp.Columns[col.Name]
			row := 0
			for _, rec := range records {
				idx := rec.Schema().FieldIndices(col.Name)
				assert.Assert(t, len(idx) == 1, "column %q missing", col.Name)
				arr := rec.Column(idx[0])
				for i := 0; i < arr.Len(); i++ {
					got, err := json.Marshal(jsonValue(arr, i))
					assert.NilError(t, err)
					assert.Equal(t, string(got), canonicalJSON(t, want[row]), "row %d (%s)", row, col.Type)
					row++
				}
			}
		})
	}
}

func canonicalJSON(t *testing.T, raw json.RawMessage) string {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	assert.NilError(t, dec.Decode(&v))
	b, err := json.Marshal(v)
	assert.NilError(t, err)
	return string(b)
}

// jsonValue encodes row i of arr the way write-fixtures.mjs encodes the
// SDK's values.
func jsonValue(arr arrow.Array, i int) any { return sdkjson.Value(arr, i) }

// checkRanges reads row windows of single columns and compares them with
// the same rows of the full read: projection and offset/limit must not
// change values (windows cross chunk and page boundaries).
func checkRanges(t *testing.T, r *Reader, mem memory.Allocator, full arrow.RecordBatch) {
	n := int64(r.NumRows())
	windows := [][2]int64{{0, 1}, {n / 3, 1000}, {n - 1, 1}, {n, 0}, {1023, 3}}
	for k, f := range full.Schema().Fields() {
		for _, w := range windows {
			off, lim := min(w[0], n), w[1]
			if off < 0 {
				continue
			}
			rec, err := r.Read(context.Background(), mem, ReadOptions{Columns: []string{f.Name}, Offset: off, Limit: lim})
			assert.NilError(t, err, "column %q rows %d+%d", f.Name, off, lim)
			end := min(off+lim, n)
			got := rec.Column(0)
			equal := got.Len() == int(end-off)
			// Compare encoded values, not arrays: NaN != NaN for array.Equal,
			// and dictionaries are rebuilt per read.
			for i := 0; equal && i < got.Len(); i++ {
				a, _ := json.Marshal(jsonValue(got, i))
				b, _ := json.Marshal(jsonValue(full.Column(k), int(off)+i))
				equal = string(a) == string(b)
			}
			rec.Release()
			assert.Assert(t, equal, "column %q rows %d+%d differ from the full read", f.Name, off, lim)
		}
	}
}

// checkTakes takes sparse rows (served chunk by chunk), dense rows (whole
// pages) and cursor windows, and compares them with the full read.
func checkTakes(t *testing.T, r *Reader, mem memory.Allocator, full arrow.RecordBatch) {
	ctx := context.Background()
	n := r.NumRows()
	if n == 0 {
		return
	}
	same := func(got arrow.RecordBatch, rows []uint64, what string) {
		assert.Equal(t, int(got.NumRows()), len(rows), what)
		for k := range full.Schema().Fields() {
			for i, row := range rows {
				a, _ := json.Marshal(jsonValue(got.Column(k), i))
				b, _ := json.Marshal(jsonValue(full.Column(k), int(row)))
				assert.Equal(t, string(a), string(b), "%s: column %q row %d", what, full.Schema().Field(k).Name, row)
			}
		}
	}
	sparse := []uint64{n - 1, 0, n / 2, n / 2, 1 % n}
	dense := make([]uint64, 0, n)
	for i := int64(n) - 1; i >= 0; i -= 5 {
		dense = append(dense, uint64(i))
	}
	for _, rows := range [][]uint64{sparse, dense} {
		got, err := r.Take(ctx, mem, rows, ReadOptions{})
		assert.NilError(t, err, "take %d rows", len(rows))
		same(got, rows, "take")
		got.Release()
	}
	// The same sparse rows through the chunk-by-chunk mini-block path.
	defer func(f uint64) { chunkTakeFactor = f }(chunkTakeFactor)
	chunkTakeFactor = 0
	got, err := r.Take(ctx, mem, sparse, ReadOptions{})
	assert.NilError(t, err, "take %d rows by chunk", len(sparse))
	same(got, sparse, "take by chunk")
	got.Release()
	cur, err := r.NewCursor(mem, ReadOptions{})
	assert.NilError(t, err)
	defer cur.Close()
	step := max(n/3, 1)
	for lo := uint64(0); lo < n; lo += step {
		hi := min(lo+step, n)
		got, err := cur.Read(ctx, lo, hi)
		assert.NilError(t, err, "cursor rows %d..%d", lo, hi)
		rows := make([]uint64, 0, hi-lo)
		for i := lo; i < hi; i++ {
			rows = append(rows, i)
		}
		same(got, rows, "cursor")
		got.Release()
	}
}

// TestCommittedFixtures runs the same comparison on the small SDK fixtures
// kept in testdata (2.2: large mini-block chunks, constant pages, RLE
// levels, an LZ4 dictionary), so the decoder is checked without the SDK.
func TestCommittedFixtures(t *testing.T) {
	for _, name := range []string{"tiny_v2_0", "tiny_v2_1", "tiny_v2_2", "dictionary_v2_2"} {
		t.Run(name, func(t *testing.T) {
			checkFixture(t, filepath.Join("testdata", "lancedb-0.39.0", name+".expected.json"))
		})
	}
}
