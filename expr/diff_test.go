package expr

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/lancecat/lancecat/internal/testenv"
	"gotest.tools/v3/assert"
)

type oracleResult struct {
	Expr   string `json:"expr"`
	Marker string `json:"marker"`
	IDs    []int  `json:"ids"`
	Error  string `json:"error"`
}

// TestDifferentialCorpus evaluates every filter of testdata/corpus.txt with the official LanceDB SDK
// (scripts/expr/oracle.mjs, newest SDK installed) and with this package over the same table, and
// requires the same rows, or an error from both. The table has NULLs, NaN, ±0, ±Inf, empty strings,
// unicode, extreme integers, lists, structs, dates and timestamps.
func TestDifferentialCorpus(t *testing.T) {
	list := testenv.SDKs(t)
	sdk := list[len(list)-1]
	work := t.TempDir()
	corpus, err := filepath.Abs("testdata/corpus.txt")
	assert.NilError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := testenv.Run(t, testenv.NodeCmd(ctx, testenv.Script("expr", "oracle.mjs"), sdk, work, corpus))
	var got struct {
		SDK     string         `json:"sdk"`
		Results []oracleResult `json:"results"`
	}
	assert.NilError(t, json.Unmarshal(out, &got))
	assert.Check(t, len(got.Results) >= 200, "the corpus has %d expressions, want at least 200", len(got.Results))

	rec := readTable(t, filepath.Join(work, "table.arrow"))
	defer rec.Release()
	agree, extensions, stricter := 0, 0, 0
	for _, want := range got.Results {
		ids, err := engineIDs(rec, want.Expr)
		if err == nil && want.Marker == "" {
			// count_rows(filter) counts on bitmaps (CountTrue): the same rows as the filter.
			b, berr := Compile(want.Expr, rec.Schema())
			assert.NilError(t, berr)
			n, cerr := b.CountTrue(context.Background(), rec)
			assert.Check(t, cerr == nil && n == len(ids), "%s: CountTrue %d (%v), the filter keeps %d rows", want.Expr, n, cerr, len(ids))
		}
		// Marked lines are the deliberate differences, each checked to stay what it is:
		//   "+ " Lance refuses the expression and we evaluate it (CASE, substr, trim, ESCAPE: issue 15
		//        asks for them);
		//   "! " Lance accepts malformed text (trailing tokens it ignores) and we refuse it.
		switch want.Marker {
		case "+":
			if want.Error == "" || err != nil {
				t.Errorf("%s: marked as refused by Lance and evaluated by us, but the SDK says %q and we say %v", want.Expr, want.Error, err)
			}
			extensions++
			continue
		case "!":
			if want.Error != "" || err == nil {
				t.Errorf("%s: marked as accepted by Lance and refused by us, but the SDK says %q and we say %v", want.Expr, want.Error, err)
			}
			stricter++
			continue
		}
		switch {
		case want.Error != "" && err != nil:
			agree++
		case want.Error != "":
			t.Errorf("%s: the SDK fails (%s), we return rows %v", want.Expr, want.Error, ids)
		case err != nil:
			t.Errorf("%s: the SDK returns rows %v, we fail: %v", want.Expr, want.IDs, err)
		case !slices.Equal(ids, nonNil(want.IDs)):
			t.Errorf("%s: the SDK returns rows %v, we return %v", want.Expr, want.IDs, ids)
		default:
			agree++
		}
	}
	t.Logf("SDK %s: %d of %d expressions agree; %d evaluated here that Lance refuses, %d refused here that Lance accepts",
		got.SDK, agree, len(got.Results), extensions, stricter)
}

func nonNil(ids []int) []int {
	if ids == nil {
		return []int{}
	}
	return ids
}

func engineIDs(rec arrow.RecordBatch, filter string) (ids []int, err error) {
	out, err := Filter(context.Background(), filter, rec)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	col := out.Column(0).(*array.Int32)
	ids = []int{}
	for i := 0; i < col.Len(); i++ {
		ids = append(ids, int(col.Value(i)))
	}
	slices.Sort(ids)
	return ids, nil
}

// readTable reads the Arrow IPC file the oracle wrote (the table as the SDK reads it back) as one
// record.
func readTable(t *testing.T, path string) arrow.RecordBatch {
	f, err := os.Open(path)
	assert.NilError(t, err)
	defer f.Close()
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
	assert.NilError(t, err)
	defer r.Close()
	var recs []arrow.RecordBatch
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		assert.NilError(t, err)
		rec.Retain()
		recs = append(recs, rec)
	}
	tbl := array.NewTableFromRecords(r.Schema(), recs)
	defer tbl.Release()
	for _, rec := range recs {
		rec.Release()
	}
	cols := make([]arrow.Array, tbl.NumCols())
	for i := range cols {
		chunks := tbl.Column(i).Data().Chunks()
		c, err := array.Concatenate(chunks, memory.DefaultAllocator)
		assert.NilError(t, err)
		defer c.Release()
		cols[i] = c
	}
	assert.Equal(t, r.Schema().Field(0).Name, "id")
	return array.NewRecordBatch(r.Schema(), cols, tbl.NumRows())
}
