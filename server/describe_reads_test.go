package server

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/routing"
	"github.com/lancecat/lancecat/storage"
)

// countingBucket counts the reads (Get, GetRange, Stat, List) of keys matching a predicate.
type countingBucket struct {
	storage.Bucket
	mu     sync.Mutex
	match  func(key string) bool
	counts map[string]int // op -> reads of matching keys
}

func counting(b storage.Bucket, match func(string) bool) *countingBucket {
	return &countingBucket{Bucket: b, match: match, counts: map[string]int{}}
}

func (c *countingBucket) note(op, key string) {
	if c.match(key) {
		c.mu.Lock()
		c.counts[op]++
		c.mu.Unlock()
	}
}

func (c *countingBucket) reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.counts
	c.counts = map[string]int{}
	return out
}

func (c *countingBucket) Get(ctx context.Context, key string) (io.ReadCloser, storage.ObjectInfo, error) {
	c.note("get", key)
	return c.Bucket.Get(ctx, key)
}

func (c *countingBucket) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	c.note("get", key)
	return c.Bucket.GetRange(ctx, key, off, n)
}

func (c *countingBucket) Stat(ctx context.Context, key string) (storage.ObjectInfo, error) {
	c.note("stat", key)
	return c.Bucket.Stat(ctx, key)
}

func (c *countingBucket) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListPage, error) {
	c.note("list", prefix)
	return c.Bucket.List(ctx, prefix, opts)
}

// TestDescribeTableResolvesOnce: describe_table of a table in a warehouse-bound namespace reads
// the warehouse's record once (its quarantine is checked once per request, not once per layer)
// and opens the table's latest version once: exactly the reads of one OpenLatest. Before the
// Catalog contract it routed twice (DescribeTable, then State), reading the record twice.
func TestDescribeTableResolvesOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fs := func(name string) storage.Bucket {
		b, err := storage.NewFS(filepath.Join(dir, name))
		assert.NilError(t, err)
		return b
	}
	whURI := filepath.Join(dir, "warehouse")
	warehouseKey := registry.WarehouseKey("w")
	control := counting(fs("control"), func(k string) bool { return k == warehouseKey })
	location := "" // the table's: its _versions/ reads are counted once it is known
	versions := counting(fs("warehouse"), func(k string) bool {
		return location != "" && strings.HasPrefix(k, location+"/_versions")
	})
	wh := namespace.New(versions, namespace.Options{RootURI: whURI})
	store := registry.NewStore(control)
	r, err := routing.New(routing.Options{
		Default: namespace.New(fs("catalog"), namespace.Options{RootURI: filepath.Join(dir, "catalog")}),
		Store:   store,
		Open:    func(context.Context, string) (*namespace.Namespace, error) { return wh, nil },
	})
	assert.NilError(t, err)
	assert.NilError(t, registry.Create(ctx, store, warehouseKey, registry.Warehouse{
		ID: "w", Project: "p", Bucket: whURI, RootURI: whURI, Status: registry.StatusActive,
	}))
	assert.NilError(t, registry.Create(ctx, store, registry.BindingKey("bound"), registry.Binding{TopNamespace: "bound", WarehouseID: "w", RootURI: whURI}))
	assert.NilError(t, r.CreateInRoot(ctx, whURI, "bound", nil))
	tbl, _, err := r.CreateTable(ctx, ident.ID{"bound", "t"}, catalog.NewTable{
		Schema: arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil),
	})
	assert.NilError(t, err)
	location = tbl.Location

	// What one OpenLatest of the table reads, once its manifest's decode is in lance's shared
	// cache (the describes below are warmed the same way): the listing, no get.
	_, err = wh.Dataset(tbl).OpenLatest(ctx)
	assert.NilError(t, err)
	versions.reset()
	_, err = wh.Dataset(tbl).OpenLatest(ctx)
	assert.NilError(t, err)
	oneOpen := versions.reset()
	assert.Assert(t, len(oneOpen) > 0)

	srv, err := New(Options{Handlers: handlers.New(handlers.Options{Catalog: r})})
	assert.NilError(t, err)
	describe := func() answer {
		return do(t, srv.Handler(), http.MethodPost, "/v1/table/bound$t/describe", `{"load_detailed_metadata":true}`, nil)
	}
	assert.Equal(t, describe().status, http.StatusOK) // warms the binding cache and the snapshot
	control.reset()
	versions.reset()

	a := describe()
	assert.Equal(t, a.status, http.StatusOK, a.body)
	assert.DeepEqual(t, control.reset(), map[string]int{"get": 1})
	assert.DeepEqual(t, versions.reset(), oneOpen)
}
