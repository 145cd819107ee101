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
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
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

// The conflict guards of the doors that create, destroy or move: guards.NamespaceNotTrashed,
// NotTrashed, NotProtected, Overwrite and NamespaceDrop, on this server's Lifecycle. They run in
// the door's handler because they decide on its decoded body (mode, behavior, destination) and
// query (force).

// liveTrash is the Recycler as the live-trash guards see it (nil: no trash).
func (s *Server) liveTrash() guards.LiveTrash {
	if r := s.recycler(); r != nil {
		return r
	}
	return nil
}

// protection is the Lifecycle as the protection guards see it (nil: no protection).
func (s *Server) protection() guards.Protection {
	if s.lifecycle == nil {
		return nil
	}
	return s.lifecycle
}

// checkNamespaceNotTrashed is the live-trash guard of a namespace create at id.
func (s *Server) checkNamespaceNotTrashed(ctx context.Context, id ident.ID) error {
	return guards.NamespaceNotTrashed(ctx, s.liveTrash(), id)
}

// checkNotTrashed is the live-trash guard of a door that makes a table at id.
func (s *Server) checkNotTrashed(ctx context.Context, id ident.ID) error {
	return guards.NotTrashed(ctx, s.liveTrash(), id)
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

// protectable reports whether (kind, id) can hold governance records at all (guards.Protectable).
func protectable(kind string, id ident.ID) bool { return guards.Protectable(kind, id) }

// checkNotProtected is the protection guard of a door that destroys, moves or replaces an object
// (drop, deregister, rename, an overwriting create).
func (s *Server) checkNotProtected(ctx context.Context, kind string, id ident.ID, force bool) error {
	return guards.NotProtected(ctx, s.protection(), kind, id, force)
}

// checkOverwrite is the protection guard of a create door in mode Overwrite (guards.Overwrite),
// force read from the query.
func (s *Server) checkOverwrite(c echo.Context, kind string, id ident.ID, mode string) error {
	if mode != namespace.ModeOverwrite {
		return nil // force is read only where it can matter, as before
	}
	force, err := forceParam(c)
	if err != nil {
		return err
	}
	return guards.Overwrite(c.Request().Context(), s.protection(), kind, id, mode, force)
}

// checkNamespaceDrop is the protection guard of a namespace drop (guards.NamespaceDrop).
func (s *Server) checkNamespaceDrop(ctx context.Context, id ident.ID, cascade, force bool) error {
	return guards.NamespaceDrop(ctx, s.protection(), id, cascade, force)
}
