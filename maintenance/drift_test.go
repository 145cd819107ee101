package maintenance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// recordClearer deletes records straight from the store: a stand-in for governance.Service's
// ClearProtection/ClearPolicy (the same keys), so the test needs no governance service.
type recordClearer struct{ store *registry.Store }

func (c recordClearer) ClearProtection(ctx context.Context, kind string, id ident.ID) error {
	return registry.Delete(ctx, c.store, registry.ObjectKey(registry.ProtectionPrefix, kind, id))
}

func (c recordClearer) ClearPolicy(ctx context.Context, kind string, id ident.ID) error {
	return registry.Delete(ctx, c.store, registry.PolicyKey(kind, id))
}

func driftKeys(fs []DriftFinding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Category+" "+strings.Join(f.ID, ".")+" "+f.Location+" "+f.Action)
	}
	slices.Sort(out)
	return out
}

// TestDriftScanAndRepair: above tables, the scan reports a __manifest row whose directory was
// removed by hand (unlink), a stray directory and a deregistered table's directory (report
// only: never repaired), protection and policy records of objects that are gone (clear) but not
// those of live or trashed objects, and a binding to a warehouse that is gone (report only). A
// compatibility-mode root table (a <name>.lance directory no row names: a table by listing
// alone), the reserved paths and trashed locations are never reported. Repair with a report
// younger than the grace period does nothing; with an old one it unlinks the row and clears the
// two records, deletes no object, and a second repair finds nothing left to repair.
func TestDriftScanAndRepair(t *testing.T) {
	ctx := context.Background()
	dir, ns := sweepRoot(t, 3, 1)
	ctl, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	records := registry.NewStore(ctl)

	// A row whose directory an operator removed.
	_, err = ns.DeclareTable(ctx, ident.ID{"ghost"}, "", nil)
	assert.NilError(t, err)
	assert.NilError(t, os.RemoveAll(filepath.Join(dir, "ghost.lance")))
	// A deregistered table (its data kept), a stray directory, a directory-only root table, a
	// trashed table's directory.
	_, err = ns.DeregisterTable(ctx, ident.ID{"t0002"})
	assert.NilError(t, err)
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, "stray"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "stray", "notes.txt"), []byte("x"), 0o644))
	assert.NilError(t, exec.Command("cp", "-r", filepath.Join(dir, "t0001.lance"), filepath.Join(dir, "dironly.lance")).Run())
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, "0badcafe_binned"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "0badcafe_binned", "x"), []byte("x"), 0o644))
	trash := []registry.Trash{{Kind: registry.KindTable, ID: []string{"binned"}, Location: "0badcafe_binned"}}

	// Records: of gone objects, of a live one, of a trashed one; a binding to nothing.
	now := time.Now()
	for _, p := range []registry.Protection{
		{Kind: registry.KindTable, ID: []string{"gone"}, Protected: true, SetAt: &now},
		{Kind: registry.KindTable, ID: []string{"t0000"}, Protected: true, SetAt: &now},
		{Kind: registry.KindTable, ID: []string{"binned"}, Protected: true, SetAt: &now},
	} {
		assert.NilError(t, registry.Put(ctx, records, registry.ObjectKey(registry.ProtectionPrefix, p.Kind, p.ID), p))
	}
	assert.NilError(t, registry.Put(ctx, records, registry.PolicyKey(registry.KindNamespace, []string{"nons"}),
		registry.Policy{Kind: registry.KindNamespace, ID: []string{"nons"}}))
	assert.NilError(t, registry.Put(ctx, records, registry.BindingKey("wh"), registry.Binding{TopNamespace: "wh", WarehouseID: "gone-wh", RootURI: "/nowhere"}))

	events := &countingEvents{}
	clock := now
	s := &Service{Catalog: ns, Holder: "r1", Events: events, Now: func() time.Time { return clock }, Drift: &Drift{
		Roots:   func(context.Context) ([]DriftRoot, error) { return []DriftRoot{{URI: dir, Namespace: ns}}, nil },
		Records: records,
		Trash:   func(context.Context) ([]registry.Trash, []string, error) { return trash, nil, nil },
		Clear:   recordClearer{records},
	}}
	rep, err := s.ScanOrphans(ctx, OrphanOptions{})
	assert.NilError(t, err)
	want := []string{
		"dangling_binding wh  none",
		"dangling_manifest_row ghost ghost.lance unlink",
		"dangling_policy nons  clear",
		"dangling_protection gone  clear",
		"unregistered_table_dir  stray none",
		"unregistered_table_dir  t0002.lance none",
	}
	assert.DeepEqual(t, driftKeys(rep.Drift), want)
	assert.Assert(t, rep.Skipped["dangling_tuples"] != "")
	_, checked := rep.Skipped[DriftDanglingRow]
	assert.Assert(t, !checked, "the row category is checked now")

	// A report made just now is not old enough.
	young, err := s.Reconcile(ctx, rep, false, OrphanOptions{})
	assert.NilError(t, err)
	assert.Equal(t, len(young.Repaired), 0)
	assert.Assert(t, young.Skipped["drift_repair"] != "")

	clock = now.Add(2 * DefaultDriftGrace)
	dry, err := s.Reconcile(ctx, rep, true, OrphanOptions{})
	assert.NilError(t, err)
	assert.Equal(t, len(dry.Repaired), 3, "%v %v", driftKeys(dry.Repaired), driftKeys(dry.Drift))
	fixed, err := s.Reconcile(ctx, rep, false, OrphanOptions{})
	assert.NilError(t, err)
	assert.DeepEqual(t, driftKeys(fixed.Repaired), []string{
		"dangling_manifest_row ghost ghost.lance unlink", "dangling_policy nons  clear", "dangling_protection gone  clear",
	})
	assert.Equal(t, events.n[EventOrphansRemoved], 3)
	// Nothing deleted: the stray and deregistered directories, the live table's protection.
	for _, p := range []string{"stray/notes.txt", "t0002.lance", "dironly.lance", "0badcafe_binned/x"} {
		_, err := os.Stat(filepath.Join(dir, p))
		assert.NilError(t, err, p)
	}
	_, _, err = registry.Read[registry.Protection](ctx, records, registry.ObjectKey(registry.ProtectionPrefix, registry.KindTable, []string{"t0000"}))
	assert.NilError(t, err)
	_, err = ns.LoadTable(ctx, ident.ID{"ghost"})
	assert.ErrorContains(t, err, "not found")

	again, err := s.Reconcile(ctx, rep, false, OrphanOptions{})
	assert.NilError(t, err)
	assert.Equal(t, len(again.Repaired), 0)
	assert.DeepEqual(t, driftKeys(again.Drift), []string{
		"dangling_binding wh  none", "unregistered_table_dir  stray none", "unregistered_table_dir  t0002.lance none",
	})
}

// TestDriftUnlinkRefusesRefilled: a row found dangling whose location a writer fills before the
// repair keeps its row: the fresh scan no longer lists it (and UnlinkEmpty would list the
// location again inside the manifest commit).
func TestDriftUnlinkRefusesRefilled(t *testing.T) {
	ctx := context.Background()
	dir, ns := sweepRoot(t, 1, 1)
	_, err := ns.DeclareTable(ctx, ident.ID{"ghost"}, "", nil)
	assert.NilError(t, err)
	assert.NilError(t, os.RemoveAll(filepath.Join(dir, "ghost.lance")))
	clock := time.Now()
	s := &Service{Catalog: ns, Holder: "r1", Now: func() time.Time { return clock }, Drift: &Drift{
		Roots: func(context.Context) ([]DriftRoot, error) { return []DriftRoot{{URI: dir, Namespace: ns}}, nil },
	}}
	rep, err := s.ScanOrphans(ctx, OrphanOptions{})
	assert.NilError(t, err)
	assert.DeepEqual(t, driftKeys(rep.Drift), []string{"dangling_manifest_row ghost ghost.lance unlink"})
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, "ghost.lance"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "ghost.lance", ".lance-reserved"), nil, 0o644))
	clock = clock.Add(2 * DefaultDriftGrace)
	fixed, err := s.Reconcile(ctx, rep, false, OrphanOptions{})
	assert.NilError(t, err)
	assert.Equal(t, len(fixed.Repaired), 0)
	_, err = ns.LoadTable(ctx, ident.ID{"ghost"})
	assert.NilError(t, err)
}

// TestDriftRepairStorageFaults (issue 17 acceptance, faults, for drift repair): the repair of a
// dangling row with the N-th write or delete of the root failing (the lease, the manifest
// commit's files, the release; faultStore is a fake for fault injection). After every fault
// the namespace reads the same tables, nothing but the row is ever removed, and the next repair
// (once the failed one's lease has expired) finishes the job.
func TestDriftRepairStorageFaults(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (string, storage.Bucket) {
		dir, ns := sweepRoot(t, 2, 1)
		_, err := ns.DeclareTable(ctx, ident.ID{"ghost"}, "", nil)
		assert.NilError(t, err)
		assert.NilError(t, os.RemoveAll(filepath.Join(dir, "ghost.lance")))
		fs, err := storage.NewFS(dir)
		assert.NilError(t, err)
		return dir, fs
	}
	service := func(dir string, b storage.Bucket, now time.Time) *Service {
		ns := namespace.New(b, namespace.Options{RootURI: dir})
		return &Service{Catalog: ns, Holder: "r1", Now: func() time.Time { return now }, Drift: &Drift{
			Roots: func(context.Context) ([]DriftRoot, error) { return []DriftRoot{{URI: dir, Namespace: ns}}, nil },
		}}
	}
	start := time.Now()
	later := start.Add(2 * DefaultDriftGrace)
	// How many writes and deletes an unfaulted repair makes.
	dir, fs := setup(t)
	rep, err := service(dir, fs, start).ScanOrphans(ctx, OrphanOptions{})
	assert.NilError(t, err)
	counter := &faultStore{Bucket: fs}
	fixed, err := service(dir, counter, later).Reconcile(ctx, rep, false, OrphanOptions{})
	assert.NilError(t, err)
	assert.Equal(t, len(fixed.Repaired), 1)
	ops := counter.n.Load()
	assert.Assert(t, ops >= 3, "lease, commit, release: %d", ops)

	for at := int64(1); at <= ops; at++ {
		dir, fs := setup(t)
		rep, err := service(dir, fs, start).ScanOrphans(ctx, OrphanOptions{})
		assert.NilError(t, err)
		_, _ = service(dir, &faultStore{Bucket: fs, at: at}, later).Reconcile(ctx, rep, false, OrphanOptions{})
		clean := service(dir, fs, later.Add(2*DefaultLeaseTTL))
		page, err := clean.Catalog.ListAllTables(ctx, "", 100)
		assert.NilError(t, err, "after a fault at %d", at)
		for _, name := range []string{"t0000", "t0001"} {
			tbl, err := clean.Catalog.LoadTable(ctx, ident.ID{name})
			assert.NilError(t, err, "after a fault at %d", at)
			ds, _ := tbl.Dataset()
			assert.Equal(t, len(liveRows(t, ds)), 10)
		}
		if slices.Contains(page.Names, "ghost") {
			again, err := clean.Reconcile(ctx, rep, false, OrphanOptions{})
			assert.NilError(t, err, "after a fault at %d", at)
			assert.Equal(t, len(again.Repaired), 1, "after a fault at %d: %+v %+v", at, again.Refused, again.Skipped)
		}
		left, err := clean.ScanOrphans(ctx, OrphanOptions{})
		assert.NilError(t, err)
		assert.Equal(t, len(left.Drift), 0, "after a fault at %d: %+v", at, left.Drift)
	}
}
