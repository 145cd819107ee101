package governed

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// committing counts the commits that reached the catalog.
type committing struct {
	*fakeCatalog
	commits int
}

func (c *committing) CommitTableVersions(ctx context.Context, kind string, entries []catalog.VersionEntry, opts ...catalog.Option) (catalog.Transaction, []catalog.TableVersion, error) {
	c.commits++
	return c.fakeCatalog.CommitTableVersions(ctx, kind, entries, opts...)
}

// TestBatchEntriesAuthorized (moved from the batch handlers): every entry of a transaction is
// authorized on its own table before anything is checked or committed: a version entry with its
// kind's action, a deletion, declaration or deregistration with its own door's. One entry the
// caller may not write refuses the whole batch: nothing is committed, no conflict guard consulted,
// no tuple written, no event recorded. Authorization off checks nothing.
func TestBatchEntriesAuthorized(t *testing.T) {
	ctx := context.Background()
	written, other, declared, dropped := ident.ID{"ns", "t"}, ident.ID{"ns", "u"}, ident.ID{"ns", "d"}, ident.ID{"ns", "old"}
	mixed := []catalog.VersionEntry{
		{Table: written},
		{Table: other, Delete: &catalog.VersionDeletion{}},
		{Table: declared, Declare: &catalog.TableDeclaration{}},
		{Table: dropped, Deregister: true},
	}
	versions := []catalog.VersionEntry{{Table: written}, {Table: other}}
	for _, tc := range []struct {
		name    string
		kind    string
		entries []catalog.VersionEntry
		denied  authz.Action
		off     bool // no authorizer
		want    []authz.Action
		code    nserr.Code // 0: committed
	}{
		{name: "batch_commit_tables: each entry its door's action", kind: catalog.TxnBatchCommitTables, entries: mixed,
			want: []authz.Action{authz.TableBatchCommit, authz.TableDeleteVersions, authz.TableDeclare, authz.TableDeregister}},
		{name: "batch_create_table_versions", kind: catalog.TxnBatchCreateTableVersions, entries: versions,
			want: []authz.Action{authz.TableBatchCreateVersion, authz.TableBatchCreateVersion}},
		{name: "create_table_version", kind: catalog.TxnCreateTableVersion, entries: versions[:1],
			want: []authz.Action{authz.TableCreateVersion}},
		{name: "one entry denied refuses the batch", kind: catalog.TxnBatchCommitTables, entries: mixed, denied: authz.TableDeregister,
			want: []authz.Action{authz.TableBatchCommit, authz.TableDeleteVersions, authz.TableDeclare, authz.TableDeregister}, code: nserr.PermissionDenied},
		{name: "the first entry denied: the others are not asked", kind: catalog.TxnBatchCreateTableVersions, entries: versions, denied: authz.TableBatchCreateVersion,
			want: []authz.Action{authz.TableBatchCreateVersion}, code: nserr.PermissionDenied},
		{name: "an unknown kind is refused", kind: "batch_of_something", entries: versions, code: nserr.InvalidInput},
		{name: "authorization off", kind: catalog.TxnBatchCommitTables, entries: mixed, off: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := &committing{fakeCatalog: newFake([]string{"ns"}, []string{"ns$t", "ns$u", "ns$old"})}
			a := &recordingAuthorizer{denied: map[authz.Action]bool{tc.denied: true}}
			rec := &fakeRecords{}
			opts := Options{Authorizer: a, Records: rec}
			if tc.off {
				opts.Authorizer = nil
			}
			_, _, err := New(cat, opts).CommitTableVersions(ctx, tc.kind, tc.entries)
			assert.DeepEqual(t, a.checked, tc.want)
			if tc.code == 0 {
				assert.NilError(t, err)
				assert.Equal(t, cat.commits, 1, "the batch committed")
				return
			}
			assert.Equal(t, nserr.CodeOf(err), tc.code, "%v", err)
			assert.Equal(t, cat.commits, 0, "nothing committed")
			assert.Assert(t, rec.checks == nil, "no conflict guard consulted: %v", rec.checks)
			assert.Assert(t, rec.events == nil && a.written == 0, "no event, no tuple: %v", rec.events)
		})
	}
}

// TestBatchEntryOracle: a denied entry naming a table that does not exist answers as the spec
// doors do (guards.Oracle): the same 403 as for one that exists to a caller who cannot read the
// namespace's contents, so a batch says nothing about which of its tables exist.
func TestBatchEntryOracle(t *testing.T) {
	ctx := context.Background()
	for _, id := range []ident.ID{{"ns", "t"}, {"ns", "missing"}} {
		cat := &committing{fakeCatalog: newFake([]string{"ns"}, []string{"ns$t"})}
		a := &recordingAuthorizer{denied: map[authz.Action]bool{authz.TableBatchCreateVersion: true, authz.NamespaceContentsRead: true}}
		_, _, err := New(cat, Options{Authorizer: a}).CommitTableVersions(ctx, catalog.TxnBatchCreateTableVersions, []catalog.VersionEntry{{Table: id}})
		assert.Equal(t, nserr.CodeOf(err), nserr.PermissionDenied, "%s: %v", key(id), err)
		assert.Equal(t, cat.commits, 0)
	}
}
