package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
)

// warehouseEnv is a server wired as Run wires it (authorization off, local roots) with a
// project p and a warehouse w.
func warehouseEnv(t *testing.T, cfg Config) (*controlclient.ClientWithResponses, *nsclient.ClientWithResponses, string) {
	t.Helper()
	e := newSpecEnv(t, cfg)
	ctl, err := controlclient.NewClientWithResponses(e.url)
	assert.NilError(t, err)
	ctx := context.Background()
	pr, err := ctl.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p"})
	assert.NilError(t, err)
	expect(t, pr.StatusCode(), pr.Body, 200, 0)
	wr, err := ctl.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: "w", Project: "p"})
	assert.NilError(t, err)
	expect(t, wr.StatusCode(), wr.Body, 200, 0)
	return ctl, e.as(t, ""), wr.JSON200.RootUri
}

func bindNamespace(t *testing.T, ctl *controlclient.ClientWithResponses, warehouse, name string, status int, code nserr.Code, contains ...string) {
	t.Helper()
	r, err := ctl.CreateWarehouseNamespaceWithResponse(context.Background(), warehouse, controlclient.CreateWarehouseNamespaceRequest{
		Namespace: name, Properties: &map[string]string{"owner": "sales-team"},
	})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, status, code, contains...)
}

// TestWarehouseNamespacesAreRouted: a namespace made in a warehouse lives in the warehouse's
// root, and so does everything created under it; the catalog root never sees it.
func TestWarehouseNamespacesAreRouted(t *testing.T) {
	cfg := specConfig(t)
	ctl, spec, whRoot := warehouseEnv(t, cfg)
	ctx := context.Background()

	bindNamespace(t, ctl, "w", "sales", 200, 0)
	bindNamespace(t, ctl, "w", "sales", 409, nserr.NamespaceAlreadyExists, "already exists in warehouse")
	bindNamespace(t, ctl, "nope", "other", 404, nserr.NamespaceNotFound, "nope")
	bindNamespace(t, ctl, "w", "", 400, nserr.InvalidInput)
	bindNamespace(t, ctl, "w", "a$b", 400, nserr.InvalidInput)

	// A name the catalog root already has cannot be bound.
	cr, err := spec.CreateNamespaceWithResponse(ctx, "plain", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cr.StatusCode(), cr.Body, 200, 0)
	bindNamespace(t, ctl, "w", "plain", 409, nserr.NamespaceAlreadyExists, "catalog's own root")

	list, err := ctl.ListWarehouseNamespacesWithResponse(ctx, "w")
	assert.NilError(t, err)
	expect(t, list.StatusCode(), list.Body, 200, 0)
	assert.DeepEqual(t, list.JSON200.Namespaces, []controlclient.WarehouseNamespace{{Namespace: "sales", WarehouseId: "w", RootUri: whRoot}})

	// The spec doors reach it: describe shows its properties, nested namespaces and tables go
	// to the warehouse's root.
	d, err := spec.DescribeNamespaceWithResponse(ctx, "sales", nil, nsclient.DescribeNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	assert.Equal(t, (*d.JSON200.Properties)["owner"], "sales-team")
	cr, err = spec.CreateNamespaceWithResponse(ctx, "sales$eu", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cr.StatusCode(), cr.Body, 200, 0)
	tr, err := spec.CreateTableWithBodyWithResponse(ctx, "sales$eu$orders", nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 3)))
	assert.NilError(t, err)
	expect(t, tr.StatusCode(), tr.Body, 200, 0)
	dt, err := spec.DescribeTableWithResponse(ctx, "sales$eu$orders", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, dt.StatusCode(), dt.Body, 200, 0)
	assert.Assert(t, dt.JSON200.Location != nil)
	loc := *dt.JSON200.Location
	assert.Assert(t, len(loc) > len(whRoot) && loc[:len(whRoot)] == whRoot, "table location %s is under the warehouse root %s", loc, whRoot)
	_, err = os.Stat(filepath.Join(whRoot, "__manifest"))
	assert.NilError(t, err, "the warehouse root is a directory namespace of its own")
	catalogFiles := tree(t, cfg.Root)
	for _, f := range catalogFiles {
		assert.Assert(t, !bytes.Contains([]byte(f), []byte("orders")), "catalog root holds %s", f)
	}

	// Listings merge the catalog root's top-level namespaces with the bound ones.
	ln, err := spec.ListNamespacesWithResponse(ctx, "$", &nsclient.ListNamespacesParams{})
	assert.NilError(t, err)
	expect(t, ln.StatusCode(), ln.Body, 200, 0)
	assert.DeepEqual(t, ln.JSON200.Namespaces, []string{"plain", "sales"})
	for _, limit := range []nsclient.Limit{1, 2} {
		var all []string
		token := (*string)(nil)
		for range 5 {
			page, err := spec.ListNamespacesWithResponse(ctx, "$", &nsclient.ListNamespacesParams{Limit: &limit, PageToken: token})
			assert.NilError(t, err)
			expect(t, page.StatusCode(), page.Body, 200, 0)
			all = append(all, page.JSON200.Namespaces...)
			token = page.JSON200.PageToken
			if token == nil || *token == "" {
				break
			}
		}
		assert.DeepEqual(t, all, []string{"plain", "sales"})
	}
	at, err := spec.ListAllTablesWithResponse(ctx, &nsclient.ListAllTablesParams{})
	assert.NilError(t, err)
	expect(t, at.StatusCode(), at.Body, 200, 0)
	assert.Assert(t, slices.Contains(at.JSON200.Tables, "sales$eu$orders"), "%v", at.JSON200.Tables)

	// A rename never moves bytes between roots.
	rn, err := spec.RenameTableWithResponse(ctx, "sales$eu$orders", nil, nsclient.RenameTableRequest{NewNamespaceId: &[]string{"plain"}, NewTableName: "orders"})
	assert.NilError(t, err)
	expect(t, rn.StatusCode(), rn.Body, 400, nserr.InvalidInput, "different warehouses")

	// Quarantine: every operation on the namespace is 403 while its warehouse is deactivated,
	// the catalog root's namespaces are unaffected, and activation restores.
	dr, err := ctl.DeactivateWarehouseWithResponse(ctx, "w")
	assert.NilError(t, err)
	expect(t, dr.StatusCode(), dr.Body, 200, 0)
	for name, call := range map[string]func() (int, []byte){
		"describe namespace": func() (int, []byte) {
			r, err := spec.DescribeNamespaceWithResponse(ctx, "sales", nil, nsclient.DescribeNamespaceRequest{})
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
		"describe table": func() (int, []byte) {
			r, err := spec.DescribeTableWithResponse(ctx, "sales$eu$orders", nil, nsclient.DescribeTableRequest{})
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
		"list tables": func() (int, []byte) {
			r, err := spec.ListTablesWithResponse(ctx, "sales$eu", nil)
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
		"drop table": func() (int, []byte) {
			r, err := spec.DropTableWithResponse(ctx, "sales$eu$orders", nil)
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
		"create namespace": func() (int, []byte) {
			r, err := spec.CreateNamespaceWithResponse(ctx, "sales$us", nil, nsclient.CreateNamespaceRequest{})
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
		"bind another": func() (int, []byte) {
			r, err := ctl.CreateWarehouseNamespaceWithResponse(ctx, "w", controlclient.CreateWarehouseNamespaceRequest{Namespace: "hr"})
			assert.NilError(t, err)
			return r.StatusCode(), r.Body
		},
	} {
		status, body := call()
		t.Run("quarantined "+name, func(t *testing.T) { expect(t, status, body, 403, nserr.PermissionDenied, "deactivated") })
	}
	pd, err := spec.DescribeNamespaceWithResponse(ctx, "plain", nil, nsclient.DescribeNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, pd.StatusCode(), pd.Body, 200, 0)
	at, err = spec.ListAllTablesWithResponse(ctx, &nsclient.ListAllTablesParams{})
	assert.NilError(t, err)
	expect(t, at.StatusCode(), at.Body, 200, 0)
	assert.Assert(t, !slices.Contains(at.JSON200.Tables, "sales$eu$orders"), "a quarantined warehouse's tables are not listed")
	ar, err := ctl.ActivateWarehouseWithResponse(ctx, "w")
	assert.NilError(t, err)
	expect(t, ar.StatusCode(), ar.Body, 200, 0)
	dt, err = spec.DescribeTableWithResponse(ctx, "sales$eu$orders", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, dt.StatusCode(), dt.Body, 200, 0)

	// A warehouse holding a namespace refuses a plain delete and names it; a cascade refuses
	// while the namespace holds anything, and succeeds once it is empty.
	del, err := ctl.DeleteWarehouseWithResponse(ctx, "w", &controlclient.DeleteWarehouseParams{})
	assert.NilError(t, err)
	expect(t, del.StatusCode(), del.Body, 409, nserr.NamespaceNotEmpty, "sales")
	del, err = ctl.DeleteWarehouseWithResponse(ctx, "w", &controlclient.DeleteWarehouseParams{Cascade: ptr(true)})
	assert.NilError(t, err)
	expect(t, del.StatusCode(), del.Body, 409, nserr.NamespaceNotEmpty, "sales")
	dropT, err := spec.DropTableWithResponse(ctx, "sales$eu$orders", nil)
	assert.NilError(t, err)
	expect(t, dropT.StatusCode(), dropT.Body, 200, 0)
	dropN, err := spec.DropNamespaceWithResponse(ctx, "sales$eu", nil, nsclient.DropNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, dropN.StatusCode(), dropN.Body, 200, 0)
	del, err = ctl.DeleteWarehouseWithResponse(ctx, "w", &controlclient.DeleteWarehouseParams{Cascade: ptr(true)})
	assert.NilError(t, err)
	expect(t, del.StatusCode(), del.Body, 200, 0)
	assert.DeepEqual(t, *del.JSON200.NamespacesDropped, []string{"sales"})
	gone, err := spec.NamespaceExistsWithResponse(ctx, "sales", nil, nsclient.NamespaceExistsRequest{})
	assert.NilError(t, err)
	expect(t, gone.StatusCode(), gone.Body, 404, nserr.NamespaceNotFound)
}

// TestDroppingABoundNamespaceUnbindsIt: the spec's drop of a bound top-level namespace removes
// its binding, so the name is free again (in the catalog root too).
func TestDroppingABoundNamespaceUnbindsIt(t *testing.T) {
	ctl, spec, _ := warehouseEnv(t, specConfig(t))
	ctx := context.Background()
	bindNamespace(t, ctl, "w", "sales", 200, 0)
	dr, err := spec.DropNamespaceWithResponse(ctx, "sales", nil, nsclient.DropNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, dr.StatusCode(), dr.Body, 200, 0)
	list, err := ctl.ListWarehouseNamespacesWithResponse(ctx, "w")
	assert.NilError(t, err)
	expect(t, list.StatusCode(), list.Body, 200, 0)
	assert.Equal(t, len(list.JSON200.Namespaces), 0)
	cr, err := spec.CreateNamespaceWithResponse(ctx, "sales", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cr.StatusCode(), cr.Body, 200, 0)
	ev := eventTypes(t, ctl)
	assert.Assert(t, slices.Contains(ev, "warehouse_bound") && slices.Contains(ev, "warehouse_unbound"), "%v", ev)
}

// TestRequireWarehouseNamespaces: with --require-warehouse-namespaces the spec's create refuses
// top-level namespaces and names the warehouse door; nested ones are fine.
func TestRequireWarehouseNamespaces(t *testing.T) {
	cfg := specConfig(t)
	cfg.Governance.RequireWarehouseNamespaces = true
	ctl, spec, _ := warehouseEnv(t, cfg)
	ctx := context.Background()
	cr, err := spec.CreateNamespaceWithResponse(ctx, "loose", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cr.StatusCode(), cr.Body, 400, nserr.InvalidInput, "POST /v1/warehouses/{warehouse_id}/namespaces")
	bindNamespace(t, ctl, "w", "sales", 200, 0)
	cr, err = spec.CreateNamespaceWithResponse(ctx, "sales$eu", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cr.StatusCode(), cr.Body, 200, 0)
}
