package app

import (
	"bytes"
	"context"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	"github.com/lancecat/lancecat/ident"

	nserr "github.com/lancecat/lancecat/errors"
)

// TestOverwriteHonoursProtection: an overwrite replaces what is at its id, so every door that
// overwrites (create and register of a table, create of a namespace), in every spelling, passes
// the protection guard as a drop does: a protected object is 409 and untouched, force=true
// overrides. Issue 11 item 4: `create?mode=overwrite` added a version to a protected table and
// `register {"mode":"overwrite"}` repointed one.
func TestOverwriteHonoursProtection(t *testing.T) {
	e, spec := newLifecycleEnv(t)
	c, ctx := e.anyone, context.Background()
	ns, err := spec.CreateNamespaceWithResponse(ctx, "n1", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, ns.StatusCode(), ns.Body, 200, 0)
	ns, err = spec.CreateNamespaceWithResponse(ctx, "n1$p", nil, nsclient.CreateNamespaceRequest{Properties: &map[string]string{"k": "v"}})
	assert.NilError(t, err)
	expect(t, ns.StatusCode(), ns.Body, 200, 0)
	for _, tbl := range []string{"n1$t9", "n1$other"} {
		cr, err := spec.CreateTableWithBodyWithResponse(ctx, tbl, nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 2)))
		assert.NilError(t, err)
		expect(t, cr.StatusCode(), cr.Body, 200, 0)
	}
	other, err := e.catalog.DescribeTable(ctx, ident.ID{"n1", "other"})
	assert.NilError(t, err)
	pt, err := c.SetTableProtectionWithResponse(ctx, "n1$t9", nil, controlclient.SetProtectionRequest{Protected: true})
	assert.NilError(t, err)
	expect(t, pt.StatusCode(), pt.Body, 200, 0)
	pn, err := c.SetNamespaceProtectionWithResponse(ctx, "n1$p", nil, controlclient.SetProtectionRequest{Protected: true})
	assert.NilError(t, err)
	expect(t, pn.StatusCode(), pn.Body, 200, 0)

	untouched := func(t *testing.T, what string) {
		t.Helper()
		d, err := spec.DescribeTableWithResponse(ctx, "n1$t9", nil, nsclient.DescribeTableRequest{})
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 200, 0)
		assert.Equal(t, *d.JSON200.Version, int64(1), "%s wrote a version", what)
		assert.Assert(t, *d.JSON200.Location != other.URI, "%s repointed the table", what)
		dn, err := spec.DescribeNamespaceWithResponse(ctx, "n1$p", nil, nsclient.DescribeNamespaceRequest{})
		assert.NilError(t, err)
		expect(t, dn.StatusCode(), dn.Body, 200, 0)
		assert.DeepEqual(t, *dn.JSON200.Properties, map[string]string{"k": "v"})
	}
	for _, mode := range []string{"overwrite", "Overwrite", "over-write", "Over Write", "OVER_WRITE"} {
		cr, err := spec.CreateTableWithBodyWithResponse(ctx, "n1$t9", &nsclient.CreateTableParams{Mode: &mode},
			"application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 1)))
		assert.NilError(t, err)
		expect(t, cr.StatusCode(), cr.Body, 409, nserr.InvalidTableState, "n1$t9", "protected")

		rg, err := spec.RegisterTableWithResponse(ctx, "n1$t9", nil, nsclient.RegisterTableRequest{Mode: &mode, Location: other.URI})
		assert.NilError(t, err)
		expect(t, rg.StatusCode(), rg.Body, 409, nserr.InvalidTableState, "n1$t9", "protected")

		cn, err := spec.CreateNamespaceWithResponse(ctx, "n1$p", nil, nsclient.CreateNamespaceRequest{Mode: &mode})
		assert.NilError(t, err)
		expect(t, cn.StatusCode(), cn.Body, 409, nserr.NamespaceNotEmpty, "n1$p", "protected")
		untouched(t, mode)
	}
	// ExistOk replaces nothing: protection does not stand in its way.
	existOk := "exist_ok"
	cr, err := spec.CreateTableWithBodyWithResponse(ctx, "n1$t9", &nsclient.CreateTableParams{Mode: &existOk},
		"application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 1)))
	assert.NilError(t, err)
	expect(t, cr.StatusCode(), cr.Body, 200, 0)
	untouched(t, "exist_ok")

	// force overrides protection, as on a drop.
	mode := "overwrite"
	cr, err = spec.CreateTableWithBodyWithResponse(ctx, "n1$t9", &nsclient.CreateTableParams{Mode: &mode},
		"application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 1)), force("true"))
	assert.NilError(t, err)
	expect(t, cr.StatusCode(), cr.Body, 200, 0)
	cn, err := spec.CreateNamespaceWithResponse(ctx, "n1$p", nil, nsclient.CreateNamespaceRequest{Mode: &mode}, force("true"))
	assert.NilError(t, err)
	expect(t, cn.StatusCode(), cn.Body, 200, 0)
	cn, err = spec.CreateNamespaceWithResponse(ctx, "n1$p", nil, nsclient.CreateNamespaceRequest{Mode: &mode}, force("maybe"))
	assert.NilError(t, err)
	expect(t, cn.StatusCode(), cn.Body, 400, nserr.InvalidInput, "force")
}
