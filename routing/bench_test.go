package routing

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// BenchmarkRoutedDescribeTable measures what routing adds to describe_table on local disk: the
// catalog root's namespace alone, the router in front of it (one binding lookup that finds
// nothing), and a table in a bound namespace (the binding from the cache, the warehouse's status
// read live).
//
//	go test -run '^$' -bench BenchmarkRoutedDescribeTable ./routing
func BenchmarkRoutedDescribeTable(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	open := func(name string) (*namespace.Namespace, string) {
		uri := filepath.Join(dir, name)
		fs, err := storage.NewFS(uri)
		if err != nil {
			b.Fatal(err)
		}
		return namespace.New(fs, namespace.Options{RootURI: uri}), uri
	}
	def, _ := open("catalog")
	wh, whURI := open("warehouse")
	control, err := storage.NewFS(filepath.Join(dir, "control"))
	if err != nil {
		b.Fatal(err)
	}
	store := registry.NewStore(control)
	r, err := New(Options{Default: def, Store: store, Open: func(context.Context, string) (*namespace.Namespace, error) { return wh, nil }})
	if err != nil {
		b.Fatal(err)
	}
	if err := registry.Create(ctx, store, registry.WarehouseKey("w"), registry.Warehouse{ID: "w", Project: "p", Bucket: whURI, RootURI: whURI}); err != nil {
		b.Fatal(err)
	}
	if err := registry.Create(ctx, store, registry.BindingKey("bound"), registry.Binding{TopNamespace: "bound", WarehouseID: "w", RootURI: whURI}); err != nil {
		b.Fatal(err)
	}
	if err := r.CreateInRoot(ctx, whURI, "bound", nil); err != nil {
		b.Fatal(err)
	}
	if _, err := r.CreateNamespace(ctx, ident.ID{"plain"}, nil, "Create"); err != nil {
		b.Fatal(err)
	}
	for _, ns := range []string{"plain", "bound"} {
		if _, err := r.DeclareTable(ctx, ident.ID{ns, "t"}, "", nil); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name     string
		describe func(ident.ID) (*catalog.Entry, error)
		ns       string
	}{
		{"namespace-only", func(id ident.ID) (*catalog.Entry, error) { return def.DescribeTable(ctx, id) }, "plain"},
		{"routed-unbound", func(id ident.ID) (*catalog.Entry, error) { return r.DescribeTable(ctx, id) }, "plain"},
		{"routed-bound", func(id ident.ID) (*catalog.Entry, error) { return r.DescribeTable(ctx, id) }, "bound"},
	} {
		b.Run(c.name, func(b *testing.B) {
			id := ident.ID{c.ns, "t"}
			for b.Loop() {
				if _, err := c.describe(id); err != nil {
					b.Fatal(fmt.Errorf("%s: %w", c.name, err))
				}
			}
		})
	}
}
