package namespace

import (
	"context"
	"fmt"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
)

// versionsOf is what a reader of the catalog sees as table name's versions, ascending.
func (f *batchFixture) versionsOf(t *testing.T, name string) []uint64 {
	t.Helper()
	vs, _, err := f.n.handleOf(f.tables[name]).ListVersions(context.Background(), catalog.VersionQuery{})
	assert.NilError(t, err)
	out := []uint64{}
	for _, v := range vs {
		out = append(out, v.Version)
	}
	return out
}

// grow publishes versions 1..upto of each named table (one batch per version).
func (f *batchFixture) grow(t *testing.T, upto uint64, names ...string) {
	t.Helper()
	for v := uint64(1); v <= upto; v++ {
		es := make([]catalog.VersionEntry, len(names))
		for i, name := range names {
			es[i] = f.stage(t, name, v)
		}
		_, _, err := f.n.CommitTableVersions(context.Background(), catalog.TxnBatchCommitTables, es)
		assert.NilError(t, err)
	}
}

func deletion(f *batchFixture, name string, ranges ...lance.VersionRange) catalog.VersionEntry {
	return catalog.VersionEntry{Table: f.tables[name].ID, Delete: &catalog.VersionDeletion{Ranges: ranges}}
}

// TestBatchDeleteVersions: delete_table_versions entries commit with the batch's versions, keep
// what the plain door keeps (the latest, tagged versions), and a refused entry refuses the
// whole batch with nothing deleted.
func TestBatchDeleteVersions(t *testing.T) {
	ctx := context.Background()
	f := newBatchFixture(t)
	f.grow(t, 3, "a", "b")
	_, err := f.n.handleOf(f.tables["b"]).CreateTag(ctx, "keep", 2, "")
	assert.NilError(t, err)

	// Refusals first: each leaves every version where it was.
	cases := []struct {
		name    string
		kind    string
		entries func() []catalog.VersionEntry
		code    nserr.Code
	}{
		{"a version not the next", catalog.TxnBatchCommitTables, func() []catalog.VersionEntry {
			return []catalog.VersionEntry{f.stage(t, "a", 9), deletion(f, "b", lance.VersionRange{Start: 1, End: -1})}
		}, nserr.InvalidInput},
		{"a missing table", catalog.TxnBatchCommitTables, func() []catalog.VersionEntry {
			return []catalog.VersionEntry{deletion(f, "a", lance.VersionRange{Start: 1, End: -1}), {Table: ident.ID{"prod", "nope"}, Delete: &catalog.VersionDeletion{}}}
		}, nserr.TableNotFound},
		{"a range ending before it starts", catalog.TxnBatchCommitTables, func() []catalog.VersionEntry {
			return []catalog.VersionEntry{f.stage(t, "a", 4), deletion(f, "b", lance.VersionRange{Start: 3, End: 1})}
		}, nserr.InvalidInput},
		{"two deletions of one table", catalog.TxnBatchCommitTables, func() []catalog.VersionEntry {
			return []catalog.VersionEntry{deletion(f, "a", lance.VersionRange{Start: 1, End: 2}), deletion(f, "a", lance.VersionRange{Start: 2, End: 3})}
		}, nserr.InvalidInput},
		{"a deletion in batch_create_table_versions", catalog.TxnBatchCreateTableVersions, func() []catalog.VersionEntry {
			return []catalog.VersionEntry{f.stage(t, "a", 4), deletion(f, "b", lance.VersionRange{Start: 1, End: -1})}
		}, nserr.InvalidInput},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := f.n.CommitTableVersions(ctx, tc.kind, tc.entries())
			assert.Equal(t, nserr.CodeOf(err), tc.code, "%v", err)
			assert.DeepEqual(t, f.versionsOf(t, "a"), []uint64{1, 2, 3})
			assert.DeepEqual(t, f.versionsOf(t, "b"), []uint64{1, 2, 3})
		})
	}

	// The mixed batch: a new version of a, a's old versions and b's untagged ones deleted.
	txn, vs, err := f.n.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{
		f.stage(t, "a", 4),
		deletion(f, "a", lance.VersionRange{Start: 1, End: 3}),
		deletion(f, "b", lance.VersionRange{Start: 0, End: -1}),
	})
	assert.NilError(t, err)
	assert.Equal(t, vs[0].Version, uint64(4))
	assert.Equal(t, vs[1].Deleted, 2)
	assert.Equal(t, vs[2].Deleted, 1, "b's latest (3) and tagged (2) versions are kept")
	assert.DeepEqual(t, f.versionsOf(t, "a"), []uint64{3, 4})
	assert.DeepEqual(t, f.versionsOf(t, "b"), []uint64{2, 3})
	got, err := f.n.DescribeTransaction(ctx, txn.ID)
	assert.NilError(t, err)
	assert.Equal(t, got.Properties["lancecat.deleted_versions"], "prod$a@1|2,prod$b@1")

	// A later batch deleting from the same table takes the done claim over.
	_, vs, err = f.n.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{deletion(f, "a", lance.VersionRange{Start: 0, End: -1})})
	assert.NilError(t, err)
	assert.Equal(t, vs[0].Deleted, 1)
	assert.DeepEqual(t, f.versionsOf(t, "a"), []uint64{4})
}

// TestBatchDeleteCrash: a mixed batch (a version of a, deletions on b) stopped at each step, as
// if its process died there, shows nothing before the commit point and all of it from there on,
// to a reader that looks at the deletions first.
func TestBatchDeleteCrash(t *testing.T) {
	ctx := context.Background()
	for _, tc := range batchCrashSteps {
		t.Run(tc.step, func(t *testing.T) {
			f := newBatchFixture(t)
			f.grow(t, 2, "a", "b")
			batch := func() error {
				_, _, err := f.n.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{
					f.stage(t, "a", 3), deletion(f, "b", lance.VersionRange{Start: 1, End: -1}),
				})
				return err
			}
			crashAt(t, tc.step, batch)

			if !tc.visible {
				assert.DeepEqual(t, f.versionsOf(t, "b"), []uint64{1, 2})
				assert.Equal(t, f.latestOf(t, "a"), uint64(2))
				if tc.step != "started" {
					// The dead batch holds its claims until it is canceled (or abandoned).
					assert.Equal(t, nserr.CodeOf(batch()), nserr.ConcurrentModification)
					canceled := catalog.TxnCanceled
					_, err := f.n.AlterTransaction(ctx, f.runningTransaction(t), []catalog.TransactionAction{{SetStatus: &canceled}})
					assert.NilError(t, err)
				}
				assert.NilError(t, batch())
			}
			assert.DeepEqual(t, f.versionsOf(t, "b"), []uint64{2}) // the deletions are settled by the reader
			assert.Equal(t, f.latestOf(t, "a"), uint64(3))
		})
	}
}

// TestBatchDeleteConcurrent: writers racing batches that each add a version to a and b and
// delete a's old versions, and a reader racing them: once b shows version L, a never shows a
// version the batch that made b's L deleted (below L-1), so no batch is seen in part.
func TestBatchDeleteConcurrent(t *testing.T) {
	f := newBatchFixture(t)
	f.grow(t, 1, "a", "b")
	const writers, each = 4, 2
	names := func(int) []string { return []string{"a", "b"} }
	extra := func() []catalog.VersionEntry {
		return []catalog.VersionEntry{deletion(f, "a", lance.VersionRange{Start: 0, End: -1})}
	}
	f.raceBatches(t, writers, each, names, extra, func(ctx context.Context, _ int) error {
		lb, err := f.latest(ctx, "b")
		if err != nil {
			return err
		}
		vs, _, err := f.n.handleOf(f.tables["a"]).ListVersions(ctx, catalog.VersionQuery{})
		if err != nil {
			return err
		}
		if lb >= 2 && len(vs) > 0 && vs[0].Version < lb-1 {
			return fmt.Errorf("partial batch visible: b at %d, a still has version %d", lb, vs[0].Version)
		}
		return nil
	})
	last := uint64(1 + writers*each)
	assert.Equal(t, f.latestOf(t, "b"), last)
	assert.DeepEqual(t, f.versionsOf(t, "a"), []uint64{last - 1, last})
}
