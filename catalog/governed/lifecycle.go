package governed

// The creating, destroying and moving operations.

import (
	"context"
	stderrors "errors"
	"strconv"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// CreateNamespace creates namespace id, seeded under its parent (the Catalog for a top-level one).
// An Overwrite of an existing namespace needs its drop right.
func (g *Catalog) CreateNamespace(ctx context.Context, id ident.ID, props map[string]string, mode string, opts ...catalog.Option) (map[string]string, error) {
	var out map[string]string
	force := catalog.Resolve(opts...).Force
	used, err := g.create(ctx, registry.KindNamespace, id, mode,
		func() error {
			if err := guards.NamespaceNotTrashed(ctx, g.liveTrash(), id); err != nil {
				return err
			}
			return guards.Overwrite(ctx, g.protection(), registry.KindNamespace, id, mode, force)
		},
		func(mode string) (err error) {
			out, err = g.Inner.CreateNamespace(ctx, id, props, mode, opts...)
			return err
		},
		func(ctx context.Context) error {
			_, err := g.Inner.DropNamespace(ctx, id, catalog.ModeFail, catalog.BehaviorRestrict)
			return err
		})
	if err != nil && !stands(err) {
		return nil, err
	}
	if used != catalog.ModeExistOk {
		g.changed(ctx, governance.EventNamespaceCreated, registry.KindNamespace, id, map[string]string{"mode": used})
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CreateTable creates table id, seeded under its namespace. An Overwrite of an existing table
// needs its drop right.
func (g *Catalog) CreateTable(ctx context.Context, id ident.ID, nt catalog.NewTable, opts ...catalog.Option) (*catalog.Entry, uint64, error) {
	var (
		t       *catalog.Entry
		version uint64
	)
	_, err := g.create(ctx, registry.KindTable, id, nt.Mode,
		func() error { return g.conflictTableCreate(ctx, id, nt.Mode, catalog.Resolve(opts...).Force) },
		func(mode string) (err error) {
			nt.Mode = mode
			t, version, err = g.Inner.CreateTable(ctx, id, nt, opts...)
			return err
		}, g.undoTable(id))
	if err != nil && !stands(err) {
		return nil, 0, err
	}
	g.changed(ctx, governance.EventTableCreated, registry.KindTable, id, map[string]string{"location": t.URI, "version": strconv.FormatUint(version, 10)})
	if err != nil {
		return nil, 0, err
	}
	return t, version, nil
}

// DeclareTable declares table id, seeded under its namespace (a declare has no mode: it only
// creates).
func (g *Catalog) DeclareTable(ctx context.Context, id ident.ID, location string, props map[string]string) (*catalog.Entry, error) {
	var t *catalog.Entry
	_, err := g.create(ctx, registry.KindTable, id, catalog.ModeCreate,
		func() error { return guards.NotTrashed(ctx, g.liveTrash(), id) },
		func(string) (err error) {
			t, err = g.Inner.DeclareTable(ctx, id, location, props)
			return err
		}, g.undoTable(id))
	if err != nil && !stands(err) {
		return nil, err
	}
	g.changed(ctx, governance.EventTableDeclared, registry.KindTable, id, map[string]string{"location": t.URI})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// RegisterTable registers table id, seeded under its namespace; a failed seeding deregisters it
// (its data stays). An Overwrite of an existing table replaces it, so it needs its drop right, as
// a create's does.
func (g *Catalog) RegisterTable(ctx context.Context, id ident.ID, location, mode string, props map[string]string, opts ...catalog.Option) (*catalog.Entry, error) {
	var t *catalog.Entry
	_, err := g.create(ctx, registry.KindTable, id, mode,
		func() error {
			// After the takeover's authorization and before the conflict guards, as the door
			// always answered it.
			if location == "" {
				return nserr.InvalidInputf("location is required")
			}
			return g.conflictTableCreate(ctx, id, mode, catalog.Resolve(opts...).Force)
		},
		func(mode string) (err error) {
			t, err = g.Inner.RegisterTable(ctx, id, location, mode, props, opts...)
			return err
		},
		func(ctx context.Context) error {
			_, err := g.Inner.DeregisterTable(ctx, id)
			return err
		})
	if err != nil && !stands(err) {
		return nil, err
	}
	g.changed(ctx, governance.EventTableRegistered, registry.KindTable, id, map[string]string{"location": t.URI})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// conflictTableCreate is the conflict guards of a create of table id in mode: the live trash (the
// id and its namespace), then protection of what an Overwrite would replace (unless force).
func (g *Catalog) conflictTableCreate(ctx context.Context, id ident.ID, mode string, force bool) error {
	if err := guards.NotTrashed(ctx, g.liveTrash(), id); err != nil {
		return err
	}
	return guards.Overwrite(ctx, g.protection(), registry.KindTable, id, mode, force)
}

func (g *Catalog) undoTable(id ident.ID) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := g.Inner.DropTable(ctx, id)
		return err
	}
}

// create runs before (the conflict guards) then do, the create of kind at id in mode (canonical),
// and answers the mode do finally ran in.
//
// With authorization on, a takeover of an object that exists (Overwrite replaces it, ExistOk
// accepts it as it is) is checked on that object (takeoverAction): Overwrite needs the right to
// destroy it, ExistOk only the right to see it, and neither re-seeds its ownership or revokes its
// grants. A new object is seeded with the caller as owner, after whatever tuples its id still
// held are revoked, and the create is undone when seeding fails. The takeover's check comes before
// before, so a caller it denies learns nothing from protection or the trash.
//
// A takeover asked of a free id runs as a plain Create: an object a concurrent create puts there
// meanwhile is then never replaced or adopted on rights checked on nothing. The catalog's "already
// exists" sends such a request down the takeover path, checked on what now exists.
func (g *Catalog) create(ctx context.Context, kind string, id ident.ID, mode string,
	before func() error, do func(mode string) error, undo func(context.Context) error,
) (string, error) {
	if !g.governed() {
		if err := before(); err != nil {
			return "", err
		}
		return mode, do(mode)
	}
	takeover := mode == catalog.ModeExistOk || mode == catalog.ModeOverwrite
	if takeover && g.exists(ctx, kind, id) {
		if err := g.authorizer.Check(ctx, authz.PrincipalFrom(ctx), takeoverAction(kind, id, mode), objectOf(kind, id)); err != nil {
			return "", err
		}
		if err := before(); err != nil {
			return "", err
		}
		return mode, do(mode)
	}
	if err := before(); err != nil {
		return "", err
	}
	obj := objectOf(kind, id)
	// The authorizer's reads for the seed overlap the catalog commit where it can prepare them
	// (nothing is written before the commit stands: a tuple written for a create that then lost
	// would grant on someone else's object).
	var prepared chan preparedSeed
	if sp, ok := g.authorizer.(seedPreparer); ok {
		prepared = make(chan preparedSeed, 1)
		go func() {
			plan, err := sp.PrepareSeed(ctx, authz.PrincipalFrom(ctx), obj, parentObject(id))
			prepared <- preparedSeed{plan, err}
		}()
	}
	if err := do(catalog.ModeCreate); err != nil {
		if takeover && alreadyExists(err) && g.exists(ctx, kind, id) {
			return mode, g.takeover(ctx, kind, id, mode, do)
		}
		return "", err
	}
	// A new object starts with exactly its seeded tuples: whatever an earlier object at this id
	// left (a trashed one past its deadline keeps its tuples) must not grant anything here.
	var err error
	if prepared != nil {
		p := <-prepared
		if err = p.err; err == nil {
			err = p.plan.Commit(ctx)
		}
	} else if _, err = g.authorizer.RevokeAll(ctx, obj); err == nil {
		err = g.authorizer.SeedCreate(ctx, authz.PrincipalFrom(ctx), obj, parentObject(id))
	}
	if err != nil {
		if uerr := undo(ctx); uerr != nil {
			// Created, unowned and not undone: the id is taken by an object its creator cannot
			// reach, and a retry would only be told it exists.
			name := id.Join(g.delimiter)
			return catalog.ModeCreate, committed("the "+kind+" "+name+" was created", "", []followUp{{
				missing: "its owner could not be recorded, and undoing the create failed too",
				remedy:  remedyOwnerless, cause: stderrors.Join(err, uerr),
			}})
		}
		// Undone: nothing stands, and the failure (the authorization service's outage, 503) is
		// the answer: a retry is safe.
		return "", err
	}
	if takeover {
		return catalog.ModeCreate, nil
	}
	return mode, nil
}

// seedPreparer is an authorizer that prepares a create's seed alongside the catalog commit
// (authz.OpenFGA): PrepareSeed reads, the plan's Commit is RevokeAll then SeedCreate.
type seedPreparer interface {
	PrepareSeed(ctx context.Context, principal authz.Principal, object, parent authz.Object) (*authz.SeedPlan, error)
}

type preparedSeed struct {
	plan *authz.SeedPlan
	err  error
}

// takeover runs do in mode (ExistOk or Overwrite) on the object that exists at id, once the
// caller passes the check on that object; its tuples are left as they are.
func (g *Catalog) takeover(ctx context.Context, kind string, id ident.ID, mode string, do func(string) error) error {
	if err := g.authorizer.Check(ctx, authz.PrincipalFrom(ctx), takeoverAction(kind, id, mode), objectOf(kind, id)); err != nil {
		return err
	}
	return do(mode)
}

// takeoverAction is what a takeover in mode of the object of kind at id is checked for:
// Overwrite replaces it, so it needs the right to destroy it; ExistOk changes nothing, so seeing
// it is enough.
func takeoverAction(kind string, id ident.ID, mode string) authz.Action {
	switch {
	case kind == registry.KindNamespace && id.IsRoot():
		// The root is the catalog itself: "creating" it over itself sets estate-wide properties.
		return authz.CatalogPropertiesSet
	case kind == registry.KindNamespace && mode == catalog.ModeExistOk:
		return authz.NamespaceDescribe
	case kind == registry.KindNamespace:
		return authz.NamespaceDrop
	case mode == catalog.ModeExistOk:
		return authz.TableDescribe
	default:
		return authz.TableDrop
	}
}

// AuthorizeRename is the authorization a rename of table from to table to needs beyond its door:
// the right to create in to's namespace. RenameTable asks it before its conflict checks, so a
// caller it denies learns nothing from those.
func (g *Catalog) AuthorizeRename(ctx context.Context, from, to ident.ID) error {
	if !g.governed() || from.IsRoot() {
		return nil
	}
	// As a create at to: the oracle rule of the guard chain, so a caller who reads everything
	// where to's namespace would be learns it is missing (404), and nobody else learns anything.
	return guards.Oracle{Authorizer: g.authorizer, Catalog: g.Inner}.Authorize(ctx, guards.SpecDoors["CreateTable"], authz.PrincipalFrom(ctx), to)
}

// exists reports whether the table or namespace id exists (false on any error).
func (g *Catalog) exists(ctx context.Context, kind string, id ident.ID) bool {
	if kind == registry.KindTable {
		return g.Inner.TableExists(ctx, id) == nil
	}
	return g.Inner.NamespaceExists(ctx, id) == nil
}

// alreadyExists reports whether err is the catalog's "that id is taken".
func alreadyExists(err error) bool {
	code := nserr.CodeOf(err)
	return code == nserr.TableAlreadyExists || code == nserr.NamespaceAlreadyExists
}

// revokeAll revokes the tuples of objects gone, in order, stopping at the first failure, which
// it answers as a follow-up.
func (g *Catalog) revokeAll(ctx context.Context, objects ...authz.Object) *followUp {
	for _, o := range objects {
		if _, err := g.authorizer.RevokeAll(ctx, o); err != nil {
			return &followUp{missing: "its authorization tuples could not all be removed", remedy: remedyTuples, cause: err}
		}
	}
	return nil
}

// DropTable drops table id. A recoverable drop files it in the trash (see trashTable) and keeps its
// tuples, so an undrop gives it back to the same people; any other drop destroys it, clears its
// records and revokes every tuple on it.
func (g *Catalog) DropTable(ctx context.Context, id ident.ID, opts ...catalog.Option) (*catalog.Entry, error) {
	o := catalog.Resolve(opts...)
	release, err := guards.ClaimNotProtected(ctx, g.protection(), registry.KindTable, id, o.Force)
	if err != nil {
		return nil, err
	}
	if r := g.recycler(o); r != nil && guards.Protectable(id) {
		t, err := g.trashTable(ctx, r, id)
		if err != nil {
			release(ctx)
		}
		return t, err
	}
	t, err := g.Inner.DropTable(ctx, id, opts...)
	if err != nil {
		release(ctx)
		return nil, err
	}
	if err := g.destroyed(ctx, "table", id, g.clearTableRecords, governance.EventTableDropped,
		map[string]string{"location": t.URI, "recoverable": "false"}, authz.TableObject(id)); err != nil {
		return nil, err
	}
	return t, nil
}

// destroyed runs the follow-ups of a destroy of the what (registry.KindTable or KindNamespace) at
// id that committed: its records are cleared (clear), its event recorded, then the tuples of
// objects revoked. The destroy stands, so each is tried whatever the others did, and those that
// failed are the answer together (nserr.Committed).
func (g *Catalog) destroyed(ctx context.Context, what string, id ident.ID, clear func(context.Context, ident.ID) error,
	event string, attrs map[string]string, objects ...authz.Object,
) error {
	did := " was dropped"
	if event == governance.EventTableDeregistered {
		did = " was deregistered"
	}
	return committed(what+" "+id.Join(g.delimiter)+did, "", g.destroyFollowUps(ctx, what, id, clear, event, attrs, objects...))
}

// destroyFollowUps runs the follow-ups of destroyed and answers those that failed.
func (g *Catalog) destroyFollowUps(ctx context.Context, what string, id ident.ID, clear func(context.Context, ident.ID) error,
	event string, attrs map[string]string, objects ...authz.Object,
) []followUp {
	var fs []followUp
	if err := clear(ctx, id); err != nil {
		fs = append(fs, recordsLeft(err))
	}
	g.changed(ctx, event, what, id, attrs)
	if g.governed() {
		if f := g.revokeAll(ctx, objects...); f != nil {
			fs = append(fs, *f)
		}
	}
	return fs
}

// stands reports whether err is the answer of an operation that committed (nserr.Committed):
// what it did stands, and is recorded as a change like any other.
func stands(err error) bool {
	var c *nserr.Committed
	return stderrors.As(err, &c)
}

// DeregisterTable deregisters table id (its data stays), clears its records and revokes every
// tuple on it.
func (g *Catalog) DeregisterTable(ctx context.Context, id ident.ID, opts ...catalog.Option) (*catalog.Entry, error) {
	release, err := guards.ClaimNotProtected(ctx, g.protection(), registry.KindTable, id, catalog.Resolve(opts...).Force)
	if err != nil {
		return nil, err
	}
	t, err := g.Inner.DeregisterTable(ctx, id, opts...)
	if err != nil {
		release(ctx)
		return nil, err
	}
	if err := g.destroyed(ctx, "table", id, g.clearTableRecords, governance.EventTableDeregistered,
		map[string]string{"location": t.URI}, authz.TableObject(id)); err != nil {
		return nil, err
	}
	return t, nil
}

// DropNamespace drops namespace id. A recoverable cascade files the subtree in the trash (see
// trashNamespace) and revokes nothing: the subtree keeps its tuples while it is in the trash (a
// Restrict drop is never recoverable). Any other drop clears the records of the namespace and of
// everything below it, and revokes every tuple on them, enumerated before the drop, deepest first.
func (g *Catalog) DropNamespace(ctx context.Context, id ident.ID, mode, behavior string, opts ...catalog.Option) (map[string]string, error) {
	cascade := behavior == catalog.BehaviorCascade
	o := catalog.Resolve(opts...)
	if err := guards.NamespaceDrop(ctx, g.protection(), id, cascade, o.Force); err != nil {
		return nil, err
	}
	if r := g.recycler(o); r != nil && cascade && guards.Protectable(id) {
		return g.trashNamespace(ctx, r, id, mode)
	}
	var objects []authz.Object
	if g.governed() && !id.IsRoot() {
		objects = g.subtreeObjects(ctx, id)
	}
	p, err := g.Inner.DropNamespace(ctx, id, mode, behavior, opts...)
	if err != nil {
		return nil, err
	}
	if err := g.destroyed(ctx, "namespace", id, g.clearNamespaceRecords, governance.EventNamespaceDropped,
		map[string]string{"cascade": strconv.FormatBool(cascade), "recoverable": "false"}, objects...); err != nil {
		return nil, err
	}
	return p, nil
}

// subtreeObjects is every table and namespace below ns, deepest first, then ns itself.
// Enumeration is best effort: what cannot be listed is left to the drop to refuse or to leave
// behind.
func (g *Catalog) subtreeObjects(ctx context.Context, ns ident.ID) []authz.Object {
	var out []authz.Object
	var walk func(ident.ID, int)
	walk = func(id ident.ID, depth int) {
		if depth > 64 {
			return
		}
		for _, name := range bestEffortNames(func(tok string) (catalog.Page, error) { return g.Inner.ListNamespaces(ctx, id, tok, 1000) }) {
			walk(id.Child(name), depth+1)
		}
		for _, name := range bestEffortNames(func(tok string) (catalog.Page, error) { return g.Inner.ListTables(ctx, id, tok, 1000) }) {
			out = append(out, authz.TableObject(id.Child(name)))
		}
		out = append(out, authz.NamespaceObject(id))
	}
	walk(ns, 0)
	return out
}

// bestEffortNames reads every page of a listing, stopping at the first error, without duplicates.
func bestEffortNames(list func(token string) (catalog.Page, error)) []string {
	var names []string
	seen := map[string]bool{}
	token := ""
	for {
		page, err := list(token)
		if err != nil {
			return names
		}
		for _, n := range page.Names {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
		if page.NextToken == "" || page.NextToken == token {
			return names
		}
		token = page.NextToken
	}
}

// RenameTable moves table id. With authorization on, the destination is checked as a create in
// its namespace, then given exactly the tuples a new object gets (whatever an earlier object at
// that id left is revoked, as a create does; the caller is seeded owner), and the source's tuples
// are revoked. The table's records move with it.
func (g *Catalog) RenameTable(ctx context.Context, id ident.ID, newNamespace ident.ID, newName string, opts ...catalog.Option) (*catalog.Entry, error) {
	dest := newNamespace
	if dest == nil {
		dest = id.Parent()
	}
	to := dest.Child(newName)
	p := authz.PrincipalFrom(ctx)
	// The destination's authorization first, then the conflict guards: the source's protection,
	// the destination's live trash.
	if err := g.AuthorizeRename(ctx, id, to); err != nil {
		return nil, err
	}
	if err := guards.NotProtected(ctx, g.protection(), registry.KindTable, id, catalog.Resolve(opts...).Force); err != nil {
		return nil, err
	}
	if err := guards.NotTrashed(ctx, g.liveTrash(), to); err != nil {
		return nil, err
	}
	if id.IsRoot() {
		return g.Inner.RenameTable(ctx, id, newNamespace, newName, opts...) // the catalog answers a table id of no part
	}
	t, err := g.Inner.RenameTable(ctx, id, newNamespace, newName, opts...)
	if err != nil {
		return nil, err
	}
	// The rename stands: every follow-up is tried, and those that fail are the answer together.
	var fs []followUp
	if err := g.tableMoved(ctx, id, to); err != nil {
		fs = append(fs, followUp{missing: "its protection and policy records could not be moved to its new id", remedy: remedyMoved, cause: err})
	}
	g.changed(ctx, governance.EventTableRenamed, registry.KindTable, to, map[string]string{"from": id.Join(g.delimiter)})
	if g.governed() {
		_, err = g.authorizer.RevokeAll(ctx, authz.TableObject(to))
		if err == nil {
			err = g.authorizer.SeedCreate(ctx, p, authz.TableObject(to), parentObject(to))
		}
		if err != nil {
			fs = append(fs, followUp{missing: "its owner could not be recorded at its new id", remedy: remedyOwnerless, cause: err})
		}
		if f := g.revokeAll(ctx, authz.TableObject(id)); f != nil {
			f.missing = "the authorization tuples of its old id could not all be removed"
			fs = append(fs, *f)
		}
	}
	if err := committed("table "+id.Join(g.delimiter)+" was renamed to "+to.Join(g.delimiter), "", fs); err != nil {
		return nil, err
	}
	return t, nil
}

// clearTableRecords deletes the protection and policy records of table id.
func (g *Catalog) clearTableRecords(ctx context.Context, id ident.ID) error {
	if g.records == nil || !guards.Protectable(id) {
		return nil
	}
	err := g.records.ClearProtection(ctx, registry.KindTable, id)
	if err == nil {
		err = g.records.ClearPolicy(ctx, registry.KindTable, id)
	}
	return err
}

// clearNamespaceRecords deletes the records of a dropped namespace and of everything that was
// below it.
func (g *Catalog) clearNamespaceRecords(ctx context.Context, id ident.ID) error {
	if g.records == nil || !guards.Protectable(id) {
		return nil
	}
	err := g.records.ClearSubtreeProtection(ctx, id)
	if err == nil {
		err = g.records.ClearSubtreePolicies(ctx, id)
	}
	return err
}

// tableMoved carries a renamed table's records to its new id.
func (g *Catalog) tableMoved(ctx context.Context, from, to ident.ID) error {
	if g.records == nil || !guards.Protectable(from) || !guards.Protectable(to) {
		return nil
	}
	return g.records.MoveTableRecords(ctx, from, to)
}

// leftBehind is the answer of a destroy that committed but whose governance records could not be
// cleared: the object is gone, and what is left at its id.
func leftBehind(what, name string, err error) error {
	return committed(what+" "+name+" was dropped", "", []followUp{recordsLeft(err)})
}

// recordsLeft is the follow-up of a destroy whose records could not be cleared.
func recordsLeft(err error) followUp {
	return followUp{missing: "its protection or policy records could not be cleared", remedy: remedyRecords, cause: err}
}
