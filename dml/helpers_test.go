package dml

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "grp", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "val", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
}, nil)

type row struct {
	ID  int64
	Grp string
	Val int32
}

func (r row) String() string { return fmt.Sprintf("%d/%s/%d", r.ID, r.Grp, r.Val) }

// batch is rows as one record of testSchema, allocated from mem.
func batch(mem memory.Allocator, rows ...row) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, testSchema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.ID)
		b.Field(1).(*array.StringBuilder).Append(r.Grp)
		b.Field(2).(*array.Int32Builder).Append(r.Val)
	}
	return b.NewRecordBatch()
}

// stream is rows as a one-batch stream from a checked allocator: when t ends the stream is released
// and every buffer of it must be back, so a write that keeps (or drops the release of) a source
// batch fails the test that made it.
func stream(t testing.TB, rows ...row) lance.RecordStream {
	rec := batch(testenv.CheckedAllocator(t), rows...)
	defer rec.Release()
	rr, _ := array.NewRecordReader(testSchema, []arrow.RecordBatch{rec})
	t.Cleanup(rr.Release)
	return rr
}

func rowsN(from, to int64, grp string) []row {
	var out []row
	for i := from; i < to; i++ {
		out = append(out, row{ID: i, Grp: grp, Val: int32(i)})
	}
	return out
}

// newTable creates a table on a local directory with frags fragments of
// the given rows each (storage version "2.1" or "2.2").
func newTable(t *testing.T, version string, frags ...[]row) (*lance.Dataset, string) {
	t.Helper()
	dir := t.TempDir()
	return openTable(t, dir, version, frags...), dir
}

func openTable(t *testing.T, dir, version string, frags ...[]row) *lance.Dataset {
	t.Helper()
	store, err := storage.NewFS(dir)
	assert.NilError(t, err)
	ds := lance.NewDataset(store)
	ctx := context.Background()
	for i, f := range frags {
		mode := lance.WriteAppend
		if i == 0 {
			mode = lance.WriteCreate
		}
		_, err := ds.Write(ctx, stream(t, f...), lance.WriteOptions{Mode: mode, DataStorageVersion: version})
		assert.NilError(t, err)
	}
	return ds
}

// readAll reads every live row, sorted by id then grp.
func readAll(t *testing.T, ds *lance.Dataset) []row {
	t.Helper()
	s, err := ds.Scan(context.Background(), lance.ScanOptions{Columns: []string{"id", "grp", "val"}})
	assert.NilError(t, err)
	defer s.Release()
	var out []row
	for s.Next() {
		rec := s.RecordBatch()
		ids := rec.Column(0).(*array.Int64)
		grps := rec.Column(1).(*array.String)
		vals := rec.Column(2).(*array.Int32)
		for i := 0; i < int(rec.NumRows()); i++ {
			out = append(out, row{ID: ids.Value(i), Grp: grps.Value(i), Val: vals.Value(i)})
		}
	}
	assert.NilError(t, s.Err())
	slices.SortFunc(out, func(a, b row) int {
		if a.ID != b.ID {
			return int(a.ID - b.ID)
		}
		return strings.Compare(a.Grp, b.Grp)
	})
	return out
}

func latest(t *testing.T, ds *lance.Dataset) *lance.Version {
	t.Helper()
	v, err := ds.OpenLatest(context.Background())
	assert.NilError(t, err)
	return v
}

// awaitWriters waits for the racing writers, fails t with every error they sent on errs, and
// returns the rows their model of the table holds, by id: what the table must read.
func awaitWriters(t *testing.T, wg *sync.WaitGroup, errs chan error, model map[int64]row) []row {
	t.Helper()
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NilError(t, err)
	}
	return slices.SortedFunc(maps.Values(model), func(a, b row) int { return int(a.ID - b.ID) })
}
