package guards

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

func oracleFixture() (*fakeAuthz, fakeCatalog) {
	ns, t := ident.ID{"ns"}, ident.ID{"ns", "t"}
	a := &fakeAuthz{allow: map[string]bool{
		grant("alice", authz.TableDescribe, authz.TableObject(t)): true,
		// carol reads everything in ns: she would pass a reading door on any of its tables.
		grant("carol", authz.NamespaceContentsRead, authz.NamespaceObject(ns)): true,
		grant("carol", authz.TableDescribe, authz.TableObject(t)):              true,
		// dave reads everything in the catalog.
		grant("dave", authz.NamespaceContentsRead, authz.Catalog): true,
	}}
	return a, fakeCatalog{tables: map[string]bool{"ns$t": true}, namespaces: map[string]bool{"ns": true}}
}

// TestOracleNoExistenceOracle: a caller the check denies gets the same answer for a missing
// object as for an existing one; only a caller who reads the whole holding namespace learns that
// an object is missing (the handler's own 404, or the catalog's for a create's parent).
func TestOracleNoExistenceOracle(t *testing.T) {
	describe := SpecDoors["DescribeTable"]
	create := SpecDoors["CreateTable"]
	cases := []struct {
		name string
		door SpecDoor
		p    authz.Principal
		id   ident.ID
		want nserr.Code // -1: nil
	}{
		{"allowed", describe, "alice", ident.ID{"ns", "t"}, -1},
		{"denied, exists", describe, "bob", ident.ID{"ns", "t"}, nserr.PermissionDenied},
		{"denied, missing", describe, "bob", ident.ID{"ns", "u"}, nserr.PermissionDenied},
		{"denied, namespace missing too", describe, "bob", ident.ID{"nope", "u"}, nserr.PermissionDenied},
		{"grant on a sibling reveals nothing", describe, "alice", ident.ID{"ns", "u"}, nserr.PermissionDenied},
		{"reader of the namespace: the handler's 404", describe, "carol", ident.ID{"ns", "u"}, -1},
		{"reader of the namespace, other namespace missing", describe, "carol", ident.ID{"nope", "u"}, nserr.PermissionDenied},
		{"create, denied, parent exists", create, "bob", ident.ID{"ns", "u"}, nserr.PermissionDenied},
		{"create, denied, parent missing", create, "bob", ident.ID{"nope", "u"}, nserr.PermissionDenied},
		{"create, catalog reader, parent missing: the catalog's 404", create, "dave", ident.ID{"nope", "u"}, nserr.NamespaceNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, cat := oracleFixture()
			err := Oracle{Authorizer: a, Catalog: cat}.Authorize(context.Background(), tc.door, tc.p, tc.id)
			if tc.want == -1 {
				assert.NilError(t, err)
				return
			}
			assert.Equal(t, nserr.CodeOf(err), tc.want, "%v", err)
		})
	}
}

// TestOracleFailsClosed: an authorization outage, and a catalog that cannot say whether the
// object exists, refuse; neither lets the request through.
func TestOracleFailsClosed(t *testing.T) {
	ctx := context.Background()
	a, cat := oracleFixture()
	a.down = true
	err := Oracle{Authorizer: a, Catalog: cat}.Authorize(ctx, SpecDoors["DescribeTable"], "alice", ident.ID{"ns", "t"})
	assert.Equal(t, nserr.CodeOf(err), nserr.ServiceUnavailable)

	a, cat = oracleFixture()
	cat.broken = true
	err = Oracle{Authorizer: a, Catalog: cat}.Authorize(ctx, SpecDoors["DescribeTable"], "bob", ident.ID{"ns", "u"})
	assert.Assert(t, err != nil)
	assert.Equal(t, nserr.CodeOf(err), nserr.ServiceUnavailable)

	// Without a catalog a denial is the denial.
	a, _ = oracleFixture()
	err = Oracle{Authorizer: a}.Authorize(ctx, SpecDoors["DescribeTable"], "carol", ident.ID{"ns", "u"})
	assert.Equal(t, nserr.CodeOf(err), nserr.PermissionDenied)
}

// TestOracleRoot: the root namespace always exists; its listings pass (their items are
// filtered), anything else on it is refused.
func TestOracleRoot(t *testing.T) {
	a, cat := oracleFixture()
	o := Oracle{Authorizer: a, Catalog: cat}
	for _, op := range []string{"ListNamespaces", "ListTables", "DescribeNamespace", "NamespaceExists"} {
		assert.NilError(t, o.Authorize(context.Background(), SpecDoors[op], "bob", ident.ID{}), op)
	}
	err := o.Authorize(context.Background(), SpecDoors["DropNamespace"], "bob", ident.ID{})
	assert.Equal(t, nserr.CodeOf(err), nserr.PermissionDenied)
	assert.Equal(t, a.checks, 0)
}

// TestOracleAdoptsOrphans: an existing table without edges (written straight to storage) is
// attached where its id says it lives, then asked about again.
func TestOracleAdoptsOrphans(t *testing.T) {
	a, cat := oracleFixture()
	t2 := ident.ID{"ns", "t"}
	a.adoptable = map[authz.Object]bool{authz.TableObject(t2): true}
	ad := adoptingAuthz{fakeAuthz: a, onAdopt: func(o authz.Object) {
		a.allow[grant("bob", authz.TableDescribe, o)] = true
	}}
	assert.NilError(t, Oracle{Authorizer: ad, Catalog: cat}.Authorize(context.Background(), SpecDoors["DescribeTable"], "bob", t2))
}
