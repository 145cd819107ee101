package maintenance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// TestDriftTuples runs the tuple drift on a real OpenFGA store (skips without one). Tuples
// seeded for: live objects (a table, a namespace, a project), gone objects (a table, a
// namespace, a warehouse, a project), a trashed table (an undrop gives its grants back), and
// objects under a quarantined warehouse and under a binding whose warehouse record is missing
// (their roots are not read: unknown, not gone). The scan reports exactly the four gone objects;
// a young report repairs nothing; an old one revokes their tuples, and only theirs; an object
// made again under a reported name between scan and repair keeps its tuples.
func TestDriftTuples(t *testing.T) {
	ctx := context.Background()
	fgaURL := testenv.OpenFGA(t)
	quiet := authz.WithAuditLog(slog.New(slog.NewTextHandler(io.Discard, nil)))
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	st, err := authz.EnsureStore(ctx, fgaURL, "lancecat-test-"+hex.EncodeToString(b), quiet)
	assert.NilError(t, err)
	fga, err := authz.New(fgaURL, st, quiet)
	assert.NilError(t, err)

	dir, ns := sweepRoot(t, 1, 0) // table t0000
	_, err = ns.CreateNamespace(ctx, ident.ID{"live"}, nil, "")
	assert.NilError(t, err)
	ctl, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	records := registry.NewStore(ctl)
	now := time.Now()
	for _, p := range []string{"p1"} {
		assert.NilError(t, registry.Put(ctx, records, registry.ProjectKey(p), registry.Project{ID: p}))
	}
	assert.NilError(t, registry.Put(ctx, records, registry.WarehouseKey("qwh"),
		registry.Warehouse{ID: "qwh", Project: "p1", Bucket: "b", RootURI: "/q", Status: registry.StatusDeactivated, CreatedAt: now}))
	assert.NilError(t, registry.Put(ctx, records, registry.BindingKey("qns"), registry.Binding{TopNamespace: "qns", WarehouseID: "qwh", RootURI: "/q"}))
	assert.NilError(t, registry.Put(ctx, records, registry.BindingKey("lost"), registry.Binding{TopNamespace: "lost", WarehouseID: "no-such-wh", RootURI: "/l"}))
	trash := []registry.Trash{{Kind: registry.KindTable, ID: []string{"binned"}, Location: "0badcafe_binned"}}

	alice := authz.User("alice")
	seed := func(o, parent authz.Object) {
		t.Helper()
		assert.NilError(t, fga.SeedCreate(ctx, alice, o, parent))
	}
	seed(authz.ProjectObject("p1"), authz.Object{})
	seed(authz.ProjectObject("p-gone"), authz.Object{})
	seed(authz.WarehouseObject("wh-gone"), authz.ProjectObject("p1"))
	seed(authz.TableObject(ident.ID{"t0000"}), authz.Catalog)
	seed(authz.NamespaceObject(ident.ID{"live"}), authz.Catalog)
	seed(authz.TableObject(ident.ID{"gone"}), authz.Catalog)
	seed(authz.NamespaceObject(ident.ID{"nons"}), authz.Catalog)
	seed(authz.TableObject(ident.ID{"again"}), authz.Catalog)
	seed(authz.TableObject(ident.ID{"binned"}), authz.Catalog)
	seed(authz.NamespaceObject(ident.ID{"qns"}), authz.Catalog)
	seed(authz.TableObject(ident.ID{"qns", "t"}), authz.NamespaceObject(ident.ID{"qns"}))
	seed(authz.TableObject(ident.ID{"lost", "t"}), authz.Catalog)

	clock := now
	s := &Service{Catalog: ns, Holder: "r1", Now: func() time.Time { return clock }, Drift: &Drift{
		Roots:   func(context.Context) ([]DriftRoot, error) { return []DriftRoot{{URI: dir, Namespace: ns}}, nil },
		Records: records,
		Trash:   func(context.Context) ([]registry.Trash, []string, error) { return trash, nil, nil },
		Clear:   recordClearer{records},
		Tuples:  fga,
	}}
	tuplesOnly := func(fs []DriftFinding) []string {
		var out []DriftFinding
		for _, f := range fs {
			if f.Category == DriftDanglingTuples {
				out = append(out, f)
			}
		}
		return driftKeys(out)
	}
	rep, err := s.ScanOrphans(ctx, OrphanOptions{})
	assert.NilError(t, err)
	assert.DeepEqual(t, tuplesOnly(rep.Drift), []string{
		"dangling_tuples again  revoke",
		"dangling_tuples gone  revoke",
		"dangling_tuples nons  revoke",
		"dangling_tuples p-gone  revoke",
		"dangling_tuples wh-gone  revoke",
	})
	_, skipped := rep.Skipped[DriftDanglingTuples]
	assert.Assert(t, !skipped, "tuples are checked: %v", rep.Skipped)

	young, err := s.Reconcile(ctx, rep, false, OrphanOptions{})
	assert.NilError(t, err)
	assert.Equal(t, len(young.Repaired), 0)

	// "again" is made again between the scan and the repair: a new object, whose tuples stay.
	_, err = ns.DeclareTable(ctx, ident.ID{"again"}, "", nil)
	assert.NilError(t, err)
	clock = now.Add(2 * DefaultDriftGrace)
	fixed, err := s.Reconcile(ctx, rep, false, OrphanOptions{})
	assert.NilError(t, err)
	assert.DeepEqual(t, tuplesOnly(fixed.Repaired), []string{
		"dangling_tuples gone  revoke",
		"dangling_tuples nons  revoke",
		"dangling_tuples p-gone  revoke",
		"dangling_tuples wh-gone  revoke",
	})
	for _, o := range []authz.Object{authz.TableObject(ident.ID{"gone"}), authz.NamespaceObject(ident.ID{"nons"}),
		authz.ProjectObject("p-gone"), authz.WarehouseObject("wh-gone")} {
		left, err := fga.Grants(ctx, "", o)
		assert.NilError(t, err)
		assert.Equal(t, len(left), 0, "%s: %v", o, left)
	}
	for _, o := range []authz.Object{authz.TableObject(ident.ID{"t0000"}), authz.NamespaceObject(ident.ID{"live"}),
		authz.ProjectObject("p1"), authz.TableObject(ident.ID{"again"}), authz.TableObject(ident.ID{"binned"}),
		authz.TableObject(ident.ID{"qns", "t"}), authz.TableObject(ident.ID{"lost", "t"})} {
		left, err := fga.Grants(ctx, "", o)
		assert.NilError(t, err)
		assert.Assert(t, len(left) > 0, "%s lost its tuples", o)
	}
	again, err := s.ScanOrphans(ctx, OrphanOptions{})
	assert.NilError(t, err)
	assert.DeepEqual(t, tuplesOnly(again.Drift), []string(nil))
}
