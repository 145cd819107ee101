package handlers

// Protection and the trash at the spec doors that create, destroy or move a table or namespace.
// The records themselves live in governance; these doors only ask before (is the object
// protected? is its id in the trash?). What follows an operation (records cleared or moved, the
// trash saga, tuples, events) is the governed catalog's (catalog/governed).

import (
	"context"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/catalog/governed"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
)

// Lifecycle is the governance the destroying and moving spec doors consult (implemented by
// *governance.Service). A nil Lifecycle means no protection.
type Lifecycle interface {
	// CheckNotProtected is nil unless the object (registry.KindTable or KindNamespace) is
	// protected and force is unset; then it is the 409 naming it.
	CheckNotProtected(ctx context.Context, kind string, id ident.ID, force bool) error
	// CheckSubtreeNotProtected is CheckNotProtected for a namespace and everything below it.
	CheckSubtreeNotProtected(ctx context.Context, ns ident.ID, force bool) error
}

// Recycler is the optional part of a Lifecycle that keeps the trash (implemented by
// *governance.Trash): the creating doors refuse an id its live records hold.
type Recycler interface {
	// CheckNotTrashed is the 409 of a create at an id a live trash record holds.
	CheckNotTrashed(ctx context.Context, id ident.ID) error
	// CheckNamespaceNotTrashed is the 409 of a namespace create at (or a table create in) a
	// namespace id a live trash record holds.
	CheckNamespaceNotTrashed(ctx context.Context, id ident.ID) error
}

// recycler is the Lifecycle's Recycler, or nil.
func (s *Server) recycler() Recycler {
	r, _ := s.lifecycle.(Recycler)
	return r
}

// purgeContext is the request's context, marking its drop as purging when purge=true (the catalog
// then destroys even when the trash would keep the drop). A purge that is not a boolean is the
// 400 of the door.
func purgeContext(c echo.Context) (context.Context, error) {
	purge, err := boolParam(c, "purge")
	if err != nil {
		return nil, err
	}
	return governed.WithPurge(c.Request().Context(), purge), nil
}

// checkNamespaceNotTrashed is the trash guard of a namespace create at id.
func (s *Server) checkNamespaceNotTrashed(ctx context.Context, id ident.ID) error {
	r := s.recycler()
	if r == nil || !protectable(registry.KindNamespace, id) {
		return nil
	}
	return r.CheckNamespaceNotTrashed(ctx, id)
}

// checkNotTrashed is the trash guard of a door that makes a table at id: the id itself, and its
// namespace (a table made under a namespace in the trash would be taken in by its undrop; the
// answer names the undrop rather than a bare 404).
func (s *Server) checkNotTrashed(ctx context.Context, id ident.ID) error {
	r := s.recycler()
	if r == nil || !protectable(registry.KindTable, id) {
		return nil
	}
	if err := r.CheckNotTrashed(ctx, id); err != nil {
		return err
	}
	return r.CheckNamespaceNotTrashed(ctx, id.Parent())
}

// boolParam reads an optional boolean query parameter: absent is false, anything
// strconv.ParseBool does not accept is 400.
func boolParam(c echo.Context, name string) (bool, error) {
	raw := c.QueryParam(name)
	if raw == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(raw)
	if err != nil {
		return false, nserr.InvalidInputf("%s %q is not a boolean (true or false)", name, raw)
	}
	return v, nil
}

// forceParam reads the force query parameter of a destroying door (the spec does not define it):
// absent is false, anything strconv.ParseBool does not accept is 400.
func forceParam(c echo.Context) (bool, error) { return boolParam(c, "force") }

// protectable reports whether (kind, id) can hold governance records at all: a table id has a
// namespace and a name, and the root namespace is the catalog itself. Other ids are left to the
// catalog to refuse with its own answer.
func protectable(kind string, id ident.ID) bool {
	if kind == registry.KindTable {
		return len(id) >= 2
	}
	return !id.IsRoot()
}

// checkNotProtected is the protection guard of a door that destroys, moves or replaces an object
// (drop, deregister, rename, an overwriting create).
func (s *Server) checkNotProtected(ctx context.Context, kind string, id ident.ID, force bool) error {
	if s.lifecycle == nil || !protectable(kind, id) {
		return nil
	}
	return s.lifecycle.CheckNotProtected(ctx, kind, id, force)
}

// checkOverwrite is the protection guard of a create door in mode Overwrite (create, register,
// namespace create): an overwrite replaces what is at id, so a protected object refuses it as it
// refuses a drop, and force=true overrides protection here as it does there. Other modes replace
// nothing.
func (s *Server) checkOverwrite(c echo.Context, kind string, id ident.ID, mode string) error {
	if mode != namespace.ModeOverwrite {
		return nil
	}
	force, err := forceParam(c)
	if err != nil {
		return err
	}
	return s.checkNotProtected(c.Request().Context(), kind, id, force)
}

// checkNamespaceDrop is the protection guard of a namespace drop: the namespace alone under
// Restrict (it must be empty anyway), the whole subtree under Cascade.
func (s *Server) checkNamespaceDrop(ctx context.Context, id ident.ID, cascade, force bool) error {
	if s.lifecycle == nil || !protectable(registry.KindNamespace, id) {
		return nil
	}
	if cascade {
		return s.lifecycle.CheckSubtreeNotProtected(ctx, id, force)
	}
	return s.lifecycle.CheckNotProtected(ctx, registry.KindNamespace, id, force)
}
