package governance

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// EventWarehouseBound is emitted when a top-level namespace is created in a warehouse and bound.
const EventWarehouseBound = "warehouse_bound"

// WarehouseRoots is what binding a namespace to a warehouse needs of the catalog
// (*routing.Router provides it): whether the name is taken in the catalog's own root, and the
// native create (and its undo) in a warehouse's root.
type WarehouseRoots interface {
	// DefaultNamespaceExists is nil when top-level namespace name exists in the catalog root,
	// NamespaceNotFound when it does not.
	DefaultNamespaceExists(ctx context.Context, name string) error
	// CreateInRoot creates top-level namespace name in the directory namespace at rootURI.
	CreateInRoot(ctx context.Context, rootURI, name string, props map[string]string) error
	// DropInRoot drops the (empty) top-level namespace name at rootURI; a missing one is fine.
	DropInRoot(ctx context.Context, rootURI, name string) error
	// Forget drops name from the replica's routing cache.
	Forget(name string)
}

func (s *Service) namespaceNameShape(name string) error {
	if name == "" {
		return nserr.InvalidInputf("namespace is required")
	}
	if err := (ident.ID{name}).Validate(s.delim); err != nil {
		return nserr.InvalidInputf("namespace %q: %v", name, err)
	}
	if strings.ContainsAny(name, "$/\\") || name == "." || name == ".." || len(name) > 200 {
		return nserr.InvalidInputf("namespace %q cannot be bound: a warehouse namespace name is at most 200 characters without '$', '/' or '\\'", name)
	}
	return nil
}

// CreateWarehouseNamespace is POST /v1/warehouses/{id}/namespaces: create top-level namespace
// name in the warehouse's root and bind it there, write-once. The creator owns the namespace and
// the warehouse's owners own it through the warehouse. Guards, in order: identity 401 → shape
// 400 → can_create_namespace on the warehouse 403 → warehouse exists 404 → active, else 403 →
// bound already 409 → taken in the catalog root 409 → held by the trash 409 → native create
// (exists in the warehouse root 409) → bind → tuples (undone with the create if they fail) →
// warehouse_bound.
func (s *Service) CreateWarehouseNamespace(ctx context.Context, p authz.Principal, roots WarehouseRoots, warehouseID, name string, props map[string]string) (registry.Binding, error) {
	p, err := s.caller(p)
	if err != nil {
		return registry.Binding{}, err
	}
	if err := warehouseShape(warehouseID); err != nil {
		return registry.Binding{}, err
	}
	if err := s.namespaceNameShape(name); err != nil {
		return registry.Binding{}, err
	}
	if roots == nil {
		return registry.Binding{}, nserr.Unsupportedf("this server does not route namespaces to warehouses")
	}
	if err := s.authz.Check(ctx, p, authz.WarehouseCreateNamespace, authz.WarehouseObject(warehouseID)); err != nil {
		return registry.Binding{}, err
	}
	w, err := s.readWarehouse(ctx, warehouseID)
	if err != nil {
		return registry.Binding{}, err
	}
	if !w.Active() {
		return registry.Binding{}, nserr.PermissionDeniedf("warehouse %q is deactivated: activate it (POST /v1/warehouses/%s/activate) before creating namespaces in it", warehouseID, warehouseID)
	}
	bind := registry.Binding{TopNamespace: name, WarehouseID: warehouseID, RootURI: w.RootURI}
	existing, _, err := registry.Read[registry.Binding](ctx, s.store, registry.BindingKey(name))
	switch {
	case err == nil && existing.WarehouseID == warehouseID:
		return registry.Binding{}, nserr.NamespaceAlreadyExistsf("namespace %s already exists in warehouse %q", name, warehouseID)
	case err == nil:
		return registry.Binding{}, nserr.NamespaceAlreadyExistsf("namespace %s is already bound to another warehouse", name)
	case !errors.Is(err, registry.ErrNotFound):
		return registry.Binding{}, registryError(err)
	}
	switch err := roots.DefaultNamespaceExists(ctx, name); {
	case err == nil:
		return registry.Binding{}, nserr.NamespaceAlreadyExistsf("namespace %s already exists in the catalog's own root: a warehouse namespace needs a name no other namespace has", name)
	case !nserr.Is(err, nserr.ErrNamespaceNotFound):
		return registry.Binding{}, err
	}
	if err := s.CheckNamespaceNotTrashed(ctx, ident.ID{name}); err != nil {
		return registry.Binding{}, err
	}
	if err := roots.CreateInRoot(ctx, w.RootURI, name, props); err != nil {
		if nserr.Is(err, nserr.ErrNamespaceAlreadyExists) {
			return registry.Binding{}, nserr.NamespaceAlreadyExistsf("namespace %s already exists in warehouse %q's root (%s) without a binding", name, warehouseID, w.RootURI)
		}
		return registry.Binding{}, err
	}
	undo := func(why error) error {
		if derr := roots.DropInRoot(ctx, w.RootURI, name); derr != nil {
			s.log.ErrorContext(ctx, "undoing a warehouse namespace create failed", "namespace", name, "warehouse", warehouseID, "error", derr.Error())
		}
		return why
	}
	if err := registry.Create(ctx, s.store, registry.BindingKey(name), bind); err != nil {
		if errors.Is(err, registry.ErrExists) {
			return registry.Binding{}, undo(nserr.NamespaceAlreadyExistsf("namespace %s was bound by a concurrent request", name))
		}
		return registry.Binding{}, undo(registryError(err))
	}
	roots.Forget(name)
	// The new namespace starts with exactly its seeded tuples (an earlier one of this name, past
	// its trash deadline, kept its own).
	obj := authz.NamespaceObject(ident.ID{name})
	_, err = s.authz.RevokeAll(ctx, obj)
	if err == nil {
		err = s.authz.SeedCreate(ctx, p, obj, authz.WarehouseObject(warehouseID))
	}
	if err != nil {
		if derr := registry.Delete(ctx, s.store, registry.BindingKey(name)); derr != nil {
			s.log.ErrorContext(ctx, "undoing a namespace binding failed", "namespace", name, "error", derr.Error())
		}
		roots.Forget(name)
		return registry.Binding{}, undo(err)
	}
	s.emit(ctx, EventWarehouseBound, p, authz.WarehouseObject(warehouseID).String(), map[string]string{
		"namespace": name, "root_uri": w.RootURI, "project": w.Project,
	})
	return bind, nil
}

// ListWarehouseNamespaces is GET /v1/warehouses/{id}/namespaces: the namespaces bound to the
// warehouse that the caller may see. A reader door: 403 before 404.
func (s *Service) ListWarehouseNamespaces(ctx context.Context, p authz.Principal, warehouseID string) ([]registry.Binding, error) {
	p, err := s.caller(p)
	if err != nil {
		return nil, err
	}
	if err := warehouseShape(warehouseID); err != nil {
		return nil, err
	}
	// warehouse.list-namespaces on the warehouse is its door's guard (guards.ControlDoors).
	if _, err := s.readWarehouse(ctx, warehouseID); err != nil {
		return nil, err
	}
	bindings, err := s.bindingsOf(ctx, warehouseID)
	if err != nil {
		return nil, err
	}
	objs := make([]authz.Object, len(bindings))
	for i, b := range bindings {
		objs[i] = authz.NamespaceObject(ident.ID{b.TopNamespace})
	}
	allowed, err := s.authz.Filter(ctx, p, authz.NamespaceListEntry, objs)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(bindings, func(b registry.Binding) bool {
		return !slices.Contains(allowed, authz.NamespaceObject(ident.ID{b.TopNamespace}))
	}), nil
}

// NamespaceUnbound records that a bound top-level namespace was dropped and its binding removed.
func (s *Service) NamespaceUnbound(ctx context.Context, b registry.Binding) {
	s.emit(ctx, EventWarehouseUnbound, "", authz.WarehouseObject(b.WarehouseID).String(), map[string]string{"namespace": b.TopNamespace})
}
