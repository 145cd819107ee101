package app

import (
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
)

// listAccess calls GET /v1/access/list and checks the status and code.
func listAccess(t *testing.T, c *controlclient.ClientWithResponses, typ, id string, status int, code nserr.Code) []string {
	t.Helper()
	r, err := c.ListAccessWithResponse(context.Background(), &controlclient.ListAccessParams{ObjectType: &typ, ObjectId: &id})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, status, code)
	if r.JSON200 == nil {
		return nil
	}
	out := []string{}
	for _, g := range r.JSON200.Grants {
		out = append(out, g.Relation+" "+g.Subject)
	}
	return out
}

// TestListAccess: who holds what on an object (the console's governance page, issue 19): the
// direct grants, no structural or derived tuples; only for whoever may read the object's
// assignments, anyone else 403 whether or not the object exists (no existence oracle); a grant
// and a revoke show at once; with authorization off, 406.
func TestListAccess(t *testing.T) {
	e := newSpecEnv(t, fgaSpecConfig(t))
	ctx := context.Background()
	alice, aliceCtl := e.as(t, authz.User("alice")), e.ctlAs(t, authz.User("alice"))
	bobCtl := e.ctlAs(t, authz.User("bob"))

	cn, err := alice.CreateNamespaceWithResponse(ctx, "ns", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cn.StatusCode(), cn.Body, 200, 0)
	dt, err := alice.DeclareTableWithResponse(ctx, "ns$t", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dt.StatusCode(), dt.Body, 200, 0)

	table, namespace := "table", "namespace"
	assert.DeepEqual(t, listAccess(t, aliceCtl, table, "ns$t", 200, 0), []string{"owner user:alice"})
	grant(t, aliceCtl, false, controlclient.AccessGrantObjectTypeTable, "ns$t", "user:bob", "reader", 200, 0)
	grant(t, aliceCtl, false, controlclient.AccessGrantObjectTypeNamespace, "ns", "user:carol", "writer", 200, 0)
	assert.DeepEqual(t, listAccess(t, aliceCtl, table, "ns$t", 200, 0), []string{"owner user:alice", "reader user:bob"})
	// The namespace's own grants; bob's navigator tuple on it (derived from his table grant) is no grant.
	assert.DeepEqual(t, listAccess(t, aliceCtl, namespace, "ns", 200, 0), []string{"owner user:alice", "writer user:carol"})

	// A reader may not read the assignments, and learns nothing about what does not exist.
	listAccess(t, bobCtl, table, "ns$t", 403, nserr.PermissionDenied)
	listAccess(t, bobCtl, table, "ns$missing", 403, nserr.PermissionDenied)
	listAccess(t, bobCtl, namespace, "nope", 403, nserr.PermissionDenied)
	// Shape first: 400 for everyone.
	listAccess(t, bobCtl, table, "ns$../x", 400, nserr.InvalidInput)
	listAccess(t, aliceCtl, "catalog", "x", 400, nserr.InvalidInput)

	grant(t, aliceCtl, true, controlclient.AccessGrantObjectTypeTable, "ns$t", "user:bob", "reader", 200, 0)
	assert.DeepEqual(t, listAccess(t, aliceCtl, table, "ns$t", 200, 0), []string{"owner user:alice"})
}

// TestListAccessWithoutAuthorization: with authorization off there are no grants to list.
func TestListAccessWithoutAuthorization(t *testing.T) {
	e := newSpecEnv(t, specConfig(t))
	listAccess(t, e.ctlAs(t, ""), "table", "ns$t", 406, nserr.Unsupported)
	listAccess(t, e.ctlAs(t, ""), "", "ns$t", 400, nserr.InvalidInput)
}
