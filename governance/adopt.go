package governance

import (
	"context"
	"fmt"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// Turning authorization on over a catalog filled with it off: every project, warehouse, namespace
// and table then exists with no tuples at all, so nothing above reaches it — estate admins see an
// empty estate, grants on existing objects are refused, warehouses are hidden. Adopt writes what a
// create through the catalog would have written: each object's edge to the parent it sits under
// (warehouse → project, a warehouse's namespace → the warehouse, a top-level namespace → the
// catalog, a namespace or table → its namespace) and, for each object nobody owns, an owner named
// by the operator. It reads everything first and, with apply false, only reports (the dry run);
// applied it is idempotent and safe while the catalog serves (each write ignores what exists).

// Adopter is the authorizer side of adoption (authz.OpenFGA).
type Adopter interface {
	Adopt(ctx context.Context, object, parent authz.Object, owner authz.Subject, apply bool) (authz.Adoption, error)
}

// CatalogTree lists the catalog as it is stored (the router over every root, ungoverned).
type CatalogTree interface {
	ListNamespaces(ctx context.Context, id ident.ID, token string, limit int) (catalog.Page, error)
	ListTables(ctx context.Context, id ident.ID, token string, limit int) (catalog.Page, error)
}

// AdoptReport is an adoption run: every object read, and what each lacked.
type AdoptReport struct {
	Applied bool
	Objects int // projects, warehouses, namespaces and tables read
	Changes []authz.Adoption
}

// adoptPage bounds one listing page of the walk.
const adoptPage = 1000

// Adopt adopts every object of the estate (see above); owner may be "" to write edges only.
func (s *Service) Adopt(ctx context.Context, tree CatalogTree, owner authz.Subject, apply bool) (AdoptReport, error) {
	a, ok := s.authz.(Adopter)
	if !ok || !s.authz.Enabled() {
		return AdoptReport{}, nserr.InvalidInputf("adoption needs authorization on (--authz openfga)")
	}
	rep := AdoptReport{Applied: apply}
	adopt := func(object, parent authz.Object) error {
		rep.Objects++
		got, err := a.Adopt(ctx, object, parent, owner, apply)
		if err != nil {
			return fmt.Errorf("adopting %s: %w", object, err)
		}
		if got.Changes() {
			rep.Changes = append(rep.Changes, got)
		}
		return nil
	}
	projects, err := s.projects(ctx)
	if err != nil {
		return rep, err
	}
	for _, p := range projects {
		if err := adopt(authz.ProjectObject(p.ID), authz.Object{}); err != nil {
			return rep, err
		}
	}
	warehouses, err := s.warehouses(ctx, true)
	if err != nil {
		return rep, err
	}
	for _, w := range warehouses {
		if err := adopt(authz.WarehouseObject(w.ID), authz.ProjectObject(w.Project)); err != nil {
			return rep, err
		}
	}
	// Which warehouse each top-level namespace is bound to (none: it hangs from the catalog).
	listed, err := registry.List[registry.Binding](ctx, s.store, registry.BindingsPrefix)
	if err != nil {
		return rep, registryError(err)
	}
	if len(listed.Skipped) > 0 {
		return rep, nserr.ServiceUnavailablef("unreadable namespace bindings (%v): refusing to adopt on a partial picture", listed.Skipped)
	}
	boundTo := map[string]string{}
	for _, b := range listed.Records {
		boundTo[b.TopNamespace] = b.WarehouseID
	}
	parentOf := func(id ident.ID) authz.Object {
		if len(id) == 1 {
			if w, ok := boundTo[id[0]]; ok {
				return authz.WarehouseObject(w)
			}
		}
		return authz.NamespaceObject(id.Parent())
	}
	var walk func(ns ident.ID) error
	walk = func(ns ident.ID) error {
		if err := pages(ctx, func(token string) (catalog.Page, error) { return tree.ListTables(ctx, ns, token, adoptPage) }, func(name string) error {
			return adopt(authz.TableObject(ns.Child(name)), authz.NamespaceObject(ns))
		}); err != nil {
			return err
		}
		return pages(ctx, func(token string) (catalog.Page, error) { return tree.ListNamespaces(ctx, ns, token, adoptPage) }, func(name string) error {
			child := ns.Child(name)
			if err := adopt(authz.NamespaceObject(child), parentOf(child)); err != nil {
				return err
			}
			return walk(child)
		})
	}
	return rep, walk(ident.ID{})
}

// pages calls each for every name of a paged listing.
func pages(ctx context.Context, list func(token string) (catalog.Page, error), each func(name string) error) error {
	token := ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		page, err := list(token)
		if err != nil {
			return err
		}
		for _, n := range page.Names {
			if err := each(n); err != nil {
				return err
			}
		}
		if page.NextToken == "" || page.NextToken == token {
			return nil
		}
		token = page.NextToken
	}
}
