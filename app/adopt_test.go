package app

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/internal/testenv"
)

// TestAdoptAnExistingCatalog (issue 33, item 1): a catalog filled with authorization off — a
// project, a warehouse with a namespace of its own, top-level and nested namespaces, tables at
// every level — is started with --authz openfga --estate-admins user:alice. Before adoption the
// estate admin sees nothing and may grant nothing (as users found). The dry run says what it
// would write and writes nothing; applied with --owner user:alice, the estate is governed: the
// owner sees and manages everything, a reader grant works on an adopted table and reaches no
// further, a stranger sees nothing; a second run changes nothing. On a local root and on MinIO.
func TestAdoptAnExistingCatalog(t *testing.T) {
	for _, root := range []string{"local", "minio"} {
		t.Run(root, func(t *testing.T) {
			cfg := specConfig(t)
			whBucket := ""
			if root == "minio" {
				s3, bucket := testenv.S3Bucket(t)
				_, whBucket = testenv.S3Bucket(t) // empty: the warehouse create adopts it
				useS3(&cfg, s3, "s3://"+bucket+"/catalog")
			}
			fillWithAuthorizationOff(t, cfg, whBucket)

			useOpenFGA(t, &cfg, "lancecat-adopt")
			e := newSpecEnv(t, cfg)
			ctx := context.Background()
			alice, bob, carol := e.as(t, authz.User("alice")), e.as(t, authz.User("bob")), e.as(t, authz.User("carol"))
			ctlAs := func(p authz.Principal) *controlclient.ClientWithResponses {
				c, err := controlclient.NewClientWithResponses(e.url, controlclient.WithRequestEditorFn(e.keyFor(t, p)))
				assert.NilError(t, err)
				return c
			}
			aliceCtl := ctlAs(authz.User("alice"))
			namespaces := func(c *nsclient.ClientWithResponses, id string) []string {
				t.Helper()
				r, err := c.ListNamespacesWithResponse(ctx, id, &nsclient.ListNamespacesParams{})
				assert.NilError(t, err)
				expect(t, r.StatusCode(), r.Body, 200, 0)
				return r.JSON200.Namespaces
			}
			grant := func(c *controlclient.ClientWithResponses, object, id, subject, relation string) int {
				t.Helper()
				r, err := c.GrantAccessWithResponse(ctx, controlclient.AccessGrant{ObjectType: controlclient.AccessGrantObjectType(object), ObjectId: id, Subject: subject, Relation: relation})
				assert.NilError(t, err)
				return r.StatusCode()
			}

			// What users met: the estate admin sees nothing and cannot grant.
			assert.DeepEqual(t, namespaces(alice, "$"), []string{})
			assert.Check(t, is.Equal(grant(aliceCtl, "table", "sales$orders", "user:bob", "reader"), http.StatusForbidden))

			// The dry run reports every object lacking its edges and owner, and writes nothing.
			dry, err := Adopt(ctx, cfg, authz.User("alice").Subject(), false)
			assert.NilError(t, err)
			var changed []string
			for _, a := range dry.Changes {
				changed = append(changed, a.Object.String())
			}
			slices.Sort(changed)
			assert.DeepEqual(t, changed, []string{
				"namespace:sales", "namespace:sales$eu", "namespace:wns", "namespace:wns$inner",
				"project:p",
				"table:loose", "table:sales$eu$deep", "table:sales$orders", "table:wns$inner$t",
				"warehouse:w",
			})
			assert.Equal(t, dry.Objects, 10)
			assert.DeepEqual(t, namespaces(alice, "$"), []string{})

			applied, err := Adopt(ctx, cfg, authz.User("alice").Subject(), true)
			assert.NilError(t, err)
			assert.Equal(t, len(applied.Changes), 10)

			// The governance matrix on the adopted estate.
			assert.DeepEqual(t, namespaces(alice, "$"), []string{"sales", "wns"})
			assert.DeepEqual(t, namespaces(alice, "sales"), []string{"eu"})
			lt, err := alice.ListTablesWithResponse(ctx, "sales", &nsclient.ListTablesParams{})
			assert.NilError(t, err)
			expect(t, lt.StatusCode(), lt.Body, 200, 0)
			assert.DeepEqual(t, lt.JSON200.Tables, []string{"orders"})
			ws, err := aliceCtl.ListWarehousesWithResponse(ctx, &controlclient.ListWarehousesParams{Project: ptr("p")})
			assert.NilError(t, err)
			expect(t, ws.StatusCode(), ws.Body, 200, 0)
			assert.Equal(t, len(ws.JSON200.Warehouses), 1, "the warehouse is no longer hidden")
			for _, id := range []string{"sales$orders", "sales$eu$deep", "wns$inner$t", "loose"} {
				d, err := alice.DescribeTableWithResponse(ctx, id, nil, nsclient.DescribeTableRequest{})
				assert.NilError(t, err)
				expect(t, d.StatusCode(), d.Body, 200, 0)
			}
			assert.Check(t, is.Equal(grant(aliceCtl, "table", "sales$orders", "user:bob", "reader"), http.StatusOK))
			d, err := bob.DescribeTableWithResponse(ctx, "sales$orders", nil, nsclient.DescribeTableRequest{})
			assert.NilError(t, err)
			expect(t, d.StatusCode(), d.Body, 200, 0)
			ins, err := bob.InsertIntoTableWithBodyWithResponse(ctx, "sales$orders", nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 1)))
			assert.NilError(t, err)
			expect(t, ins.StatusCode(), ins.Body, 403, nserr.PermissionDenied)
			assert.DeepEqual(t, namespaces(bob, "$"), []string{"sales"}) // navigates to what he reads
			deep, err := bob.DescribeTableWithResponse(ctx, "sales$eu$deep", nil, nsclient.DescribeTableRequest{})
			assert.NilError(t, err)
			assert.Check(t, deep.StatusCode() == 403 || deep.StatusCode() == 404, "bob reads only his table: %d", deep.StatusCode())
			assert.DeepEqual(t, namespaces(carol, "$"), []string{})
			stranger, err := carol.DescribeTableWithResponse(ctx, "loose", nil, nsclient.DescribeTableRequest{})
			assert.NilError(t, err)
			assert.Check(t, stranger.StatusCode() == 403 || stranger.StatusCode() == 404, "%d", stranger.StatusCode())
			drop, err := alice.DropTableWithResponse(ctx, "loose", nil)
			assert.NilError(t, err)
			expect(t, drop.StatusCode(), drop.Body, 200, 0)

			// Idempotent: nothing left to adopt.
			again, err := Adopt(ctx, cfg, authz.User("alice").Subject(), true)
			assert.NilError(t, err)
			assert.Equal(t, len(again.Changes), 0, "%v", again.Changes)
		})
	}
}

// fillWithAuthorizationOff serves cfg with authorization off and makes the estate.
func fillWithAuthorizationOff(t *testing.T, cfg Config, whBucket string) {
	t.Helper()
	e := newSpecEnv(t, cfg)
	ctx := context.Background()
	spec := e.as(t, "")
	ctl, err := controlclient.NewClientWithResponses(e.url)
	assert.NilError(t, err)
	pr, err := ctl.CreateProjectWithResponse(ctx, controlclient.CreateProjectRequest{Id: "p"})
	assert.NilError(t, err)
	expect(t, pr.StatusCode(), pr.Body, 200, 0)
	req := controlclient.CreateWarehouseRequest{Id: "w", Project: "p"}
	if whBucket != "" {
		req.Bucket = &whBucket
	}
	wr, err := ctl.CreateWarehouseWithResponse(ctx, req)
	assert.NilError(t, err)
	expect(t, wr.StatusCode(), wr.Body, 200, 0)
	bindNamespace(t, ctl, "w", "wns", 200, 0)
	for _, ns := range []string{"sales", "sales$eu", "wns$inner"} {
		r, err := spec.CreateNamespaceWithResponse(ctx, ns, nil, nsclient.CreateNamespaceRequest{})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
	}
	for _, tb := range []string{"sales$orders", "sales$eu$deep", "wns$inner$t", "loose"} {
		r, err := spec.CreateTableWithBodyWithResponse(ctx, tb, nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 3)))
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
	}
}
