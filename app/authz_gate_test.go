package app

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/server"
)

// TestSpecDoorsAuthorization: with --authz openfga and --estate-admins, an estate admin creates,
// describes and drops; an outsider is refused (403 code 15) on the same doors; a reader grant
// lets a caller describe but not drop; listings show each caller only what they may see.
func TestSpecDoorsAuthorization(t *testing.T) {
	cfg := openFGAConfig(t, "lancecat-test")
	e := newSpecEnv(t, cfg)
	ctx := context.Background()
	alice := e.as(t, authz.User("alice"))
	bob := e.as(t, authz.User("bob"))
	carol := e.as(t, authz.User("carol"))

	// Identity is required.
	anon, err := nsclient.NewClientWithResponses(e.url)
	assert.NilError(t, err)
	r0, err := anon.DescribeNamespaceWithResponse(ctx, "ns", nil, nsclient.DescribeNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, r0.StatusCode(), r0.Body, 401, nserr.Unauthenticated)

	// Creates are checked on the parent: the estate admin may, an outsider may not.
	cn, err := bob.CreateNamespaceWithResponse(ctx, "ns", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cn.StatusCode(), cn.Body, 403, nserr.PermissionDenied)
	cn, err = alice.CreateNamespaceWithResponse(ctx, "ns", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cn.StatusCode(), cn.Body, 200, 0)
	for _, name := range []string{"ns$t", "ns$u"} {
		dt, err := alice.DeclareTableWithResponse(ctx, name, nil, nsclient.DeclareTableRequest{})
		assert.NilError(t, err)
		expect(t, dt.StatusCode(), dt.Body, 200, 0)
	}
	dt, err := bob.DeclareTableWithResponse(ctx, "ns$v", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dt.StatusCode(), dt.Body, 403, nserr.PermissionDenied)
	// A create under a namespace that does not exist names it (404 before 403) to whoever reads
	// what would hold it (the estate admin, at the root); to an outsider it is the 403 of any
	// create, so that a create is no oracle of which namespaces exist.
	dt, err = alice.DeclareTableWithResponse(ctx, "nope$v", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dt.StatusCode(), dt.Body, 404, nserr.NamespaceNotFound)
	dt, err = bob.DeclareTableWithResponse(ctx, "nope$v", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dt.StatusCode(), dt.Body, 403, nserr.PermissionDenied)

	// The creator is the owner: the seeded tuples are what let alice in (as well as estate admin).
	assert.NilError(t, e.gov.authorizer.Check(ctx, authz.User("alice"), authz.TableDrop, authz.TableObject([]string{"ns", "t"})))

	// An outsider: 403 on describe and drop, for an existing table and a missing one alike.
	for _, name := range []string{"ns$t", "ns$missing"} {
		d, err := bob.DescribeTableWithResponse(ctx, name, nil, nsclient.DescribeTableRequest{})
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 403, nserr.PermissionDenied)
	}
	dr, err := bob.DropTableWithResponse(ctx, "ns$t", nil)
	assert.NilError(t, err)
	expect(t, dr.StatusCode(), dr.Body, 403, nserr.PermissionDenied)
	dn, err := bob.DescribeNamespaceWithResponse(ctx, "ns", nil, nsclient.DescribeNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, dn.StatusCode(), dn.Body, 403, nserr.PermissionDenied)
	dd, err := bob.DropNamespaceWithResponse(ctx, "ns", nil, nsclient.DropNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, dd.StatusCode(), dd.Body, 403, nserr.PermissionDenied)

	// The estate admin sees a missing table as missing.
	d, err := alice.DescribeTableWithResponse(ctx, "ns$missing", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 404, nserr.TableNotFound)

	// A reader of ns$t describes it, cannot drop it, and lists only it.
	assert.NilError(t, e.gov.authorizer.Grant(ctx, authz.User("carol").Subject(), "reader", authz.TableObject([]string{"ns", "t"})))
	d, err = carol.DescribeTableWithResponse(ctx, "ns$t", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	dr, err = carol.DropTableWithResponse(ctx, "ns$t", nil)
	assert.NilError(t, err)
	expect(t, dr.StatusCode(), dr.Body, 403, nserr.PermissionDenied)
	d, err = carol.DescribeTableWithResponse(ctx, "ns$u", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 403, nserr.PermissionDenied)

	t.Run("listings are filtered, then paginated", func(t *testing.T) {
		all, err := carol.ListAllTablesWithResponse(ctx, &nsclient.ListAllTablesParams{})
		assert.NilError(t, err)
		expect(t, all.StatusCode(), all.Body, 200, 0)
		assert.DeepEqual(t, all.JSON200.Tables, []string{"ns$t"})
		all, err = bob.ListAllTablesWithResponse(ctx, &nsclient.ListAllTablesParams{})
		assert.NilError(t, err)
		assert.DeepEqual(t, all.JSON200.Tables, []string{})
		limit := 1
		var seen []string
		var token *string
		for range 5 {
			lt, err := alice.ListTablesWithResponse(ctx, "ns", &nsclient.ListTablesParams{Limit: &limit, PageToken: token})
			assert.NilError(t, err)
			expect(t, lt.StatusCode(), lt.Body, 200, 0)
			seen = append(seen, lt.JSON200.Tables...)
			if token = lt.JSON200.PageToken; token == nil {
				break
			}
		}
		assert.DeepEqual(t, seen, []string{"t", "u"})
		ln, err := bob.ListNamespacesWithResponse(ctx, "$", &nsclient.ListNamespacesParams{})
		assert.NilError(t, err)
		expect(t, ln.StatusCode(), ln.Body, 200, 0)
		assert.DeepEqual(t, ln.JSON200.Namespaces, []string{})
		ln, err = alice.ListNamespacesWithResponse(ctx, "$", &nsclient.ListNamespacesParams{})
		assert.NilError(t, err)
		assert.Assert(t, slices.Contains(ln.JSON200.Namespaces, "ns"), string(ln.Body))
	})

	// Rename: the destination is seeded, the source's tuples go.
	rn, err := alice.RenameTableWithResponse(ctx, "ns$u", nil, nsclient.RenameTableRequest{NewTableName: "w"})
	assert.NilError(t, err)
	expect(t, rn.StatusCode(), rn.Body, 200, 0)
	d, err = alice.DescribeTableWithResponse(ctx, "ns$w", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)

	// The owner drops; the tuples on the table go with it.
	dr, err = alice.DropTableWithResponse(ctx, "ns$t", nil)
	assert.NilError(t, err)
	expect(t, dr.StatusCode(), dr.Body, 200, 0)
	err = e.gov.authorizer.Check(ctx, authz.User("carol"), authz.TableDescribe, authz.TableObject([]string{"ns", "t"}))
	assert.Equal(t, nserr.CodeOf(err), nserr.PermissionDenied)
	dn, err = alice.DescribeNamespaceWithResponse(ctx, "ns", nil, nsclient.DescribeNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, dn.StatusCode(), dn.Body, 200, 0)
	cascade := "Cascade"
	dd, err = alice.DropNamespaceWithResponse(ctx, "ns", nil, nsclient.DropNamespaceRequest{Behavior: &cascade})
	assert.NilError(t, err)
	expect(t, dd.StatusCode(), dd.Body, 200, 0)
	// The cascade revoked what was below: the renamed table no longer hangs from ns (nor from the
	// estate), so not even the estate admin holds anything on its old object.
	err = e.gov.authorizer.Check(ctx, authz.User("alice"), authz.TableDrop, authz.TableObject([]string{"ns", "w"}))
	assert.Equal(t, nserr.CodeOf(err), nserr.PermissionDenied)
}

// TestSpecDoorsAuthorizationOff: with authorization off every caller is the anonymous estate admin
// and the doors behave as before (no gate, no tuples).
func TestSpecDoorsAuthorizationOff(t *testing.T) {
	e := newSpecEnv(t, specConfig(t))
	ctx := context.Background()
	c := e.as(t, authz.Anonymous)
	cn, err := c.CreateNamespaceWithResponse(ctx, "ns", nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, cn.StatusCode(), cn.Body, 200, 0)
	dt, err := c.DeclareTableWithResponse(ctx, "ns$t", nil, nsclient.DeclareTableRequest{})
	assert.NilError(t, err)
	expect(t, dt.StatusCode(), dt.Body, 200, 0)
	d, err := c.DescribeTableWithResponse(ctx, "ns$t", nil, nsclient.DescribeTableRequest{})
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	lt, err := c.ListAllTablesWithResponse(ctx, &nsclient.ListAllTablesParams{})
	assert.NilError(t, err)
	assert.DeepEqual(t, lt.JSON200.Tables, []string{"ns$t"})
	dr, err := c.DropTableWithResponse(ctx, "ns$t", nil)
	assert.NilError(t, err)
	expect(t, dr.StatusCode(), dr.Body, 200, 0)
	dd, err := c.DropNamespaceWithResponse(ctx, "ns", nil, nsclient.DropNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, dd.StatusCode(), dd.Body, 200, 0)
}

// brokenTuples is an authorizer that is on, allows every door, and cannot write tuples, or (down)
// cannot answer at all: OpenFGA failing at the worst moment.
type brokenTuples struct {
	enabledButOpen
	down bool
}

func (b brokenTuples) Check(context.Context, authz.Principal, authz.Action, authz.Object) error {
	if b.down {
		return nserr.ServiceUnavailablef("authorization service unavailable")
	}
	return nil
}

func (brokenTuples) SeedCreate(context.Context, authz.Principal, authz.Object, authz.Object) error {
	return nserr.ServiceUnavailablef("authorization service unavailable")
}

// TestSpecDoorsSeedingFailure: a create whose tuples cannot be written is undone (nothing would
// own it), and answers the outage, 503 code 17; a check that cannot be answered is 503, never an
// allow.
func TestSpecDoorsSeedingFailure(t *testing.T) {
	ctx := context.Background()
	for _, down := range []bool{false, true} {
		cfg := specConfig(t)
		roots, err := openRoots(ctx, cfg)
		assert.NilError(t, err)
		router, err := newCatalog(cfg, roots)
		assert.NilError(t, err)
		keys := authz.NewAPIKeys(registry.NewStore(roots.control))
		// The lifecycle records events: an undone create must leave none behind.
		gov, err := governance.New(governance.Options{Store: registry.NewStore(roots.control)})
		assert.NilError(t, err)
		url := serveHTTP(t, server.Options{
			Handlers: specHandlers(handlers.Options{Catalog: router, Authorizer: brokenTuples{down: down}}, gov),
			Authn:    &authz.Authenticator{Enabled: true, APIKeys: keys},
		})
		e := &specEnv{url: url, gov: &governanceParts{authn: &authz.Authenticator{Enabled: true}}, keys: keys}
		c := e.as(t, authz.User("alice"))

		cn, err := c.CreateNamespaceWithResponse(ctx, "ns", nil, nsclient.CreateNamespaceRequest{})
		assert.NilError(t, err)
		expect(t, cn.StatusCode(), cn.Body, 503, nserr.ServiceUnavailable)
		assert.Equal(t, nserr.CodeOf(router.NamespaceExists(ctx, []string{"ns"})), nserr.NamespaceNotFound)

		_, err = router.CreateNamespace(ctx, []string{"ns"}, nil, "create")
		assert.NilError(t, err)
		dt, err := c.DeclareTableWithResponse(ctx, "ns$t", nil, nsclient.DeclareTableRequest{})
		assert.NilError(t, err)
		expect(t, dt.StatusCode(), dt.Body, 503, nserr.ServiceUnavailable)
		assert.Equal(t, nserr.CodeOf(router.TableExists(ctx, []string{"ns", "t"})), nserr.TableNotFound)

		d, err := c.DescribeNamespaceWithResponse(ctx, "ns", nil, nsclient.DescribeNamespaceRequest{})
		assert.NilError(t, err)
		if down {
			expect(t, d.StatusCode(), d.Body, 503, nserr.ServiceUnavailable)
		} else {
			expect(t, d.StatusCode(), d.Body, 200, 0)
		}

		events, _, _, err := gov.Events().Since("", 100)
		assert.NilError(t, err)
		assert.Equal(t, len(events), 0, "undone creates emit nothing: %v", events)

		// A declare inside a batch: with checks unanswerable nothing is committed (503, retry).
		// With checks answered but tuples unwritable the batch has committed (it cannot be undone
		// in part without breaking its all-or-none), and the declared table stands with no owner
		// (no caller gains a right over it; an estate admin can drop it): 503 would say "nothing
		// happened, retry", and a retry would only hear "already exists", so the answer is the
		// committed problem: 500 code 18 of its own type, its detail naming the transaction, the
		// table and what to do (and never the authorization service's own error text).
		bc, err := c.BatchCommitTablesWithResponse(ctx, nil, nsclient.BatchCommitTablesRequest{Operations: []nsclient.CommitTableOperation{
			{DeclareTable: &nsclient.DeclareTableRequest{Id: &[]string{"ns", "t2"}}},
		}})
		assert.NilError(t, err)
		if down {
			expect(t, bc.StatusCode(), bc.Body, 503, nserr.ServiceUnavailable)
			assert.Equal(t, nserr.CodeOf(router.TableExists(ctx, []string{"ns", "t2"})), nserr.TableNotFound)
			continue
		}
		expect(t, bc.StatusCode(), bc.Body, 500, nserr.Internal,
			"the batch committed (transaction ns$", "the owner of the declared table ns$t2 could not be recorded",
			"Do not retry the request: it committed", "ask one to drop it")
		var p nserr.Problem
		assert.NilError(t, json.Unmarshal(bc.Body, &p))
		assert.Equal(t, p.Type, nserr.CommittedType)
		assert.Equal(t, p.Context["committed"], "true")
		assert.Assert(t, strings.HasPrefix(p.Context["transaction_id"], "ns$"), string(bc.Body))
		assert.Assert(t, !strings.Contains(p.Detail, "authorization service unavailable"), "the cause's text leaked: %s", bc.Body)
		assert.NilError(t, router.TableExists(ctx, []string{"ns", "t2"}))
		// The transaction the detail names is the one that committed it.
		txnID, err := ident.Split(p.Context["transaction_id"], "$")
		assert.NilError(t, err)
		dtx, err := router.DescribeTransaction(ctx, txnID)
		assert.NilError(t, err)
		assert.Equal(t, dtx.Status, catalog.TxnSucceeded)
	}
}
