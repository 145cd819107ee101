package routing

// What the control plane needs of the router to bind namespaces to warehouses and to unbind them
// again (governance.WarehouseRoots, governance.NamespaceDropper).

import (
	"context"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// DefaultNamespaceExists answers in the catalog's own root, whatever is bound.
func (r *Router) DefaultNamespaceExists(ctx context.Context, name string) error {
	return r.opts.Default.NamespaceExists(ctx, ident.ID{name})
}

// CreateInRoot creates top-level namespace name in the root at rootURI.
func (r *Router) CreateInRoot(ctx context.Context, rootURI, name string, props map[string]string) error {
	n, err := r.Root(ctx, rootURI)
	if err != nil {
		return err
	}
	_, err = n.CreateNamespace(ctx, ident.ID{name}, props, "Create")
	return err
}

// DropInRoot drops the empty top-level namespace name at rootURI; a missing one is fine, one
// holding anything refuses on its own rung (NamespaceNotEmpty naming it).
func (r *Router) DropInRoot(ctx context.Context, rootURI, name string) error {
	n, err := r.Root(ctx, rootURI)
	if err != nil {
		return err
	}
	_, err = n.DropNamespace(ctx, ident.ID{name}, "Skip", "Restrict")
	if nserr.Is(err, nserr.ErrNamespaceNotFound) {
		return nil
	}
	return err
}

// DropBoundNamespace is a warehouse delete's cascade over one of its namespaces: a Restrict drop
// in the warehouse's root, whatever the warehouse's status. The caller removes the binding.
func (r *Router) DropBoundNamespace(ctx context.Context, b registry.Binding) error {
	if err := r.DropInRoot(ctx, b.RootURI, b.TopNamespace); err != nil {
		return err
	}
	r.Forget(b.TopNamespace)
	return nil
}
