// Package governed is the catalog with its lifecycle rules: a decorator over the catalog that
// keeps authorization tuples, governance records, the trash and the change events in step with
// what the catalog did, working on the catalog's own results (never on HTTP answers).
//
//   - A create (namespace, table, declare, register) seeds its creator's ownership and the edge to
//     its parent, after revoking whatever tuples an earlier object at that id left; a seeding that
//     fails undoes the create. A takeover (ExistOk, Overwrite) of an object that exists is checked
//     on that object and changes no tuples.
//   - A destroy (drop, deregister, a destroying cascade) revokes every tuple on the objects gone
//     and clears their protection and policy records; a recoverable drop (a trash grace period and
//     no purge, see catalog.WithPurge) files the objects in the trash instead and keeps their tuples.
//   - A rename seeds the destination as a create does, revokes the source and moves the records.
//   - Listings keep only what the caller may see, paginated after filtering.
//   - Every change is recorded as a control event once it stands.
//   - What committed stands: a follow-up that fails after a commit that is not undone (a create
//     whose undo failed too, a rename, a batch, a destroy) is tried for every object, and the
//     answer is nserr.Committed (followup.go): what stands, what is missing, what to do, in the
//     catalog's words, so the caller does not retry what committed.
//
// Before a creating, destroying or moving operation the decorator runs, in order, the
// authorization of a takeover (create) or a rename's destination (AuthorizeRename), then
// the conflict guards of package guards (protection, live trash, overwrite, namespace drop) on its
// Records, then the operation: a caller the authorization denies learns nothing from protection or
// the trash. Force (catalog.WithForce) overrides protection. The options of a call are its
// parameters (catalog.Option), handed on to the inner catalog unchanged.
//
// The caller is the principal of the context (authz.PrincipalFrom).
package governed

import (
	"context"
	"time"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
)

// Inner is the catalog the decorator wraps. Every method the decorator does not override is
// delegated, LoadTable among them: the operations on one table's dataset are the handle's and
// carry no lifecycle rule.
type Inner = catalog.Catalog

var _ Inner = (*namespace.Namespace)(nil)

// Records are the governance records kept in step with the catalog and consulted before it
// (implemented by *governance.Service and *governance.Trash).
type Records interface {
	// CheckNotProtected and CheckSubtreeNotProtected answer the protection guards
	// (guards.Protection): the 409 of a protected object (or subtree) unless force is set.
	guards.Protection
	// ClearProtection and ClearPolicy delete the records of an object gone from id (kind
	// registry.KindTable or KindNamespace).
	ClearProtection(ctx context.Context, kind string, id ident.ID) error
	ClearPolicy(ctx context.Context, kind string, id ident.ID) error
	// ClearSubtreeProtection and ClearSubtreePolicies delete the records of a dropped namespace
	// and of everything below it.
	ClearSubtreeProtection(ctx context.Context, ns ident.ID) error
	ClearSubtreePolicies(ctx context.Context, ns ident.ID) error
	// MoveTableRecords carries a renamed table's records from its old id to its new one.
	MoveTableRecords(ctx context.Context, from, to ident.ID) error
}

// Recycler is the optional part of Records that keeps recoverable drops (implemented by
// *governance.Trash). Records without it, or with a zero grace, make drops destroy.
type Recycler interface {
	// TrashGrace is how long a dropped table stays recoverable; 0: drops destroy.
	TrashGrace() time.Duration
	// TrashTable files the trash record of table id (location relative to the catalog root)
	// before the drop deregisters it; DiscardTrash deletes it again. cascade is the token of the
	// namespace drop filing it (registry.Trash.Cascade), "" for a table dropped on its own.
	TrashTable(ctx context.Context, p authz.Principal, id ident.ID, location string, props map[string]string, cascade string) (registry.Trash, error)
	DiscardTrash(ctx context.Context, id ident.ID) error
	// TrashNamespace files the kind=namespace trash record of namespace id before a recoverable
	// cascade drops it empty; DiscardNamespaceTrash deletes it again. cascade "" starts a drop
	// (the record returned carries its new token); the namespaces below it pass that token on.
	TrashNamespace(ctx context.Context, p authz.Principal, id ident.ID, props map[string]string, cascade string) (registry.Trash, error)
	DiscardNamespaceTrash(ctx context.Context, id ident.ID) error
}

// LiveTrash is the optional part of Records that answers the live-trash guards
// (guards.LiveTrash: CheckNotTrashed, CheckNamespaceNotTrashed; implemented by *governance.Trash).
// Records without it refuse no create for the trash.
type LiveTrash = guards.LiveTrash

// ChangeRecorder is the optional part of Records that records lifecycle changes as control
// events (implemented by *governance.Service): kind is registry.KindTable or KindNamespace, event
// one of the governance.Event* names.
type ChangeRecorder interface {
	Changed(ctx context.Context, p authz.Principal, event, kind string, id ident.ID, attrs map[string]string)
}

// Options configure the decorator.
type Options struct {
	// Delimiter spells ids in error messages.
	Delimiter string
	// Authorizer keeps tuples in step and filters listings; nil or disabled: no tuples, listings
	// as the catalog gives them, takeovers unchecked.
	Authorizer authz.Authorizer
	// Records are the governance records (and, when they implement Recycler and
	// ChangeRecorder, the trash and the events); nil: none.
	Records Records
}

// Catalog is the inner catalog with its lifecycle rules.
type Catalog struct {
	Inner
	delimiter  string
	authorizer authz.Authorizer
	records    Records
}

// New wraps inner with the lifecycle rules opts enable.
func New(inner Inner, opts Options) *Catalog {
	if opts.Delimiter == "" {
		opts.Delimiter = ident.DefaultDelimiter
	}
	return &Catalog{Inner: inner, delimiter: opts.Delimiter, authorizer: opts.Authorizer, records: opts.Records}
}

// protection is the Records as the protection guards see them (nil: no protection).
func (g *Catalog) protection() guards.Protection {
	if g.records == nil {
		return nil
	}
	return g.records
}

// liveTrash is the Records' LiveTrash, or nil (no trash).
func (g *Catalog) liveTrash() guards.LiveTrash {
	if t, ok := g.records.(guards.LiveTrash); ok {
		return t
	}
	return nil
}

// governed reports whether authorization decisions (and so tuples) are real.
func (g *Catalog) governed() bool { return g.authorizer != nil && g.authorizer.Enabled() }

// recycler is the Recycler of a drop made with o that files its objects in the trash instead of
// destroying them (a grace period, and no purge), or nil.
func (g *Catalog) recycler(o catalog.Options) Recycler {
	r, ok := g.records.(Recycler)
	if !ok || r.TrashGrace() <= 0 || o.Purge {
		return nil
	}
	return r
}

// changed records a lifecycle change, when the records keep events.
func (g *Catalog) changed(ctx context.Context, event, kind string, id ident.ID, attrs map[string]string) {
	if r, ok := g.records.(ChangeRecorder); ok {
		r.Changed(ctx, authz.PrincipalFrom(ctx), event, kind, id, attrs)
	}
}

// objectOf is the authorization object of a table or namespace id.
func objectOf(kind string, id ident.ID) authz.Object {
	if kind == registry.KindTable {
		return authz.TableObject(id)
	}
	return authz.NamespaceObject(id)
}

// parentObject is the authorization object of id's parent namespace (the Catalog for the root).
func parentObject(id ident.ID) authz.Object { return authz.NamespaceObject(id.Parent()) }
