package maintenance

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/dml"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

var compactSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "val", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
}, nil)

// idStream is n rows from id from (val = id*3), from a checked allocator released when t ends.
func idStream(t testing.TB, from, n int64) lance.RecordStream {
	b := array.NewRecordBuilder(testenv.CheckedAllocator(t), compactSchema)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.Int32Builder).Append(int32(i * 3))
	}
	rec := b.NewRecordBatch()
	rr, _ := array.NewRecordReader(compactSchema, []arrow.RecordBatch{rec})
	rec.Release()
	t.Cleanup(rr.Release) // before the allocator's check, which runs last
	return rr
}

// compactTable makes a table with one fragment per size; ids run on.
func compactTable(t *testing.T, version string, stable bool, sizes ...int64) *lance.Dataset {
	t.Helper()
	ds := openDir(t, t.TempDir())
	ctx := context.Background()
	next := int64(0)
	for i, n := range sizes {
		mode := lance.WriteAppend
		if i == 0 {
			mode = lance.WriteCreate
		}
		_, err := ds.Write(ctx, idStream(t, next, n), lance.WriteOptions{Mode: mode, DataStorageVersion: version, EnableStableRowIDs: stable})
		assert.NilError(t, err)
		next += n
	}
	return ds
}

// liveRows maps each live row's id to its val and stable row id (or
// address).
func liveRows(t *testing.T, ds *lance.Dataset) map[int64][2]uint64 {
	t.Helper()
	s, err := ds.Scan(context.Background(), lance.ScanOptions{WithRowID: true})
	assert.NilError(t, err)
	defer s.Release()
	out := map[int64][2]uint64{}
	for s.Next() {
		rec := s.RecordBatch()
		ids, vals, rid := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int32), rec.Column(2).(*array.Uint64)
		for i := range ids.Len() {
			out[ids.Value(i)] = [2]uint64{uint64(vals.Value(i)), rid.Value(i)}
		}
	}
	assert.NilError(t, s.Err())
	return out
}

func head(t *testing.T, ds *lance.Dataset) *lance.Version {
	t.Helper()
	v, err := ds.OpenLatest(context.Background())
	assert.NilError(t, err)
	return v
}

func fragmentIDs(v *lance.Version) []uint64 {
	var out []uint64
	for _, f := range v.Manifest().GetFragments() {
		out = append(out, f.GetId())
	}
	return out
}

// TestPlanRules pins Lance's plan_compaction rules on small targets:
// neighbours merged, lone small fragments left, heavy deletions
// materialized alone, bins split for size, bins never crossing an index's
// coverage, and fragments an index covers left out on tables without
// stable row ids (their index would need remapping).
func TestPlanRules(t *testing.T) {
	ctx := context.Background()
	ten := float64(0.1)
	cases := []struct {
		name     string
		sizes    []int64
		deletes  string
		indexed  []uint32 // fragments an index covers
		stable   bool
		want     [][]uint64
		excluded []uint64
	}{
		{name: "neighbours merge", sizes: []int64{3, 3, 3}, want: [][]uint64{{0, 1, 2}}},
		{name: "a large fragment splits bins", sizes: []int64{3, 3, 20, 3, 3}, want: [][]uint64{{0, 1}, {3, 4}}},
		{name: "a lone small fragment stays", sizes: []int64{3, 20, 3}},
		{name: "heavy deletions materialized alone", sizes: []int64{20, 20}, deletes: "id >= 20 AND id < 25", want: [][]uint64{{1}}},
		{name: "light deletions stay", sizes: []int64{20, 20}, deletes: "id = 21 OR id = 22"},
		{name: "split for size", sizes: []int64{6, 6, 6, 6}, want: [][]uint64{{0, 1}, {2, 3}}},
		{name: "the remainder joins the last bin", sizes: []int64{6, 6, 6}, want: [][]uint64{{0, 1, 2}}},
		{name: "bins never mix index coverage", sizes: []int64{3, 3, 3, 3}, indexed: []uint32{0, 1}, stable: true, want: [][]uint64{{0, 1}, {2, 3}}},
		{name: "indexed fragments excluded without stable row ids", sizes: []int64{3, 3, 3, 3}, indexed: []uint32{0, 1}, want: [][]uint64{{2, 3}}, excluded: []uint64{0, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := compactTable(t, "2.1", tc.stable, tc.sizes...)
			if tc.deletes != "" {
				_, err := dml.Delete(ctx, ds, tc.deletes)
				assert.NilError(t, err)
			}
			if tc.indexed != nil {
				bm, err := index.EncodeFragmentBitmap(tc.indexed)
				assert.NilError(t, err)
				_, err = ds.Commit(ctx, &lance.CreateIndex{New: []*tablepb.IndexMetadata{{
					Uuid: &tablepb.UUID{Uuid: make([]byte, 16)}, Name: "id_idx", Fields: []int32{0}, FragmentBitmap: bm,
				}}}, lance.CommitOptions{})
				assert.NilError(t, err)
			}
			plan, err := Plan(ctx, ds, CompactOptions{TargetRowsPerFragment: 10, MaterializeDeletionsThreshold: &ten})
			assert.NilError(t, err)
			var got [][]uint64
			for _, task := range plan.Tasks {
				got = append(got, task.Fragments)
			}
			assert.DeepEqual(t, got, tc.want)
			var excluded []uint64
			for _, e := range plan.Excluded {
				excluded = append(excluded, e.ID)
			}
			assert.DeepEqual(t, excluded, tc.excluded)

			before := liveRows(t, ds)
			rep, err := Compact(ctx, ds, CompactOptions{TargetRowsPerFragment: 10, MaterializeDeletionsThreshold: &ten})
			assert.NilError(t, err)
			after := liveRows(t, ds)
			assert.Equal(t, len(after), len(before))
			for id, r := range before {
				assert.Equal(t, after[id][0], r[0], "row %d", id)
				if tc.stable {
					assert.Equal(t, after[id][1], r[1], "stable row id of row %d", id)
				}
			}
			if len(tc.want) == 0 {
				assert.Equal(t, rep.Version, uint64(0))
				return
			}
			v := head(t, ds)
			txn, err := ds.ReadTransaction(ctx, v)
			assert.NilError(t, err)
			assert.Equal(t, lance.OperationName(txn), "Rewrite")
			// An index keeps covering the same rows: its bitmap names the
			// new fragments instead of the old, and no removed fragment.
			live := fragmentIDs(v)
			for _, idx := range v.Indices() {
				frags, err := index.DecodeFragmentBitmap(idx.GetFragmentBitmap())
				assert.NilError(t, err)
				for _, f := range frags {
					assert.Assert(t, slices.Contains(live, uint64(f)), "index covers fragment %d, gone", f)
				}
				assert.Equal(t, len(frags) > 0, len(tc.indexed) > 0)
			}
		})
	}
}

// TestCompactRebasesOverAppend: an append committed while compaction
// writes is kept (Lance rebases a Rewrite over an Append).
func TestCompactRebasesOverAppend(t *testing.T) {
	ctx := context.Background()
	for _, version := range []string{"2.1", "2.2"} {
		t.Run(version, func(t *testing.T) {
			ds := compactTable(t, version, false, 3, 3, 3)
			beforeCommit = func(*lance.Version) {
				beforeCommit = nil
				_, err := ds.Append(ctx, idStream(t, 100, 4), lance.WriteOptions{})
				assert.NilError(t, err)
			}
			defer func() { beforeCommit = nil }()
			rep, err := Compact(ctx, ds, CompactOptions{})
			assert.NilError(t, err)
			assert.Equal(t, rep.Attempts, 1)
			v := head(t, ds)
			assert.Equal(t, v.DataStorageVersion(), version)
			assert.Equal(t, len(v.Manifest().GetFragments()), 2) // the compacted one and the append
			assert.Equal(t, rep.FragmentsAfter, 2)
			assert.Equal(t, len(liveRows(t, ds)), 13)
		})
	}
}

// TestCompactRetriesOverDeleteOfItsFragments: a delete committed on a
// fragment being rewritten makes the Rewrite a retryable conflict (as in
// Lance); Compact plans again and the deleted row stays deleted.
func TestCompactRetriesOverDeleteOfItsFragments(t *testing.T) {
	ctx := context.Background()
	ds := compactTable(t, "2.1", false, 3, 3, 3)
	beforeCommit = func(*lance.Version) {
		beforeCommit = nil
		_, err := dml.Delete(ctx, ds, "id = 4")
		assert.NilError(t, err)
	}
	defer func() { beforeCommit = nil }()
	rep, err := Compact(ctx, ds, CompactOptions{})
	assert.NilError(t, err)
	assert.Equal(t, rep.Attempts, 2)
	rows := liveRows(t, ds)
	assert.Equal(t, len(rows), 8)
	_, ok := rows[4]
	assert.Assert(t, !ok)
	assert.Equal(t, len(head(t, ds).Manifest().GetFragments()), 1)
}

// TestDeleteAfterCompactionIsRetryable: a delete computed on the version
// before a compaction that rewrote its fragment cannot be rebased (its rows
// moved): Lance answers a retryable conflict, and so do we.
func TestDeleteAfterCompactionIsRetryable(t *testing.T) {
	ctx := context.Background()
	ds := compactTable(t, "2.1", false, 3, 3)
	read := head(t, ds)
	frags := map[uint64]*tablepb.DataFragment{}
	for _, f := range read.Manifest().GetFragments() {
		frags[f.GetId()] = f
	}
	_, err := Compact(ctx, ds, CompactOptions{})
	assert.NilError(t, err)
	_, err = ds.Commit(ctx, &lance.DeleteRows{Rows: lance.RowDeletes{1: {0}}, Read: frags, Predicate: "id = 3"},
		lance.CommitOptions{ReadVersion: read.Number()})
	assert.Assert(t, errors.Is(err, lance.ErrRetryableConflict), "got %v", err)
	// dml reruns it on the new head.
	_, err = dml.Delete(ctx, ds, "id = 3")
	assert.NilError(t, err)
	assert.Equal(t, len(liveRows(t, ds)), 5)
}

// TestRewriteConflictRules: Lance's check_rewrite_txn, by operation.
func TestRewriteConflictRules(t *testing.T) {
	ctx := context.Background()
	bm := func(ids ...uint32) []byte {
		b, err := index.EncodeFragmentBitmap(ids)
		assert.NilError(t, err)
		return b
	}
	cases := []struct {
		name string
		// other runs between the read version and the Rewrite's commit.
		other func(ds *lance.Dataset) error
		want  string // "ok", "retry", "conflict"
	}{
		{"append", func(ds *lance.Dataset) error {
			_, err := ds.Append(ctx, idStream(t, 50, 2), lance.WriteOptions{})
			return err
		}, "ok"},
		{"delete of another fragment", func(ds *lance.Dataset) error { _, err := dml.Delete(ctx, ds, "id = 7"); return err }, "ok"},
		{"delete of a rewritten fragment", func(ds *lance.Dataset) error { _, err := dml.Delete(ctx, ds, "id = 0"); return err }, "retry"},
		{"update of a rewritten fragment", func(ds *lance.Dataset) error {
			_, err := dml.Update(ctx, ds, "id = 3", []dml.Assignment{{Column: "val", Expr: "1"}})
			return err
		}, "retry"},
		{"index over other fragments", func(ds *lance.Dataset) error {
			_, err := ds.Commit(ctx, &lance.CreateIndex{New: []*tablepb.IndexMetadata{{Uuid: &tablepb.UUID{Uuid: make([]byte, 16)}, Name: "i", Fields: []int32{0}, FragmentBitmap: bm(2)}}}, lance.CommitOptions{})
			return err
		}, "ok"},
		{"index over a rewritten fragment", func(ds *lance.Dataset) error {
			_, err := ds.Commit(ctx, &lance.CreateIndex{New: []*tablepb.IndexMetadata{{Uuid: &tablepb.UUID{Uuid: make([]byte, 16)}, Name: "i", Fields: []int32{0}, FragmentBitmap: bm(0, 2)}}}, lance.CommitOptions{})
			return err
		}, "retry"},
		{"config", func(ds *lance.Dataset) error {
			_, err := ds.Commit(ctx, &lance.UpdateConfig{Config: lance.MetadataUpdate{"k": lance.Set("v")}}, lance.CommitOptions{})
			return err
		}, "ok"},
		{"overwrite", func(ds *lance.Dataset) error {
			_, err := ds.Overwrite(ctx, idStream(t, 0, 1), lance.WriteOptions{})
			return err
		}, "conflict"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Fragments 0 and 1 are rewritten; 2 (ids 6..8) is not.
			ds := compactTable(t, "2.1", false, 3, 3, 3)
			read := head(t, ds)
			old := read.Manifest().GetFragments()[:2]
			newFrags, err := lance.WriteFragments(ctx, ds.Store(), compactSchema, read.Fields(), idStream(t, 0, 6), lance.WriteOptions{})
			assert.NilError(t, err)
			assert.NilError(t, tc.other(ds))
			_, err = ds.Commit(ctx, &lance.Rewrite{Groups: []lance.RewriteGroup{{Old: old, New: newFrags}}}, lance.CommitOptions{ReadVersion: read.Number()})
			switch tc.want {
			case "ok":
				assert.NilError(t, err)
			case "retry":
				assert.Assert(t, errors.Is(err, lance.ErrRetryableConflict), "got %v", err)
			case "conflict":
				assert.Assert(t, errors.Is(err, lance.ErrCommitConflict) && !errors.Is(err, lance.ErrRetryableConflict), "got %v", err)
			}
		})
	}
}
