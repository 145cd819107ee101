package guards

import (
	"context"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// Protection answers the protection guards (implemented by *governance.Service).
type Protection interface {
	// CheckNotProtected is nil unless the object (registry.KindTable or KindNamespace) is
	// protected and force is unset; then it is the 409 naming it.
	CheckNotProtected(ctx context.Context, kind string, id ident.ID, force bool) error
	// CheckSubtreeNotProtected is CheckNotProtected for a namespace and everything below it.
	CheckSubtreeNotProtected(ctx context.Context, ns ident.ID, force bool) error
}

// DestroyClaimer is the optional part of Protection that holds an object's protection record
// while a door destroying it runs (drop, deregister): an arm racing the destroy either lands
// first, and the destroy is refused, or finds the claim and is refused itself. Checking and then
// destroying let both answer ok (scripts/faults found it). release gives the claim up after a
// destroy that did not happen; after one that did, clearing the object's records removes it.
type DestroyClaimer interface {
	ClaimDestroy(ctx context.Context, kind string, id ident.ID, force bool) (release func(context.Context), err error)
}

// ClaimNotProtected is NotProtected for a door that destroys the object (drop, deregister):
// with a Protection that claims (DestroyClaimer) the claim is held until release.
func ClaimNotProtected(ctx context.Context, p Protection, kind string, id ident.ID, force bool) (release func(context.Context), err error) {
	none := func(context.Context) {}
	if p == nil || !Protectable(id) {
		return none, nil
	}
	if c, ok := p.(DestroyClaimer); ok {
		return c.ClaimDestroy(ctx, kind, id, force)
	}
	return none, p.CheckNotProtected(ctx, kind, id, force)
}

// LiveTrash answers the live-trash guards (implemented by *governance.Trash).
type LiveTrash interface {
	// CheckNotTrashed is the 409 of a create at an id a live trash record holds.
	CheckNotTrashed(ctx context.Context, id ident.ID) error
	// CheckNamespaceNotTrashed is the 409 of a namespace create at (or a table create in) a
	// namespace id a live trash record holds.
	CheckNamespaceNotTrashed(ctx context.Context, id ident.ID) error
}

// Protectable reports whether id can hold governance records at all: every table (those of the
// root namespace too) and every namespace but the root, which is the catalog itself; the kind
// does not matter. The empty id is left to the catalog to refuse with its own answer.
func Protectable(id ident.ID) bool { return !id.IsRoot() }

// NotProtected is the protection guard of a door that destroys, moves or replaces an object
// (drop, deregister, rename, an overwriting create). p nil: no protection.
func NotProtected(ctx context.Context, p Protection, kind string, id ident.ID, force bool) error {
	if p == nil || !Protectable(id) {
		return nil
	}
	return p.CheckNotProtected(ctx, kind, id, force)
}

// Overwrite is the protection guard of a create door in mode Overwrite (create, register,
// namespace create): an overwrite replaces what is at id, so a protected object refuses it as it
// refuses a drop, and force=true overrides protection here as it does there. Other modes replace
// nothing.
func Overwrite(ctx context.Context, p Protection, kind string, id ident.ID, mode string, force bool) error {
	if mode != catalog.ModeOverwrite {
		return nil
	}
	return NotProtected(ctx, p, kind, id, force)
}

// NamespaceDrop is the protection guard of a namespace drop: the namespace alone under Restrict
// (it must be empty anyway), the whole subtree under Cascade.
func NamespaceDrop(ctx context.Context, p Protection, id ident.ID, cascade, force bool) error {
	if p == nil || !Protectable(id) {
		return nil
	}
	if cascade {
		return p.CheckSubtreeNotProtected(ctx, id, force)
	}
	return p.CheckNotProtected(ctx, registry.KindNamespace, id, force)
}

// NamespaceNotTrashed is the live-trash guard of a namespace create at id. t nil: no trash.
func NamespaceNotTrashed(ctx context.Context, t LiveTrash, id ident.ID) error {
	if t == nil || !Protectable(id) {
		return nil
	}
	return t.CheckNamespaceNotTrashed(ctx, id)
}

// NotTrashed is the live-trash guard of a door that makes a table at id: the id itself, and its
// namespace (a table made under a namespace in the trash would be taken in by its undrop; the
// answer names the undrop rather than a bare 404). t nil: no trash.
func NotTrashed(ctx context.Context, t LiveTrash, id ident.ID) error {
	if t == nil || !Protectable(id) {
		return nil
	}
	if err := t.CheckNotTrashed(ctx, id); err != nil {
		return err
	}
	return t.CheckNamespaceNotTrashed(ctx, id.Parent())
}
