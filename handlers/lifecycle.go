package handlers

// Protection and governance records at the spec doors that destroy or move a table or namespace.
// The records themselves live in governance; these doors only ask before (is the object
// protected?) and tidy after (the records die with their object, or move with a renamed table).

import (
	"context"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
)

// Lifecycle is the governance the destroying and moving spec doors consult (implemented by
// *governance.Service). A nil Lifecycle means no protection and no records to keep in step.
type Lifecycle interface {
	// CheckNotProtected is nil unless the object (registry.KindTable or KindNamespace) is
	// protected and force is unset; then it is the 409 naming it.
	CheckNotProtected(ctx context.Context, kind string, id ident.ID, force bool) error
	// CheckSubtreeNotProtected is CheckNotProtected for a namespace and everything below it.
	CheckSubtreeNotProtected(ctx context.Context, ns ident.ID, force bool) error
	// ClearProtection and ClearPolicy delete the records of an object gone from id.
	ClearProtection(ctx context.Context, kind string, id ident.ID) error
	ClearPolicy(ctx context.Context, kind string, id ident.ID) error
	// ClearSubtreeProtection and ClearSubtreePolicies delete the records of a dropped namespace
	// and of everything below it.
	ClearSubtreeProtection(ctx context.Context, ns ident.ID) error
	ClearSubtreePolicies(ctx context.Context, ns ident.ID) error
	// MoveTableRecords carries a renamed table's records from its old id to its new one.
	MoveTableRecords(ctx context.Context, from, to ident.ID) error
}

// Recycler is the optional part of a Lifecycle that keeps recoverable drops (implemented by
// *governance.Trash). A Lifecycle without it, or with a zero grace, drops destroy.
type Recycler interface {
	// TrashGrace is how long a dropped table stays recoverable; 0: drops destroy.
	TrashGrace() time.Duration
	// TrashTable files the trash record of table id (location relative to the catalog root)
	// before the drop deregisters it; DiscardTrash deletes it again.
	TrashTable(ctx context.Context, p authz.Principal, id ident.ID, location string, props map[string]string) (registry.Trash, error)
	DiscardTrash(ctx context.Context, id ident.ID) error
	// CheckNotTrashed is the 409 of a create at an id a live trash record holds.
	CheckNotTrashed(ctx context.Context, id ident.ID) error

	// TrashNamespace files the kind=namespace trash record of namespace id (props its
	// properties; a top-level namespace's binding is read by the Recycler itself) before a
	// recoverable cascade drops it empty; DiscardNamespaceTrash deletes it again.
	TrashNamespace(ctx context.Context, p authz.Principal, id ident.ID, props map[string]string) (registry.Trash, error)
	DiscardNamespaceTrash(ctx context.Context, id ident.ID) error
	// CheckNamespaceNotTrashed is the 409 of a namespace create at (or a table create in) a
	// namespace id a live trash record holds.
	CheckNamespaceNotTrashed(ctx context.Context, id ident.ID) error
}

// ChangeRecorder is the optional part of a Lifecycle that records lifecycle changes made through
// the spec doors as control events (implemented by *governance.Service): kind is
// registry.KindTable or KindNamespace, event one of the governance.Event* names.
type ChangeRecorder interface {
	Changed(ctx context.Context, p authz.Principal, event, kind string, id ident.ID, attrs map[string]string)
}

// changed records a lifecycle change a spec door made, when the Lifecycle keeps events.
func (s *Server) changed(c echo.Context, event, kind string, id ident.ID, attrs map[string]string) {
	r, ok := s.lifecycle.(ChangeRecorder)
	if !ok {
		return
	}
	ctx, p := c.Request().Context(), ctlPrincipal(c)
	record := func() { r.Changed(ctx, p, event, kind, id, attrs) }
	if d, ok := c.Get(deferredChangesKey).(*deferredChanges); ok && d != nil {
		d.pending = append(d.pending, record)
		return
	}
	record()
}

// deferredChanges holds the changes a door made while its caller decides whether they stand: a
// governed create records them only once the new object's tuples are seeded, since a failed
// seeding undoes the create.
type deferredChanges struct{ pending []func() }

const deferredChangesKey = "lancecat.deferred-changes"

// deferChanges holds the changes recorded on c from now on until commit (or until they are
// dropped with the request).
func deferChanges(c echo.Context) *deferredChanges {
	d := &deferredChanges{}
	c.Set(deferredChangesKey, d)
	return d
}

// commit records the held changes and stops holding.
func (d *deferredChanges) commit(c echo.Context) {
	c.Set(deferredChangesKey, nil)
	for _, record := range d.pending {
		record()
	}
}

// recycler is the Lifecycle's Recycler, or nil.
func (s *Server) recycler() Recycler {
	r, _ := s.lifecycle.(Recycler)
	return r
}

// recoverableDrop is the Recycler of a drop that files its objects in the trash instead of
// destroying them (a grace period, and no purge=true), or nil. A purge that is not a boolean is
// the 400 of the door. Whether a namespace drop is recoverable also depends on its behavior
// (only Cascade is): the caller decides that.
func (s *Server) recoverableDrop(c echo.Context) (Recycler, error) {
	purge, err := boolParam(c, "purge")
	if err != nil {
		return nil, err
	}
	r := s.recycler()
	if r == nil || r.TrashGrace() <= 0 || purge {
		return nil, nil
	}
	return r, nil
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

// tableGone clears the protection and policy records of a table dropped or deregistered at id.
// The table is gone already, so a failure says so and how to clear what was left behind.
func (s *Server) tableGone(ctx context.Context, id ident.ID) error {
	if s.lifecycle == nil || !protectable(registry.KindTable, id) {
		return nil
	}
	err := s.lifecycle.ClearProtection(ctx, registry.KindTable, id)
	if err == nil {
		err = s.lifecycle.ClearPolicy(ctx, registry.KindTable, id)
	}
	if err != nil {
		return leftBehind("table", id.Join(s.delimiter), err)
	}
	return nil
}

// namespaceGone clears the records of a dropped namespace and of everything that was below it.
func (s *Server) namespaceGone(ctx context.Context, id ident.ID) error {
	if s.lifecycle == nil || !protectable(registry.KindNamespace, id) {
		return nil
	}
	err := s.lifecycle.ClearSubtreeProtection(ctx, id)
	if err == nil {
		err = s.lifecycle.ClearSubtreePolicies(ctx, id)
	}
	if err != nil {
		return leftBehind("namespace", id.Join(s.delimiter), err)
	}
	return nil
}

// tableMoved carries a renamed table's records to its new id.
func (s *Server) tableMoved(ctx context.Context, from, to ident.ID) error {
	if s.lifecycle == nil || !protectable(registry.KindTable, from) || !protectable(registry.KindTable, to) {
		return nil
	}
	if err := s.lifecycle.MoveTableRecords(ctx, from, to); err != nil {
		return nserr.Wrap(nserr.CodeOf(err), err, "table "+from.Join(s.delimiter)+" was renamed to "+to.Join(s.delimiter)+
			" but its protection and policy records could not be moved there: "+err.Error())
	}
	return nil
}

// leftBehind is the answer of a destroy that committed but whose governance records could not be
// cleared: the code of the failure, saying the object is gone.
func leftBehind(what, name string, err error) error {
	return nserr.Wrap(nserr.CodeOf(err), err, what+" "+name+" was dropped but its protection or policy records could not be cleared "+
		"(disarm protection with POST …/protection {\"protected\": false}): "+err.Error())
}
