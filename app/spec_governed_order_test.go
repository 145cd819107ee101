package app

import (
	"context"
	"net/http"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/registry"
)

// TestRenameDeniedBeforeConflicts: a rename the caller may not make at its destination (no
// create right in the destination namespace) is refused the same way whether the destination id
// is free or held by a table in the trash: the trash guard answers only callers who may create
// there, so a denied caller learns nothing about what the trash holds.
func TestRenameDeniedBeforeConflicts(t *testing.T) {
	e := newFGATrashEnv(t)
	ctx := context.Background()
	alice := e.as(t, authz.User("alice"))
	bob := e.as(t, authz.User("bob"))
	fga := e.gov.authorizer
	for _, ns := range []string{"n1", "n2"} {
		cn, err := alice.CreateNamespaceWithResponse(ctx, ns, nil, nsclient.CreateNamespaceRequest{})
		assert.NilError(t, err)
		expect(t, cn.StatusCode(), cn.Body, 200, 0)
	}
	dt, err := alice.DeclareTableWithResponse(ctx, "n2$x", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dt.StatusCode(), dt.Body, 200, 0)
	dr, err := alice.DropTableWithResponse(ctx, "n2$x", nil)
	assert.NilError(t, err)
	expect(t, dr.StatusCode(), dr.Body, 200, 0) // recoverable: n2$x is in the trash

	assert.NilError(t, fga.Grant(ctx, authz.User("bob").Subject(), "writer", authz.NamespaceObject([]string{"n1"})))
	mine, err := bob.DeclareTableWithResponse(ctx, "n1$mine", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, mine.StatusCode(), mine.Body, 200, 0)
	for _, dest := range []string{"x", "free"} {
		rn, err := bob.RenameTableWithResponse(ctx, "n1$mine", nil, nsclient.RenameTableRequest{NewTableName: dest, NewNamespaceId: &[]string{"n2"}})
		assert.NilError(t, err)
		expect(t, rn.StatusCode(), rn.Body, 403, nserr.PermissionDenied)
	}
}

// TestOverwriteDeniedBeforeProtection: an overwrite by a caller who may not destroy what it would
// replace is refused by authorization before protection is consulted: the same 403 whether the
// object is protected or not.
func TestOverwriteDeniedBeforeProtection(t *testing.T) {
	f := newTakeoverFixture(t)
	ctx := context.Background()
	_, err := f.e.gov.service.SetProtection(ctx, authz.User("alice"), registry.KindTable, f.table, true)
	assert.NilError(t, err)
	for _, path := range []string{"/v1/table/n1%24t/create?mode=Overwrite", "/v1/table/n1%24t/create?mode=Overwrite&force=true"} {
		st, out := f.e.call(t, f.bob, http.MethodPost, path, "application/vnd.apache.arrow.stream", int64Stream(t, 1))
		assert.Equal(t, codeOf(st, out), int(nserr.PermissionDenied), "%d %s", st, out)
	}
	f.assertNoTakeover(t, "overwrite of a protected table")
}
