package catalogtest

// The version commits across tables and their transactions.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/namespace"
)

// StageNext stages, the way a Lance client does before create_table_version, the next version
// of table id of c: a copy of its latest manifest holding the next version number, under a
// staging name in its _versions/ directory. Only a catalog on a local root can be staged into
// from here (its table URIs are paths); elsewhere ok is false.
func StageNext(ctx context.Context, c catalog.Catalog, id ident.ID) (e catalog.VersionEntry, ok bool, err error) {
	h, err := c.LoadTable(ctx, id)
	if err != nil {
		return e, false, err
	}
	uri := h.Meta().URI
	if !filepath.IsAbs(uri) {
		return e, false, nil
	}
	latest, err := h.DescribeVersion(ctx, "", nil)
	if err != nil {
		return e, false, err
	}
	data, err := os.ReadFile("/" + strings.TrimPrefix(latest.ManifestPath, "/"))
	if err != nil {
		return e, false, err
	}
	mf, err := lance.DecodeManifestFile(data)
	if err != nil {
		return e, false, err
	}
	next := latest.Version + 1
	mf.Manifest.Version = next
	if mf.Transaction != nil {
		mf.Transaction.ReadVersion = latest.Version
		mf.Transaction.Uuid = uuid.NewString()
	}
	out, err := mf.Encode()
	if err != nil {
		return e, false, err
	}
	key := "_versions/" + lance.NamingV2.ManifestName(next) + "-" + uuid.NewString()
	if err := os.WriteFile(filepath.Join(uri, key), out, 0o644); err != nil {
		return e, false, err
	}
	return catalog.VersionEntry{Table: id, NewTableVersion: catalog.NewTableVersion{
		Version: int64(next), ManifestPath: uri + "/" + key, NamingScheme: "V2",
	}}, true, nil
}

func (s *suite) stageNext(t *testing.T, id ident.ID) (catalog.VersionEntry, bool) {
	t.Helper()
	e, ok, err := StageNext(s.ctx, s.c, id)
	assert.NilError(t, err)
	return e, ok
}

func (s *suite) latestVersion(t *testing.T, id ident.ID) uint64 {
	t.Helper()
	v, err := s.load(t, id).DescribeVersion(s.ctx, "", nil)
	assert.NilError(t, err)
	return v.Version
}

// testBatch: a batch publishes every version or none; its transaction is described and altered
// all or nothing; what no catalog has is not found.
func testBatch(t *testing.T, s *suite, ns ident.ID) {
	ctx := s.ctx
	x, y := child(ns, "x"), child(ns, "y")
	s.create(t, x, "a")
	s.create(t, y, "a")

	// What every catalog answers, whatever its storage.
	_, _, err := s.c.CommitTableVersions(ctx, catalog.TxnBatchCreateTableVersions, []catalog.VersionEntry{
		{Table: child(ns, "missing"), NewTableVersion: catalog.NewTableVersion{Version: 2, ManifestPath: "x"}},
	})
	code(t, err, nserr.TableNotFound)
	_, err = s.c.DescribeTransaction(ctx, child(ns, "txn-"+uuid.NewString()))
	code(t, err, nserr.TransactionNotFound)
	_, err = s.c.AlterTransaction(ctx, child(ns, "txn-"+uuid.NewString()), []catalog.TransactionAction{{Set: &catalog.PropertySet{Key: "k", Value: "v"}}})
	code(t, err, nserr.TransactionNotFound)

	// declare_table and deregister_table join a batch_commit_tables, all or none: a batch whose
	// last entry fails declares nothing; a committed one declares and deregisters together.
	d1, d2 := child(ns, "declared1"), child(ns, "declared2")
	_, _, err = s.c.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{
		{Table: d1, Declare: &catalog.TableDeclaration{}}, {Table: child(ns, "missing"), Deregister: true},
	})
	code(t, err, nserr.TableNotFound)
	_, err = s.c.DescribeTable(ctx, d1)
	code(t, err, nserr.TableNotFound)
	_, _, err = s.c.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{
		{Table: d1, Declare: &catalog.TableDeclaration{Properties: map[string]string{"k": "v"}}}, {Table: child(ns, "declared1"), Declare: &catalog.TableDeclaration{}},
	})
	code(t, err, nserr.InvalidInput)
	_, vs0, err := s.c.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{
		{Table: d1, Declare: &catalog.TableDeclaration{Properties: map[string]string{"k": "v"}}}, {Table: d2, Declare: &catalog.TableDeclaration{}},
	})
	assert.NilError(t, err)
	assert.Assert(t, vs0[0].Table != nil && vs0[0].Table.URI != "", "a declare answers the table's location")
	assert.DeepEqual(t, vs0[0].Table.Properties, map[string]string{"k": "v"})
	d, err := s.c.DescribeTable(ctx, d1)
	assert.NilError(t, err)
	assert.Equal(t, d.URI, vs0[0].Table.URI)
	_, vs0, err = s.c.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{{Table: d2, Deregister: true}, {Table: d1, Deregister: true}})
	assert.NilError(t, err)
	assert.Assert(t, vs0[1].Table != nil && vs0[1].Table.URI == d.URI, "a deregister answers the table's location")
	for _, id := range []ident.ID{d1, d2} {
		_, err = s.c.DescribeTable(ctx, id)
		code(t, err, nserr.TableNotFound)
	}

	ex, ok := s.stageNext(t, x)
	if !ok {
		t.Log("staging needs a local root: the commits themselves are checked in the local configurations")
		return
	}
	ey, _ := s.stageNext(t, y)

	// A refused batch publishes nothing: one entry's manifest is not staged.
	gone := ey
	gone.ManifestPath += "-gone"
	_, _, err = s.c.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{ex, gone})
	code(t, err, nserr.InvalidInput)
	assert.Equal(t, s.latestVersion(t, x), uint64(1))
	assert.Equal(t, s.latestVersion(t, y), uint64(1))

	txn, vs, err := s.c.CommitTableVersions(ctx, catalog.TxnBatchCreateTableVersions, []catalog.VersionEntry{ex, ey})
	assert.NilError(t, err)
	assert.Equal(t, len(vs), 2)
	assert.Equal(t, vs[0].Version, uint64(2))
	assert.Equal(t, vs[1].Version, uint64(2))
	assert.Assert(t, txn.ID != nil)
	assert.Equal(t, s.latestVersion(t, x), uint64(2))
	assert.Equal(t, s.latestVersion(t, y), uint64(2))
	st, err := s.load(t, y).State(ctx, catalog.DescribeOptions{})
	assert.NilError(t, err)
	assert.Equal(t, st.Version, uint64(2), "the data plane reads the published version")

	// The same versions again: taken, and nothing else published.
	ex3, _ := s.stageNext(t, x)
	_, _, err = s.c.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{ex3, ey})
	code(t, err, nserr.ConcurrentModification)
	assert.Equal(t, s.latestVersion(t, x), uint64(2))

	got, err := s.c.DescribeTransaction(ctx, txn.ID)
	assert.NilError(t, err)
	assert.Equal(t, got.Status, catalog.TxnSucceeded)
	assert.Equal(t, got.Properties[namespace.SystemPropertyPrefix+"kind"], catalog.TxnBatchCreateTableVersions)

	got, err = s.c.AlterTransaction(ctx, txn.ID, []catalog.TransactionAction{{Set: &catalog.PropertySet{Key: "owner", Value: "alice"}}})
	assert.NilError(t, err)
	assert.Equal(t, got.Properties["owner"], "alice")
	canceled := catalog.TxnCanceled
	_, err = s.c.AlterTransaction(ctx, txn.ID, []catalog.TransactionAction{
		{Set: &catalog.PropertySet{Key: "owner", Value: "bob"}}, {SetStatus: &canceled},
	})
	code(t, err, nserr.InvalidInput)
	got, err = s.c.DescribeTransaction(ctx, txn.ID)
	assert.NilError(t, err)
	assert.Equal(t, got.Properties["owner"], "alice", "a refused alter applies no action")
	assert.Equal(t, got.Status, catalog.TxnSucceeded)

	// create_table_version is a transaction of its own.
	single, vs, err := s.c.CommitTableVersions(ctx, catalog.TxnCreateTableVersion, []catalog.VersionEntry{ex3})
	assert.NilError(t, err)
	assert.Equal(t, vs[0].Version, uint64(3))
	got, err = s.c.DescribeTransaction(context.WithoutCancel(ctx), single.ID)
	assert.NilError(t, err)
	assert.Equal(t, got.Properties[namespace.SystemPropertyPrefix+"kind"], catalog.TxnCreateTableVersion)

	// delete_table_versions joins a batch_commit_tables: refused whole with a failing entry,
	// applied with the batch's version otherwise (y keeps its latest).
	ex4, _ := s.stageNext(t, x)
	del := func(id ident.ID) catalog.VersionEntry {
		return catalog.VersionEntry{Table: id, Delete: &catalog.VersionDeletion{Ranges: []lance.VersionRange{{Start: 0, End: -1}}}}
	}
	_, _, err = s.c.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{ex4, del(y), del(child(ns, "missing"))})
	code(t, err, nserr.TableNotFound)
	assert.Equal(t, s.latestVersion(t, x), uint64(3))
	assert.Equal(t, len(s.versions(t, y)), 2, "a refused batch deletes nothing")
	mixed, vs, err := s.c.CommitTableVersions(ctx, catalog.TxnBatchCommitTables, []catalog.VersionEntry{ex4, del(y)})
	assert.NilError(t, err)
	assert.Equal(t, vs[0].Version, uint64(4))
	assert.Equal(t, vs[1].Deleted, 1)
	assert.Equal(t, s.latestVersion(t, x), uint64(4))
	assert.DeepEqual(t, s.versions(t, y), []uint64{2})
	got, err = s.c.DescribeTransaction(ctx, mixed.ID)
	assert.NilError(t, err)
	assert.Equal(t, got.Status, catalog.TxnSucceeded)
}

func (s *suite) versions(t *testing.T, id ident.ID) []uint64 {
	t.Helper()
	vs, _, err := s.load(t, id).ListVersions(s.ctx, catalog.VersionQuery{})
	assert.NilError(t, err)
	out := []uint64{}
	for _, v := range vs {
		out = append(out, v.Version)
	}
	return out
}
