package app

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// ctlAs is a control-plane client acting as p.
func (e *specEnv) ctlAs(t *testing.T, p authz.Principal) *controlclient.ClientWithResponses {
	t.Helper()
	c, err := controlclient.NewClientWithResponses(e.url, controlclient.WithRequestEditorFn(e.keyFor(t, p)))
	assert.NilError(t, err)
	return c
}

func grant(t *testing.T, c *controlclient.ClientWithResponses, revoke bool, typ controlclient.AccessGrantObjectType, id, subject, relation string, status int, code nserr.Code) {
	t.Helper()
	body := controlclient.AccessGrant{ObjectType: typ, ObjectId: id, Subject: subject, Relation: relation}
	var (
		st  int
		raw []byte
	)
	if revoke {
		r, err := c.RevokeAccessWithResponse(context.Background(), body)
		assert.NilError(t, err)
		st, raw = r.StatusCode(), r.Body
	} else {
		r, err := c.GrantAccessWithResponse(context.Background(), body)
		assert.NilError(t, err)
		st, raw = r.StatusCode(), r.Body
	}
	expect(t, st, raw, status, code)
}

// TestAccessDoors: the rung granted picks the door. A reader cannot drop, a writer cannot grant,
// an owner can do both; project admins granted over HTTP run their own warehouses and
// namespaces, which outsiders cannot see.
func TestAccessDoors(t *testing.T) {
	e := newSpecEnv(t, fgaSpecConfig(t))
	ctx := context.Background()
	alice, aliceCtl := e.as(t, authz.User("alice")), e.ctlAs(t, authz.User("alice"))
	bob, bobCtl := e.as(t, authz.User("bob")), e.ctlAs(t, authz.User("bob"))
	carol, carolCtl := e.as(t, authz.User("carol")), e.ctlAs(t, authz.User("carol"))
	erin := e.as(t, authz.User("erin"))

	cn, err := alice.CreateNamespaceWithResponse(ctx, "ns", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cn.StatusCode(), cn.Body, 200, 0)
	for _, name := range []string{"ns$t", "ns$u"} {
		dt, err := alice.DeclareTableWithResponse(ctx, name, nil, nsclient.DeclareTableRequest{})
		assert.NilError(t, err)
		expect(t, dt.StatusCode(), dt.Body, 200, 0)
	}

	// Shape first, then the door, then existence.
	grant(t, aliceCtl, false, controlclient.AccessGrantObjectTypeTable, "ns$t", "user:bob", "can_drop", 400, nserr.InvalidInput)
	grant(t, aliceCtl, false, controlclient.AccessGrantObjectTypeTable, "ns$t", "bob", "reader", 400, nserr.InvalidInput)
	grant(t, aliceCtl, false, controlclient.AccessGrantObjectTypeTable, "ns$../x", "user:bob", "reader", 400, nserr.InvalidInput)
	grant(t, bobCtl, false, controlclient.AccessGrantObjectTypeTable, "ns$t", "user:bob", "owner", 403, nserr.PermissionDenied)
	grant(t, bobCtl, false, controlclient.AccessGrantObjectTypeTable, "ns$missing", "user:bob", "owner", 403, nserr.PermissionDenied)
	// A missing table has no edges to inherit through: even the estate admin is refused, so the
	// door is no existence oracle.
	grant(t, aliceCtl, false, controlclient.AccessGrantObjectTypeTable, "ns$missing", "user:bob", "reader", 403, nserr.PermissionDenied)

	// A reader describes and cannot drop.
	grant(t, aliceCtl, false, controlclient.AccessGrantObjectTypeTable, "ns$t", "user:bob", "reader", 200, 0)
	d, err := bob.DescribeTableWithResponse(ctx, "ns$t", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	dr, err := bob.DropTableWithResponse(ctx, "ns$t", nil)
	assert.NilError(t, err)
	expect(t, dr.StatusCode(), dr.Body, 403, nserr.PermissionDenied)

	// A writer writes and cannot grant (not even reader), nor revoke.
	grant(t, aliceCtl, false, controlclient.AccessGrantObjectTypeNamespace, "ns", "user:carol", "writer", 200, 0)
	dt, err := carol.DeclareTableWithResponse(ctx, "ns$v", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dt.StatusCode(), dt.Body, 200, 0)
	grant(t, carolCtl, false, controlclient.AccessGrantObjectTypeTable, "ns$u", "user:erin", "reader", 403, nserr.PermissionDenied)
	// Over an existing namespace, a writer may accept it as it is (ExistOk) but not replace it.
	cn, err = alice.CreateNamespaceWithResponse(ctx, "ns$sub", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cn.StatusCode(), cn.Body, 200, 0)
	for mode, status := range map[string]int{"ExistOk": 200, "Overwrite": 403} {
		cn, err = carol.CreateNamespaceWithResponse(ctx, "ns$sub", nil, nsclient.CreateNamespaceRequest{Mode: ptr(mode)})
		assert.NilError(t, err)
		expect(t, cn.StatusCode(), cn.Body, status, map[int]nserr.Code{200: 0, 403: nserr.PermissionDenied}[status])
	}
	cn, err = bob.CreateNamespaceWithResponse(ctx, "ns$sub", nil, nsclient.CreateNamespaceRequest{Mode: ptr("ExistOk")})
	assert.NilError(t, err)
	expect(t, cn.StatusCode(), cn.Body, 403, nserr.PermissionDenied)
	grant(t, carolCtl, true, controlclient.AccessGrantObjectTypeTable, "ns$t", "user:bob", "reader", 403, nserr.PermissionDenied)

	// An owner drops and grants.
	grant(t, aliceCtl, false, controlclient.AccessGrantObjectTypeTable, "ns$u", "user:erin", "owner", 200, 0)
	eCtl := e.ctlAs(t, authz.User("erin"))
	grant(t, eCtl, false, controlclient.AccessGrantObjectTypeTable, "ns$u", "user:bob", "reader", 200, 0)
	du, err := erin.DropTableWithResponse(ctx, "ns$u", nil)
	assert.NilError(t, err)
	expect(t, du.StatusCode(), du.Body, 200, 0)

	// Revokes take effect; revoking what is not held is fine.
	grant(t, aliceCtl, true, controlclient.AccessGrantObjectTypeTable, "ns$t", "user:bob", "reader", 200, 0)
	grant(t, aliceCtl, true, controlclient.AccessGrantObjectTypeTable, "ns$t", "user:bob", "reader", 200, 0)
	d, err = bob.DescribeTableWithResponse(ctx, "ns$t", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 403, nserr.PermissionDenied)

	// A project admin granted over HTTP runs a warehouse and binds a namespace in it; the
	// namespace and its tables are theirs, and an outsider sees none of it.
	pr, err := aliceCtl.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p"})
	assert.NilError(t, err)
	expect(t, pr.StatusCode(), pr.Body, 200, 0)
	grant(t, bobCtl, false, controlclient.AccessGrantObjectTypeProject, "p", "user:carol", "admin", 403, nserr.PermissionDenied)
	grant(t, aliceCtl, false, controlclient.AccessGrantObjectTypeProject, "p", "user:carol", "owner", 400, nserr.InvalidInput)
	grant(t, aliceCtl, false, controlclient.AccessGrantObjectTypeProject, "p", "user:carol", "admin", 200, 0)
	wr, err := carolCtl.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: "w", Project: "p"})
	assert.NilError(t, err)
	expect(t, wr.StatusCode(), wr.Body, 200, 0)
	bn, err := bobCtl.CreateWarehouseNamespaceWithResponse(ctx, "w", controlclient.CreateWarehouseNamespaceRequest{Namespace: "sales"})
	assert.NilError(t, err)
	expect(t, bn.StatusCode(), bn.Body, 403, nserr.PermissionDenied)
	bn, err = carolCtl.CreateWarehouseNamespaceWithResponse(ctx, "w", controlclient.CreateWarehouseNamespaceRequest{Namespace: "sales"})
	assert.NilError(t, err)
	expect(t, bn.StatusCode(), bn.Body, 200, 0)
	dt, err = carol.DeclareTableWithResponse(ctx, "sales$orders", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dt.StatusCode(), dt.Body, 200, 0)
	d, err = bob.DescribeTableWithResponse(ctx, "sales$orders", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 403, nserr.PermissionDenied)
	ln, err := bob.ListNamespacesWithResponse(ctx, "$", &nsclient.ListNamespacesParams{})
	assert.NilError(t, err)
	expect(t, ln.StatusCode(), ln.Body, 200, 0)
	assert.Equal(t, len(ln.JSON200.Namespaces), 0, "bob holds no grant any more: %v", ln.JSON200.Namespaces)
	wl, err := bobCtl.ListWarehouseNamespacesWithResponse(ctx, "w")
	assert.NilError(t, err)
	expect(t, wl.StatusCode(), wl.Body, 403, nserr.PermissionDenied)
	wl, err = carolCtl.ListWarehouseNamespacesWithResponse(ctx, "w")
	assert.NilError(t, err)
	expect(t, wl.StatusCode(), wl.Body, 200, 0)
	assert.Equal(t, len(wl.JSON200.Namespaces), 1)
}

// TestAccessDoorsWithoutAuthorization: with authorization off there are no grants to change.
func TestAccessDoorsWithoutAuthorization(t *testing.T) {
	e := newSpecEnv(t, specConfig(t))
	grant(t, e.ctlAs(t, ""), false, controlclient.AccessGrantObjectTypeTable, "ns$t", "user:bob", "reader", 406, nserr.Unsupported)
	grant(t, e.ctlAs(t, ""), false, "catalog", "x", "user:bob", "reader", 400, nserr.InvalidInput)
}

// TestOrphansAreAdopted: tables and namespaces written straight to storage (as LanceDB's own
// directory client does) have no tuples; the first denied request attaches them where their id
// says they live, so whoever holds rights above them reaches them, and nobody else.
func TestOrphansAreAdopted(t *testing.T) {
	cfg := fgaSpecConfig(t)
	e := newSpecEnv(t, cfg)
	ctx := context.Background()
	alice, bob := e.as(t, authz.User("alice")), e.as(t, authz.User("bob"))
	aliceCtl := e.ctlAs(t, authz.User("alice"))
	cn, err := alice.CreateNamespaceWithResponse(ctx, "ns", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cn.StatusCode(), cn.Body, 200, 0)

	// Behind the catalog's back: a table in ns, and a namespace with a table of its own.
	fs, err := storage.NewFS(cfg.Root)
	assert.NilError(t, err)
	direct := namespace.New(fs, namespace.Options{RootURI: cfg.Root})
	_, err = direct.DeclareTable(ctx, ident.ID{"ns", "direct"}, "", nil)
	assert.NilError(t, err)
	_, err = direct.CreateNamespace(ctx, ident.ID{"orph"}, nil, "Create")
	assert.NilError(t, err)
	_, err = direct.DeclareTable(ctx, ident.ID{"orph", "t"}, "", nil)
	assert.NilError(t, err)

	// An outsider's denial adopts nothing he could use.
	d, err := bob.DescribeTableWithResponse(ctx, "orph$t", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 403, nserr.PermissionDenied)
	for _, id := range []string{"ns$direct", "orph$t"} {
		d, err := alice.DescribeTableWithResponse(ctx, id, nil, nsclient.DescribeTableRequest{})
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 200, 0)
	}
	dn, err := alice.DescribeNamespaceWithResponse(ctx, "orph", nil, nsclient.DescribeNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, dn.StatusCode(), dn.Body, 200, 0)
	// A reader of ns now reaches the adopted table through it.
	grant(t, aliceCtl, false, controlclient.AccessGrantObjectTypeNamespace, "ns", "user:bob", "reader", 200, 0)
	d, err = bob.DescribeTableWithResponse(ctx, "ns$direct", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	d, err = bob.DescribeTableWithResponse(ctx, "orph$t", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 403, nserr.PermissionDenied)
}
