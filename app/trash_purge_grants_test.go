package app

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/maintenance"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// tuplesNaming is every stored tuple on object, plus the child edges its parent namespace (if
// any) holds to it: what a purge must leave empty.
func tuplesNaming(t *testing.T, fga *authz.OpenFGA, object authz.Object, parent ident.ID) []authz.Tuple {
	t.Helper()
	ctx := context.Background()
	got, err := fga.Grants(ctx, "", object)
	assert.NilError(t, err)
	if len(parent) > 0 {
		edges, err := fga.Grants(ctx, "child", authz.NamespaceObject(parent))
		assert.NilError(t, err)
		for _, e := range edges {
			if e.User == object.String() {
				got = append(got, e)
			}
		}
	}
	return got
}

// TestTrashPurgeRevokesGrants (issue 11, item 3): after the purge takes a dropped table for good,
// its grants and its structural edges go too, so a former owner neither reaches a new table at
// the id nor still sees the namespace through a leftover navigator tuple. Purged namespaces of a
// cascade lose theirs likewise. When the purging command cannot reach OpenFGA it queues the
// revocations on the control root and says so; the server's purge revokes them.
func TestTrashPurgeRevokesGrants(t *testing.T) {
	cfg := fgaSpecConfig(t)
	cfg.Governance.TrashGraceDays = 1
	e := newSpecEnv(t, cfg)
	ctx := context.Background()
	fga, ok := e.gov.authorizer.(*authz.OpenFGA)
	assert.Assert(t, ok)
	alice, zed := e.as(t, authz.User("alice")), e.as(t, authz.User("zed"))
	mk := func(t *testing.T, ns string, tables ...string) {
		t.Helper()
		cn, err := alice.CreateNamespaceWithResponse(ctx, ns, nil, nsclient.CreateNamespaceRequest{})
		assert.NilError(t, err)
		expect(t, cn.StatusCode(), cn.Body, 200, 0)
		for _, tb := range tables {
			r, err := alice.CreateTableWithBodyWithResponse(ctx, ns+"$"+tb, nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 3)))
			assert.NilError(t, err)
			expect(t, r.StatusCode(), r.Body, 200, 0)
		}
	}
	zedSeesNamespace := func(t *testing.T, ns string) int {
		t.Helper()
		d, err := zed.DescribeNamespaceWithResponse(ctx, ns, nil, nsclient.DescribeNamespaceRequest{})
		assert.NilError(t, err)
		return d.StatusCode()
	}
	dropTable := func(t *testing.T, id string, editors ...nsclient.RequestEditorFn) {
		t.Helper()
		d, err := alice.DropTableWithResponse(ctx, id, nil, editors...)
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 200, 0)
	}
	// The command's purger: the trash on the same roots, connected to OpenFGA as
	// `lancecat trash purge` connects (or fails to).
	commandPurge := func(t *testing.T, cfg Config) (maintenance.PurgeReport, string) {
		t.Helper()
		tr, err := OpenTrash(ctx, cfg, nil)
		assert.NilError(t, err)
		why := AttachRevoker(ctx, cfg, tr)
		rep, err := maintenance.PurgeTrash(ctx, tr, maintenance.PurgeOptions{Now: later})
		assert.NilError(t, err)
		return rep, why
	}

	t.Run("table purge revokes", func(t *testing.T) {
		mk(t, "n1", "t4", "t5")
		assert.NilError(t, fga.Grant(ctx, authz.User("zed").Subject(), "owner", authz.TableObject(ident.ID{"n1", "t4"})))
		assert.Equal(t, zedSeesNamespace(t, "n1"), 200, "zed sees n1 through the navigator tuple of his table")
		dropTable(t, "n1$t4")
		assert.Equal(t, zedSeesNamespace(t, "n1"), 200, "a recoverable drop keeps the tuples for an undrop")

		rep, why := commandPurge(t, cfg)
		assert.Equal(t, why, "")
		assert.Equal(t, rep.Count(maintenance.PurgePurged), 1, "%+v", rep)
		assert.Equal(t, rep.Items[0].Grants, governance.GrantsRevoked)
		assert.Equal(t, len(tuplesNaming(t, fga, authz.TableObject(ident.ID{"n1", "t4"}), ident.ID{"n1"})), 0)
		assert.Equal(t, zedSeesNamespace(t, "n1"), 403)

		// A new table at the id answers to its creator only.
		r, err := alice.CreateTableWithBodyWithResponse(ctx, "n1$t4", nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 3)))
		assert.NilError(t, err)
		expect(t, r.StatusCode(), r.Body, 200, 0)
		d, err := zed.DescribeTableWithResponse(ctx, "n1$t4", nil, nsclient.DescribeTableRequest{})
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 403, nserr.PermissionDenied)
	})

	t.Run("unreachable OpenFGA queues, the server revokes", func(t *testing.T) {
		mk(t, "n2", "t6")
		tbl := authz.TableObject(ident.ID{"n2", "t6"})
		assert.NilError(t, fga.Grant(ctx, authz.User("zed").Subject(), "owner", tbl))
		dropTable(t, "n2$t6")

		down := cfg
		down.Governance.OpenFGAURL = "http://127.0.0.1:1"
		rep, why := commandPurge(t, down)
		assert.Assert(t, strings.Contains(why, "unreachable"), why)
		assert.Equal(t, rep.Count(maintenance.PurgePurged), 1, "%+v", rep)
		assert.Equal(t, rep.Items[0].Grants, governance.GrantsQueued)
		assert.Assert(t, strings.Contains(rep.Items[0].GrantsWhy, "unreachable"), rep.Items[0].GrantsWhy)
		assert.Equal(t, rep.RevocationsQueued, 1)
		store := registry.NewStore(mustControl(t, cfg))
		_, _, err := registry.Read[registry.Revocation](ctx, store, registry.RevocationKey(registry.KindTable, []string{"n2", "t6"}))
		assert.NilError(t, err, "the revocation is queued on the control root")
		assert.Assert(t, len(tuplesNaming(t, fga, tbl, ident.ID{"n2"})) > 0)

		// A command without authorization settings queues too (and says so).
		off := cfg
		off.Governance.Authz = AuthzOff
		rep, why = commandPurge(t, off)
		assert.Assert(t, strings.Contains(why, "authorization is off"), why)
		assert.Equal(t, rep.RevocationsQueued, 1, "still queued: %+v", rep)

		// The server's purge loop reaches OpenFGA and does what was queued.
		srep, err := maintenance.PurgeTrash(ctx, e.gov.trash, maintenance.PurgeOptions{Now: later})
		assert.NilError(t, err)
		assert.Equal(t, srep.RevocationsDone, 1)
		assert.Equal(t, srep.RevocationsQueued, 0)
		assert.Equal(t, len(tuplesNaming(t, fga, tbl, ident.ID{"n2"})), 0)
		assert.Equal(t, zedSeesNamespace(t, "n2"), 403)
		_, _, err = registry.Read[registry.Revocation](ctx, store, registry.RevocationKey(registry.KindTable, []string{"n2", "t6"}))
		assert.Assert(t, err != nil, "the queue record is gone")
	})

	t.Run("cascade purge revokes every namespace and table", func(t *testing.T) {
		mk(t, "n3", "t")
		cn, err := alice.CreateNamespaceWithResponse(ctx, "n3$sub", nil, nsclient.CreateNamespaceRequest{})
		assert.NilError(t, err)
		expect(t, cn.StatusCode(), cn.Body, 200, 0)
		objects := map[string]authz.Object{
			"n3": authz.NamespaceObject(ident.ID{"n3"}), "n3$sub": authz.NamespaceObject(ident.ID{"n3", "sub"}),
			"n3$t": authz.TableObject(ident.ID{"n3", "t"}),
		}
		for _, o := range objects {
			assert.NilError(t, fga.Grant(ctx, authz.User("zed").Subject(), "reader", o))
		}
		d := cascadeDrop(t, alice, "n3")
		expect(t, d.StatusCode(), d.Body, 200, 0)
		rep, why := commandPurge(t, cfg)
		assert.Equal(t, why, "")
		assert.Equal(t, rep.Count(maintenance.PurgePurged), 3, "%+v", rep)
		for _, it := range rep.Items {
			assert.Equal(t, it.Grants, governance.GrantsRevoked, "%+v", it)
		}
		for name, o := range objects {
			assert.Equal(t, len(tuplesNaming(t, fga, o, nil)), 0, name)
		}
		edges, err := fga.Grants(ctx, "child", authz.NamespaceObject(ident.ID{"n3"}))
		assert.NilError(t, err)
		assert.Equal(t, len(edges), 0)
	})

	t.Run("a destroying drop revokes at once", func(t *testing.T) {
		mk(t, "n4", "t7")
		tbl := authz.TableObject(ident.ID{"n4", "t7"})
		assert.NilError(t, fga.Grant(ctx, authz.User("zed").Subject(), "owner", tbl))
		dropTable(t, "n4$t7", purge("true"))
		assert.Equal(t, len(tuplesNaming(t, fga, tbl, ident.ID{"n4"})), 0)
		assert.Equal(t, zedSeesNamespace(t, "n4"), 403)
		assert.Assert(t, !slices.ContainsFunc(tuplesNaming(t, fga, authz.NamespaceObject(ident.ID{"n4"}), nil), func(tu authz.Tuple) bool {
			return tu.User == "user:zed"
		}))
	})
}

func mustControl(t *testing.T, cfg Config) storage.Bucket {
	t.Helper()
	b, _, err := OpenControlRoot(context.Background(), cfg)
	assert.NilError(t, err)
	return b
}
