package app

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// force adds ?force=<v> to a spec request (the spec does not define the parameter).
func force(v string) nsclient.RequestEditorFn { return withQuery("force", v) }

// withQuery adds ?name=<v> to a request.
func withQuery(name, v string) nsclient.RequestEditorFn {
	return func(_ context.Context, r *http.Request) error {
		q := r.URL.Query()
		q.Set(name, v)
		r.URL.RawQuery = q.Encode()
		return nil
	}
}

// hasRecord reports whether the registry holds a record of type T at key.
func hasRecord[T registry.Record](t *testing.T, store *registry.Store, key string) bool {
	t.Helper()
	_, _, err := registry.Read[T](context.Background(), store, key)
	if errors.Is(err, registry.ErrNotFound) {
		return false
	}
	assert.NilError(t, err)
	return true
}

func protectionKey(kind string, id ...string) string {
	return registry.ObjectKey(registry.ProtectionPrefix, kind, id)
}

func TestSpecDoorsHonourProtection(t *testing.T) {
	e, spec := newLifecycleEnv(t)
	e.objects(t) // namespaces a, a$b; tables a$b$t, a$u
	c, ctx := e.anyone, context.Background()

	protectTable := func(t *testing.T, id string) {
		t.Helper()
		r, err := c.SetTableProtectionWithResponse(ctx, id, nil, controlclient.SetProtectionRequest{Protected: true})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
	}
	protectNamespace := func(t *testing.T, id string) {
		t.Helper()
		r, err := c.SetNamespaceProtectionWithResponse(ctx, id, nil, controlclient.SetProtectionRequest{Protected: true})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
	}

	t.Run("drop and deregister", func(t *testing.T) {
		protectTable(t, "a$u")
		pr, err := c.SetTablePolicyWithResponse(ctx, "a$u", nil, controlclient.Policy{RetentionDays: ptr(9)})
		setPolicy(t, 200, pr, err)

		d, err := spec.DropTableWithResponse(ctx, "a$u", nil)
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 409, nserr.InvalidTableState, "a$u", "protected", "force=true")
		dr, err := spec.DeregisterTableWithResponse(ctx, "a$u", nil, nsclient.DeregisterTableRequest{})
		assert.NilError(t, err)
		expect(t, dr.StatusCode(), dr.Body, 409, nserr.InvalidTableState, "a$u")
		d, err = spec.DropTableWithResponse(ctx, "a$u", nil, force("maybe"))
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 400, nserr.InvalidInput, "force")
		d, err = spec.DropTableWithResponse(ctx, "a$u", nil, force("false"))
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 409, nserr.InvalidTableState)
		_, err = e.catalog.DescribeTable(ctx, ident.ID{"a", "u"})
		assert.NilError(t, err, "a refused drop left the table")

		d, err = spec.DropTableWithResponse(ctx, "a$u", nil, force("true"))
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 200, 0)
		assert.Assert(t, !hasRecord[registry.Protection](t, e.store, protectionKey(registry.KindTable, "a", "u")), "the protection record died with its table")
		assert.Assert(t, !hasRecord[registry.Policy](t, e.store, registry.PolicyKey(registry.KindTable, []string{"a", "u"})), "the policy record died with its table")

		// Deregister with force, the same way.
		_, err = e.catalog.DeclareTable(ctx, ident.ID{"a", "u"}, "", nil)
		assert.NilError(t, err)
		protectTable(t, "a$u")
		dr, err = spec.DeregisterTableWithResponse(ctx, "a$u", nil, nsclient.DeregisterTableRequest{}, force("true"))
		assert.NilError(t, err)
		expect(t, dr.StatusCode(), dr.Body, 200, 0)
		assert.Assert(t, !hasRecord[registry.Protection](t, e.store, protectionKey(registry.KindTable, "a", "u")))

		// Unprotected tables drop without force.
		_, err = e.catalog.DeclareTable(ctx, ident.ID{"a", "u"}, "", nil)
		assert.NilError(t, err)
		d, err = spec.DropTableWithResponse(ctx, "a$u", nil)
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 200, 0)
	})

	// A batch's deregister_table entry is refused as the deregister door refuses it, with the
	// same 409 telling the caller to pass force=true, and force=true on the batch door overrides
	// it as it does there (it was read by no batch door, so the 409's advice could not be taken).
	t.Run("batch deregister", func(t *testing.T) {
		_, err := e.catalog.DeclareTable(ctx, ident.ID{"a", "v"}, "", nil)
		assert.NilError(t, err)
		protectTable(t, "a$v")
		batch := nsclient.BatchCommitTablesRequest{Operations: []nsclient.CommitTableOperation{
			{DeregisterTable: &nsclient.DeregisterTableRequest{Id: &[]string{"a", "v"}}},
		}}
		r, err := spec.BatchCommitTablesWithResponse(ctx, nil, batch)
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 409, nserr.InvalidTableState, "a$v", "protected", "force=true")
		r, err = spec.BatchCommitTablesWithResponse(ctx, nil, batch, force("maybe"))
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 400, nserr.InvalidInput, "force")
		_, err = e.catalog.DescribeTable(ctx, ident.ID{"a", "v"})
		assert.NilError(t, err, "a refused batch left the table")

		r, err = spec.BatchCommitTablesWithResponse(ctx, nil, batch, force("true"))
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
		assert.Assert(t, e.catalog.TableExists(ctx, ident.ID{"a", "v"}) != nil, "the forced batch deregistered the table")
		assert.Assert(t, !hasRecord[registry.Protection](t, e.store, protectionKey(registry.KindTable, "a", "v")), "the protection record died with its table")
	})

	t.Run("rename", func(t *testing.T) {
		protectTable(t, "a$b$t")
		r, err := spec.RenameTableWithResponse(ctx, "a$b$t", nil, nsclient.RenameTableRequest{NewTableName: "t2"})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 409, nserr.InvalidTableState, "a$b$t", "protected")
		_, err = e.catalog.DescribeTable(ctx, ident.ID{"a", "b", "t"})
		assert.NilError(t, err, "a refused rename left the table")

		// force moves it, and its protection moves with it.
		r, err = spec.RenameTableWithResponse(ctx, "a$b$t", nil, nsclient.RenameTableRequest{NewTableName: "t2"}, force("true"))
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
		assert.Assert(t, !hasRecord[registry.Protection](t, e.store, protectionKey(registry.KindTable, "a", "b", "t")))
		assert.Assert(t, hasRecord[registry.Protection](t, e.store, protectionKey(registry.KindTable, "a", "b", "t2")))
		r, err = spec.RenameTableWithResponse(ctx, "a$b$t2", nil, nsclient.RenameTableRequest{NewTableName: "t3"})
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 409, nserr.InvalidTableState, "a$b$t2")
	})

	t.Run("namespace drop", func(t *testing.T) {
		_, err := e.catalog.CreateNamespace(ctx, ident.ID{"a", "e"}, nil, "create")
		assert.NilError(t, err)
		protectNamespace(t, "a$e")
		d, err := spec.DropNamespaceWithResponse(ctx, "a$e", nil, nsclient.DropNamespaceRequest{})
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 409, nserr.NamespaceNotEmpty, "a$e", "protected")
		d, err = spec.DropNamespaceWithResponse(ctx, "a$e", nil, nsclient.DropNamespaceRequest{}, force("yes"))
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 400, nserr.InvalidInput, "force")
		d, err = spec.DropNamespaceWithResponse(ctx, "a$e", nil, nsclient.DropNamespaceRequest{}, force("true"))
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 200, 0)
		assert.Assert(t, !hasRecord[registry.Protection](t, e.store, protectionKey(registry.KindNamespace, "a", "e")))

		// A cascade reaching a protected table (a$b$t2, protected since the rename) names it.
		cascade := nsclient.DropNamespaceRequest{Behavior: ptr("Cascade")}
		d, err = spec.DropNamespaceWithResponse(ctx, "a", nil, cascade)
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 409, nserr.InvalidTableState, "a$b$t2", "protected")
		_, err = e.catalog.DescribeTable(ctx, ident.ID{"a", "b", "t2"})
		assert.NilError(t, err, "a refused cascade left the subtree")

		// force overrides protection, not emptiness: a Restrict drop of a non-empty namespace
		// is still refused.
		d, err = spec.DropNamespaceWithResponse(ctx, "a", nil, nsclient.DropNamespaceRequest{}, force("true"))
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 409, nserr.NamespaceNotEmpty)

		pr, err := c.SetTablePolicyWithResponse(ctx, "a$b$t2", nil, controlclient.Policy{RetentionDays: ptr(3)})
		setPolicy(t, 200, pr, err)
		protectNamespace(t, "a$b")
		d, err = spec.DropNamespaceWithResponse(ctx, "a", nil, cascade, force("true"))
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 200, 0)
		listed, err := registry.List[registry.Protection](ctx, e.store, registry.ProtectionPrefix)
		assert.NilError(t, err)
		assert.Equal(t, len(listed.Records), 0, "every protection record of the subtree died with it")
		assert.Assert(t, !hasRecord[registry.Policy](t, e.store, registry.PolicyKey(registry.KindTable, []string{"a", "b", "t2"})))
	})
}

// TestSpecDoorsWithoutLifecycle: handlers built without governance drop protected-looking
// objects freely (there is nothing to consult) and still validate force.
func TestSpecDoorsWithoutLifecycle(t *testing.T) {
	e := newGovernedEnv(t)
	e.objects(t)
	ctx := context.Background()
	spec, err := nsclient.NewClientWithResponses(e.url)
	assert.NilError(t, err)
	r, err := e.anyone.SetTableProtectionWithResponse(ctx, "a$u", nil, controlclient.SetProtectionRequest{Protected: true})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	d, err := spec.DropTableWithResponse(ctx, "a$u", nil, force("nope"))
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 400, nserr.InvalidInput)
	d, err = spec.DropTableWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
}
