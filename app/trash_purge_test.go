package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/client/controlclient"
	"github.com/lancecat/lancecat/client/nsclient"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/maintenance"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/routing"
)

// purgeEnv is a server wired as Run wires it with a one-day grace, project p and warehouse w,
// and a purger opened on the same roots as `lancecat trash purge` opens them (another replica).
type purgeEnv struct {
	cfg    Config
	ctl    *controlclient.ClientWithResponses
	spec   *nsclient.ClientWithResponses
	store  *registry.Store
	purger *governance.Trash
	whRoot string // the warehouse's directory
}

// later is past every deadline a drop made now has.
var later = time.Now().Add(49 * time.Hour)

func newPurgeEnv(t *testing.T) *purgeEnv {
	t.Helper()
	cfg := specConfig(t)
	cfg.Governance.TrashGraceDays = 1
	ctl, spec, whRoot := warehouseEnv(t, cfg)
	ctx := context.Background()
	purger, err := OpenTrash(ctx, cfg, nil)
	assert.NilError(t, err)
	bucket, _, err := OpenControlRoot(ctx, cfg)
	assert.NilError(t, err)
	return &purgeEnv{cfg: cfg, ctl: ctl, spec: spec, store: registry.NewStore(bucket), purger: purger,
		whRoot: strings.TrimPrefix(whRoot, "file://")}
}

func (e *purgeEnv) createNamespace(t *testing.T, id string) {
	t.Helper()
	r, err := e.spec.CreateNamespaceWithResponse(context.Background(), id, nil, nsclient.CreateNamespaceRequest{})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
}

func (e *purgeEnv) createTable(t *testing.T, id string) {
	t.Helper()
	r, err := e.spec.CreateTableWithBodyWithResponse(context.Background(), id, nil, "application/vnd.apache.arrow.stream", bytes.NewReader(int64Stream(t, 5)))
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
}

func (e *purgeEnv) dropTable(t *testing.T, id string) {
	t.Helper()
	r, err := e.spec.DropTableWithResponse(context.Background(), id, nil)
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
}

// record is the trash record of a table (its location is what the purge deletes).
func (e *purgeEnv) record(t *testing.T, id ...string) registry.Trash {
	t.Helper()
	rec, _, err := registry.Read[registry.Trash](context.Background(), e.store, tableTrashKey(id...))
	assert.NilError(t, err)
	return rec
}

func (e *purgeEnv) purge(t *testing.T, opts maintenance.PurgeOptions) maintenance.PurgeReport {
	t.Helper()
	rep, err := maintenance.PurgeTrash(context.Background(), e.purger, opts)
	assert.NilError(t, err)
	return rep
}

// files counts the regular files under dir (0 when it is gone).
func files(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			n++
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	assert.NilError(t, err)
	return n
}

func purgedEvents(e *purgeEnv, typ string) []governance.Event {
	evs, _, _, _ := e.purger.Events().Since("", 1000)
	var out []governance.Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func actions(rep maintenance.PurgeReport) map[string]string {
	out := map[string]string{}
	for _, it := range rep.Items {
		out[it.Kind+":"+ident.ID(it.ID).Join("$")] = it.Action
	}
	return out
}

func TestTrashPurgeTable(t *testing.T) {
	e := newPurgeEnv(t)
	e.createNamespace(t, "a")
	e.createTable(t, "a$u")
	e.dropTable(t, "a$u")
	rec := e.record(t, "a", "u")
	assert.Assert(t, rec.Placed && rec.Binding == nil, "the record says the table lived in the catalog root")
	dir := filepath.Join(e.cfg.Root, rec.Location)
	assert.Assert(t, files(t, dir) > 0)

	// Not expired: untouched.
	rep := e.purge(t, maintenance.PurgeOptions{})
	assert.Equal(t, len(rep.Items), 0)
	assert.Equal(t, rep.Pending, 1)

	// A dry run says what it would do and changes nothing.
	rep = e.purge(t, maintenance.PurgeOptions{Now: later, DryRun: true})
	assert.DeepEqual(t, actions(rep), map[string]string{"table:a$u": maintenance.PurgeWouldPurge})
	assert.Assert(t, files(t, dir) > 0)
	assert.Assert(t, !e.record(t, "a", "u").Purging, "a dry run claims nothing")

	// Expired: bytes, record and id are freed, and the event says how much went.
	rep = e.purge(t, maintenance.PurgeOptions{Now: later})
	assert.DeepEqual(t, actions(rep), map[string]string{"table:a$u": maintenance.PurgePurged})
	assert.Assert(t, rep.Items[0].Objects > 0 && rep.Items[0].Bytes > 0, "%+v", rep.Items[0])
	assert.Equal(t, files(t, dir), 0)
	assert.Assert(t, !hasRecord[registry.Trash](t, e.store, tableTrashKey("a", "u")))
	evs := purgedEvents(e, governance.EventTablePurged)
	assert.Equal(t, len(evs), 1)
	assert.Equal(t, evs[0].Object, "table:a$u")
	assert.Equal(t, evs[0].Attributes["location"], rec.Location)
	e.createTable(t, "a$u")

	// Idempotent: nothing is left to do.
	rep = e.purge(t, maintenance.PurgeOptions{Now: later})
	assert.Equal(t, len(rep.Items), 0)
}

// TestTrashPurgeKeepsLiveBytes: an undrop that registered the table but did not clear its record
// leaves a record pointing at a live table's bytes: the purge removes the record only.
func TestTrashPurgeKeepsLiveBytes(t *testing.T) {
	e := newPurgeEnv(t)
	ctx := context.Background()
	e.createNamespace(t, "a")
	e.createTable(t, "a$u")
	e.dropTable(t, "a$u")
	rec := e.record(t, "a", "u")
	u, err := e.ctl.UndropTableWithResponse(ctx, "a$u", nil)
	assert.NilError(t, err)
	expect(t, u.StatusCode(), u.Body, 200, 0)
	assert.NilError(t, registry.Put(ctx, e.store, tableTrashKey("a", "u"), rec))

	rep := e.purge(t, maintenance.PurgeOptions{Now: later})
	assert.DeepEqual(t, actions(rep), map[string]string{"table:a$u": maintenance.PurgeKept})
	assert.Assert(t, files(t, filepath.Join(e.cfg.Root, rec.Location)) > 0)
	assert.Assert(t, !hasRecord[registry.Trash](t, e.store, tableTrashKey("a", "u")))
	assert.Equal(t, countRows(t, e.spec, "a$u"), int64(5))

	// Another table adopting the bytes at another id keeps them too.
	e.dropTable(t, "a$u")
	rec = e.record(t, "a", "u")
	r, err := e.spec.RegisterTableWithResponse(ctx, "a$v", nil, nsclient.RegisterTableRequest{Location: rec.Location})
	assert.NilError(t, err)
	expect(t, r.StatusCode(), r.Body, 200, 0)
	rep = e.purge(t, maintenance.PurgeOptions{Now: later})
	assert.DeepEqual(t, actions(rep), map[string]string{"table:a$u": maintenance.PurgeKept})
	assert.Assert(t, strings.Contains(rep.Items[0].Reason, "a$v"), rep.Items[0].Reason)
	assert.Equal(t, countRows(t, e.spec, "a$v"), int64(5))
}

func TestTrashPurgeNamespaceCascade(t *testing.T) {
	e := newPurgeEnv(t)
	e.createNamespace(t, "a")
	e.createNamespace(t, "a$b")
	e.createTable(t, "a$t1")
	e.createTable(t, "a$b$t2")
	d := cascadeDrop(t, e.spec, "a")
	expect(t, d.StatusCode(), d.Body, 200, 0)
	dirs := []string{filepath.Join(e.cfg.Root, e.record(t, "a", "t1").Location), filepath.Join(e.cfg.Root, e.record(t, "a", "b", "t2").Location)}

	// A limited run takes one record; namespaces wait for the tables under them.
	rep := e.purge(t, maintenance.PurgeOptions{Now: later, Limit: 1})
	assert.Assert(t, rep.Truncated)
	assert.DeepEqual(t, actions(rep), map[string]string{"table:a$b$t2": maintenance.PurgePurged})

	rep = e.purge(t, maintenance.PurgeOptions{Now: later})
	assert.DeepEqual(t, actions(rep), map[string]string{
		"table:a$t1": maintenance.PurgePurged, "namespace:a$b": maintenance.PurgePurged, "namespace:a": maintenance.PurgePurged,
	})
	for _, dir := range dirs {
		assert.Equal(t, files(t, dir), 0, dir)
	}
	recs, unreadable, err := e.purger.TrashRecords(context.Background())
	assert.NilError(t, err)
	assert.Equal(t, len(recs)+len(unreadable), 0)
	assert.Equal(t, len(purgedEvents(e, governance.EventNamespacePurged)), 2)
	e.createNamespace(t, "a")
}

// TestTrashPurgeWarehouseNamespace: a table of a warehouse namespace lives in the warehouse's
// root, and so do its bytes after a drop, after a cascade that unbinds the namespace, and for a
// record filed before records said where the table lived; the catalog root is never touched.
// A deactivated warehouse is quarantined: its records wait.
func TestTrashPurgeWarehouseNamespace(t *testing.T) {
	e := newPurgeEnv(t)
	ctx := context.Background()
	bindNamespace(t, e.ctl, "w", "sales", 200, 0)
	e.createTable(t, "sales$t1")
	e.createTable(t, "sales$t2")
	e.dropTable(t, "sales$t1")
	rec1 := e.record(t, "sales", "t1")
	assert.Assert(t, rec1.Binding != nil && rec1.Binding.WarehouseID == "w")
	wh1 := filepath.Join(e.whRoot, rec1.Location)
	assert.Assert(t, files(t, wh1) > 0)
	// A decoy at the same location in the catalog root must survive.
	decoy := filepath.Join(e.cfg.Root, rec1.Location, "decoy")
	assert.NilError(t, os.MkdirAll(filepath.Dir(decoy), 0o755))
	assert.NilError(t, os.WriteFile(decoy, []byte("x"), 0o644))

	// Quarantine: skipped, claim released, nothing deleted.
	dw, err := e.ctl.DeactivateWarehouseWithResponse(ctx, "w")
	assert.NilError(t, err)
	expect(t, dw.StatusCode(), dw.Body, 200, 0)
	rep := e.purge(t, maintenance.PurgeOptions{Now: later})
	assert.DeepEqual(t, actions(rep), map[string]string{"table:sales$t1": maintenance.PurgeSkipped})
	assert.Assert(t, strings.Contains(rep.Items[0].Reason, "deactivated"), rep.Items[0].Reason)
	assert.Assert(t, files(t, wh1) > 0)
	assert.Assert(t, !e.record(t, "sales", "t1").Purging, "a skipped record is not left claimed")
	aw, err := e.ctl.ActivateWarehouseWithResponse(ctx, "w")
	assert.NilError(t, err)
	expect(t, aw.StatusCode(), aw.Body, 200, 0)

	// The cascade unbinds sales; t2's record is made to look like one filed before records
	// said where the table lived: the namespace's record still knows the binding.
	d := cascadeDrop(t, e.spec, "sales")
	expect(t, d.StatusCode(), d.Body, 200, 0)
	rec2 := e.record(t, "sales", "t2")
	wh2 := filepath.Join(e.whRoot, rec2.Location)
	rec2.Placed, rec2.Binding = false, nil
	assert.NilError(t, registry.Put(ctx, e.store, tableTrashKey("sales", "t2"), rec2))

	rep = e.purge(t, maintenance.PurgeOptions{Now: later})
	assert.DeepEqual(t, actions(rep), map[string]string{
		"table:sales$t1": maintenance.PurgePurged, "table:sales$t2": maintenance.PurgePurged, "namespace:sales": maintenance.PurgePurged,
	})
	for _, it := range rep.Items {
		if it.Kind == registry.KindTable {
			assert.Assert(t, it.RootURI != "" && it.Objects > 0, "%+v", it)
		}
	}
	assert.Equal(t, files(t, wh1), 0)
	assert.Equal(t, files(t, wh2), 0)
	assert.Equal(t, files(t, filepath.Dir(decoy)), 1, "the catalog root is not the warehouse's")
}

// raceRegistrar is the catalog with a purge landing between an undrop's register and its re-read.
type raceRegistrar struct {
	*routing.Router
	after func(ctx context.Context, id ident.ID)
}

func (r raceRegistrar) RegisterTable(ctx context.Context, id ident.ID, location, mode string, props map[string]string, opts ...catalog.Option) (*catalog.Entry, error) {
	t, err := r.Router.RegisterTable(ctx, id, location, mode, props, opts...)
	if err == nil {
		r.after(ctx, id)
	}
	return t, err
}

func TestTrashUndropVersusPurge(t *testing.T) {
	ctx := context.Background()
	claim := func(since time.Time) func(r *registry.Trash) error {
		return func(r *registry.Trash) error {
			r.Purging, r.PurgingSince = true, &since
			return nil
		}
	}
	setup := func(t *testing.T) *purgeEnv {
		e := newPurgeEnv(t)
		e.createNamespace(t, "a")
		e.createTable(t, "a$u")
		e.dropTable(t, "a$u")
		return e
	}
	tableGone := func(t *testing.T, e *purgeEnv) {
		t.Helper()
		d, err := e.spec.DescribeTableWithResponse(ctx, "a$u", nil, nsclient.DescribeTableRequest{})
		assert.NilError(t, err)
		expect(t, d.StatusCode(), d.Body, 404, nserr.TableNotFound)
	}

	t.Run("a claimed record refuses the undrop", func(t *testing.T) {
		e := setup(t)
		_, err := registry.Mutate(ctx, e.store, tableTrashKey("a", "u"), claim(time.Now().UTC()))
		assert.NilError(t, err)
		u, err := e.ctl.UndropTableWithResponse(ctx, "a$u", nil)
		assert.NilError(t, err)
		expect(t, u.StatusCode(), u.Body, 409, nserr.ConcurrentModification, "being purged")
		tableGone(t, e)
		assert.Assert(t, e.record(t, "a", "u").Purging)
		// A namespace undrop stops on it the same way, when the record is its drop's: a$u was
		// dropped on its own before the namespace (which its undrop leaves alone), so it is
		// stamped here as if the cascade had filed it.
		d := cascadeDrop(t, e.spec, "a")
		expect(t, d.StatusCode(), d.Body, 200, 0)
		nsRec, _, err := registry.Read[registry.Trash](ctx, e.store, namespaceTrashKey("a"))
		assert.NilError(t, err)
		_, err = registry.Mutate(ctx, e.store, tableTrashKey("a", "u"), func(r *registry.Trash) error { r.Cascade = nsRec.Cascade; return nil })
		assert.NilError(t, err)
		un, err := e.ctl.UndropNamespaceWithResponse(ctx, "a", nil)
		assert.NilError(t, err)
		expect(t, un.StatusCode(), un.Body, 409, nserr.ConcurrentModification, "being purged")
	})

	t.Run("a stale claim is cleared by the undrop", func(t *testing.T) {
		e := setup(t)
		_, err := registry.Mutate(ctx, e.store, tableTrashKey("a", "u"), claim(time.Now().UTC().Add(-2*governance.TrashClaimTTL)))
		assert.NilError(t, err)
		u, err := e.ctl.UndropTableWithResponse(ctx, "a$u", nil)
		assert.NilError(t, err)
		expect(t, u.StatusCode(), u.Body, 200, 0)
		assert.Equal(t, countRows(t, e.spec, "a$u"), int64(5))
	})

	t.Run("an undrop claim keeps the purge off", func(t *testing.T) {
		e := setup(t)
		_, err := registry.Mutate(ctx, e.store, tableTrashKey("a", "u"), func(r *registry.Trash) error {
			since := later
			r.Undropping, r.UndroppingSince = true, &since
			return nil
		})
		assert.NilError(t, err)
		rep := e.purge(t, maintenance.PurgeOptions{Now: later})
		assert.DeepEqual(t, actions(rep), map[string]string{"table:a$u": maintenance.PurgeSkipped})
		assert.Assert(t, files(t, filepath.Join(e.cfg.Root, e.record(t, "a", "u").Location)) > 0)
	})

	for _, tc := range []struct {
		name  string
		purge func(ctx context.Context, store *registry.Store, key string) error
	}{
		{"the re-read finds the purge's claim", func(ctx context.Context, store *registry.Store, key string) error {
			_, err := registry.Mutate(ctx, store, key, claim(time.Now().UTC()))
			return err
		}},
		{"the re-read finds the record gone", func(ctx context.Context, store *registry.Store, key string) error {
			return registry.Delete(ctx, store, key)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			roots, err := openRoots(ctx, e.cfg)
			assert.NilError(t, err)
			router, err := newCatalog(e.cfg, roots)
			assert.NilError(t, err)
			key := tableTrashKey("a", "u")
			trash := governance.NewTrash(e.purger.Service, 24*time.Hour, raceRegistrar{Router: router, after: func(ctx context.Context, _ ident.ID) {
				assert.NilError(t, tc.purge(ctx, e.store, key))
			}})
			_, err = trash.UndropTable(ctx, "", ident.ID{"a", "u"})
			assert.Assert(t, nserr.Is(err, nserr.ErrConcurrentModification), "%v", err)
			assert.ErrorContains(t, err, "being purged")
			tableGone(t, e)
			// The record is there for the purge (or a retried undrop) to finish with.
			assert.Assert(t, hasRecord[registry.Trash](t, e.store, key))
			rep := e.purge(t, maintenance.PurgeOptions{Now: later})
			assert.DeepEqual(t, actions(rep), map[string]string{"table:a$u": maintenance.PurgePurged})
		})
	}
}
