package authz_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
)

// Seeding is one write holding the owner tuple, the parent edge and its inverse, and the creator's
// navigator tuples on every container above (nearest first).
func TestSeedCreateIsOneWrite(t *testing.T) {
	rec := newRecorder(t, testenv.OpenFGA(t))
	f, _ := newFGAAt(t, rec.URL)
	ctx := context.Background()
	e := seedEstate(t, f)
	rec.taken()

	alice := authz.User("alice")
	tbl := authz.TableObject(ident.ID{"a", "b", "new"})
	assert.NilError(t, f.SeedCreate(ctx, alice, tbl, e.nsAB))
	writes := rec.taken()
	assert.Equal(t, len(writes), 1, "%v", writes)
	assert.DeepEqual(t, writtenTuples(t, writes[0].body), []authz.Tuple{
		{User: "user:alice", Relation: "owner", Object: "table:a$b$new"},
		{User: "namespace:a$b", Relation: "parent", Object: "table:a$b$new"},
		{User: "table:a$b$new", Relation: "child", Object: "namespace:a$b"},
		{User: "user:alice", Relation: "navigator", Object: "namespace:a$b"},
		{User: "user:alice", Relation: "navigator", Object: "namespace:a"},
		{User: "user:alice", Relation: "navigator", Object: "warehouse:w"},
	})
	assert.NilError(t, f.Check(ctx, alice, authz.TableDrop, tbl))
	for _, above := range []authz.Object{e.nsAB, e.nsA} {
		assert.NilError(t, f.Check(ctx, alice, authz.NamespaceDescribe, above), "the creator sees where the table lies")
	}
	assert.NilError(t, f.Check(ctx, alice, authz.WarehouseListEntry, e.warehouse))
	assert.NilError(t, f.Check(ctx, e.creator, authz.TableDrop, tbl), "inherited through the parent edge")
}

// A re-seed converges in one write whatever is stored: the write asks OpenFGA to ignore tuples
// that exist (on_duplicate "ignore"), so a full duplicate and a half-done earlier attempt are each
// one accepted write, and the missing part lands. (Before on_duplicate, a duplicate cost a refused
// write, a read per tuple and a second write.)
func TestSeedCreateIsAtomicAndIdempotent(t *testing.T) {
	rec := newRecorder(t, testenv.OpenFGA(t))
	f, _ := newFGAAt(t, rec.URL)
	ctx := context.Background()
	e := seedEstate(t, f)
	alice := authz.User("alice")
	tbl := authz.TableObject(ident.ID{"a", "b", "half"})

	rec.taken()
	assert.NilError(t, f.SeedCreate(ctx, alice, tbl, e.nsAB))
	assert.Equal(t, len(rec.taken()), 1)

	assert.NilError(t, f.SeedCreate(ctx, alice, tbl, e.nsAB))
	writes := rec.taken()
	assert.Equal(t, len(writes), 1, "a full duplicate is one write, accepted, changing nothing")
	assert.Equal(t, writes[0].status, http.StatusOK)

	// A previous attempt left some of the tuples behind (the owner tuple, and with it the
	// navigator tuples, went).
	assert.NilError(t, f.Revoke(ctx, alice.Subject(), "owner", tbl))
	assert.Equal(t, code(t, f.Check(ctx, alice, authz.TableDrop, tbl)), nserr.PermissionDenied)
	assert.Equal(t, code(t, f.Check(ctx, alice, authz.NamespaceDescribe, e.nsA)), nserr.PermissionDenied)
	rec.taken()
	assert.NilError(t, f.SeedCreate(ctx, alice, tbl, e.nsAB))
	writes = rec.taken()
	assert.Equal(t, len(writes), 1, "%v", writes)
	assert.Equal(t, writes[0].status, http.StatusOK)
	assert.Equal(t, len(writtenTuples(t, writes[0].body)), 6)
	assert.NilError(t, f.Check(ctx, alice, authz.TableDrop, tbl))
	assert.NilError(t, f.Check(ctx, alice, authz.NamespaceDescribe, e.nsA))
}

// writtenTuples decodes the tuples an OpenFGA write request body writes.
func writtenTuples(t *testing.T, body string) []authz.Tuple {
	var req struct {
		Writes struct {
			TupleKeys []authz.Tuple `json:"tuple_keys"`
		} `json:"writes"`
	}
	assert.NilError(t, json.Unmarshal([]byte(body), &req))
	return req.Writes.TupleKeys
}

func TestSeedCreateRefusesImpossibleShapes(t *testing.T) {
	f := newFGA(t)
	ctx := context.Background()
	alice := authz.User("alice")
	ns := authz.NamespaceObject(ident.ID{"a"})
	cases := []struct {
		name           string
		object, parent authz.Object
	}{
		{"table under a warehouse", authz.TableObject(ident.ID{"a", "t"}), authz.WarehouseObject("w")},
		{"warehouse without project", authz.WarehouseObject("w"), authz.Object{}},
		{"project under a namespace", authz.ProjectObject("p"), ns},
		{"namespace without parent", ns, authz.Object{}},
		{"the catalog", authz.Catalog, authz.Object{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, code(t, f.SeedCreate(ctx, alice, c.object, c.parent)), nserr.Internal)
		})
	}
	assert.Equal(t, code(t, f.SeedCreate(ctx, authz.Anonymous, ns, authz.Catalog)), nserr.Unauthenticated)
}

func TestRevokeAllRemovesAccess(t *testing.T) {
	f := newFGA(t)
	ctx := context.Background()
	e := seedEstate(t, f)
	bob := authz.User("bob")
	assert.NilError(t, f.Grant(ctx, bob.Subject(), "reader", e.tb))
	assert.NilError(t, f.Check(ctx, bob, authz.TableQuery, e.tb))
	assert.NilError(t, f.Check(ctx, bob, authz.NamespaceDescribe, e.nsAB), "visible through navigator")

	removed, err := f.RevokeAll(ctx, e.tb)
	assert.NilError(t, err)
	assert.Equal(t, len(removed), 4, "owner, parent edge, inverse edge, bob: %v", removed)
	for _, who := range []authz.Principal{bob, e.creator} {
		assert.Equal(t, code(t, f.Check(ctx, who, authz.TableQuery, e.tb)), nserr.PermissionDenied, who)
	}
	assert.Equal(t, code(t, f.Check(ctx, bob, authz.NamespaceDescribe, e.nsAB)), nserr.PermissionDenied,
		"his navigator tuples went with his grant")

	// A new table at the same id inherits nothing from the old one.
	zoe := authz.User("zoe")
	assert.NilError(t, f.SeedCreate(ctx, zoe, e.tb, e.nsAB))
	assert.Equal(t, code(t, f.Check(ctx, bob, authz.TableQuery, e.tb)), nserr.PermissionDenied)
	assert.NilError(t, f.Check(ctx, zoe, authz.TableDrop, e.tb))

	again, err := f.RevokeAll(ctx, authz.TableObject(ident.ID{"never", "existed"}))
	assert.NilError(t, err)
	assert.Equal(t, len(again), 0)
}

// Revoking a namespace also cuts its children's edges to it, so a namespace re-created at the same
// id does not adopt the old children (nor they its new owner).
func TestRevokeAllCutsChildEdges(t *testing.T) {
	f := newFGA(t)
	ctx := context.Background()
	e := seedEstate(t, f)
	_, err := f.RevokeAll(ctx, e.nsAB)
	assert.NilError(t, err)
	mallory := authz.User("mallory")
	assert.NilError(t, f.SeedCreate(ctx, mallory, e.nsAB, e.nsA))
	assert.Equal(t, code(t, f.Check(ctx, mallory, authz.TableDrop, e.tb)), nserr.PermissionDenied)
}

// More tuples than one read page returns: RevokeAll keeps going until none are left.
func TestRevokeAllPaginates(t *testing.T) {
	f := newFGA(t)
	ctx := context.Background()
	e := seedEstate(t, f)
	const readers = 230
	for i := range readers {
		assert.NilError(t, f.Grant(ctx, authz.User(fmt.Sprintf("reader-%d", i)).Subject(), "reader", e.tb))
	}
	removed, err := f.RevokeAll(ctx, e.tb)
	assert.NilError(t, err)
	assert.Equal(t, len(removed), readers+3)
	assert.Equal(t, code(t, f.Check(ctx, authz.User("reader-229"), authz.TableQuery, e.tb)), nserr.PermissionDenied)
}

func TestGrantAndRevoke(t *testing.T) {
	f := newFGA(t)
	ctx := context.Background()
	e := seedEstate(t, f)
	bob := authz.User("bob")
	assert.NilError(t, f.Grant(ctx, bob.Subject(), "writer", e.tb))
	assert.NilError(t, f.Grant(ctx, bob.Subject(), "writer", e.tb), "granting twice is a no-op")
	assert.NilError(t, f.Check(ctx, bob, authz.TableInsert, e.tb))
	assert.NilError(t, f.Revoke(ctx, bob.Subject(), "writer", e.tb))
	assert.NilError(t, f.Revoke(ctx, bob.Subject(), "writer", e.tb), "revoking twice is a no-op")
	assert.Equal(t, code(t, f.Check(ctx, bob, authz.TableInsert, e.tb)), nserr.PermissionDenied)

	cases := []struct {
		name     string
		subject  authz.Subject
		relation string
		object   authz.Object
	}{
		{"structural edge", authz.Subject(e.nsA.String()), "parent", e.tb},
		{"derived relation", bob.Subject(), "can_drop", e.tb},
		{"unknown relation", bob.Subject(), "superuser", e.tb},
		{"wildcard as owner", authz.Everyone, "owner", e.tb},
		{"team without #member", authz.Subject("team:x"), "reader", e.tb},
		{"managed access to one user", bob.Subject(), "managed_access", e.warehouse},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, code(t, f.Grant(ctx, c.subject, c.relation, c.object)), nserr.InvalidInput)
		})
	}
}

func TestFilterReturnsOnlyAllowedItemsInOrder(t *testing.T) {
	f := newFGA(t, authz.WithConcurrency(4))
	ctx := context.Background()
	e := seedEstate(t, f)
	alice := authz.User("alice")
	var all, want []authz.Object
	for i := range 24 {
		tbl := authz.TableObject(ident.ID{"a", "b", fmt.Sprintf("t%02d", i)})
		assert.NilError(t, f.SeedCreate(ctx, e.creator, tbl, e.nsAB))
		if i%3 == 0 {
			assert.NilError(t, f.Grant(ctx, alice.Subject(), "reader", tbl))
			want = append(want, tbl)
		}
		all = append(all, tbl)
	}
	got, err := f.Filter(ctx, alice, authz.TableListEntry, all)
	assert.NilError(t, err)
	assert.DeepEqual(t, got, want)

	got, err = f.Filter(ctx, e.creator, authz.TableListEntry, all)
	assert.NilError(t, err)
	assert.Equal(t, len(got), len(all))

	got, err = f.Filter(ctx, authz.User("nobody"), authz.TableListEntry, all)
	assert.NilError(t, err)
	assert.Equal(t, len(got), 0)

	_, err = f.Filter(ctx, alice, authz.NamespaceListEntry, all)
	assert.Equal(t, code(t, err), nserr.Internal, "namespace door on tables")
}

// A table at the root namespace hangs from the Catalog: estate admins and the catalog's writers may
// create one, it is seeded with the owner tuple and the parent edge (the Catalog keeps no inverse
// edge), and estate admins inherit it; only estate admins set the catalog's own properties.
func TestRootTableHangsFromTheCatalog(t *testing.T) {
	rec := newRecorder(t, testenv.OpenFGA(t))
	f, _ := newFGAAt(t, rec.URL)
	ctx := context.Background()
	admin, writer, alice, bob := authz.User("admin"), authz.User("writer"), authz.User("alice"), authz.User("bob")
	assert.NilError(t, f.Grant(ctx, admin.Subject(), "admin", authz.Catalog))
	assert.NilError(t, f.Grant(ctx, writer.Subject(), "writer", authz.Catalog))

	for _, p := range []authz.Principal{admin, writer} {
		assert.NilError(t, f.Check(ctx, p, authz.TableCreate, authz.Catalog), "%s creates a root table", p)
	}
	assert.Equal(t, code(t, f.Check(ctx, bob, authz.TableCreate, authz.Catalog)), nserr.PermissionDenied)
	assert.NilError(t, f.Check(ctx, admin, authz.CatalogPropertiesSet, authz.Catalog))
	assert.Equal(t, code(t, f.Check(ctx, writer, authz.CatalogPropertiesSet, authz.Catalog)), nserr.PermissionDenied)

	tbl := authz.TableObject(ident.ID{"rootitems"})
	rec.taken()
	assert.NilError(t, f.SeedCreate(ctx, alice, tbl, authz.Catalog))
	writes := rec.taken()
	assert.Equal(t, len(writes), 1, "%v", writes)
	assert.DeepEqual(t, writtenTuples(t, writes[0].body), []authz.Tuple{
		{User: "user:alice", Relation: "owner", Object: "table:rootitems"},
		{User: "catalog:lancecat", Relation: "parent", Object: "table:rootitems"},
	})
	assert.NilError(t, f.Check(ctx, alice, authz.TableDrop, tbl))
	assert.NilError(t, f.Check(ctx, admin, authz.TableDrop, tbl), "estate admins inherit through the parent edge")
	assert.NilError(t, f.Check(ctx, writer, authz.TableInsert, tbl), "catalog writers write")
	assert.Equal(t, code(t, f.Check(ctx, writer, authz.TableDrop, tbl)), nserr.PermissionDenied)
	assert.Equal(t, code(t, f.Check(ctx, bob, authz.TableDescribe, tbl)), nserr.PermissionDenied)

	_, err := f.RevokeAll(ctx, tbl)
	assert.NilError(t, err)
	assert.Equal(t, code(t, f.Check(ctx, admin, authz.TableDrop, tbl)), nserr.PermissionDenied)
}

// A create's seed prepared alongside the catalog commit (PrepareSeed reads, writes nothing) costs
// one write once the commit stands on a fresh id; on an id an earlier object left tuples at, the
// commit first clears them (nothing the earlier object granted survives), then seeds.
func TestPrepareSeed(t *testing.T) {
	rec := newRecorder(t, testenv.OpenFGA(t))
	f, _ := newFGAAt(t, rec.URL)
	ctx := context.Background()
	e := seedEstate(t, f)
	alice, bob := authz.User("alice"), authz.User("bob")
	tbl := authz.TableObject(ident.ID{"a", "b", "fresh"})

	rec.taken()
	plan, err := f.PrepareSeed(ctx, alice, tbl, e.nsAB)
	assert.NilError(t, err)
	assert.Equal(t, len(rec.taken()), 0, "preparing writes nothing")
	assert.Equal(t, code(t, f.Check(ctx, alice, authz.TableDrop, tbl)), nserr.PermissionDenied)
	assert.NilError(t, plan.Commit(ctx))
	writes := rec.taken()
	assert.Equal(t, len(writes), 1, "%v", writes)
	assert.Equal(t, len(writtenTuples(t, writes[0].body)), 6)
	assert.NilError(t, f.Check(ctx, alice, authz.TableDrop, tbl))
	assert.NilError(t, f.Check(ctx, alice, authz.NamespaceDescribe, e.nsA))

	// An earlier object at this id: bob read it, eve owned it.
	old := authz.TableObject(ident.ID{"a", "b", "reused"})
	assert.NilError(t, f.SeedCreate(ctx, authz.User("eve"), old, e.nsAB))
	assert.NilError(t, f.Grant(ctx, bob.Subject(), "reader", old))
	plan, err = f.PrepareSeed(ctx, alice, old, e.nsAB)
	assert.NilError(t, err)
	assert.NilError(t, plan.Commit(ctx))
	assert.NilError(t, f.Check(ctx, alice, authz.TableDrop, old))
	assert.Equal(t, code(t, f.Check(ctx, bob, authz.TableDescribe, old)), nserr.PermissionDenied)
	assert.Equal(t, code(t, f.Check(ctx, bob, authz.NamespaceDescribe, e.nsAB)), nserr.PermissionDenied, "bob's navigation went with his grant")
	assert.Equal(t, code(t, f.Check(ctx, authz.User("eve"), authz.TableDrop, old)), nserr.PermissionDenied)
}
