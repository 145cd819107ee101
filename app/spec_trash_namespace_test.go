package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/maintenance"
	"github.com/lancecat/lancecat/registry"
)

func namespaceTrashKey(id ...string) string {
	return registry.ObjectKey(registry.TrashPrefix, registry.KindNamespace, id)
}

func tableTrashKey(id ...string) string {
	return registry.ObjectKey(registry.TrashPrefix, registry.KindTable, id)
}

// nsTrashFixture makes namespaces a (with properties) and a$b, and tables a$t1 (5 rows) and
// a$b$t2 (3 rows) with data over HTTP, plus a declared table a$b$d; it answers every table's
// directory on disk by id.
func nsTrashFixture(t *testing.T, e *governedEnv, spec *nsclient.ClientWithResponses) map[string]string {
	t.Helper()
	ctx := context.Background()
	for _, ns := range []struct {
		id    string
		props map[string]string
	}{{"a", map[string]string{"owner": "team-a"}}, {"a$b", map[string]string{"tier": "gold"}}} {
		r, err := spec.CreateNamespaceWithResponse(ctx, ns.id, nil, nsclient.CreateNamespaceRequest{Properties: &ns.props})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
	}
	dirs := map[string]string{}
	for _, tbl := range []struct {
		id   string
		rows int
	}{{"a$t1", 5}, {"a$b$t2", 3}} {
		cr, err := spec.CreateTableWithBodyWithResponse(ctx, tbl.id, nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, tbl.rows)))
		assert.NilError(t, err)
		expect(t, cr.StatusCode(), cr.Body, 200, 0)
	}
	dc, err := spec.DeclareTableWithResponse(ctx, "a$b$d", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dc.StatusCode(), dc.Body, 200, 0)
	for _, id := range [][]string{{"a", "t1"}, {"a", "b", "t2"}} {
		tbl, err := e.catalog.DescribeTable(ctx, id)
		assert.NilError(t, err)
		dir := filepath.Join(e.root, filepath.FromSlash(tbl.Location))
		_, err = os.Stat(dir)
		assert.NilError(t, err, "the table has bytes on disk")
		dirs[id[len(id)-1]] = dir
	}
	return dirs
}

func cascadeDrop(t *testing.T, spec *nsclient.ClientWithResponses, id string, editors ...nsclient.RequestEditorFn) *nsclient.DropNamespaceResponse3 {
	t.Helper()
	cascade := "Cascade"
	d, err := spec.DropNamespaceWithResponse(context.Background(), id, nil, nsclient.DropNamespaceRequest{Behavior: &cascade}, editors...)
	assert.NilError(t, err)
	return d
}

func countRows(t *testing.T, spec *nsclient.ClientWithResponses, id string) int64 {
	t.Helper()
	r, err := spec.GetTableStatsWithResponse(context.Background(), id, nil, nsclient.GetTableStatsRequest{})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	return r.JSON200.NumRows
}

func namespaceExists(t *testing.T, spec *nsclient.ClientWithResponses, id string) int {
	t.Helper()
	r, err := spec.NamespaceExistsWithResponse(context.Background(), id, nil, nsclient.NamespaceExistsRequest{})
	assert.NilError(t, err)
	return r.StatusCode()
}

func allTables(t *testing.T, spec *nsclient.ClientWithResponses) []string {
	t.Helper()
	r, err := spec.ListAllTablesWithResponse(context.Background(), &nsclient.ListAllTablesParams{})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	return r.JSON200.Tables
}

// TestRecoverableNamespaceDrop: a cascade drop with a grace period detaches the subtree into the
// trash (bytes kept, ids held), and the undrop rebuilds it where it was.
func TestRecoverableNamespaceDrop(t *testing.T) {
	e, spec := newTrashEnv(t, 7*24*time.Hour)
	c, ctx := e.anyone, context.Background()
	dirs := nsTrashFixture(t, e, spec)
	tableKeys := map[string][]string{"a$t1": {"a", "t1"}, "a$b$t2": {"a", "b", "t2"}, "a$b$d": {"a", "b", "d"}}
	locations := map[string]string{}
	for name, id := range tableKeys {
		tbl, err := e.catalog.DescribeTable(ctx, id)
		assert.NilError(t, err)
		locations[name] = tbl.Location
	}
	pr, err := c.SetNamespaceProtectionWithResponse(ctx, "a$b", nil, controlclient.SetProtectionRequest{Protected: true})
	assert.NilError(t, err)
	expect(t, pr.StatusCode(), pr.Body, 200, 0)

	u, err := c.UndropNamespaceWithResponse(ctx, "a", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 404, nserr.NamespaceNotFound, "not in the trash")

	// Protection still guards the subtree; force passes it.
	d := cascadeDrop(t, spec, "a")
	expect(t, d.StatusCode(), d.Body, 409, nserr.NamespaceNotEmpty, "protected")
	d = cascadeDrop(t, spec, "a", purge("maybe"), force("true"))
	expect(t, d.StatusCode(), d.Body, 400, nserr.InvalidInput, "purge")
	d = cascadeDrop(t, spec, "a", force("true"))
	expect(t, d.StatusCode(), d.Body, 200, 0)
	assert.DeepEqual(t, *d.JSON200.Properties, map[string]string{"owner": "team-a"})

	// Everything is gone from the catalog, every byte is still there, every object is in the trash.
	assert.Equal(t, namespaceExists(t, spec, "a"), 404)
	assert.Equal(t, namespaceExists(t, spec, "a$b"), 404)
	assert.DeepEqual(t, allTables(t, spec), []string{})
	for _, dir := range dirs {
		_, err := os.Stat(dir)
		assert.NilError(t, err, "a recoverable drop keeps the bytes")
	}
	for _, id := range [][]string{{"a"}, {"a", "b"}} {
		assert.Assert(t, hasRecord[registry.Trash](t, e.store, namespaceTrashKey(id...)), "namespace %v is in the trash", id)
	}
	for _, id := range tableKeys {
		assert.Assert(t, hasRecord[registry.Trash](t, e.store, tableTrashKey(id...)), "table %v is in the trash", id)
	}
	assert.Assert(t, !hasRecord[registry.Protection](t, e.store, protectionKey(registry.KindNamespace, "a", "b")), "protection is cleared")
	tasks, err := c.ListTableTasksWithResponse(ctx, "a$b$t2", nil)
	assert.NilError(t, err)
	expect(t, tasks.StatusCode(), tasks.Body, 200, 0)
	assert.Equal(t, len(tasks.JSON200.Tasks), 1)

	// The trashed ids are held: a namespace create there, or a table create under it, names the
	// undrop route.
	for _, tc := range []struct{ id, route string }{{"a", "POST /v1/namespace/a/undrop"}, {"a$b", "POST /v1/namespace/a%24b/undrop"}} {
		cn, err := spec.CreateNamespaceWithResponse(ctx, tc.id, nil, nsclient.CreateNamespaceRequest{})
		assert.NilError(t, err)
		expect(t, cn.StatusCode(), cn.Body, 409, nserr.NamespaceAlreadyExists, tc.route)
	}
	dc, err := spec.DeclareTableWithResponse(ctx, "a$b$new", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dc.StatusCode(), dc.Body, 409, nserr.NamespaceAlreadyExists, "POST /v1/namespace/a%24b/undrop")
	dc, err = spec.DeclareTableWithResponse(ctx, "a$t1", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dc.StatusCode(), dc.Body, 409, nserr.TableAlreadyExists, "POST /v1/table/a%24t1/undrop")

	// Undrop rebuilds every namespace with its properties and every table at its location.
	u, err = c.UndropNamespaceWithResponse(ctx, "a", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 200, 0)
	assert.DeepEqual(t, u.JSON200.Id, []string{"a"})
	assert.DeepEqual(t, *u.JSON200.Namespaces, []string{"a", "a$b"})
	got := slices.Clone(*u.JSON200.Tables)
	slices.Sort(got)
	assert.DeepEqual(t, got, []string{"a$b$d", "a$b$t2", "a$t1"})
	for id, want := range map[string]map[string]string{"a": {"owner": "team-a"}, "a$b": {"tier": "gold"}} {
		dn, err := spec.DescribeNamespaceWithResponse(ctx, id, nil, nsclient.DescribeNamespaceRequest{})
		assert.NilError(t, err)
		expect(t, dn.StatusCode(), dn.Body, 200, 0)
		assert.DeepEqual(t, *dn.JSON200.Properties, want)
	}
	for name, id := range tableKeys {
		tbl, err := e.catalog.DescribeTable(ctx, id)
		assert.NilError(t, err)
		assert.Equal(t, tbl.Location, locations[name], "table %s is back at its location", name)
		assert.Assert(t, !hasRecord[registry.Trash](t, e.store, tableTrashKey(id...)))
	}
	assert.Equal(t, countRows(t, spec, "a$t1"), int64(5))
	assert.Equal(t, countRows(t, spec, "a$b$t2"), int64(3))
	for _, id := range [][]string{{"a"}, {"a", "b"}} {
		assert.Assert(t, !hasRecord[registry.Trash](t, e.store, namespaceTrashKey(id...)), "the undrop cleared the record of %v", id)
	}
	assert.Assert(t, slices.Contains(eventTypes(t, c), governance.EventNamespaceUndropped))

	u, err = c.UndropNamespaceWithResponse(ctx, "a", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 404, nserr.NamespaceNotFound)

	// purge=true destroys now: no records, no bytes.
	d = cascadeDrop(t, spec, "a", purge("true"))
	expect(t, d.StatusCode(), d.Body, 200, 0)
	for _, dir := range dirs {
		_, err := os.Stat(dir)
		assert.Assert(t, os.IsNotExist(err), "purge deleted the bytes: %v", err)
	}
	assert.Assert(t, !hasRecord[registry.Trash](t, e.store, namespaceTrashKey("a")))
	u, err = c.UndropNamespaceWithResponse(ctx, "a", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 404, nserr.NamespaceNotFound)
}

// TestNamespaceDropNotTrashed: the drops that destroy as before, with or without a grace period.
func TestNamespaceDropNotTrashed(t *testing.T) {
	t.Run("grace 0 destroys", func(t *testing.T) {
		e, spec := newTrashEnv(t, 0)
		dirs := nsTrashFixture(t, e, spec)
		d := cascadeDrop(t, spec, "a")
		expect(t, d.StatusCode(), d.Body, 200, 0)
		for _, dir := range dirs {
			_, err := os.Stat(dir)
			assert.Assert(t, os.IsNotExist(err), "grace 0: the drop deleted the bytes: %v", err)
		}
		assert.Assert(t, !hasRecord[registry.Trash](t, e.store, namespaceTrashKey("a")))
		u, err := e.anyone.UndropNamespaceWithResponse(context.Background(), "a", nil)
		assert.NilError(t, err)
		expect(t, u.StatusCode(), u.Body, 404, nserr.NamespaceNotFound)
	})
	t.Run("Restrict is never trashed", func(t *testing.T) {
		e, spec := newTrashEnv(t, 7*24*time.Hour)
		ctx := context.Background()
		cn, err := spec.CreateNamespaceWithResponse(ctx, "r", nil, nsclient.CreateNamespaceRequest{})
		assert.NilError(t, err)
		expect(t, cn.StatusCode(), cn.Body, 200, 0)
		d, err := spec.DropNamespaceWithResponse(ctx, "r", nil, nsclient.DropNamespaceRequest{})
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 200, 0)
		assert.Assert(t, !hasRecord[registry.Trash](t, e.store, namespaceTrashKey("r")))
		cn, err = spec.CreateNamespaceWithResponse(ctx, "r", nil, nsclient.CreateNamespaceRequest{})
		assert.NilError(t, err)
		expect(t, cn.StatusCode(), cn.Body, 200, 0)
	})
	t.Run("Skip over a missing namespace", func(t *testing.T) {
		_, spec := newTrashEnv(t, 7*24*time.Hour)
		skip := "Skip"
		cascade := "Cascade"
		d, err := spec.DropNamespaceWithResponse(context.Background(), "nope", nil, nsclient.DropNamespaceRequest{Mode: &skip, Behavior: &cascade})
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 200, 0)
		d = cascadeDrop(t, spec, "nope")
		expect(t, d.StatusCode(), d.Body, 404, nserr.NamespaceNotFound)
	})
}

// TestNamespaceUndropResumes: an undrop finishes over what an earlier, interrupted one (or
// someone else) already put back.
func TestNamespaceUndropResumes(t *testing.T) {
	e, spec := newTrashEnv(t, 7*24*time.Hour)
	c, ctx := e.anyone, context.Background()
	nsTrashFixture(t, e, spec)
	tbl, err := e.catalog.DescribeTable(ctx, []string{"a", "t1"})
	assert.NilError(t, err)
	d := cascadeDrop(t, spec, "a")
	expect(t, d.StatusCode(), d.Body, 200, 0)

	// As if an undrop had stopped after the namespaces and the first table.
	_, err = e.catalog.CreateNamespace(ctx, []string{"a"}, nil, "")
	assert.NilError(t, err)
	_, err = e.catalog.CreateNamespace(ctx, []string{"a", "b"}, map[string]string{"tier": "gold"}, "")
	assert.NilError(t, err)
	_, err = e.catalog.RegisterTable(ctx, []string{"a", "t1"}, tbl.Location, "", nil)
	assert.NilError(t, err)

	u, err := c.UndropNamespaceWithResponse(ctx, "a", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 200, 0)
	assert.Equal(t, countRows(t, spec, "a$t1"), int64(5))
	assert.Equal(t, countRows(t, spec, "a$b$t2"), int64(3))
	for _, key := range []string{namespaceTrashKey("a"), namespaceTrashKey("a", "b"), tableTrashKey("a", "t1"), tableTrashKey("a", "b", "t2")} {
		assert.Assert(t, !hasRecord[registry.Trash](t, e.store, key))
	}
}

// TestNamespaceUndropBinding: a top-level namespace's trash record carries its warehouse binding,
// and the undrop binds it again, only into an active warehouse and never over another binding.
func TestNamespaceUndropBinding(t *testing.T) {
	binding := registry.Binding{TopNamespace: "a", WarehouseID: "wh", RootURI: "file:///somewhere/wh"}
	warehouse := registry.Warehouse{ID: "wh", Project: "p", Bucket: "wh", RootURI: binding.RootURI, CreatedAt: time.Now().UTC()}
	setup := func(t *testing.T) (*governedEnv, *controlclient.ClientWithResponses) {
		e, spec := newTrashEnv(t, 7*24*time.Hour)
		ctx := context.Background()
		assert.NilError(t, registry.Put(ctx, e.store, registry.WarehouseKey("wh"), warehouse))
		assert.NilError(t, registry.Put(ctx, e.store, registry.BindingKey("a"), binding))
		nsTrashFixture(t, e, spec)
		d := cascadeDrop(t, spec, "a")
		expect(t, d.StatusCode(), d.Body, 200, 0)
		rec, _, err := registry.Read[registry.Trash](ctx, e.store, namespaceTrashKey("a"))
		assert.NilError(t, err)
		assert.DeepEqual(t, rec.Binding, &binding)
		rec, _, err = registry.Read[registry.Trash](ctx, e.store, namespaceTrashKey("a", "b"))
		assert.NilError(t, err)
		assert.Assert(t, rec.Binding == nil, "only the top-level record carries the binding")
		// The routing catalog unbinds a dropped top-level namespace; this catalog does not route.
		assert.NilError(t, registry.Delete(ctx, e.store, registry.BindingKey("a")))
		return e, e.anyone
	}
	for _, tc := range []struct {
		name     string
		arrange  func(t *testing.T, e *governedEnv)
		status   int
		code     nserr.Code
		contains string
	}{
		{name: "rebinds", arrange: func(*testing.T, *governedEnv) {}, status: 200},
		{name: "converges on the same binding", status: 200, arrange: func(t *testing.T, e *governedEnv) {
			assert.NilError(t, registry.Put(context.Background(), e.store, registry.BindingKey("a"), binding))
		}},
		{name: "another binding", status: 409, code: nserr.NamespaceAlreadyExists, contains: "other", arrange: func(t *testing.T, e *governedEnv) {
			other := binding
			other.WarehouseID = "other"
			assert.NilError(t, registry.Put(context.Background(), e.store, registry.BindingKey("a"), other))
		}},
		{name: "warehouse deactivated", status: 403, code: nserr.PermissionDenied, contains: "deactivated", arrange: func(t *testing.T, e *governedEnv) {
			w := warehouse
			w.Status = registry.StatusDeactivated
			assert.NilError(t, registry.Put(context.Background(), e.store, registry.WarehouseKey("wh"), w))
		}},
		{name: "warehouse deleted", status: 403, code: nserr.PermissionDenied, contains: "no longer exists", arrange: func(t *testing.T, e *governedEnv) {
			assert.NilError(t, registry.Delete(context.Background(), e.store, registry.WarehouseKey("wh")))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, c := setup(t)
			tc.arrange(t, e)
			u, err := c.UndropNamespaceWithResponse(context.Background(), "a", nil)
			assert.NilError(t, err)
			if tc.status != 200 {
				expect(t, u.StatusCode(), u.Body, tc.status, tc.code, tc.contains)
				assert.Assert(t, hasRecord[registry.Trash](t, e.store, namespaceTrashKey("a")), "a refused undrop keeps the record")
				return
			}
			expect(t, u.StatusCode(), u.Body, 200, 0)
			got, _, err := registry.Read[registry.Binding](context.Background(), e.store, registry.BindingKey("a"))
			assert.NilError(t, err)
			assert.DeepEqual(t, got, binding)
		})
	}
}

// newFGATrashEnv is a server assembled as Run assembles it, with OpenFGA and a grace period.
func newFGATrashEnv(t *testing.T) *specEnv {
	t.Helper()
	cfg := fgaSpecConfig(t)
	cfg.Governance.TrashGraceDays = 7
	return newSpecEnv(t, cfg)
}

// TestRecoverableDropKeepsTuples: under a real OpenFGA, a recoverable drop (table or cascading
// namespace) keeps the tuples, so after the undrop the table's owner and its readers are who
// they were; a purging drop revokes them.
func TestRecoverableDropKeepsTuples(t *testing.T) {
	e := newFGATrashEnv(t)
	ctx := context.Background()
	alice := e.as(t, authz.User("alice"))
	bob := e.as(t, authz.User("bob"))
	key, _, err := e.keys.Create(ctx, authz.User("alice"), "test")
	assert.NilError(t, err)
	ctl := (&controlEnv{url: e.url}).client(t, key)
	fga := e.gov.authorizer

	// bob writes in ns (may create tables, does not own them by inheritance) and owns ns$t.
	cn, err := alice.CreateNamespaceWithResponse(ctx, "ns", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cn.StatusCode(), cn.Body, 200, 0)
	assert.NilError(t, fga.Grant(ctx, authz.User("bob").Subject(), "writer", authz.NamespaceObject([]string{"ns"})))
	dt, err := bob.DeclareTableWithResponse(ctx, "ns$t", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dt.StatusCode(), dt.Body, 200, 0)
	assert.NilError(t, fga.Grant(ctx, authz.User("carol").Subject(), "reader", authz.TableObject([]string{"ns", "t"})))
	owner := func() error {
		return fga.Check(ctx, authz.User("bob"), authz.TableDrop, authz.TableObject([]string{"ns", "t"}))
	}
	reader := func() error {
		return fga.Check(ctx, authz.User("carol"), authz.TableDescribe, authz.TableObject([]string{"ns", "t"}))
	}
	assert.NilError(t, owner())
	assert.NilError(t, reader())

	// A recoverable table drop by its owner keeps the tuples; the undrop gives it back to him.
	dr, err := bob.DropTableWithResponse(ctx, "ns$t", nil)
	assert.NilError(t, err)
	expect(t, dr.StatusCode(), dr.Body, 200, 0)
	assert.NilError(t, owner())
	u, err := ctl.UndropTableWithResponse(ctx, "ns$t", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 200, 0)
	d, err := bob.DescribeTableWithResponse(ctx, "ns$t", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	assert.NilError(t, owner())
	assert.NilError(t, reader())

	// A recoverable cascade keeps the subtree's tuples too.
	dn := cascadeDrop(t, alice, "ns")
	expect(t, dn.StatusCode(), dn.Body, 200, 0)
	assert.NilError(t, owner())
	un, err := ctl.UndropNamespaceWithResponse(ctx, "ns", nil)
	assert.NilError(t, err)
	expect(t, un.StatusCode(), un.Body, 200, 0)
	d, err = bob.DescribeTableWithResponse(ctx, "ns$t", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	assert.NilError(t, owner())
	assert.NilError(t, reader())

	// A purging drop revokes them.
	dr, err = bob.DropTableWithResponse(ctx, "ns$t", nil, purge("true"))
	assert.NilError(t, err)
	expect(t, dr.StatusCode(), dr.Body, 200, 0)
	assert.Equal(t, nserr.CodeOf(owner()), nserr.PermissionDenied)
	assert.Equal(t, nserr.CodeOf(reader()), nserr.PermissionDenied)
}

// TestRecycledIDStartsClean: a trashed table keeps its tuples until its record is purged, and a
// purge run by the operator command cannot revoke them (it does not talk to OpenFGA); a table
// made at that id afterwards must still start with only its creator's tuples.
func TestRecycledIDStartsClean(t *testing.T) {
	e := newFGATrashEnv(t)
	ctx := context.Background()
	alice, bob := e.as(t, authz.User("alice")), e.as(t, authz.User("bob"))
	fga := e.gov.authorizer
	cn, err := alice.CreateNamespaceWithResponse(ctx, "ns", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cn.StatusCode(), cn.Body, 200, 0)
	dt, err := alice.DeclareTableWithResponse(ctx, "ns$t", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dt.StatusCode(), dt.Body, 200, 0)
	assert.NilError(t, fga.Grant(ctx, authz.User("bob").Subject(), "reader", authz.TableObject([]string{"ns", "t"})))
	dr, err := alice.DropTableWithResponse(ctx, "ns$t", nil)
	assert.NilError(t, err)
	expect(t, dr.StatusCode(), dr.Body, 200, 0)
	// Past the deadline, the purge takes the record (and the id is free again) and, since issue 11
	// item 3, the table's grants with it.
	_, err = maintenance.PurgeTrash(ctx, e.gov.trash, maintenance.PurgeOptions{Now: time.Now().Add(8 * 24 * time.Hour)})
	assert.NilError(t, err)
	assert.Assert(t, errors.Is(fga.Check(ctx, authz.User("bob"), authz.TableDescribe, authz.TableObject([]string{"ns", "t"})), nserr.ErrPermissionDenied),
		"the purge revoked the old grant")
	// A grant left over anyway (a revocation still queued while OpenFGA was out of reach) must
	// not reach a new table at the id either: the create clears it.
	assert.NilError(t, fga.Grant(ctx, authz.User("bob").Subject(), "reader", authz.TableObject([]string{"ns", "t"})))
	dt, err = alice.DeclareTableWithResponse(ctx, "ns$t", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dt.StatusCode(), dt.Body, 200, 0)
	d, err := bob.DescribeTableWithResponse(ctx, "ns$t", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 403, nserr.PermissionDenied)
	d, err = alice.DescribeTableWithResponse(ctx, "ns$t", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
}

// TestUndropOntoAnotherTable: once a trashed table's deadline passes, a new table may take its
// id; an undrop then refuses (409) and leaves the trashed one in the trash, instead of taking the
// new table for an earlier undrop and forgetting the old bytes.
func TestUndropOntoAnotherTable(t *testing.T) {
	e, spec := newTrashEnv(t, 7*24*time.Hour)
	ctx := context.Background()
	_, dir := trashFixture(t, e, spec)
	d, err := spec.DropTableWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	key := tableTrashKey("a", "u")
	_, err = registry.Mutate(ctx, e.store, key, func(r *registry.Trash) error {
		r.ExpiresAt = time.Now().Add(-time.Hour)
		return nil
	})
	assert.NilError(t, err)
	dt, err := spec.DeclareTableWithResponse(ctx, "a$u", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dt.StatusCode(), dt.Body, 200, 0)
	u, err := e.anyone.UndropTableWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 409, nserr.TableAlreadyExists, "another table")
	assert.Assert(t, hasRecord[registry.Trash](t, e.store, key), "the trashed table stays in the trash")
	_, err = os.Stat(dir)
	assert.NilError(t, err, "its bytes stay")
}
