package lance

import (
	"context"
	"slices"
	"testing"

	"gotest.tools/v3/assert"
)

// TestCleanupPrunesStaleTransactions: unreferenced transaction files of writers whose next
// version is gone (cleaned now or before) are pruned at once, young as they are; those whose
// next version is kept (a tag, the fork point) or not committed yet (a writer on the latest
// version) stay until the unverified age.
func TestCleanupPrunesStaleTransactions(t *testing.T) {
	ctx := context.Background()
	ds, store := cleanupFixture(t)
	for _, k := range []string{"0-abc.txn", "3-xyz.txn", "1-tag.txn", "2-fork.txn", "4-latest.txn", "5-inflight.txn", "junk.txn", "x-y.txn"} {
		putObject(t, store, TransactionsDir+k, []byte("t"))
	}
	// KeepLast 1 removes v1 and v4 (v2 is tagged, v3 the branch fork point, v5 the latest).
	rep, err := ds.Cleanup(ctx, CleanupOptions{KeepLast: 1})
	assert.NilError(t, err)
	assert.DeepEqual(t, rep.RemovedVersions, []uint64{1, 4})
	for _, k := range []string{"0-abc.txn", "3-xyz.txn"} {
		assert.Assert(t, slices.Contains(rep.RemovedFiles, TransactionsDir+k), k)
	}
	left := keys(t, store)
	for _, k := range []string{"1-tag.txn", "2-fork.txn", "4-latest.txn", "5-inflight.txn", "junk.txn", "x-y.txn"} {
		assert.Assert(t, slices.Contains(left, TransactionsDir+k), k)
	}
	assert.Equal(t, rep.UnverifiedRemoved, 0)
}
