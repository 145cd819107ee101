package lance_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancetest"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// Data operations end to end on a local directory: create, append,
// overwrite, delete, then scan and take with a checked allocator.

// scanIDs scans and returns the id column plus every row's JSON-ish
// fingerprint, checking each row's other values derive from its id.
func scanIDs(t *testing.T, ds *lance.Dataset, opts lance.ScanOptions) []int64 {
	t.Helper()
	s, err := ds.Scan(context.Background(), opts)
	assert.NilError(t, err)
	defer s.Release()
	var ids []int64
	for s.Next() {
		rec := s.RecordBatch()
		checkRows(t, rec)
		idx := rec.Schema().FieldIndices("id")
		if len(idx) == 0 {
			continue
		}
		col := rec.Column(idx[0]).(*array.Int64)
		for i := 0; i < col.Len(); i++ {
			ids = append(ids, col.Value(i))
		}
	}
	assert.NilError(t, s.Err())
	return ids
}

// checkRows verifies every column of rec against wRecord's formulas.
func checkRows(t *testing.T, rec arrow.RecordBatch) {
	t.Helper()
	idx := rec.Schema().FieldIndices("id")
	if len(idx) == 0 {
		return
	}
	ids := rec.Column(idx[0]).(*array.Int64)
	for c, f := range rec.Schema().Fields() {
		col := rec.Column(c)
		for r := 0; r < int(rec.NumRows()); r++ {
			i := int(ids.Value(r))
			switch f.Name {
			case "name":
				if i%7 == 0 {
					assert.Assert(t, col.IsNull(r), "row %d", i)
				} else {
					assert.Equal(t, col.(*array.String).Value(r), fmt.Sprintf("n%d", i))
				}
			case "vec":
				v := col.(*array.FixedSizeList)
				vals := v.ListValues().(*array.Float32)
				for k := range 4 {
					assert.Equal(t, vals.Value((v.Offset()+r)*4+k), float32(i*4+k))
				}
			case "tags":
				l := col.(*array.List)
				if i%5 == 0 {
					assert.Assert(t, l.IsNull(r))
					continue
				}
				s, e := l.ValueOffsets(r)
				assert.Equal(t, int(e-s), i%3, "row %d", i)
				for k := s; k < e; k++ {
					assert.Equal(t, l.ListValues().(*array.String).Value(int(k)), fmt.Sprintf("t%d", k-s))
				}
			case "st":
				st := col.(*array.Struct)
				assert.Equal(t, st.Field(0).(*array.Int32).Value(r), int32(i))
				if i%3 == 0 {
					assert.Assert(t, st.Field(1).IsNull(r))
				} else {
					assert.Equal(t, st.Field(1).(*array.String).Value(r), fmt.Sprintf("s%d", i))
				}
			}
		}
	}
}

func seqIDs(start, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(start + i)
	}
	return out
}

func TestWriteAppendOverwrite(t *testing.T) {
	ctx := context.Background()
	mem := testenv.CheckedAllocator(t)
	ds := lancetest.NewLocal(t)
	opts := lance.WriteOptions{MaxRowsPerFile: 1000, MaxRowsPerGroup: 300, Mem: mem}

	v1, err := ds.Write(ctx, lancetest.Stream(t, mem, 0, 2500, 700), opts)
	assert.NilError(t, err)
	assert.Equal(t, v1.Number(), uint64(1))
	frags := v1.Manifest().GetFragments()
	assert.Equal(t, len(frags), 3)
	for i, f := range frags {
		assert.Equal(t, f.GetId(), uint64(i))
		assert.Equal(t, f.GetPhysicalRows(), []uint64{1000, 1000, 500}[i])
		assert.Equal(t, len(f.GetFiles()), 1)
	}
	assert.Equal(t, v1.Manifest().GetMaxFragmentId(), uint32(2))
	assert.Equal(t, lance.OperationName(v1.Transaction()), "Overwrite")
	assert.Equal(t, v1.Transaction().GetReadVersion(), uint64(0))
	assert.DeepEqual(t, scanIDs(t, ds, lance.ScanOptions{Mem: mem}), seqIDs(0, 2500))

	// Create again: refused.
	_, err = ds.Write(ctx, lancetest.Stream(t, mem, 0, 10, 10), lance.WriteOptions{Mem: mem})
	assert.Assert(t, errors.Is(err, lance.ErrDatasetExists), "%v", err)
	assert.Assert(t, nserr.Is(err, nserr.ErrTableAlreadyExists), "%v", err)

	// Append: ids continue after max_fragment_id.
	v2, err := ds.Append(ctx, lancetest.Stream(t, mem, 2500, 1200, 1200), opts)
	assert.NilError(t, err)
	assert.Equal(t, v2.Number(), uint64(2))
	frags = v2.Manifest().GetFragments()
	assert.Equal(t, len(frags), 5)
	assert.Equal(t, frags[3].GetId(), uint64(3))
	assert.Equal(t, frags[4].GetId(), uint64(4))
	txn := v2.Transaction().GetAppend()
	assert.Assert(t, txn != nil)
	assert.Equal(t, len(txn.GetFragments()), 2)
	assert.DeepEqual(t, scanIDs(t, ds, lance.ScanOptions{Mem: mem}), seqIDs(0, 3700))
	// Older versions still scan.
	assert.DeepEqual(t, scanIDs(t, ds, lance.ScanOptions{Version: 1, Mem: mem}), seqIDs(0, 2500))

	// Projection, offset and limit across fragments.
	s, err := ds.Scan(ctx, lance.ScanOptions{Columns: []string{"st", "id"}, Offset: 990, Limit: 1020, BatchRows: 256, Mem: mem})
	assert.NilError(t, err)
	assert.DeepEqual(t, s.Schema().Fields()[0].Name, "st")
	var got []int64
	for s.Next() {
		checkRows(t, s.RecordBatch())
		col := s.RecordBatch().Column(1).(*array.Int64)
		for i := 0; i < col.Len(); i++ {
			got = append(got, col.Value(i))
		}
	}
	assert.NilError(t, s.Err())
	s.Release()
	assert.DeepEqual(t, got, seqIDs(990, 1020))

	// Overwrite: new schema, ids restart at 0, max_fragment_id stays.
	small := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32}}, nil)
	xb := array.NewInt32Builder(mem)
	xb.AppendValues([]int32{7, 8, 9}, nil)
	xa := xb.NewArray()
	xb.Release()
	xr := array.NewRecordBatch(small, []arrow.Array{xa}, 3)
	xa.Release()
	rr, err := array.NewRecordReader(small, []arrow.RecordBatch{xr})
	assert.NilError(t, err)
	xr.Release()
	v3, err := ds.Overwrite(ctx, rr, opts)
	rr.Release()
	assert.NilError(t, err)
	assert.Equal(t, lance.OperationName(v3.Transaction()), "Overwrite")
	assert.Equal(t, len(v3.Manifest().GetFragments()), 1)
	assert.Equal(t, v3.Manifest().GetFragments()[0].GetId(), uint64(0))
	assert.Equal(t, v3.Manifest().GetMaxFragmentId(), uint32(4))
	assert.Equal(t, len(v3.Fields()), 1)
	n, err := v3.CountRows()
	assert.NilError(t, err)
	assert.Equal(t, n, uint64(3))

	// Append with another schema: code 20.
	_, err = ds.Append(ctx, lancetest.Stream(t, mem, 0, 10, 10), opts)
	assert.Assert(t, nserr.Is(err, nserr.ErrTableSchemaValidationError), "%v", err)
	assert.Equal(t, int(nserr.CodeOf(err)), 20)
}

func TestAppendColumnOrderAndNullability(t *testing.T) {
	ctx := context.Background()
	mem := testenv.CheckedAllocator(t)
	ds := lancetest.NewLocal(t)
	_, err := ds.Write(ctx, lancetest.Stream(t, mem, 0, 10, 10), lance.WriteOptions{Mem: mem})
	assert.NilError(t, err)
	// Same columns, reversed order.
	rec := lancetest.Record(mem, 10, 5)
	n := int(rec.NumCols())
	fields := make([]arrow.Field, n)
	cols := make([]arrow.Array, n)
	for i := range n {
		fields[i] = rec.Schema().Field(n - 1 - i)
		cols[i] = rec.Column(n - 1 - i)
	}
	rs := arrow.NewSchema(fields, nil)
	rev := array.NewRecordBatch(rs, cols, rec.NumRows())
	rec.Release()
	rr, err := array.NewRecordReader(rs, []arrow.RecordBatch{rev})
	assert.NilError(t, err)
	rev.Release()
	_, err = ds.Append(ctx, rr, lance.WriteOptions{Mem: mem})
	rr.Release()
	assert.NilError(t, err)
	assert.DeepEqual(t, scanIDs(t, ds, lance.ScanOptions{Mem: mem}), seqIDs(0, 15))

	// A type mismatch names the column.
	bad := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32}, lancetest.Schema.Field(1), lancetest.Schema.Field(2), lancetest.Schema.Field(3), lancetest.Schema.Field(4),
	}, nil)
	rr2, err := array.NewRecordReader(bad, nil)
	assert.NilError(t, err)
	_, err = ds.Append(ctx, rr2, lance.WriteOptions{Mem: mem})
	rr2.Release()
	assert.ErrorContains(t, err, `column "id" is int32`)
	assert.Assert(t, nserr.Is(err, nserr.ErrTableSchemaValidationError))
}

func TestDeletesScanAndTake(t *testing.T) {
	ctx := context.Background()
	mem := testenv.CheckedAllocator(t)
	ds := lancetest.NewLocal(t)
	_, err := ds.Write(ctx, lancetest.Stream(t, mem, 0, 3000, 1000), lance.WriteOptions{MaxRowsPerFile: 1000, Mem: mem})
	assert.NilError(t, err)
	head, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	frags := head.Manifest().GetFragments()
	// Fragment 0: delete every 10th row; fragment 1 entirely; fragment 2:
	// rows 0..5999 as a bitmap (too many for .arrow? no, 500 rows here).
	var rows0 []uint32
	for r := uint32(0); r < 1000; r += 10 {
		rows0 = append(rows0, r)
	}
	nf0, _, err := lance.MergeDeletions(ctx, ds.Store(), frags[0], head.Number(), rows0)
	assert.NilError(t, err)
	var rows2 []uint32
	for r := uint32(500); r < 1000; r++ {
		rows2 = append(rows2, r)
	}
	nf2, _, err := lance.MergeDeletions(ctx, ds.Store(), frags[2], head.Number(), rows2)
	assert.NilError(t, err)
	v, err := ds.Commit(ctx, lance.NewDelete([]*tablepb.DataFragment{nf0, nf2}, []uint64{1}, "id % 10 = 0 OR ..."), lance.CommitOptions{})
	assert.NilError(t, err)
	assert.Equal(t, lance.OperationName(v.Transaction()), "Delete")

	var want []int64
	for i := range 1000 {
		if i%10 != 0 {
			want = append(want, int64(i))
		}
	}
	want = append(want, seqIDs(2000, 500)...)
	assert.DeepEqual(t, scanIDs(t, ds, lance.ScanOptions{Mem: mem, BatchRows: 333}), want)
	// offset/limit count live rows
	assert.DeepEqual(t, scanIDs(t, ds, lance.ScanOptions{Mem: mem, Offset: 895, Limit: 10}), want[895:905])

	// Take by offset, in any order, with repeats.
	offs := []uint64{0, 899, 900, 5, 1399, 5, 17}
	rec, err := ds.Take(ctx, offs, lance.TakeOptions{Mem: mem, WithRowAddress: true})
	assert.NilError(t, err)
	checkRows(t, rec)
	ids := rec.Column(0).(*array.Int64)
	addrs := rec.Column(rec.Schema().FieldIndices(lance.RowAddressColumn)[0]).(*array.Uint64)
	var takeAddrs []uint64
	for i, o := range offs {
		assert.Equal(t, ids.Value(i), want[o])
		takeAddrs = append(takeAddrs, addrs.Value(i))
	}
	rec.Release()
	// Take by address gives the same rows.
	rec, err = ds.TakeRowAddresses(ctx, takeAddrs, lance.TakeOptions{Mem: mem, Columns: []string{"id", "vec"}})
	assert.NilError(t, err)
	checkRows(t, rec)
	for i, o := range offs {
		assert.Equal(t, rec.Column(0).(*array.Int64).Value(i), want[o])
	}
	rec.Release()
	// Deleted rows and missing fragments are errors.
	_, err = ds.TakeRowAddresses(ctx, []uint64{lance.RowAddress(0, 10)}, lance.TakeOptions{Mem: mem})
	assert.ErrorContains(t, err, "deleted")
	_, err = ds.TakeRowAddresses(ctx, []uint64{lance.RowAddress(1, 0)}, lance.TakeOptions{Mem: mem})
	assert.ErrorContains(t, err, "no fragment 1")

	// A concurrent delete of the same fragment conflicts; of another, rebases.
	_, err = ds.Commit(ctx, lance.NewDelete([]*tablepb.DataFragment{nf0}, nil, "x"), lance.CommitOptions{ReadVersion: head.Number()})
	assert.Assert(t, errors.Is(err, lance.ErrCommitConflict), "%v", err)
}

func TestAppendRebasesOverAppend(t *testing.T) {
	ctx := context.Background()
	mem := testenv.CheckedAllocator(t)
	ds := lancetest.NewLocal(t)
	_, err := ds.Write(ctx, lancetest.Stream(t, mem, 0, 10, 10), lance.WriteOptions{Mem: mem})
	assert.NilError(t, err)
	_, err = ds.Append(ctx, lancetest.Stream(t, mem, 10, 10, 10), lance.WriteOptions{Mem: mem})
	assert.NilError(t, err)
	// Based on version 1: rebased over the append, gets the next fragment id.
	v, err := ds.Append(ctx, lancetest.Stream(t, mem, 20, 10, 10), lance.WriteOptions{Mem: mem, Commit: lance.CommitOptions{ReadVersion: 1}})
	assert.NilError(t, err)
	assert.Equal(t, v.Number(), uint64(3))
	assert.Equal(t, v.Manifest().GetFragments()[2].GetId(), uint64(2))
	assert.DeepEqual(t, scanIDs(t, ds, lance.ScanOptions{Mem: mem}), seqIDs(0, 30))
	// An append based on a version before an overwrite conflicts.
	_, err = ds.Overwrite(ctx, lancetest.Stream(t, mem, 0, 5, 5), lance.WriteOptions{Mem: mem})
	assert.NilError(t, err)
	_, err = ds.Append(ctx, lancetest.Stream(t, mem, 0, 5, 5), lance.WriteOptions{Mem: mem, Commit: lance.CommitOptions{ReadVersion: 3}})
	assert.Assert(t, errors.Is(err, lance.ErrCommitConflict), "%v", err)
}

func TestStableRowIDs(t *testing.T) {
	ctx := context.Background()
	mem := testenv.CheckedAllocator(t)
	ds := lancetest.NewLocal(t)
	_, err := ds.Write(ctx, lancetest.Stream(t, mem, 0, 100, 100), lance.WriteOptions{Mem: mem, MaxRowsPerFile: 60, EnableStableRowIDs: true})
	assert.NilError(t, err)
	v, err := ds.Append(ctx, lancetest.Stream(t, mem, 100, 50, 50), lance.WriteOptions{Mem: mem})
	assert.NilError(t, err)
	m := v.Manifest()
	assert.Assert(t, m.GetReaderFeatureFlags()&lance.FlagStableRowIDs != 0)
	assert.Equal(t, m.GetNextRowId(), uint64(150))
	ids, err := ds.FragmentRowIDs(ctx, m.GetFragments()[2])
	assert.NilError(t, err)
	assert.Equal(t, len(ids), 50)
	assert.Equal(t, ids[0], uint64(100))
	assert.Assert(t, m.GetFragments()[2].GetCreatedAtVersionSequence() != nil)

	s, err := ds.Scan(ctx, lance.ScanOptions{Mem: mem, WithRowID: true, Columns: []string{"id"}})
	assert.NilError(t, err)
	for s.Next() {
		rec := s.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			assert.Equal(t, uint64(rec.Column(0).(*array.Int64).Value(i)), rec.Column(1).(*array.Uint64).Value(i))
		}
	}
	assert.NilError(t, s.Err())
	s.Release()
	rec, err := ds.TakeRowIDs(ctx, []uint64{149, 3, 61}, lance.TakeOptions{Mem: mem, Columns: []string{"id"}})
	assert.NilError(t, err)
	assert.DeepEqual(t, rec.Column(0).(*array.Int64).Int64Values(), []int64{149, 3, 61})
	rec.Release()
}

func TestEmptyWrite(t *testing.T) {
	ctx := context.Background()
	mem := testenv.CheckedAllocator(t)
	ds := lancetest.NewLocal(t)
	rr, err := array.NewRecordReader(lancetest.Schema, nil)
	assert.NilError(t, err)
	defer rr.Release()
	v, err := ds.Write(ctx, rr, lance.WriteOptions{Mem: mem})
	assert.NilError(t, err)
	assert.Equal(t, len(v.Manifest().GetFragments()), 0)
	assert.Equal(t, len(scanIDs(t, ds, lance.ScanOptions{Mem: mem})), 0)
}
