package app

import (
	"bytes"
	"context"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/nsclient"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/registry"
)

// TestNamespaceUndropKeepsEarlierDrops: a namespace's undrop brings back what its own drop took
// and nothing its owner had dropped before: a table dropped on its own, and a child namespace
// cascade-dropped on its own, stay in the trash and are undropped by themselves.
func TestNamespaceUndropKeepsEarlierDrops(t *testing.T) {
	e, spec := newTrashEnv(t, 7*24*time.Hour)
	c, ctx := e.anyone, context.Background()
	nsTrashFixture(t, e, spec)
	// A second child namespace with a table, dropped as a whole before its parent.
	_, err := e.catalog.CreateNamespace(ctx, []string{"a", "c"}, nil, "")
	assert.NilError(t, err)
	cr, err := spec.CreateTableWithBodyWithResponse(ctx, "a$c$t3", nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 2)))
	assert.NilError(t, err)
	expect(t, cr.StatusCode(), cr.Body, 200, 0)

	d, err := spec.DropTableWithResponse(ctx, "a$t1", nil)
	assert.NilError(t, err)
	expect(t, d.StatusCode(), d.Body, 200, 0)
	dc := cascadeDrop(t, spec, "a$c")
	expect(t, dc.StatusCode(), dc.Body, 200, 0)
	da := cascadeDrop(t, spec, "a")
	expect(t, da.StatusCode(), da.Body, 200, 0)

	u, err := c.UndropNamespaceWithResponse(ctx, "a", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 200, 0)
	assert.Equal(t, countRows(t, spec, "a$b$t2"), int64(3), "what the namespace's drop took comes back")
	assert.Equal(t, namespaceExists(t, spec, "a$c"), 404, "a namespace dropped on its own before stays dropped")
	te, err := spec.TableExistsWithResponse(ctx, "a$t1", nil, nsclient.TableExistsRequest{})
	assert.NilError(t, err)
	assert.Equal(t, te.StatusCode(), 404, "a table dropped on its own before stays dropped")
	for _, key := range []string{tableTrashKey("a", "t1"), namespaceTrashKey("a", "c"), tableTrashKey("a", "c", "t3")} {
		assert.Assert(t, hasRecord[registry.Trash](t, e.store, key), "%s is still in the trash", key)
	}
	for _, key := range []string{namespaceTrashKey("a"), namespaceTrashKey("a", "b"), tableTrashKey("a", "b", "t2")} {
		assert.Assert(t, !hasRecord[registry.Trash](t, e.store, key), "%s came back", key)
	}

	// Each earlier drop is still undone by its own undrop.
	ut, err := c.UndropTableWithResponse(ctx, "a$t1", nil)
	assert.NilError(t, err)
	expect(t, ut.StatusCode(), ut.Body, 200, 0)
	assert.Equal(t, countRows(t, spec, "a$t1"), int64(5))
	uc, err := c.UndropNamespaceWithResponse(ctx, "a$c", nil)
	assert.NilError(t, err)
	expect(t, uc.StatusCode(), uc.Body, 200, 0)
	assert.Equal(t, countRows(t, spec, "a$c$t3"), int64(2))
}

// TestRetriedCascadeKeepsItsToken: a cascade drop that stopped part way and is retried is one
// drop: the retry keeps the first attempt's token, so what the first attempt already filed comes
// back with the rest. A record filed before drops carried tokens takes in everything below it.
func TestRetriedCascadeKeepsItsToken(t *testing.T) {
	e, spec := newTrashEnv(t, 7*24*time.Hour)
	c, ctx := e.anyone, context.Background()
	nsTrashFixture(t, e, spec)
	trash := governance.NewTrash(e.gov, 7*24*time.Hour, e.catalog)
	p := authz.Principal("user:admin")

	// The first attempt: a's record and a$t1 detached, then it stopped.
	first, err := trash.TrashNamespace(ctx, p, []string{"a"}, map[string]string{"owner": "team-a"}, "")
	assert.NilError(t, err)
	assert.Assert(t, first.Cascade != "")
	t1, err := e.catalog.DescribeTable(ctx, []string{"a", "t1"})
	assert.NilError(t, err)
	_, err = trash.TrashTable(ctx, p, []string{"a", "t1"}, t1.Location, t1.Properties, first.Cascade)
	assert.NilError(t, err)
	_, err = e.catalog.DeregisterTable(ctx, []string{"a", "t1"})
	assert.NilError(t, err)

	d := cascadeDrop(t, spec, "a")
	expect(t, d.StatusCode(), d.Body, 200, 0)
	again, _, err := registry.Read[registry.Trash](ctx, e.store, namespaceTrashKey("a"))
	assert.NilError(t, err)
	assert.Equal(t, again.Cascade, first.Cascade, "the retry is the same drop")

	u, err := c.UndropNamespaceWithResponse(ctx, "a", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 200, 0)
	assert.Equal(t, countRows(t, spec, "a$t1"), int64(5))
	assert.Equal(t, countRows(t, spec, "a$b$t2"), int64(3))

	// A legacy namespace record (no token) takes in every record below it.
	d = cascadeDrop(t, spec, "a")
	expect(t, d.StatusCode(), d.Body, 200, 0)
	_, err = registry.Mutate(ctx, e.store, namespaceTrashKey("a"), func(r *registry.Trash) error { r.Cascade = ""; return nil })
	assert.NilError(t, err)
	_, err = registry.Mutate(ctx, e.store, tableTrashKey("a", "t1"), func(r *registry.Trash) error { r.Cascade = "another drop"; return nil })
	assert.NilError(t, err)
	u, err = c.UndropNamespaceWithResponse(ctx, "a", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 200, 0)
	assert.Equal(t, countRows(t, spec, "a$t1"), int64(5))
}
