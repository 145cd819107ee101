package guards

import (
	"context"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
)

// Existence answers whether a table or namespace exists (the catalog's own answers: nil, or its
// NotFound error).
type Existence interface {
	NamespaceExists(ctx context.Context, id ident.ID) error
	TableExists(ctx context.Context, id ident.ID) error
}

// Adopter is the optional part of an Authorizer that attaches objects created behind the
// catalog's back to their parent (authz.OpenFGA.AdoptOrphan).
type Adopter interface {
	AdoptOrphan(ctx context.Context, object, parent authz.Object) (bool, error)
}

// Authorizes reports whether a's decisions are real (false: nil or disabled, every door open).
func Authorizes(a authz.Authorizer) bool { return a != nil && a.Enabled() }

// Authorize is the authorization guard of a spec door on its object r.ID (set by PathID), with
// the oracle rule (Oracle). catalog may be nil (then a denial is always the denial).
func Authorize(door SpecDoor, a authz.Authorizer, catalog Existence) Guard {
	return Guard{StageAuthorization, "authorize " + string(door.Action), func(ctx context.Context, r *Request) error {
		return Oracle{Authorizer: a, Catalog: catalog}.Authorize(ctx, door, r.Principal, r.ID)
	}}
}

// Oracle decides a spec door so that its answer to a caller the check denies never depends on
// whether the object exists.
type Oracle struct {
	Authorizer authz.Authorizer
	Catalog    Existence
}

// objectOf is the authorization object of a spec door's id.
func objectOf(kind Kind, id ident.ID) authz.Object {
	if kind == KindTable {
		return authz.TableObject(id)
	}
	return authz.NamespaceObject(id)
}

// Authorize checks door on id for p.
//
// The answer to a caller the check denies never depends on whether the object exists: a missing
// object (for a create, a missing parent namespace) is the catalog's 404 only to a caller who
// reads everything in the namespace that would hold it (NamespaceContentsRead, the relation every
// object inside inherits), and such a caller would pass a reading door on it had it existed.
// Everyone else gets the same 403 for an object that exists and one that does not: a grant on a
// sibling (which makes the parent visible: navigator) reveals nothing about the
// parent's other ids.
func (o Oracle) Authorize(ctx context.Context, door SpecDoor, p authz.Principal, id ident.ID) error {
	_, onParent, err := authz.RelationFor(door.Action)
	if err != nil {
		return err
	}
	if door.Kind == KindNamespace && id.IsRoot() && !onParent {
		switch door.Action {
		case authz.NamespaceList, authz.NamespaceListTables, authz.NamespaceDescribe, authz.NamespaceExists:
			return nil // the root always exists; listings are filtered per item
		}
		return nserr.PermissionDeniedf("the root namespace is the catalog itself")
	}
	target := objectOf(door.Kind, id)
	if onParent {
		target = authz.NamespaceObject(id.Parent())
	}
	err = o.Authorizer.Check(ctx, p, door.Action, target)
	if err == nil || nserr.CodeOf(err) != nserr.PermissionDenied || o.Catalog == nil {
		return err
	}
	denied := err
	if onParent {
		parent := id.Parent()
		if parent.IsRoot() {
			return denied
		}
		perr := o.Catalog.NamespaceExists(ctx, parent)
		if perr == nil {
			return denied
		}
		if nserr.CodeOf(perr) != nserr.NamespaceNotFound {
			return perr
		}
		return o.missing(ctx, p, parent, perr, denied)
	}
	if o.exists(ctx, door.Kind, id) {
		// An object written straight to storage has no edges: attach it (and its orphaned
		// ancestors) where its id says it lives, then ask again.
		if o.adoptOrphans(ctx, door.Kind, id) {
			return o.Authorizer.Check(ctx, p, door.Action, target)
		}
		return denied
	}
	return o.missing(ctx, p, id, nil, denied)
}

// missing is the answer to a denied caller about id, which does not exist: notFound (nil: let the
// handler answer its own 404) to whoever reads everything in the nearest namespace above id that
// exists, denied to everyone else.
func (o Oracle) missing(ctx context.Context, p authz.Principal, id ident.ID, notFound, denied error) error {
	holder := id.Parent()
	for !holder.IsRoot() {
		err := o.Catalog.NamespaceExists(ctx, holder)
		if err == nil {
			break
		}
		if nserr.CodeOf(err) != nserr.NamespaceNotFound {
			return err
		}
		holder = holder.Parent()
	}
	err := o.Authorizer.Check(ctx, p, authz.NamespaceContentsRead, authz.NamespaceObject(holder))
	switch {
	case err == nil:
		return notFound
	case nserr.CodeOf(err) == nserr.PermissionDenied:
		return denied
	default:
		return err
	}
}

// exists reports whether the table or namespace id exists (false on any error).
func (o Oracle) exists(ctx context.Context, kind Kind, id ident.ID) bool {
	if kind == KindTable {
		return o.Catalog.TableExists(ctx, id) == nil
	}
	return o.Catalog.NamespaceExists(ctx, id) == nil
}

// adoptOrphans attaches the existing object id, and each ancestor that has no parent edge either,
// to its parent. Reports whether anything was attached; failures are left to the denial.
func (o Oracle) adoptOrphans(ctx context.Context, kind Kind, id ident.ID) bool {
	a, ok := o.Authorizer.(Adopter)
	if !ok {
		return false
	}
	adopted := false
	for cur, k := id, kind; !cur.IsRoot(); cur, k = cur.Parent(), KindNamespace {
		did, err := a.AdoptOrphan(ctx, objectOf(k, cur), authz.NamespaceObject(cur.Parent()))
		if err != nil || !did {
			break
		}
		adopted = true
	}
	return adopted
}

// Hidden answers a denial on a destructive control door exactly like a missing object: any
// PermissionDenied becomes notFound itself. Other failures (401, 503) pass unchanged.
func Hidden(err error, notFound error) error {
	if nserr.CodeOf(err) == nserr.PermissionDenied {
		return notFound
	}
	return err
}
