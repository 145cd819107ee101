package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/maintenance"
	"github.com/lancecat/lancecat/registry"
)

func (e *governedEnv) createTable(t *testing.T, id string, rows int) {
	t.Helper()
	r, err := e.spec.CreateTableWithBodyWithResponse(context.Background(), id, nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, rows)))
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
}

// TestRootTableGovernance (issue 29, item 10): a table of the root namespace (an id of one part,
// as the remote-mode quickstart creates) is a table like any other on the control plane:
// protection, maintenance runs and plans, tasks, the trash and its undrop.
func TestRootTableGovernance(t *testing.T) {
	e := newGovernedEnv(t, withTrash(7*24*time.Hour), withMaintenance())
	ctx := context.Background()
	e.createTable(t, "orders", 3)

	d, err := e.anyone.DescribeTableProtectionWithResponse(ctx, "orders", nil)
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	assert.Equal(t, d.JSON200.Protected, false)

	// A plan of an unprotected root table does not call it protected.
	plan, err := e.anyone.RunTableMaintenanceWithResponse(ctx, "orders", nil, controlclient.MaintenanceRunRequest{DryRun: ptr(true)})
	assert.NilError(t, err)
	expect(t, plan.StatusCode(), plan.Body, 200, 0)
	for _, s := range plan.JSON200.Steps {
		assert.Assert(t, s.Status != maintenance.StatusRefused, "step %s refused: %v", s.Step, s.Reason)
	}

	p, err := e.anyone.SetTableProtectionWithResponse(ctx, "orders", nil, controlclient.SetProtectionRequest{Protected: true})
	assert.NilError(t, err)
	expect(t, p.StatusCode(), p.Body, 200, 0)
	d, err = e.anyone.DescribeTableProtectionWithResponse(ctx, "orders", nil)
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	assert.Equal(t, d.JSON200.Protected, true)

	// Protection holds on the spec doors, and the plan now says so.
	dr, err := e.spec.DropTableWithResponse(ctx, "orders", nil)
	assert.NilError(t, err)
	expect(t, dr.StatusCode(), dr.Body, 409, nserr.InvalidTableState, "orders", "protected")
	rn, err := e.spec.RenameTableWithResponse(ctx, "orders", nil, nsclient.RenameTableRequest{NewTableName: "orders2"})
	assert.NilError(t, err)
	expect(t, rn.StatusCode(), rn.Body, 409, nserr.InvalidTableState, "orders", "protected")
	plan, err = e.anyone.RunTableMaintenanceWithResponse(ctx, "orders", nil, controlclient.MaintenanceRunRequest{DryRun: ptr(true)})
	assert.NilError(t, err)
	expect(t, plan.StatusCode(), plan.Body, 200, 0)
	cleanup := plan.JSON200.Steps[len(plan.JSON200.Steps)-1]
	assert.Equal(t, string(cleanup.Status), maintenance.StatusRefused)
	assert.Assert(t, cleanup.Reason != nil && *cleanup.Reason == "the table is protected: cleanup removes versions", "%v", cleanup.Reason)

	p, err = e.anyone.SetTableProtectionWithResponse(ctx, "orders", nil, controlclient.SetProtectionRequest{Protected: false})
	assert.NilError(t, err)
	expect(t, p.StatusCode(), p.Body, 200, 0)

	run, err := e.anyone.RunTableMaintenanceWithResponse(ctx, "orders", nil, controlclient.MaintenanceRunRequest{})
	assert.NilError(t, err)
	expect(t, run.StatusCode(), run.Body, 200, 0)
	tasks, err := e.anyone.ListTableTasksWithResponse(ctx, "orders", nil)
	assert.NilError(t, err)
	expect(t, tasks.StatusCode(), tasks.Body, 200, 0)
	assert.Equal(t, len(tasks.JSON200.Tasks), 1, string(tasks.Body))
	assert.DeepEqual(t, tasks.JSON200.Tasks[0].Id, []string{"orders"})

	pol, err := e.anyone.SetTablePolicyWithResponse(ctx, "orders", nil, controlclient.Policy{RetentionDays: ptr(9)})
	setPolicy(t, 200, pol, err)

	// A drop is recoverable, as in a namespace: the tasks show the deadline, the undrop gives
	// the table back.
	dr, err = e.spec.DropTableWithResponse(ctx, "orders", nil)
	assert.NilError(t, err)
	expect(t, dr.StatusCode(), dr.Body, 200, 0)
	_, err = e.catalog.DescribeTable(ctx, ident.ID{"orders"})
	assert.Assert(t, nserr.Is(err, nserr.ErrTableNotFound), "%v", err)
	tasks, err = e.anyone.ListTableTasksWithResponse(ctx, "orders", nil)
	assert.NilError(t, err)
	expect(t, tasks.StatusCode(), tasks.Body, 200, 0)
	assert.Assert(t, slices.ContainsFunc(tasks.JSON200.Tasks, func(k controlclient.Task) bool { return k.Kind == registry.KindTable && k.ExpiresAt != nil }), string(tasks.Body))
	cr, err := e.spec.CreateTableWithBodyWithResponse(ctx, "orders", nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 1)))
	assert.NilError(t, err)
	expect(t, cr.StatusCode(), cr.Body, 409, nserr.TableAlreadyExists, "undrop")
	u, err := e.anyone.UndropTableWithResponse(ctx, "orders", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 200, 0)
	n, err := e.spec.CountTableRowsWithResponse(ctx, "orders", nil, nsclient.CountTableRowsRequest{})
	assert.NilError(t, err)
	expect(t, n.StatusCode(), n.Body, 200, 0)
	assert.Equal(t, *n.JSON200, int64(3))

	ns, err := e.anyone.ListNamespaceTasksWithResponse(ctx, "$", nil)
	assert.NilError(t, err)
	assert.Equal(t, ns.StatusCode(), http.StatusBadRequest, "the root namespace is the catalog: %s", ns.Body)
}

// TestRenameToTheRootNamespace (issue 29, item 10): new_namespace_id [] moves a table to the root
// namespace, and back; its protection and policy records move with it.
func TestRenameToTheRootNamespace(t *testing.T) {
	e := newGovernedEnv(t, withTrash(7*24*time.Hour), withMaintenance())
	ctx := context.Background()
	ns, err := e.spec.CreateNamespaceWithResponse(ctx, "a", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, ns.StatusCode(), ns.Body, 200, 0)
	e.createTable(t, "a$t", 2)
	pol, err := e.anyone.SetTablePolicyWithResponse(ctx, "a$t", nil, controlclient.Policy{RetentionDays: ptr(4)})
	setPolicy(t, 200, pol, err)

	r, err := e.spec.RenameTableWithResponse(ctx, "a$t", nil, nsclient.RenameTableRequest{NewTableName: "t", NewNamespaceId: &[]string{}})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	assert.DeepEqual(t, listed(t, e.spec, "$"), []string{"t"})
	assert.DeepEqual(t, listed(t, e.spec, "a"), []string{})
	dp, err := e.anyone.DescribeTablePolicyWithResponse(ctx, "t", nil)
	assert.NilError(t, err)
	expect(t, dp.StatusCode(), dp.Body, 200, 0)
	assert.Equal(t, *dp.JSON200.Policy.RetentionDays, 4, string(dp.Body))

	r, err = e.spec.RenameTableWithResponse(ctx, "t", nil, nsclient.RenameTableRequest{NewTableName: "back", NewNamespaceId: &[]string{"a"}})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	assert.DeepEqual(t, listed(t, e.spec, "$"), []string{})
	assert.DeepEqual(t, listed(t, e.spec, "a"), []string{"back"})
	dp, err = e.anyone.DescribeTablePolicyWithResponse(ctx, "a$back", nil)
	assert.NilError(t, err)
	expect(t, dp.StatusCode(), dp.Body, 200, 0)
	assert.Equal(t, *dp.JSON200.Policy.RetentionDays, 4, string(dp.Body))
}

// remoteAgent makes a typed client's request one of a LanceDB remote-mode client (its user agent).
func remoteAgent(_ context.Context, r *http.Request) error {
	r.Header.Set("User-Agent", "LanceDB-Node-Client/0.39.0")
	return nil
}

// TestRemoteRootTables (issue 29, item 10): a remote-mode connection's tableNames() (GET
// /v1/table/) lists the root namespace's own tables, not ns$t of the namespaces below it (the
// spec's ListAllTables still does); its rename without new_namespace, which is how the remote
// client sends newNamespacePath [], moves the table to the root.
func TestRemoteRootTables(t *testing.T) {
	e := newGovernedEnv(t, withTrash(7*24*time.Hour), withMaintenance())
	ctx := context.Background()
	ns, err := e.spec.CreateNamespaceWithResponse(ctx, "rns", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, ns.StatusCode(), ns.Body, 200, 0)
	for _, id := range []string{"rns$inner", "rns$stays", "b", "a"} {
		e.createTable(t, id, 1)
	}

	remoteNames := func(t *testing.T, query string) nsclient.ListTablesResponse {
		t.Helper()
		resp, err := http.Get(e.url + "/v1/table/" + query) // the trailing slash marks the remote dialect
		assert.NilError(t, err)
		defer resp.Body.Close()
		var out nsclient.ListTablesResponse
		assert.Equal(t, resp.StatusCode, http.StatusOK)
		assert.NilError(t, json.NewDecoder(resp.Body).Decode(&out))
		return out
	}
	assert.DeepEqual(t, remoteNames(t, "").Tables, []string{"a", "b"})
	page := remoteNames(t, "?limit=1")
	assert.DeepEqual(t, page.Tables, []string{"a"})
	assert.DeepEqual(t, remoteNames(t, "?limit=1&page_token=a").Tables, []string{"b"})
	all, err := e.spec.ListAllTablesWithResponse(ctx, nil)
	assert.NilError(t, err)
	expect(t, all.StatusCode(), all.Body, 200, 0)
	assert.DeepEqual(t, all.JSON200.Tables, []string{"a", "b", "rns$inner", "rns$stays"})

	remote, err := nsclient.NewClientWithResponses(e.url, nsclient.WithRequestEditorFn(remoteAgent))
	assert.NilError(t, err)
	r, err := remote.RenameTableWithResponse(ctx, "rns$inner", nil, nsclient.RenameTableRequest{NewTableName: "moved"})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	assert.DeepEqual(t, remoteNames(t, "").Tables, []string{"a", "b", "moved"})
	assert.DeepEqual(t, listed(t, e.spec, "rns"), []string{"stays"})

	// A spec client's rename without new_namespace_id keeps the namespace.
	r, err = e.spec.RenameTableWithResponse(ctx, "rns$stays", nil, nsclient.RenameTableRequest{NewTableName: "still"})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	assert.DeepEqual(t, listed(t, e.spec, "rns"), []string{"still"})
}
