package governancee2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
)

// principals holds one API key per test principal, created with `lancecat apikey create`.
type principals struct {
	admin    string // estate admin (--estate-admins user:admin)
	outsider string // a valid identity with no grants at all
	reader   string // rita: reader of the roles table
	writer   string // wes: writer of the roles table
	owner    string // olga: owner of the roles table
}

// TestGovernance runs the Done-when matrix of issue 6 against one `lancecat serve` (S3 root on
// MinIO, OpenFGA authorization, recoverable drops for 7 days); the read-only row starts a second
// replica on the same roots and the reserved-bucket row a server rooted in a warehouse's bucket.
func TestGovernance(t *testing.T) {
	e := newEstate(t)
	keys := principals{
		admin: e.apiKey(t, "admin"), outsider: e.apiKey(t, "outsider"),
		reader: e.apiKey(t, "rita"), writer: e.apiKey(t, "wes"), owner: e.apiKey(t, "olga"),
	}
	srv := e.serve(t, "main", e.root, "--trash-grace-days", "7")
	admin := srv.as(t, keys.admin)

	t.Run("1 project and warehouse lifecycle", func(t *testing.T) { testLifecycle(t, e, admin) })
	t.Run("2 warehouse namespaces are routed to their own bucket", func(t *testing.T) { testRouting(t, e, admin) })
	t.Run("3 container delete matrix", func(t *testing.T) { testDeleteMatrix(t, e, admin, keys.admin) })
	t.Run("4 outsider: missing and not yours are byte-identical", func(t *testing.T) {
		testOutsider(t, e, admin, srv.as(t, keys.outsider))
	})
	t.Run("5 reader, writer, owner", func(t *testing.T) { testRoles(t, e, srv, keys) })
	t.Run("6 cascade drop two levels deep, then undrop", func(t *testing.T) { testCascadeUndrop(t, e, admin) })
	t.Run("7 quarantine blocks, activation restores", func(t *testing.T) { testQuarantine(t, e, admin) })
	t.Run("8 read-only mode refuses writes and serves reads", func(t *testing.T) { testReadOnly(t, e, admin, keys) })
	t.Run("9 concurrency", func(t *testing.T) { testConcurrency(t, e, admin) })
}

// ---------------------------------------------------------------------------------------------
// Fixtures.

func createProject(t *testing.T, c caller, id string) {
	t.Helper()
	r, err := c.ctl.CreateProjectWithResponse(context.Background(), controlclient.CreateProjectRequest{Id: id})
	expect(t, r, err, 200, 0)
}

func createWarehouse(t *testing.T, c caller, project, id string, bucket *string, protected bool) *controlclient.Warehouse {
	t.Helper()
	req := controlclient.CreateWarehouseRequest{Id: id, Project: project, Bucket: bucket}
	if protected {
		req.Protected = ptr(true)
	}
	r, err := c.ctl.CreateWarehouseWithResponse(context.Background(), req)
	expect(t, r, err, 200, 0)
	return r.JSON200
}

// bindNamespace creates top-level namespace ns in warehouse w (POST /v1/warehouses/{id}/namespaces).
func bindNamespace(t *testing.T, c caller, w, ns string) *controlclient.WarehouseNamespace {
	t.Helper()
	r, err := c.ctl.CreateWarehouseNamespaceWithResponse(context.Background(), w, controlclient.CreateWarehouseNamespaceRequest{Namespace: ns})
	expect(t, r, err, 200, 0)
	assert.Assert(t, r.JSON200 != nil, "no binding in %s", r.Body)
	return r.JSON200
}

// topNamespace creates top-level namespace ns: in warehouse w when that route is served, else
// (406, not built yet) with the spec's create_namespace in the catalog root, so rows that need a
// namespace but test something else run either way.
func topNamespace(t *testing.T, c caller, w, ns string) (bound bool) {
	t.Helper()
	ctx := context.Background()
	r, err := c.ctl.CreateWarehouseNamespaceWithResponse(ctx, w, controlclient.CreateWarehouseNamespaceRequest{Namespace: ns})
	assert.NilError(t, err)
	if r.StatusCode() == http.StatusNotAcceptable {
		t.Logf("POST /v1/warehouses/%s/namespaces is not served yet (406): creating namespace %s in the catalog root", w, ns)
		cn, err := c.spec.CreateNamespaceWithResponse(ctx, ns, nil, nsclient.CreateNamespaceRequest{})
		expect(t, cn, err, 200, 0)
		return false
	}
	expect(t, r, err, 200, 0)
	return true
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// numRows is get_table_stats' row count of id.
func numRows(t *testing.T, c caller, id string) int64 {
	t.Helper()
	r, err := c.spec.GetTableStatsWithResponse(context.Background(), id, nil, nsclient.GetTableStatsRequest{})
	expect(t, r, err, 200, 0)
	return r.JSON200.NumRows
}

// httpResponse is the *http.Response a generated …Response carries (its HTTPResponse field).
func httpResponse(r response) *http.Response {
	v := reflect.ValueOf(r)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	f := v.FieldByName("HTTPResponse")
	if !f.IsValid() || f.IsNil() {
		return nil
	}
	return f.Interface().(*http.Response)
}

// ---------------------------------------------------------------------------------------------
// 1. Projects and warehouses: create, list, describe; a project with warehouses refuses to go.

func testLifecycle(t *testing.T, e *estate, admin caller) {
	ctx := context.Background()
	p, w := e.id("life"), e.id("life-wh")

	cp, err := admin.ctl.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: p})
	expect(t, cp, err, 200, 0)
	assert.Equal(t, cp.JSON200.Id, p)
	assert.Equal(t, *cp.JSON200.CreatedBy, "user:admin")
	cp, err = admin.ctl.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: p})
	expect(t, cp, err, 409, nserr.NamespaceAlreadyExists, p)

	wh := createWarehouse(t, admin, p, w, nil, false)
	assert.Equal(t, wh.Project, p)
	assert.Equal(t, wh.Bucket, w, "an S3 warehouse's bucket defaults to its id")
	assert.Equal(t, wh.RootUri, "s3://"+w)
	assert.Equal(t, string(wh.Status), "active")
	assert.Assert(t, e.bucketExists(t, w), "the warehouse bucket is provisioned on MinIO")

	lw, err := admin.ctl.ListWarehousesWithResponse(ctx, &controlclient.ListWarehousesParams{Project: &p})
	expect(t, lw, err, 200, 0)
	assert.Equal(t, len(lw.JSON200.Warehouses), 1)
	assert.Equal(t, lw.JSON200.Warehouses[0].Id, w)
	dw, err := admin.ctl.DescribeWarehouseWithResponse(ctx, w)
	expect(t, dw, err, 200, 0)
	assert.DeepEqual(t, *dw.JSON200, *wh)
	lp, err := admin.ctl.ListProjectsWithResponse(ctx, nil)
	expect(t, lp, err, 200, 0)
	assert.Assert(t, slices.ContainsFunc(lp.JSON200.Projects, func(x controlclient.Project) bool { return x.Id == p }), "%s", lp.Body)
	dp, err := admin.ctl.DescribeProjectWithResponse(ctx, p)
	expect(t, dp, err, 200, 0)
	assert.Assert(t, dp.JSON200.Warehouses != nil && len(*dp.JSON200.Warehouses) == 1 && (*dp.JSON200.Warehouses)[0].Id == w, "%s", dp.Body)

	// A project with warehouses is never deleted, force or not: 409 naming them.
	for _, force := range []bool{false, true} {
		del, err := admin.ctl.DeleteProjectWithResponse(ctx, p, &controlclient.DeleteProjectParams{Force: ptr(force)})
		expect(t, del, err, 409, nserr.NamespaceNotEmpty, w, "never cascades")
	}
	dw, err = admin.ctl.DescribeWarehouseWithResponse(ctx, w)
	expect(t, dw, err, 200, 0)

	dd, err := admin.ctl.DeleteWarehouseWithResponse(ctx, w, &controlclient.DeleteWarehouseParams{PurgeBucket: ptr(true)})
	expect(t, dd, err, 200, 0)
	assert.Equal(t, *dd.JSON200.BucketPurged, true)
	assert.Assert(t, !e.bucketExists(t, w), "purge_bucket removed the bucket")
	again, err := admin.ctl.DeleteWarehouseWithResponse(ctx, w, nil)
	expect(t, again, err, 404, nserr.NamespaceNotFound)

	del, err := admin.ctl.DeleteProjectWithResponse(ctx, p, nil)
	expect(t, del, err, 200, 0)
	dp, err = admin.ctl.DescribeProjectWithResponse(ctx, p)
	expect(t, dp, err, 404, nserr.NamespaceNotFound)
}

// ---------------------------------------------------------------------------------------------
// 2. A warehouse namespace lives in the warehouse's bucket: its tables' objects land there and
// not in the catalog root's bucket.

func testRouting(t *testing.T, e *estate, admin caller) {
	ctx := context.Background()
	p, w := e.id("route"), e.id("route-wh")
	createProject(t, admin, p)
	createWarehouse(t, admin, p, w, nil, false)

	b := bindNamespace(t, admin, w, "sales")
	assert.Equal(t, b.Namespace, "sales")
	assert.Equal(t, b.WarehouseId, w)
	assert.Assert(t, strings.HasPrefix(b.RootUri, "s3://"+w), "root_uri %s is not in bucket %s", b.RootUri, w)
	again, err := admin.ctl.CreateWarehouseNamespaceWithResponse(ctx, w, controlclient.CreateWarehouseNamespaceRequest{Namespace: "sales"})
	expect(t, again, err, 409, nserr.NamespaceAlreadyExists, "sales")

	l, err := admin.ctl.ListWarehouseNamespacesWithResponse(ctx, w)
	expect(t, l, err, 200, 0)
	assert.DeepEqual(t, l.JSON200.Namespaces, []controlclient.WarehouseNamespace{*b})

	loc := createTable(t, admin, "sales$orders", 3)
	t.Logf("sales$orders is at %s", loc)
	bucket, key := splitS3(t, loc)
	assert.Equal(t, bucket, w, "the table's location %s is in the warehouse's bucket", loc)
	inWarehouse := e.bucketKeys(t, w, strings.TrimSuffix(key, "/")+"/")
	assert.Assert(t, len(inWarehouse) > 0, "no objects under %s", loc)
	dir := path.Base(strings.TrimSuffix(key, "/"))
	for _, k := range e.bucketKeys(t, e.rootBucket, "") {
		assert.Assert(t, !strings.Contains(k, dir), "table object %s landed in the catalog root bucket %s", k, e.rootBucket)
	}

	lt, err := admin.spec.ListTablesWithResponse(ctx, "sales", nil)
	expect(t, lt, err, 200, 0)
	assert.DeepEqual(t, lt.JSON200.Tables, []string{"orders"})
	assert.Equal(t, numRows(t, admin, "sales$orders"), int64(3))
}

// ---------------------------------------------------------------------------------------------
// 3. Deleting containers: empty → 200, non-empty → 409 naming contents, cascade, one warehouse per
// bucket, purge refused for a reserved bucket, protected → 409 then force → 200; a project delete never cascades.

func testDeleteMatrix(t *testing.T, e *estate, admin caller, adminKey string) {
	ctx := context.Background()
	p := e.id("dm")
	createProject(t, admin, p)
	del := func(w string, cascade, purge, force bool) (*controlclient.DeleteWarehouseResponse2, error) {
		return admin.ctl.DeleteWarehouseWithResponse(ctx, w, &controlclient.DeleteWarehouseParams{
			Cascade: ptr(cascade), PurgeBucket: ptr(purge), Force: ptr(force)})
	}
	// Gone: a second delete finds nothing. (describe is a reader door, authorized first: once the
	// warehouse's tuples are revoked it answers 403, not 404.)
	gone := func(t *testing.T, w string) {
		t.Helper()
		d, err := del(w, false, false, false)
		expect(t, d, err, 404, nserr.NamespaceNotFound)
	}

	// Every warehouse of the matrix exists before any row runs, so the project row sees them all.
	last := e.id("dm-last")
	createWarehouse(t, admin, p, last, nil, false)

	t.Run("empty warehouse: 200", func(t *testing.T) {
		w := e.id("dm-empty")
		createWarehouse(t, admin, p, w, nil, false)
		r, err := del(w, false, false, false)
		expect(t, r, err, 200, 0)
		assert.Equal(t, r.JSON200.Id, w)
		assert.Equal(t, *r.JSON200.BucketPurged, false)
		assert.Assert(t, e.bucketExists(t, w), "without purge_bucket the bucket stays")
		gone(t, w)
	})

	t.Run("protected: 409, cascade and purge do not override, force does", func(t *testing.T) {
		w := e.id("dm-prot")
		wh := createWarehouse(t, admin, p, w, nil, true)
		assert.Equal(t, *wh.Protected, true)
		for _, opts := range [][3]bool{{false, false, false}, {true, true, false}} {
			r, err := del(w, opts[0], opts[1], opts[2])
			expect(t, r, err, 409, nserr.NamespaceNotEmpty, "protected", "force=true")
		}
		r, err := del(w, false, false, true)
		expect(t, r, err, 200, 0)
		gone(t, w)
	})

	t.Run("one warehouse per bucket: a second claim is refused, the owner's purge removes it", func(t *testing.T) {
		w1, w2, shared := e.id("dm-sh1"), e.id("dm-sh2"), e.id("dm-shared")
		createWarehouse(t, admin, p, w1, &shared, false)
		c, err := admin.ctl.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: w2, Project: p, Bucket: &shared})
		expect(t, c, err, 409, nserr.NamespaceAlreadyExists, "is not available")
		assert.Assert(t, !strings.Contains(string(c.Body), w1), "the refusal names the holder: %s", c.Body)
		r, err := del(w1, false, true, false)
		expect(t, r, err, 200, 0)
		assert.Equal(t, *r.JSON200.BucketPurged, true)
		assert.Assert(t, !e.bucketExists(t, shared), "the owner's purge removed the bucket")
	})

	t.Run("purge refused for a reserved bucket", func(t *testing.T) {
		// A warehouse bucket can never be created reserved, so the bucket becomes reserved the
		// other way round: a second server of the same estate keeps its catalog root in it.
		w := e.id("dm-res")
		createWarehouse(t, admin, p, w, nil, false)
		other := e.serve(t, "rooted-in-warehouse", "s3://"+w+"/catalog")
		a2 := other.as(t, adminKey)
		r, err := a2.ctl.DeleteWarehouseWithResponse(ctx, w, &controlclient.DeleteWarehouseParams{PurgeBucket: ptr(true), Force: ptr(true)})
		expect(t, r, err, 400, nserr.InvalidInput, "reserved", w)
		d, err := a2.ctl.DescribeWarehouseWithResponse(ctx, w)
		expect(t, d, err, 200, 0)
		assert.Assert(t, e.bucketExists(t, w))
		// Without purge it goes; the bytes stay.
		r, err = del(w, false, false, false)
		expect(t, r, err, 200, 0)
		assert.Assert(t, e.bucketExists(t, w))
	})

	t.Run("bound namespace: 409 naming it, cascade drops it", func(t *testing.T) {
		w := e.id("dm-ns")
		createWarehouse(t, admin, p, w, nil, false)
		bindNamespace(t, admin, w, "dm_ns")
		r, err := del(w, false, false, false)
		expect(t, r, err, 409, nserr.NamespaceNotEmpty, "dm_ns", "cascade=true")
		// force overrides protection and nothing else.
		r, err = del(w, false, false, true)
		expect(t, r, err, 409, nserr.NamespaceNotEmpty, "dm_ns")
		r, err = del(w, true, false, false)
		expect(t, r, err, 200, 0)
		assert.DeepEqual(t, *r.JSON200.NamespacesDropped, []string{"dm_ns"})
		gone(t, w)
		dn, err := admin.spec.DescribeNamespaceWithResponse(ctx, "dm_ns", nil, nsclient.DescribeNamespaceRequest{})
		expect(t, dn, err, 404, nserr.NamespaceNotFound)
	})

	t.Run("cascade refuses a namespace still holding tables", func(t *testing.T) {
		w := e.id("dm-full")
		createWarehouse(t, admin, p, w, nil, false)
		bindNamespace(t, admin, w, "dm_full")
		createTable(t, admin, "dm_full$t", 2)
		r, err := del(w, true, false, true)
		expect(t, r, err, 409, nserr.NamespaceNotEmpty, "dm_full")
		d, err := admin.ctl.DescribeWarehouseWithResponse(ctx, w)
		expect(t, d, err, 200, 0)
		dt, err := admin.spec.DescribeTableWithResponse(ctx, "dm_full$t", nil, nsclient.DescribeTableRequest{})
		expect(t, dt, err, 200, 0)
		// Emptied, it cascades.
		dr, err := admin.spec.DropTableWithResponse(ctx, "dm_full$t", nil, query("purge", "true"))
		expect(t, dr, err, 200, 0)
		r, err = del(w, true, true, false)
		expect(t, r, err, 200, 0)
		assert.DeepEqual(t, *r.JSON200.NamespacesDropped, []string{"dm_full"})
	})

	t.Run("project delete never cascades", func(t *testing.T) {
		for _, force := range []bool{false, true} {
			r, err := admin.ctl.DeleteProjectWithResponse(ctx, p, &controlclient.DeleteProjectParams{Force: ptr(force)})
			expect(t, r, err, 409, nserr.NamespaceNotEmpty, last, "never cascades")
		}
		d, err := admin.ctl.DescribeWarehouseWithResponse(ctx, last)
		expect(t, d, err, 200, 0)
		r, err := del(last, false, true, false)
		expect(t, r, err, 200, 0)
		// Whatever the rows above left (a failed row), the project goes only once it is empty.
		dp, err := admin.ctl.DescribeProjectWithResponse(ctx, p)
		expect(t, dp, err, 200, 0)
		if dp.JSON200.Warehouses != nil && len(*dp.JSON200.Warehouses) > 0 {
			t.Skipf("rows above left warehouses %v", *dp.JSON200.Warehouses)
		}
		pr, err := admin.ctl.DeleteProjectWithResponse(ctx, p, nil)
		expect(t, pr, err, 200, 0)
	})
}

// ---------------------------------------------------------------------------------------------
// 4. An outsider (valid key, no grants) learns nothing: every destructive control door answers
// "not yours" byte for byte like "does not exist", with and without force.

func testOutsider(t *testing.T, e *estate, admin, outsider caller) {
	ctx := context.Background()
	p, w := e.id("out"), e.id("out-wh")
	createProject(t, admin, p)
	createWarehouse(t, admin, p, w, nil, false)

	type door struct {
		name string
		call func() (response, error)
	}
	doors := []door{
		{"warehouse delete", func() (response, error) { return outsider.ctl.DeleteWarehouseWithResponse(ctx, w, nil) }},
		{"warehouse delete force", func() (response, error) {
			return outsider.ctl.DeleteWarehouseWithResponse(ctx, w, &controlclient.DeleteWarehouseParams{Force: ptr(true)})
		}},
		{"warehouse delete force cascade purge", func() (response, error) {
			return outsider.ctl.DeleteWarehouseWithResponse(ctx, w, &controlclient.DeleteWarehouseParams{Force: ptr(true), Cascade: ptr(true), PurgeBucket: ptr(true)})
		}},
		{"warehouse deactivate", func() (response, error) { return outsider.ctl.DeactivateWarehouseWithResponse(ctx, w) }},
		{"warehouse activate", func() (response, error) { return outsider.ctl.ActivateWarehouseWithResponse(ctx, w) }},
		{"warehouse protection", func() (response, error) {
			return outsider.ctl.SetWarehouseProtectionWithResponse(ctx, w, controlclient.SetProtectionRequest{Protected: true})
		}},
		{"project delete", func() (response, error) { return outsider.ctl.DeleteProjectWithResponse(ctx, p, nil) }},
		{"project delete force", func() (response, error) {
			return outsider.ctl.DeleteProjectWithResponse(ctx, p, &controlclient.DeleteProjectParams{Force: ptr(true)})
		}},
		{"project protection", func() (response, error) {
			return outsider.ctl.SetProjectProtectionWithResponse(ctx, p, controlclient.SetProtectionRequest{Protected: true})
		}},
	}
	ask := func(t *testing.T) map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, d := range doors {
			r, err := d.call()
			expect(t, r, err, 404, nserr.NamespaceNotFound)
			out[d.name] = fmt.Sprintf("%d %s", r.StatusCode(), withoutRequestID(r.GetBody()))
		}
		return out
	}
	notYours := ask(t)
	// None of it touched anything.
	dw, err := admin.ctl.DescribeWarehouseWithResponse(ctx, w)
	expect(t, dw, err, 200, 0)
	assert.Equal(t, string(dw.JSON200.Status), "active")
	assert.Assert(t, dw.JSON200.Protected == nil || !*dw.JSON200.Protected)

	r, err := admin.ctl.DeleteWarehouseWithResponse(ctx, w, &controlclient.DeleteWarehouseParams{PurgeBucket: ptr(true)})
	expect(t, r, err, 200, 0)
	dp, err := admin.ctl.DeleteProjectWithResponse(ctx, p, nil)
	expect(t, dp, err, 200, 0)
	missing := ask(t)
	for _, d := range doors {
		t.Run(d.name, func(t *testing.T) {
			assert.Equal(t, missing[d.name], notYours[d.name], "missing vs not yours")
		})
	}
}

// ---------------------------------------------------------------------------------------------
// 5. Rungs on a table, granted over HTTP (POST /v1/access/grant): a reader describes and cannot
// drop, a writer changes the table and cannot grant nor use the owner-only doors (protection,
// policy), an owner grants and drops.

func testRoles(t *testing.T, e *estate, srv *server, keys principals) {
	ctx := context.Background()
	admin := srv.as(t, keys.admin)
	p, w := e.id("roles"), e.id("roles-wh")
	createProject(t, admin, p)
	createWarehouse(t, admin, p, w, nil, false)
	topNamespace(t, admin, w, "roles")
	const tbl = "roles$t"
	createTable(t, admin, tbl, 3)
	grant := func(c caller, user, relation string) (*controlclient.GrantAccessResponse, error) {
		return c.ctl.GrantAccessWithResponse(ctx, controlclient.AccessGrant{
			ObjectType: controlclient.AccessGrantObjectTypeTable, ObjectId: tbl, Subject: "user:" + user, Relation: relation})
	}
	// The creator owns the table and hands out the rungs.
	for user, rung := range map[string]string{"rita": "reader", "wes": "writer", "olga": "owner"} {
		r, err := grant(admin, user, rung)
		expect(t, r, err, 200, 0)
	}
	reader, writer, owner := srv.as(t, keys.reader), srv.as(t, keys.writer), srv.as(t, keys.owner)

	for _, tc := range []struct {
		rung              string
		c                 caller
		write, ownerDoors bool
	}{
		{"reader", reader, false, false},
		{"writer", writer, true, false},
		{"owner", owner, true, true},
	} {
		t.Run(tc.rung, func(t *testing.T) {
			d, err := tc.c.spec.DescribeTableWithResponse(ctx, tbl, nil, nsclient.DescribeTableRequest{})
			expect(t, d, err, 200, 0)
			st, err := tc.c.spec.GetTableStatsWithResponse(ctx, tbl, nil, nsclient.GetTableStatsRequest{})
			expect(t, st, err, 200, 0)

			md, err := tc.c.spec.UpdateTableSchemaMetadataWithResponse(ctx, tbl, nil, nsclient.UpdateTableSchemaMetadataJSONRequestBody{"by": tc.rung})
			if tc.write {
				expect(t, md, err, 200, 0)
			} else {
				expect(t, md, err, 403, nserr.PermissionDenied)
			}
			pr, err := tc.c.ctl.SetTableProtectionWithResponse(ctx, tbl, nil, controlclient.SetProtectionRequest{Protected: false})
			pol, perr := tc.c.ctl.SetTablePolicyWithResponse(ctx, tbl, nil, controlclient.Policy{RetentionDays: ptr(5)})
			g, gerr := grant(tc.c, "someone-"+tc.rung, "reader")
			if tc.ownerDoors {
				expect(t, pr, err, 200, 0)
				expect(t, pol, perr, 200, 0)
				expect(t, g, gerr, 200, 0)
			} else {
				expect(t, pr, err, 403, nserr.PermissionDenied)
				expect(t, pol, perr, 403, nserr.PermissionDenied)
				expect(t, g, gerr, 403, nserr.PermissionDenied)
			}
			if !tc.ownerDoors {
				for _, force := range []string{"false", "true"} {
					dr, err := tc.c.spec.DropTableWithResponse(ctx, tbl, nil, query("force", force))
					expect(t, dr, err, 403, nserr.PermissionDenied)
				}
			}
		})
	}

	t.Run("owner drops", func(t *testing.T) {
		pr, err := owner.ctl.SetTableProtectionWithResponse(ctx, tbl, nil, controlclient.SetProtectionRequest{Protected: true})
		expect(t, pr, err, 200, 0)
		assert.Equal(t, *pr.JSON200.SetBy, "user:olga")
		dr, err := owner.spec.DropTableWithResponse(ctx, tbl, nil)
		expect(t, dr, err, 409, nserr.InvalidTableState, "protected")
		dr, err = owner.spec.DropTableWithResponse(ctx, tbl, nil, query("force", "true"))
		expect(t, dr, err, 200, 0)
		d, err := admin.spec.DescribeTableWithResponse(ctx, tbl, nil, nsclient.DescribeTableRequest{})
		expect(t, d, err, 404, nserr.TableNotFound)
	})
}

// ---------------------------------------------------------------------------------------------
// 6. A subtree cascade-dropped two levels deep undrops every table at its old id and location.

func testCascadeUndrop(t *testing.T, e *estate, admin caller) {
	ctx := context.Background()
	p, w := e.id("undrop"), e.id("undrop-wh")
	createProject(t, admin, p)
	createWarehouse(t, admin, p, w, nil, false)
	bound := topNamespace(t, admin, w, "a")
	cn, err := admin.spec.CreateNamespaceWithResponse(ctx, "a$b", nil, nsclient.CreateNamespaceRequest{})
	expect(t, cn, err, 200, 0)
	before := map[string]string{
		"a$t1":   createTable(t, admin, "a$t1", 3),
		"a$b$t2": createTable(t, admin, "a$b$t2", 4),
	}

	dr, err := admin.spec.DropNamespaceWithResponse(ctx, "a", nil, nsclient.DropNamespaceRequest{Behavior: ptr("Cascade")})
	expect(t, dr, err, 200, 0)
	for id := range before {
		d, err := admin.spec.DescribeTableWithResponse(ctx, id, nil, nsclient.DescribeTableRequest{})
		assert.NilError(t, err)
		assert.Equal(t, d.StatusCode(), 404, "%s", d.Body)
		code := problem(t, d.Body).Code
		assert.Assert(t, code == int(nserr.TableNotFound) || code == int(nserr.NamespaceNotFound), "%s", d.Body)
	}
	for _, ns := range []string{"a", "a$b"} {
		d, err := admin.spec.DescribeNamespaceWithResponse(ctx, ns, nil, nsclient.DescribeNamespaceRequest{})
		expect(t, d, err, 404, nserr.NamespaceNotFound)
	}

	u, err := admin.ctl.UndropNamespaceWithResponse(ctx, "a", nil)
	expect(t, u, err, 200, 0)
	t.Logf("undrop: %s", u.Body)
	assert.DeepEqual(t, u.JSON200.Id, []string{"a"})
	assert.Assert(t, u.JSON200.Tables != nil, "%s", u.Body)
	assert.DeepEqual(t, sorted(*u.JSON200.Tables), []string{"a$b$t2", "a$t1"})
	for _, ns := range []string{"a", "a$b"} {
		d, err := admin.spec.DescribeNamespaceWithResponse(ctx, ns, nil, nsclient.DescribeNamespaceRequest{})
		expect(t, d, err, 200, 0)
	}
	for id, loc := range before {
		assert.Equal(t, describeLocation(t, admin, id), loc, "%s is back at its old location", id)
	}
	lt, err := admin.spec.ListTablesWithResponse(ctx, "a", nil)
	expect(t, lt, err, 200, 0)
	assert.DeepEqual(t, lt.JSON200.Tables, []string{"t1"})
	if bound {
		l, err := admin.ctl.ListWarehouseNamespacesWithResponse(ctx, w)
		expect(t, l, err, 200, 0)
		assert.Equal(t, len(l.JSON200.Namespaces), 1, "%s", l.Body)
		assert.Equal(t, l.JSON200.Namespaces[0].Namespace, "a", "the undropped namespace is still bound to its warehouse")
	}
	assert.Equal(t, numRows(t, admin, "a$b$t2"), int64(4))
	u, err = admin.ctl.UndropNamespaceWithResponse(ctx, "a", nil)
	assert.NilError(t, err)
	assert.Assert(t, u.StatusCode() >= 400, "a second undrop has nothing to restore: %d %s", u.StatusCode(), u.Body)
}

// ---------------------------------------------------------------------------------------------
// 7. A deactivated warehouse answers 403 to every spec operation on its namespaces and tables,
// for its owner too; activation restores them.

func testQuarantine(t *testing.T, e *estate, admin caller) {
	ctx := context.Background()
	p, w := e.id("quar"), e.id("quar-wh")
	createProject(t, admin, p)
	createWarehouse(t, admin, p, w, nil, false)
	bindNamespace(t, admin, w, "quar")
	createTable(t, admin, "quar$t", 2)

	ops := []struct {
		name string
		call func(t *testing.T) (response, error)
	}{
		{"describe_namespace", func(*testing.T) (response, error) {
			return admin.spec.DescribeNamespaceWithResponse(ctx, "quar", nil, nsclient.DescribeNamespaceRequest{})
		}},
		{"namespace_exists", func(*testing.T) (response, error) {
			return admin.spec.NamespaceExistsWithResponse(ctx, "quar", nil, nsclient.NamespaceExistsRequest{})
		}},
		{"list_namespaces", func(*testing.T) (response, error) {
			return admin.spec.ListNamespacesWithResponse(ctx, "quar", nil)
		}},
		{"list_tables", func(*testing.T) (response, error) { return admin.spec.ListTablesWithResponse(ctx, "quar", nil) }},
		{"create_namespace", func(*testing.T) (response, error) {
			return admin.spec.CreateNamespaceWithResponse(ctx, "quar$child", nil, nsclient.CreateNamespaceRequest{})
		}},
		{"describe_table", func(*testing.T) (response, error) {
			return admin.spec.DescribeTableWithResponse(ctx, "quar$t", nil, nsclient.DescribeTableRequest{})
		}},
		{"table_exists", func(*testing.T) (response, error) {
			return admin.spec.TableExistsWithResponse(ctx, "quar$t", nil, nsclient.TableExistsRequest{})
		}},
		{"get_table_stats", func(*testing.T) (response, error) {
			return admin.spec.GetTableStatsWithResponse(ctx, "quar$t", nil, nsclient.GetTableStatsRequest{})
		}},
		{"list_table_versions", func(*testing.T) (response, error) {
			return admin.spec.ListTableVersionsWithResponse(ctx, "quar$t", nil)
		}},
		{"update_table_schema_metadata", func(*testing.T) (response, error) {
			return admin.spec.UpdateTableSchemaMetadataWithResponse(ctx, "quar$t", nil, nsclient.UpdateTableSchemaMetadataJSONRequestBody{"k": "v"})
		}},
		{"create_table", func(t *testing.T) (response, error) {
			return admin.spec.CreateTableWithBodyWithResponse(ctx, "quar$t2", nil, arrowStream, int64Stream(t, 1))
		}},
		{"drop_table", func(*testing.T) (response, error) {
			return admin.spec.DropTableWithResponse(ctx, "quar$t", nil, query("force", "true"))
		}},
		{"drop_namespace", func(*testing.T) (response, error) {
			return admin.spec.DropNamespaceWithResponse(ctx, "quar", nil, nsclient.DropNamespaceRequest{Behavior: ptr("Cascade")})
		}},
	}

	q, err := admin.ctl.DeactivateWarehouseWithResponse(ctx, w)
	expect(t, q, err, 200, 0)
	assert.Equal(t, string(q.JSON200.Status), "deactivated")
	for _, op := range ops {
		t.Run("deactivated "+op.name, func(t *testing.T) {
			r, err := op.call(t)
			expect(t, r, err, 403, nserr.PermissionDenied)
		})
	}

	a, err := admin.ctl.ActivateWarehouseWithResponse(ctx, w)
	expect(t, a, err, 200, 0)
	assert.Equal(t, string(a.JSON200.Status), "active")
	d, err := admin.spec.DescribeTableWithResponse(ctx, "quar$t", nil, nsclient.DescribeTableRequest{})
	expect(t, d, err, 200, 0)
	assert.Equal(t, numRows(t, admin, "quar$t"), int64(2))
	lt, err := admin.spec.ListTablesWithResponse(ctx, "quar", nil)
	expect(t, lt, err, 200, 0)
	assert.DeepEqual(t, lt.JSON200.Tables, []string{"t"})
	ct, err := admin.spec.CreateTableWithBodyWithResponse(ctx, "quar$t2", nil, arrowStream, int64Stream(t, 1))
	expect(t, ct, err, 200, 0)
}

// ---------------------------------------------------------------------------------------------
// 8. A --read-only replica on the same roots: writes are 503 code 17 with Retry-After, reads 200.

func testReadOnly(t *testing.T, e *estate, admin caller, keys principals) {
	ctx := context.Background()
	p, w := e.id("ro"), e.id("ro-wh")
	createProject(t, admin, p)
	createWarehouse(t, admin, p, w, nil, false)
	const tbl = "ro_t"
	createTable(t, admin, tbl, 2)

	ro := e.serve(t, "read-only", e.root, "--read-only", "--trash-grace-days", "7")
	c := ro.as(t, keys.admin)

	writes := []struct {
		name string
		call func(t *testing.T) (response, error)
	}{
		{"create project", func(*testing.T) (response, error) {
			return c.ctl.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: e.id("ro-new")})
		}},
		{"delete project", func(*testing.T) (response, error) { return c.ctl.DeleteProjectWithResponse(ctx, p, nil) }},
		{"create warehouse", func(*testing.T) (response, error) {
			return c.ctl.CreateWarehouseWithResponse(ctx, controlclient.CreateWarehouseRequest{Id: e.id("ro-new-wh"), Project: p})
		}},
		{"delete warehouse", func(*testing.T) (response, error) {
			return c.ctl.DeleteWarehouseWithResponse(ctx, w, &controlclient.DeleteWarehouseParams{PurgeBucket: ptr(true)})
		}},
		{"deactivate warehouse", func(*testing.T) (response, error) { return c.ctl.DeactivateWarehouseWithResponse(ctx, w) }},
		{"warehouse protection", func(*testing.T) (response, error) {
			return c.ctl.SetWarehouseProtectionWithResponse(ctx, w, controlclient.SetProtectionRequest{Protected: true})
		}},
		{"bind namespace", func(*testing.T) (response, error) {
			return c.ctl.CreateWarehouseNamespaceWithResponse(ctx, w, controlclient.CreateWarehouseNamespaceRequest{Namespace: "ro_ns"})
		}},
		{"create namespace", func(*testing.T) (response, error) {
			return c.spec.CreateNamespaceWithResponse(ctx, "ro_ns", nil, nsclient.CreateNamespaceRequest{})
		}},
		{"create table", func(t *testing.T) (response, error) {
			return c.spec.CreateTableWithBodyWithResponse(ctx, "ro_t2", nil, arrowStream, int64Stream(t, 1))
		}},
		{"update schema metadata", func(*testing.T) (response, error) {
			return c.spec.UpdateTableSchemaMetadataWithResponse(ctx, tbl, nil, nsclient.UpdateTableSchemaMetadataJSONRequestBody{"k": "v"})
		}},
		{"grant", func(*testing.T) (response, error) {
			return c.ctl.GrantAccessWithResponse(ctx, controlclient.AccessGrant{
				ObjectType: controlclient.AccessGrantObjectTypeWarehouse, ObjectId: w, Subject: "user:rita", Relation: "reader"})
		}},
		{"drop table", func(*testing.T) (response, error) { return c.spec.DropTableWithResponse(ctx, tbl, nil) }},
		{"table protection", func(*testing.T) (response, error) {
			return c.ctl.SetTableProtectionWithResponse(ctx, tbl, nil, controlclient.SetProtectionRequest{Protected: true})
		}},
	}
	for _, wr := range writes {
		t.Run("write "+wr.name, func(t *testing.T) {
			r, err := wr.call(t)
			expect(t, r, err, 503, nserr.ServiceUnavailable)
			h := httpResponse(r)
			assert.Assert(t, h != nil && h.Header.Get("Retry-After") != "", "no Retry-After on %s", r.GetBody())
		})
	}

	reads := []struct {
		name string
		call func() (response, error)
	}{
		{"list projects", func() (response, error) { return c.ctl.ListProjectsWithResponse(ctx, nil) }},
		{"describe project", func() (response, error) { return c.ctl.DescribeProjectWithResponse(ctx, p) }},
		{"list warehouses", func() (response, error) { return c.ctl.ListWarehousesWithResponse(ctx, nil) }},
		{"describe warehouse", func() (response, error) { return c.ctl.DescribeWarehouseWithResponse(ctx, w) }},
		{"me", func() (response, error) { return c.ctl.DescribeMeWithResponse(ctx) }},
		{"list root tables", func() (response, error) { return c.spec.ListTablesWithResponse(ctx, "$", nil) }},
		{"describe table", func() (response, error) {
			return c.spec.DescribeTableWithResponse(ctx, tbl, nil, nsclient.DescribeTableRequest{})
		}},
		{"table stats", func() (response, error) {
			return c.spec.GetTableStatsWithResponse(ctx, tbl, nil, nsclient.GetTableStatsRequest{})
		}},
		{"list table versions", func() (response, error) { return c.spec.ListTableVersionsWithResponse(ctx, tbl, nil) }},
	}
	for _, rd := range reads {
		t.Run("read "+rd.name, func(t *testing.T) {
			r, err := rd.call()
			expect(t, r, err, 200, 0)
		})
	}

	// Nothing changed: the writable server still sees the same state.
	d, err := admin.ctl.DescribeWarehouseWithResponse(ctx, w)
	expect(t, d, err, 200, 0)
	assert.Equal(t, string(d.JSON200.Status), "active")
	assert.Assert(t, d.JSON200.Protected == nil || !*d.JSON200.Protected)
	assert.Equal(t, numRows(t, admin, tbl), int64(2))
}

// ---------------------------------------------------------------------------------------------
// 9. Concurrency: one id, 8 creates, exactly one wins; status flips racing protection sets never
// lose a protection change.

func testConcurrency(t *testing.T, e *estate, admin caller) {
	ctx := context.Background()

	t.Run("8 concurrent project creates of one id", func(t *testing.T) {
		const n = 8
		id := e.id("race")
		statuses := make([]int, n)
		codes := make([]int, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				r, err := admin.ctl.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: id})
				if err != nil {
					statuses[i] = -1
					return
				}
				statuses[i] = r.StatusCode()
				if r.StatusCode() >= 400 {
					var p nserr.Problem
					if perr := json.Unmarshal(r.Body, &p); perr == nil {
						codes[i] = p.Code
					}
				}
			})
		}
		close(start)
		wg.Wait()
		count := map[int]int{}
		for i, s := range statuses {
			count[s]++
			if s == 409 {
				assert.Equal(t, codes[i], int(nserr.NamespaceAlreadyExists))
			}
		}
		assert.DeepEqual(t, count, map[int]int{200: 1, 409: n - 1})
		d, err := admin.ctl.DescribeProjectWithResponse(ctx, id)
		expect(t, d, err, 200, 0)
	})

	t.Run("8 concurrent status flips never lose a protection change", func(t *testing.T) {
		p, w := e.id("flip"), e.id("flip-wh")
		createProject(t, admin, p)
		createWarehouse(t, admin, p, w, nil, false)
		const flippers, flipsEach, rounds = 8, 4, 4
		conflicts := 0
		for round := range rounds {
			// The single protection writer writes want once per round while 8 goroutines flip the
			// status; whatever the interleaving, the record must end with want.
			want := round%2 == 0
			var wg sync.WaitGroup
			var mu sync.Mutex
			var failures []string
			start := make(chan struct{})
			for i := range flippers {
				wg.Go(func() {
					<-start
					for j := range flipsEach {
						var r response
						var err error
						if (i+j)%2 == 0 {
							r, err = admin.ctl.DeactivateWarehouseWithResponse(ctx, w)
						} else {
							r, err = admin.ctl.ActivateWarehouseWithResponse(ctx, w)
						}
						mu.Lock()
						switch {
						case err != nil:
							failures = append(failures, err.Error())
						case r.StatusCode() == 200:
						case r.StatusCode() == 409 && isCode(r.GetBody(), nserr.ConcurrentModification):
							conflicts++ // refused and said so: nothing lost
						default:
							failures = append(failures, fmt.Sprintf("flip: %d %s", r.StatusCode(), r.GetBody()))
						}
						mu.Unlock()
					}
				})
			}
			wg.Go(func() {
				<-start
				time.Sleep(time.Duration(5+round*5) * time.Millisecond) // land among the flips
				for attempt := 0; ; attempt++ {
					r, err := admin.ctl.SetWarehouseProtectionWithResponse(ctx, w, controlclient.SetProtectionRequest{Protected: want})
					mu.Lock()
					if err == nil && r.StatusCode() == 409 && isCode(r.Body, nserr.ConcurrentModification) && attempt < 20 {
						conflicts++
						mu.Unlock()
						continue
					}
					switch {
					case err != nil:
						failures = append(failures, err.Error())
					case r.StatusCode() != 200:
						failures = append(failures, fmt.Sprintf("protection: %d %s", r.StatusCode(), r.Body))
					case r.JSON200.Protected == nil || *r.JSON200.Protected != want:
						failures = append(failures, fmt.Sprintf("protection answered %s", r.Body))
					}
					mu.Unlock()
					return
				}
			})
			close(start)
			wg.Wait()
			for _, f := range failures {
				t.Errorf("round %d: %s", round, f)
			}
			d, err := admin.ctl.DescribeWarehouseWithResponse(ctx, w)
			expect(t, d, err, 200, 0)
			got := d.JSON200.Protected != nil && *d.JSON200.Protected
			assert.Equal(t, got, want, "round %d: the protection change was lost to a concurrent flip", round)
		}
		t.Logf("%d requests refused with 409 code 14 (concurrent modification) and retried or reported", conflicts)
		r, err := admin.ctl.DeleteWarehouseWithResponse(ctx, w, &controlclient.DeleteWarehouseParams{Force: ptr(true), PurgeBucket: ptr(true)})
		expect(t, r, err, 200, 0)
	})
}

func isCode(body []byte, c nserr.Code) bool {
	var p nserr.Problem
	return json.Unmarshal(body, &p) == nil && p.Code == int(c)
}
