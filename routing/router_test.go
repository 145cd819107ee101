package routing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// testRouter is a router over memory roots: the catalog root and two warehouse roots, with
// namespace "b1" bound to warehouse w1 and "b2" to w2.
func testRouter(t *testing.T) (*Router, *registry.Store) {
	t.Helper()
	ctx := context.Background()
	store := registry.NewStore(storage.NewMemory())
	roots := map[string]*namespace.Namespace{}
	for _, uri := range []string{"memory://w1", "memory://w2"} {
		roots[uri] = namespace.New(storage.NewMemory(), namespace.Options{RootURI: uri})
	}
	r, err := New(Options{
		Default: namespace.New(storage.NewMemory(), namespace.Options{RootURI: "memory://catalog"}),
		Store:   store,
		Open: func(_ context.Context, uri string) (*namespace.Namespace, error) {
			n, ok := roots[uri]
			if !ok {
				return nil, fmt.Errorf("no root %s", uri)
			}
			return n, nil
		},
	})
	assert.NilError(t, err)
	for i, w := range []string{"w1", "w2"} {
		assert.NilError(t, registry.Create(ctx, store, registry.WarehouseKey(w), registry.Warehouse{
			ID: w, Project: "p", Bucket: w, RootURI: "memory://" + w, Status: registry.StatusActive,
		}))
		b := registry.Binding{TopNamespace: fmt.Sprintf("b%d", i+1), WarehouseID: w, RootURI: "memory://" + w}
		assert.NilError(t, registry.Create(ctx, store, registry.BindingKey(b.TopNamespace), b))
		assert.NilError(t, r.CreateInRoot(ctx, b.RootURI, b.TopNamespace, nil))
	}
	return r, store
}

func drain(t *testing.T, limit int, list func(token string, limit int) (catalog.Page, error)) []string {
	t.Helper()
	var out []string
	token := ""
	for range 100 {
		page, err := list(token, limit)
		assert.NilError(t, err)
		out = append(out, page.Names...)
		if page.NextToken == "" {
			return out
		}
		assert.Assert(t, page.NextToken > token, "the token moves forward")
		token = page.NextToken
	}
	t.Fatal("pagination did not end")
	return nil
}

// TestRoutedListingsPageAcrossRoots: the root's namespaces and every table, whatever root they
// live in, come back once each and in order for every page size.
func TestRoutedListingsPageAcrossRoots(t *testing.T) {
	r, _ := testRouter(t)
	ctx := context.Background()
	for _, ns := range []string{"a", "c", "z"} {
		_, err := r.CreateNamespace(ctx, ident.ID{ns}, nil, "Create")
		assert.NilError(t, err)
	}
	var want []string
	for _, ns := range []string{"a", "b1", "b2", "z"} {
		for i := range 3 {
			id := ident.ID{ns, fmt.Sprintf("t%d", i)}
			_, err := r.DeclareTable(ctx, id, "", nil)
			assert.NilError(t, err)
			want = append(want, ns+"$"+id[1])
		}
	}
	for _, limit := range []int{0, 1, 2, 3, 5, 100} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			got := drain(t, limit, func(tok string, l int) (catalog.Page, error) { return r.ListNamespaces(ctx, nil, tok, l) })
			assert.DeepEqual(t, got, []string{"a", "b1", "b2", "c", "z"})
			got = drain(t, limit, func(tok string, l int) (catalog.Page, error) { return r.ListAllTables(ctx, tok, l) })
			assert.DeepEqual(t, got, want)
		})
	}
	// Tables of a bound namespace live in its warehouse's root only.
	tbl, err := r.DescribeTable(ctx, ident.ID{"b2", "t0"})
	assert.NilError(t, err)
	assert.Assert(t, tbl.URI != "" && tbl.URI[:len("memory://w2")] == "memory://w2", tbl.URI)
	assert.Assert(t, nserr.Is(r.Default().TableExists(ctx, ident.ID{"b2", "t0"}), nserr.ErrTableNotFound) ||
		nserr.Is(r.Default().TableExists(ctx, ident.ID{"b2", "t0"}), nserr.ErrNamespaceNotFound))
}

// TestQuarantineIsReadLive: deactivating a warehouse refuses its namespaces on the next request
// (status is never cached), a missing warehouse too, and an unreadable record is 503.
func TestQuarantineIsReadLive(t *testing.T) {
	r, store := testRouter(t)
	ctx := context.Background()
	_, err := r.DescribeNamespace(ctx, ident.ID{"b1"})
	assert.NilError(t, err)
	_, err = registry.Mutate(ctx, store, registry.WarehouseKey("w1"), func(w *registry.Warehouse) error {
		w.Status = registry.StatusDeactivated
		return nil
	})
	assert.NilError(t, err)
	_, err = r.DescribeNamespace(ctx, ident.ID{"b1"})
	assert.Assert(t, nserr.Is(err, nserr.ErrPermissionDenied), "%v", err)
	_, err = r.DescribeNamespace(ctx, ident.ID{"b2"})
	assert.NilError(t, err)
	assert.NilError(t, registry.Delete(ctx, store, registry.WarehouseKey("w2")))
	_, err = r.DescribeNamespace(ctx, ident.ID{"b2"})
	assert.Assert(t, nserr.Is(err, nserr.ErrPermissionDenied), "%v", err)
}

// failingGets fails every read of the control root (it cannot be reached).
type failingGets struct{ storage.Bucket }

func (failingGets) Get(context.Context, string) (io.ReadCloser, storage.ObjectInfo, error) {
	return nil, storage.ObjectInfo{}, errors.New("control root unreachable")
}

// TestResolveSpansRootsOnce: what only the router can decide is decided when a request resolves
// its root, for every door that reaches a table through its handle too: a quarantined warehouse
// refuses (403) the table's load, an unreadable control root is 503 (never the catalog root's
// answer), a rename into another root is refused, an unbound top-level create is refused when
// warehouses are required, and a dropped bound namespace loses its binding.
func TestResolveSpansRootsOnce(t *testing.T) {
	ctx := context.Background()
	r, store := testRouter(t)
	id := ident.ID{"b1", "t"}
	_, err := r.DeclareTable(ctx, id, "", nil)
	assert.NilError(t, err)
	h, err := r.LoadTable(ctx, id)
	assert.NilError(t, err)
	assert.Assert(t, strings.HasPrefix(h.Meta().URI, "memory://w1"), h.Meta().URI)

	_, err = r.RenameTable(ctx, id, ident.ID{"b2"}, "t")
	assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "%v", err)
	assert.ErrorContains(t, err, "different warehouses")

	_, err = registry.Mutate(ctx, store, registry.WarehouseKey("w1"), func(w *registry.Warehouse) error {
		w.Status = registry.StatusDeactivated
		return nil
	})
	assert.NilError(t, err)
	_, err = r.LoadTable(ctx, id)
	assert.Assert(t, nserr.Is(err, nserr.ErrPermissionDenied), "%v", err)
	_, err = r.Resolve(ctx, ident.ID{"b1", "deeper"})
	assert.Assert(t, nserr.Is(err, nserr.ErrPermissionDenied), "%v", err)

	broken, err := New(Options{Default: r.Default(), Store: registry.NewStore(failingGets{storage.NewMemory()}), Open: r.opts.Open})
	assert.NilError(t, err)
	_, err = broken.LoadTable(ctx, ident.ID{"b2", "t"})
	assert.Equal(t, nserr.CodeOf(err), nserr.ServiceUnavailable, "%v", err)

	strict, err := New(Options{Default: r.Default(), Store: store, Open: r.opts.Open, RequireWarehouse: true})
	assert.NilError(t, err)
	_, err = strict.CreateNamespace(ctx, ident.ID{"loose"}, nil, "")
	assert.Assert(t, nserr.Is(err, nserr.ErrInvalidInput), "%v", err)
	_, err = strict.CreateNamespace(ctx, ident.ID{"b2", "child"}, nil, "")
	assert.NilError(t, err, "below the top level, and in a bound namespace, creates go on")

	var unbound []string
	r.OnUnbind(func(_ context.Context, b registry.Binding) { unbound = append(unbound, b.TopNamespace) })
	_, err = r.DropNamespace(ctx, ident.ID{"b2"}, "", catalog.BehaviorCascade)
	assert.NilError(t, err)
	assert.DeepEqual(t, unbound, []string{"b2"})
	_, ok, err := r.Binding(ctx, "b2")
	assert.NilError(t, err)
	assert.Assert(t, !ok)
}
