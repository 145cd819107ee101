package routing

import (
	"context"
	"slices"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
)

// tableSource is one root the catalog-wide table listings read: the catalog root (uri "") or an
// active warehouse root, and which top-level namespaces are bound where.
type tableSource struct {
	uri     string
	n       *namespace.Namespace
	boundTo map[string]string
}

// serves says whether table id is this source's: a table under a bound name is taken only from
// its bound root, every other one only from the catalog root.
func (s tableSource) serves(id ident.ID) bool {
	want, bound := "", false
	if len(id) > 1 {
		want, bound = s.boundTo[id[0]]
	}
	return (s.uri == "" && !bound) || (s.uri != "" && bound && want == s.uri)
}

// tableSources are the catalog root and every active warehouse root a namespace is bound to; a
// quarantined warehouse's root is left out (its tables are unavailable, not gone).
func (r *Router) tableSources(ctx context.Context) ([]tableSource, error) {
	bindings, err := r.Bindings(ctx)
	if err != nil {
		return nil, err
	}
	boundTo := map[string]string{}
	active := map[string]bool{}
	for _, b := range bindings {
		boundTo[b.TopNamespace] = b.RootURI
		if r.Active(ctx, b.WarehouseID, b.TopNamespace) == nil {
			active[b.RootURI] = true
		}
	}
	out := []tableSource{{n: r.opts.Default, boundTo: boundTo}}
	for _, uri := range sortedKeys(active) {
		n, err := r.Root(ctx, uri)
		if err != nil {
			return nil, err
		}
		out = append(out, tableSource{uri: uri, n: n, boundTo: boundTo})
	}
	return out, nil
}

// LoadAllTables loads every table ListAllTables lists, each through its own root
// (namespace.Namespace.LoadAllTables: each table checked once, not once to list it and again to
// load it), in id order. It is the maintenance sweep's walk over the catalog.
func (r *Router) LoadAllTables(ctx context.Context) ([]catalog.Table, error) {
	sources, err := r.tableSources(ctx)
	if err != nil {
		return nil, err
	}
	var out []catalog.Table
	for _, src := range sources {
		tables, err := src.n.LoadAllTables(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range tables {
			if src.serves(t.Meta().ID) {
				out = append(out, t)
			}
		}
	}
	slices.SortFunc(out, func(a, b catalog.Table) int { return slices.Compare(a.Meta().ID, b.Meta().ID) })
	return out, nil
}
