package maintenance

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// fakeCatalog is the catalog a purge deletes bytes in: the tables registered now (id → location)
// and what the purge deleted. The end-to-end purge over real roots is server's
// TestTrashPurge* (and cmd/lancecat's TestTrashCommand); these tests pin the purge's decisions.
type fakeCatalog struct {
	mu      sync.Mutex
	live    map[string]string // id joined by "$" → location
	deleted []string          // "root|location"
	failing error             // DescribeTable's answer for every id when set
}

func (c *fakeCatalog) DescribeTable(_ context.Context, id ident.ID) (*catalog.Entry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failing != nil {
		return nil, c.failing
	}
	loc, ok := c.live[id.Join("$")]
	if !ok {
		return nil, nserr.TableNotFoundf("table %s not found", id.Join("$"))
	}
	return &catalog.Entry{ID: id, Location: loc}, nil
}

func (c *fakeCatalog) DeleteTableBytes(_ context.Context, rootURI, location string) (namespace.Deleted, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deleted = append(c.deleted, rootURI+"|"+location)
	return namespace.Deleted{Objects: 2, Bytes: 10}, nil
}

func (c *fakeCatalog) RegisterTable(context.Context, ident.ID, string, string, map[string]string, ...catalog.Option) (*catalog.Entry, error) {
	return nil, nserr.Unsupportedf("not in this test")
}

func (c *fakeCatalog) DeregisterTable(context.Context, ident.ID, ...catalog.Option) (*catalog.Entry, error) {
	return nil, nserr.Unsupportedf("not in this test")
}

func (c *fakeCatalog) CreateNamespace(context.Context, ident.ID, map[string]string, string, ...catalog.Option) (map[string]string, error) {
	return nil, nserr.Unsupportedf("not in this test")
}

type purgeEnv struct {
	store   *registry.Store
	trash   *governance.Trash
	catalog *fakeCatalog
	now     time.Time
}

func newPurgeEnv(t *testing.T) *purgeEnv {
	t.Helper()
	bucket, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	store := registry.NewStore(bucket)
	svc, err := governance.New(governance.Options{Store: store})
	assert.NilError(t, err)
	c := &fakeCatalog{live: map[string]string{}}
	return &purgeEnv{store: store, trash: governance.NewTrash(svc, 24*time.Hour, c), catalog: c, now: time.Now().UTC()}
}

// file puts a trash record of kind at id, dropped two days ago; expired says whether its
// deadline has passed.
func (e *purgeEnv) file(t *testing.T, kind string, expired bool, id ...string) string {
	t.Helper()
	return e.fileIn(t, nil, kind, expired, id...)
}

// fileIn is file for an object that lived in a warehouse (binding; nil: the catalog root).
func (e *purgeEnv) fileIn(t *testing.T, binding *registry.Binding, kind string, expired bool, id ...string) string {
	t.Helper()
	rec := registry.Trash{Kind: kind, ID: id, DroppedAt: e.now.Add(-48 * time.Hour), ExpiresAt: e.now.Add(-time.Hour), Placed: true, Binding: binding}
	if kind == registry.KindTable {
		rec.Location = "0000_" + ident.ID(id).Join("$")
	}
	if !expired {
		rec.ExpiresAt = e.now.Add(time.Hour)
	}
	key := registry.ObjectKey(registry.TrashPrefix, kind, id)
	assert.NilError(t, registry.Put(context.Background(), e.store, key, rec))
	return key
}

// warehouse files warehouse id (of project p1) with status.
func (e *purgeEnv) warehouse(t *testing.T, id, status string) {
	t.Helper()
	assert.NilError(t, registry.Put(context.Background(), e.store, registry.WarehouseKey(id),
		registry.Warehouse{ID: id, Project: "p1", Bucket: id, RootURI: "file:///wh/" + id, Status: status, CreatedAt: e.now}))
}

func actions(rep PurgeReport) map[string]string {
	out := map[string]string{}
	for _, it := range rep.Items {
		out[it.Kind+":"+ident.ID(it.ID).Join("$")] = it.Action
	}
	return out
}

// TestPurgeTrashDecisions: what one run does with each kind of record, table-driven on the state
// the catalog and the records are in.
func TestPurgeTrashDecisions(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, e *purgeEnv)
		opts    PurgeOptions
		actions map[string]string
		deleted []string
		kept    []string // record keys still there after the run
		pending int
	}{
		{
			name:    "an expired table: bytes then record",
			setup:   func(t *testing.T, e *purgeEnv) { e.file(t, registry.KindTable, true, "a", "u") },
			actions: map[string]string{"table:a$u": PurgePurged},
			deleted: []string{"|0000_a$u"},
		},
		{
			name: "a table not expired yet is pending",
			setup: func(t *testing.T, e *purgeEnv) {
				e.file(t, registry.KindTable, false, "a", "u")
			},
			actions: map[string]string{},
			kept:    []string{registry.ObjectKey(registry.TrashPrefix, registry.KindTable, []string{"a", "u"})},
			pending: 1,
		},
		{
			name: "a table registered at its location again keeps its bytes",
			setup: func(t *testing.T, e *purgeEnv) {
				e.file(t, registry.KindTable, true, "a", "u")
				e.catalog.live["a$u"] = "0000_a$u"
			},
			actions: map[string]string{"table:a$u": PurgeKept},
		},
		{
			name: "another table at the id does not save the dropped one's bytes",
			setup: func(t *testing.T, e *purgeEnv) {
				e.file(t, registry.KindTable, true, "a", "u")
				e.catalog.live["a$u"] = "0001_a$u"
			},
			actions: map[string]string{"table:a$u": PurgePurged},
			deleted: []string{"|0000_a$u"},
		},
		{
			name: "a catalog that cannot answer deletes nothing on a guess",
			setup: func(t *testing.T, e *purgeEnv) {
				e.file(t, registry.KindTable, true, "a", "u")
				e.catalog.failing = nserr.ServiceUnavailablef("down")
			},
			actions: map[string]string{"table:a$u": PurgeSkipped},
			kept:    []string{registry.ObjectKey(registry.TrashPrefix, registry.KindTable, []string{"a", "u"})},
		},
		{
			name: "a dry run changes nothing",
			setup: func(t *testing.T, e *purgeEnv) {
				e.file(t, registry.KindTable, true, "a", "u")
				e.file(t, registry.KindNamespace, true, "b")
			},
			opts:    PurgeOptions{DryRun: true},
			actions: map[string]string{"table:a$u": PurgeWouldPurge, "namespace:b": PurgeWouldPurge},
			kept: []string{registry.ObjectKey(registry.TrashPrefix, registry.KindTable, []string{"a", "u"}),
				registry.ObjectKey(registry.TrashPrefix, registry.KindNamespace, []string{"b"})},
		},
		{
			name: "a namespace goes in the same run as its tables, deepest first",
			setup: func(t *testing.T, e *purgeEnv) {
				e.file(t, registry.KindNamespace, true, "a")
				e.file(t, registry.KindNamespace, true, "a", "b")
				e.file(t, registry.KindTable, true, "a", "b", "t")
			},
			actions: map[string]string{"table:a$b$t": PurgePurged, "namespace:a$b": PurgePurged, "namespace:a": PurgePurged},
			deleted: []string{"|0000_a$b$t"},
		},
		{
			name: "a namespace stays while a table under it is still in the trash",
			setup: func(t *testing.T, e *purgeEnv) {
				e.file(t, registry.KindNamespace, true, "a")
				e.file(t, registry.KindTable, false, "a", "t")
			},
			actions: map[string]string{"namespace:a": PurgeSkipped},
			kept: []string{registry.ObjectKey(registry.TrashPrefix, registry.KindNamespace, []string{"a"}),
				registry.ObjectKey(registry.TrashPrefix, registry.KindTable, []string{"a", "t"})},
			pending: 1,
		},
		{
			name: "a fresh undrop claim wins",
			setup: func(t *testing.T, e *purgeEnv) {
				key := e.file(t, registry.KindTable, true, "a", "u")
				_, err := registry.Mutate(ctx, e.store, key, func(r *registry.Trash) error {
					r.Undropping, r.UndroppingSince = true, &e.now
					return nil
				})
				assert.NilError(t, err)
			},
			actions: map[string]string{"table:a$u": PurgeSkipped},
			kept:    []string{registry.ObjectKey(registry.TrashPrefix, registry.KindTable, []string{"a", "u"})},
		},
		{
			name: "a table of a warehouse is deleted in the warehouse's root",
			setup: func(t *testing.T, e *purgeEnv) {
				e.warehouse(t, "w1", registry.StatusActive)
				e.fileIn(t, &registry.Binding{TopNamespace: "a", WarehouseID: "w1", RootURI: "file:///wh/w1"}, registry.KindTable, true, "a", "u")
			},
			actions: map[string]string{"table:a$u": PurgePurged},
			deleted: []string{"file:///wh/w1|0000_a$u"},
		},
		{
			name: "a deactivated warehouse's bytes are quarantined",
			setup: func(t *testing.T, e *purgeEnv) {
				e.warehouse(t, "w1", registry.StatusDeactivated)
				e.fileIn(t, &registry.Binding{TopNamespace: "a", WarehouseID: "w1", RootURI: "file:///wh/w1"}, registry.KindTable, true, "a", "u")
			},
			actions: map[string]string{"table:a$u": PurgeSkipped},
			kept:    []string{registry.ObjectKey(registry.TrashPrefix, registry.KindTable, []string{"a", "u"})},
		},
		{
			name: "a deleted warehouse's bytes are not the catalog's",
			setup: func(t *testing.T, e *purgeEnv) {
				e.fileIn(t, &registry.Binding{TopNamespace: "a", WarehouseID: "w1", RootURI: "file:///wh/w1"}, registry.KindTable, true, "a", "u")
			},
			actions: map[string]string{"table:a$u": PurgeSkipped},
			kept:    []string{registry.ObjectKey(registry.TrashPrefix, registry.KindTable, []string{"a", "u"})},
		},
		{
			name: "the limit stops the run",
			setup: func(t *testing.T, e *purgeEnv) {
				e.file(t, registry.KindTable, true, "a", "t1")
				e.file(t, registry.KindTable, true, "a", "t2")
			},
			opts:    PurgeOptions{Limit: 1},
			actions: map[string]string{"table:a$t1": PurgePurged},
			deleted: []string{"|0000_a$t1"},
			kept:    []string{registry.ObjectKey(registry.TrashPrefix, registry.KindTable, []string{"a", "t2"})},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPurgeEnv(t)
			tc.setup(t, e)
			opts := tc.opts
			opts.Now = e.now
			rep, err := PurgeTrash(ctx, e.trash, opts)
			assert.NilError(t, err)
			assert.DeepEqual(t, actions(rep), tc.actions)
			assert.DeepEqual(t, e.catalog.deleted, tc.deleted)
			assert.Equal(t, rep.Pending, tc.pending)
			assert.Equal(t, rep.Truncated, tc.opts.Limit > 0)
			listed, err := e.trash.ListTrash(ctx)
			assert.NilError(t, err)
			left := listed.Keys
			if left == nil {
				left = []string{}
			}
			want := tc.kept
			if want == nil {
				want = []string{}
			}
			slices.Sort(left)
			slices.Sort(want)
			assert.DeepEqual(t, left, want)
			// A record left behind carries no purge claim: a run that skips a record releases it,
			// so an undrop is not kept out for TrashClaimTTL.
			for _, rec := range listed.Records {
				assert.Assert(t, !rec.Purging, "%v is left claimed", rec.ID)
			}
		})
	}
}

// TestPurgeTrashWithoutCatalog: a trash with nothing to delete bytes in cannot purge, and says so.
func TestPurgeTrashWithoutCatalog(t *testing.T) {
	bucket, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	svc, err := governance.New(governance.Options{Store: registry.NewStore(bucket)})
	assert.NilError(t, err)
	_, err = PurgeTrash(context.Background(), governance.NewTrash(svc, time.Hour, nil), PurgeOptions{})
	assert.Assert(t, nserr.Is(err, nserr.ErrUnsupported), "%v", err)
}
