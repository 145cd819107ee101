package governed

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
)

// CommitTableVersions commits a batch in the fake: its declares create their tables, its
// deregisters remove theirs, its version entries change nothing here; all in transaction
// ns$txn-1.
func (f *fakeCatalog) CommitTableVersions(_ context.Context, _ string, entries []catalog.VersionEntry, opts ...catalog.Option) (catalog.Transaction, []catalog.TableVersion, error) {
	f.given(opts)
	vs := make([]catalog.TableVersion, len(entries))
	for i, e := range entries {
		switch {
		case e.Declare != nil:
			f.call("batch-declare", e.Table)
			t, err := f.create(e.Table, catalog.ModeCreate)
			if err != nil {
				return catalog.Transaction{}, nil, err
			}
			vs[i].Table = t
		case e.Deregister:
			f.call("batch-deregister", e.Table)
			t, err := f.gone(e.Table, nil)
			if err != nil {
				return catalog.Transaction{}, nil, err
			}
			vs[i].Table = t
		}
	}
	return catalog.Transaction{ID: ident.ID{"ns", "txn-1"}}, vs, nil
}

// TestBatchFollowUps: a batch that committed stands whatever fails after it (it cannot be undone
// in part without breaking its all-or-none): every entry's follow-up is still tried, and those
// that failed are the answer together (every entry's event is recorded: what committed stands), 500 code 18 of the committed type, naming the
// transaction, each table and what is missing, and never the failure's own text. The
// authorizer and the records fail by fault injection (recordingAuthorizer, fakeRecords).
func TestBatchFollowUps(t *testing.T) {
	ctx := context.Background()
	declared, dropped, written := ident.ID{"ns", "d"}, ident.ID{"ns", "old"}, ident.ID{"ns", "t"}
	entries := []catalog.VersionEntry{
		{Table: written},
		{Table: declared, Declare: &catalog.TableDeclaration{}},
		{Table: dropped, Deregister: true},
	}
	const (
		ownerMissing   = "the owner of the declared table ns$d could not be recorded"
		recordsMissing = "the deregistered table ns$old: its protection or policy records could not be cleared"
		tuplesMissing  = "the deregistered table ns$old: its authorization tuples could not all be removed"
	)
	for _, tc := range []struct {
		name               string
		seedErr, revokeErr error
		clearErr           error
		wantMissing        []string // nil: the batch answers success
		wantSeeded         []authz.Object
		wantEvents         []string
	}{
		{name: "every follow-up done", wantSeeded: []authz.Object{authz.TableObject(declared)},
			wantEvents: []string{governance.EventTableVersionCreated + " ns$t", governance.EventTableDeclared + " ns$d", governance.EventTableDeregistered + " ns$old"}},
		{name: "owner not recorded", seedErr: errOutage, wantMissing: []string{ownerMissing},
			wantEvents: []string{governance.EventTableVersionCreated + " ns$t", governance.EventTableDeclared + " ns$d", governance.EventTableDeregistered + " ns$old"}},
		{name: "records not cleared", clearErr: errOutage, wantMissing: []string{recordsMissing},
			wantSeeded: []authz.Object{authz.TableObject(declared)}, wantEvents: []string{governance.EventTableVersionCreated + " ns$t", governance.EventTableDeclared + " ns$d", governance.EventTableDeregistered + " ns$old"}},
		{name: "OpenFGA down after the commit", revokeErr: errOutage, wantMissing: []string{ownerMissing, tuplesMissing},
			wantEvents: []string{governance.EventTableVersionCreated + " ns$t", governance.EventTableDeclared + " ns$d", governance.EventTableDeregistered + " ns$old"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := newFake([]string{"ns"}, []string{"ns$t", "ns$old"})
			a := &recordingAuthorizer{seedErr: tc.seedErr, revokeErr: tc.revokeErr}
			rec := &fakeRecords{failClear: tc.clearErr}
			txn, vs, err := New(cat, Options{Authorizer: a, Records: rec}).CommitTableVersions(ctx, catalog.TxnBatchCommitTables, entries)
			// The commit stands in every case: the declared table is there, the deregistered one
			// gone, and the transaction is answered alongside the error.
			assert.NilError(t, cat.TableExists(ctx, declared))
			assert.Assert(t, cat.TableExists(ctx, dropped) != nil)
			assert.Equal(t, key(txn.ID), "ns$txn-1")
			assert.Equal(t, len(vs), len(entries))
			assert.DeepEqual(t, a.seeded, tc.wantSeeded)
			assert.DeepEqual(t, rec.events, tc.wantEvents)
			if tc.wantMissing == nil {
				assert.NilError(t, err)
				return
			}
			assertCommitted(t, err, append([]string{"the batch committed (transaction ns$txn-1) and that stands, but "}, tc.wantMissing...)...)
			assert.Equal(t, nserr.ProblemFor(err, "", "").Context["transaction_id"], "ns$txn-1")
		})
	}
}
