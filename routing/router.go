// Package routing sends every catalog request to the root its top-level namespace lives in: the
// catalog's own root, or the root of the warehouse the namespace is bound to
// (registry.Binding, written once by POST /v1/warehouses/{id}/namespaces). Router.Resolve finds
// the catalog.Catalog of that root once per operation; the Router itself is the catalog the spec
// handlers see (catalog.Route over Resolve), and a table's handle (LoadTable) stays bound to the
// root it was found in, so nothing routes twice. Every spec door is routed and quarantined the same
// way: a bound namespace of a warehouse that is deactivated (or gone) is 403 on every operation,
// and a control root that cannot be read is 503 — never a fall back to the catalog root, which
// would serve or create the namespace in the wrong bucket.
//
// Bindings are cached per replica for a short time (positives only: a namespace bound by another
// replica is seen at once). Warehouse status is never cached, so a quarantine takes effect on the
// next request everywhere.
package routing

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
)

// Opener opens the directory namespace at a warehouse root URI.
type Opener func(ctx context.Context, rootURI string) (*namespace.Namespace, error)

// DefaultBindingTTL bounds how long a replica trusts a cached binding; an unbind on another
// replica is seen after at most this long.
const DefaultBindingTTL = 10 * time.Second

// Options build a Router.
type Options struct {
	Default *namespace.Namespace // the catalog root (required)
	Store   *registry.Store      // the control root's records (required)
	Open    Opener               // opens warehouse roots (required)
	// RequireWarehouse refuses top-level namespace creates through the spec door: they must be
	// made with POST /v1/warehouses/{id}/namespaces.
	RequireWarehouse bool
	BindingTTL       time.Duration // default DefaultBindingTTL
	Delimiter        string        // how ids are joined in messages; default "$"
	Now              func() time.Time
	// Unbound is told about every binding the router deleted because its namespace was dropped.
	Unbound func(ctx context.Context, b registry.Binding)
}

// Router is the routed catalog: as a catalog.Catalog (embedded: catalog.Route over Resolve) every
// operation resolves its root once; LoadTable's handle is bound to the table's root.
type Router struct {
	opts Options

	mu       sync.Mutex
	bindings map[string]cachedBinding
	roots    map[string]*namespace.Namespace
}

type cachedBinding struct {
	b       registry.Binding
	expires time.Time
}

// New returns the router.
func New(opts Options) (*Router, error) {
	if opts.Default == nil || opts.Store == nil || opts.Open == nil {
		return nil, errors.New("routing: the default root, the registry store and an opener are required")
	}
	if opts.BindingTTL <= 0 {
		opts.BindingTTL = DefaultBindingTTL
	}
	if opts.Delimiter == "" {
		opts.Delimiter = ident.DefaultDelimiter
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &Router{opts: opts, bindings: map[string]cachedBinding{}, roots: map[string]*namespace.Namespace{}}
	return r, nil
}

// OnUnbind sets the hook told about every binding the router deletes (set before serving).
func (r *Router) OnUnbind(fn func(ctx context.Context, b registry.Binding)) { r.opts.Unbound = fn }

// Default is the catalog root's namespace.
func (r *Router) Default() *namespace.Namespace { return r.opts.Default }

// Bindable reports whether a top-level namespace name can be bound (its binding record's key
// must be safe on every store).
func Bindable(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > 200 {
		return false
	}
	return !strings.ContainsFunc(name, func(r rune) bool { return r == '/' || r == '\\' || r < 0x20 || r == 0x7f })
}

// Binding is the binding of top-level namespace name, if any; the cache is consulted first.
func (r *Router) Binding(ctx context.Context, name string) (registry.Binding, bool, error) {
	if !Bindable(name) {
		return registry.Binding{}, false, nil
	}
	now := r.opts.Now()
	r.mu.Lock()
	c, ok := r.bindings[name]
	r.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.b, true, nil
	}
	b, _, err := registry.Read[registry.Binding](ctx, r.opts.Store, registry.BindingKey(name))
	switch {
	case errors.Is(err, registry.ErrNotFound):
		r.Forget(name)
		return registry.Binding{}, false, nil
	case err != nil:
		return registry.Binding{}, false, controlRootError(err, "the binding of namespace "+name)
	}
	r.mu.Lock()
	r.bindings[name] = cachedBinding{b: b, expires: now.Add(r.opts.BindingTTL)}
	r.mu.Unlock()
	return b, true, nil
}

// Forget drops name from this replica's binding cache (after an unbind or a rebind).
func (r *Router) Forget(name string) {
	r.mu.Lock()
	delete(r.bindings, name)
	r.mu.Unlock()
}

// Root opens (once per replica) the namespace at a warehouse root URI.
func (r *Router) Root(ctx context.Context, rootURI string) (*namespace.Namespace, error) {
	r.mu.Lock()
	n, ok := r.roots[rootURI]
	r.mu.Unlock()
	if ok {
		return n, nil
	}
	n, err := r.opts.Open(ctx, rootURI)
	if err != nil {
		return nil, nserr.Wrap(nserr.ServiceUnavailable, err, "the warehouse root "+rootURI+" cannot be opened")
	}
	r.mu.Lock()
	if prev, ok := r.roots[rootURI]; ok {
		n = prev
	} else {
		r.roots[rootURI] = n
	}
	r.mu.Unlock()
	return n, nil
}

// Active is nil when warehouse id exists and serves requests: 403 when it is deactivated or gone
// (its namespaces are quarantined), 503 when its record cannot be read. Read live, never cached.
func (r *Router) Active(ctx context.Context, warehouseID, namespaceName string) error {
	w, _, err := registry.Read[registry.Warehouse](ctx, r.opts.Store, registry.WarehouseKey(warehouseID))
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return nserr.PermissionDeniedf("namespace %s is bound to warehouse %q, which no longer exists", namespaceName, warehouseID)
	case err != nil:
		return controlRootError(err, "the record of warehouse "+warehouseID)
	case !w.Active():
		return nserr.PermissionDeniedf("namespace %s is quarantined: its warehouse %q is deactivated (POST /v1/warehouses/%s/activate restores it)",
			namespaceName, warehouseID, warehouseID)
	}
	return nil
}

var _ catalog.Catalog = (*Router)(nil)

// route is the namespace that holds namespace ns (and the binding that sent it there, if any).
// The root namespace, and every namespace whose top-level one is unbound, is the default root.
func (r *Router) route(ctx context.Context, ns ident.ID) (*namespace.Namespace, *registry.Binding, error) {
	if len(ns) == 0 {
		return r.opts.Default, nil, nil
	}
	b, ok, err := r.Binding(ctx, ns[0])
	if err != nil || !ok {
		return r.opts.Default, nil, err
	}
	if err := r.Active(ctx, b.WarehouseID, ns[0]); err != nil {
		return nil, nil, err
	}
	n, err := r.Root(ctx, b.RootURI)
	if err != nil {
		return nil, nil, err
	}
	return n, &b, nil
}

// unbind deletes the binding of a top-level namespace that was just dropped.
func (r *Router) unbind(ctx context.Context, b registry.Binding) error {
	if err := registry.Delete(ctx, r.opts.Store, registry.BindingKey(b.TopNamespace)); err != nil {
		return nserr.Wrap(nserr.ServiceUnavailable, err, "namespace "+b.TopNamespace+
			" was dropped but its warehouse binding could not be removed; drop it again")
	}
	r.Forget(b.TopNamespace)
	if r.opts.Unbound != nil {
		r.opts.Unbound(ctx, b)
	}
	return nil
}

func controlRootError(err error, what string) error {
	return nserr.Otherwise(nserr.ServiceUnavailable, err, what+" cannot be read from the control root")
}

// boundNames lists every bound top-level namespace, sorted. An unreadable binding refuses (503):
// a listing must not silently leave a namespace out.
func (r *Router) boundNames(ctx context.Context) ([]string, error) {
	bindings, err := r.Bindings(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(bindings))
	for i, b := range bindings {
		out[i] = b.TopNamespace
	}
	return out, nil
}

// Bindings lists every binding by namespace name; any unreadable record refuses (503).
func (r *Router) Bindings(ctx context.Context) ([]registry.Binding, error) {
	listed, err := registry.List[registry.Binding](ctx, r.opts.Store, registry.BindingsPrefix)
	if err != nil {
		return nil, controlRootError(err, "the namespace bindings")
	}
	if len(listed.Skipped) > 0 {
		return nil, nserr.ServiceUnavailablef("unreadable namespace bindings (%s): refusing to answer from a partial list", strings.Join(listed.Skipped, ", "))
	}
	out := listed.Records
	slices.SortFunc(out, func(a, b registry.Binding) int { return strings.Compare(a.TopNamespace, b.TopNamespace) })
	return out, nil
}

// mergePage merges the names of page (which followed token and limit) with extra (sorted,
// unfiltered) into one page after token of at most limit names. Where page stopped short, the
// merged page ends too: names past that point are found again after the new token.
func mergePage(page catalog.Page, extra []string, token string, limit int) catalog.Page {
	names := slices.Clone(page.Names)
	for _, e := range extra {
		if (token == "" || e > token) && (page.NextToken == "" || e <= page.NextToken) {
			names = append(names, e)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out := catalog.Page{Names: names, NextToken: page.NextToken}
	if limit > 0 && len(names) > limit {
		out.Names = names[:limit]
		out.NextToken = names[limit-1]
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// listAllTables lists every table of the catalog root and of every active warehouse a namespace
// is bound to, by object id. A table under a bound name is taken only from its bound root; a
// quarantined warehouse's tables are left out (they are unavailable, not gone).
//
// Each root pages on its own; the merged page is complete only up to the smallest point where a
// root stopped short, so it ends there (and the next page starts after it in every root).
func (r *Router) listAllTables(ctx context.Context, token string, limit int) (catalog.Page, error) {
	sources, err := r.tableSources(ctx)
	if err != nil {
		return catalog.Page{}, err
	}
	var names []string
	cut := ""
	for _, src := range sources {
		page, err := src.n.ListAllTables(ctx, token, limit)
		if err != nil {
			return catalog.Page{}, err
		}
		if page.NextToken != "" && (cut == "" || page.NextToken < cut) {
			cut = page.NextToken
		}
		for _, oid := range page.Names {
			if src.serves(namespace.SplitID(oid)) {
				names = append(names, oid)
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if cut != "" {
		names = slices.DeleteFunc(names, func(s string) bool { return s > cut })
	}
	out := catalog.Page{Names: names, NextToken: cut}
	if limit > 0 && len(names) > limit {
		out.Names = names[:limit]
		out.NextToken = names[limit-1]
	}
	return out, nil
}
