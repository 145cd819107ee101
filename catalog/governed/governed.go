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
//     no purge, see WithPurge) files the objects in the trash instead and keeps their tuples.
//   - A rename seeds the destination as a create does, revokes the source and moves the records.
//   - Listings keep only what the caller may see, paginated after filtering.
//   - Every change is recorded as a control event once it stands.
//
// The caller is the principal of the context (authz.PrincipalFrom). The checks that run before an
// operation (protection, live trash, overwrite rights) are the guards' and are not repeated here.
package governed

import (
	"context"
	"time"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
)

// Inner is the catalog the decorator wraps. Every method the decorator does not override is
// delegated, LoadTable among them: the operations on one table's dataset are the handle's and
// carry no lifecycle rule.
type Inner = catalog.Catalog

var _ Inner = (*namespace.Namespace)(nil)

// Records are the governance records kept in step with the catalog (implemented by
// *governance.Service and *governance.Trash).
type Records interface {
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
	// before the drop deregisters it; DiscardTrash deletes it again.
	TrashTable(ctx context.Context, p authz.Principal, id ident.ID, location string, props map[string]string) (registry.Trash, error)
	DiscardTrash(ctx context.Context, id ident.ID) error
	// TrashNamespace files the kind=namespace trash record of namespace id before a recoverable
	// cascade drops it empty; DiscardNamespaceTrash deletes it again.
	TrashNamespace(ctx context.Context, p authz.Principal, id ident.ID, props map[string]string) (registry.Trash, error)
	DiscardNamespaceTrash(ctx context.Context, id ident.ID) error
}

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

type purgeKey struct{}

// WithPurge marks the drops made with ctx as purging (purge true): they destroy their objects even
// when the trash would keep them.
func WithPurge(ctx context.Context, purge bool) context.Context {
	return context.WithValue(ctx, purgeKey{}, purge)
}

// purging reports whether ctx asks drops to purge.
func purging(ctx context.Context) bool {
	p, _ := ctx.Value(purgeKey{}).(bool)
	return p
}

// governed reports whether authorization decisions (and so tuples) are real.
func (g *Catalog) governed() bool { return g.authorizer != nil && g.authorizer.Enabled() }

// recycler is the Recycler of a drop made with ctx that files its objects in the trash instead of
// destroying them (a grace period, and no purge), or nil.
func (g *Catalog) recycler(ctx context.Context) Recycler {
	r, ok := g.records.(Recycler)
	if !ok || r.TrashGrace() <= 0 || purging(ctx) {
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

// protectable reports whether (kind, id) can hold governance records at all: a table id has a
// namespace and a name, and the root namespace is the catalog itself.
func protectable(kind string, id ident.ID) bool {
	if kind == registry.KindTable {
		return len(id) >= 2
	}
	return !id.IsRoot()
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
