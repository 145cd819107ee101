package governance

// Recoverable cascading namespace drops. With a grace period, a Cascade drop without purge=true
// detaches the subtree instead of destroying it (the spec doors do the catalog side): every table
// gets a table trash record and is deregistered (bytes kept), every namespace a kind=namespace
// record (its properties, and for a top-level namespace its warehouse binding) and is dropped
// empty. POST /v1/namespace/{id}/undrop rebuilds the subtree from those records.

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"slices"
	"strconv"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// EventNamespaceUndropped is emitted when a trashed namespace subtree is rebuilt.
const EventNamespaceUndropped = "namespace_undropped"

func namespaceTrashKey(id ident.ID) string {
	return registry.ObjectKey(registry.TrashPrefix, registry.KindNamespace, id)
}

// readNamespaceTrash is the trash record of namespace id; malformed is 503, never absent.
func (s *Service) readNamespaceTrash(ctx context.Context, id ident.ID) (registry.Trash, bool, error) {
	return s.readTrashAt(ctx, namespaceTrashKey(id))
}

// TrashNamespace files the kind=namespace trash record of namespace id, about to be dropped empty
// by a recoverable cascade; props are its properties, given back by the undrop. A top-level
// namespace's record carries its warehouse binding, read here because the drop unbinds it. A
// record left at id by an earlier drop is replaced (it expired, or that drop is being retried).
//
// cascade "" is the namespace a cascade drops: its record gets the drop's token
// (registry.Trash.Cascade), which the cascade passes on to every record it files below. A live
// record already at id is that drop being retried (no namespace can be made at an id a live record
// holds), so its token is kept: what the first attempt filed comes back with the rest.
func (t *Trash) TrashNamespace(ctx context.Context, p authz.Principal, id ident.ID, props map[string]string, cascade string) (registry.Trash, error) {
	if err := t.objectShape(registry.KindNamespace, id); err != nil {
		return registry.Trash{}, err
	}
	old, found, err := t.readNamespaceTrash(ctx, id)
	if err != nil {
		return registry.Trash{}, err
	}
	if found {
		t.log.LogAttrs(ctx, slog.LevelWarn, "replacing a namespace trash record", slog.String("namespace", id.Join(t.delim)),
			slog.Time("expires_at", old.ExpiresAt))
	}
	if cascade == "" {
		if found && old.Cascade != "" && !old.Expired(t.now()) {
			cascade = old.Cascade
		} else {
			cascade = rand.Text()
		}
	}
	var binding *registry.Binding
	if len(id) == 1 {
		if binding, err = t.bindingOf(ctx, id[0]); err != nil {
			return registry.Trash{}, err
		}
		if binding == nil && found && old.Binding != nil {
			// A retried drop whose first attempt already unbound: the old record still knows where
			// the namespace lived.
			binding = old.Binding
		}
	}
	return t.file(ctx, p, namespaceTrashKey(id), registry.Trash{
		Kind: registry.KindNamespace, ID: slices.Clone(id), Binding: binding, Properties: props, Cascade: cascade,
	})
}

// DiscardNamespaceTrash deletes the trash record of namespace id (a recoverable drop that did not
// happen after all). Idempotent.
func (t *Trash) DiscardNamespaceTrash(ctx context.Context, id ident.ID) error {
	return t.discard(ctx, namespaceTrashKey(id))
}

// CheckNamespaceNotTrashed is the guard of a namespace create at id, and of a table create in
// namespace id: while a live trash record holds the id, it is 409 NamespaceAlreadyExists naming
// the undrop route and the deadline (what is made there would be taken in by the undrop). An
// expired record does not hold the id.
func (s *Service) CheckNamespaceNotTrashed(ctx context.Context, id ident.ID) error {
	if id.IsRoot() || id.Validate(s.delim) != nil {
		return nil // the root is never trashed; a malformed id is the catalog's to refuse
	}
	return s.heldByTrash(ctx, namespaceTrashKey(id), id, "namespace", nserr.NamespaceAlreadyExists)
}

// UndroppedNamespace is what an undrop rebuilt: the namespaces (shallowest first) and tables
// given back, and the tables the catalog would not register again (declared-only tables on a
// catalog that refuses them; their records stay).
type UndroppedNamespace struct {
	Root       registry.Trash
	Namespaces []ident.ID
	Tables     []ident.ID
	Skipped    []ident.ID
}

// under reports whether id is root or below it.
func under(id, root ident.ID) bool {
	return len(id) >= len(root) && slices.Equal(id[:len(root)], root)
}

// UndropNamespace is POST /v1/namespace/{id}/undrop: rebuild a recoverably dropped namespace
// subtree. No record at id is 404 (NamespaceNotFound). A record carrying a warehouse binding
// needs that warehouse to exist and be active (403 otherwise) and is bound again first; then every
// trashed namespace at or under id is created again (ExistOk, its saved properties),
// shallowest first, and every trashed table under id is registered again at its location (one
// already registered is an earlier undrop that did not finish). Each record is cleared once its
// object is back, the one at id last: an undrop that fails part way is finished by the next.
// Only the records of the namespace's own drop come back (registry.Trash.Cascade): a table or
// namespace below id dropped on its own before it stays in the trash, undroppable by itself, as
// its owner left it. (A record filed before drops carried tokens takes in everything below id, as
// it did then.) Gated like the
// namespace drop (can_delete); no tuples are seeded: the recoverable drop kept them.
func (t *Trash) UndropNamespace(ctx context.Context, p authz.Principal, id ident.ID) (UndroppedNamespace, error) {
	p, err := t.caller(p)
	if err != nil {
		return UndroppedNamespace{}, err
	}
	if id.IsRoot() {
		return UndroppedNamespace{}, nserr.InvalidInputf("the root namespace is the catalog itself: it is never dropped, so there is nothing to undrop; name a namespace")
	}
	if err := t.objectShape(registry.KindNamespace, id); err != nil {
		return UndroppedNamespace{}, err
	}
	if err := t.authz.Check(ctx, p, authz.NamespaceUndrop, authz.NamespaceObject(id)); err != nil {
		return UndroppedNamespace{}, err
	}
	if t.tables == nil {
		return UndroppedNamespace{}, nserr.Newf(nserr.Unsupported, "undrop is not available: this server has no catalog to restore namespaces in")
	}
	name := id.Join(t.delim)
	root, found, err := t.readNamespaceTrash(ctx, id)
	if err != nil {
		return UndroppedNamespace{}, err
	}
	if !found {
		return UndroppedNamespace{}, nserr.NamespaceNotFoundf("namespace %s is not in the trash: there is nothing to undrop", name)
	}
	if root.Expired(t.now()) {
		t.log.LogAttrs(ctx, slog.LevelWarn, "undropping a namespace past its trash deadline", slog.String("namespace", name),
			slog.Time("expires_at", root.ExpiresAt))
	}
	listed, err := registry.List[registry.Trash](ctx, t.store, registry.TrashPrefix)
	if err != nil {
		return UndroppedNamespace{}, registryError(err)
	}
	if len(listed.Skipped) > 0 {
		// Unreadable records cannot be matched to an id: what they held stays in the trash.
		t.log.LogAttrs(ctx, slog.LevelWarn, "undrop skips unreadable trash records", slog.String("namespace", name),
			slog.Any("keys", listed.Skipped))
	}
	var namespaces, tables []registry.Trash
	for _, rec := range listed.Records {
		switch {
		case !under(rec.ID, id):
		case root.Cascade != "" && rec.Cascade != root.Cascade:
			// Dropped on its own (or by another drop) before this one: not this undrop's to restore.
		case rec.Kind == registry.KindNamespace && len(rec.ID) > len(id):
			namespaces = append(namespaces, rec)
		case rec.Kind == registry.KindTable && len(rec.ID) > len(id):
			tables = append(tables, rec)
		}
	}
	// Shallowest first, so every namespace is created under its parent; ties in id order.
	byDepth := func(a, b registry.Trash) int {
		if d := len(a.ID) - len(b.ID); d != 0 {
			return d
		}
		return slices.Compare(a.ID, b.ID)
	}
	slices.SortFunc(namespaces, byDepth)
	slices.SortFunc(tables, byDepth)

	if root.Binding != nil {
		if err := t.rebind(ctx, *root.Binding); err != nil {
			return UndroppedNamespace{}, err
		}
	}
	out := UndroppedNamespace{Root: root}
	if _, err := t.tables.CreateNamespace(ctx, id, root.Properties, catalog.ModeExistOk); err != nil {
		return out, t.undropFailed(ctx, id, err)
	}
	out.Namespaces = append(out.Namespaces, id)
	for _, rec := range namespaces {
		nid := ident.ID(rec.ID)
		if _, err := t.tables.CreateNamespace(ctx, nid, rec.Properties, catalog.ModeExistOk); err != nil {
			return out, t.undropFailed(ctx, id, err)
		}
		if err := t.DiscardNamespaceTrash(ctx, nid); err != nil {
			return out, t.undropFailed(ctx, id, err)
		}
		out.Namespaces = append(out.Namespaces, nid)
	}
	for _, rec := range tables {
		tid := ident.ID(rec.ID)
		// Under the same claims as a table undrop: a record a purge holds stops the undrop (409,
		// retry), and a purge never deletes bytes of a table this brings back (restoreTable).
		_, err := t.restoreTable(ctx, tid)
		switch {
		case err == nil:
		case errors.Is(err, errNotInTrash):
			continue // purged, or undropped on its own, since the listing
		case declaredRefusal(err):
			// A declared-only table has no dataset to register on some catalogs: its record stays
			// (the id stays held, the purge still finds it), the rest of the subtree comes back.
			t.log.LogAttrs(ctx, slog.LevelWarn, "undrop skipped a table the catalog would not register", slog.String("table", tid.Join(t.delim)),
				slog.String("location", rec.Location), slog.String("error", err.Error()))
			out.Skipped = append(out.Skipped, tid)
			continue
		default:
			return out, t.undropFailed(ctx, id, err)
		}
		out.Tables = append(out.Tables, tid)
	}
	if err := t.DiscardNamespaceTrash(ctx, id); err != nil {
		return out, t.undropFailed(ctx, id, err)
	}
	t.emit(ctx, EventNamespaceUndropped, p, authz.NamespaceObject(id).String(), map[string]string{
		"namespaces":            strconv.Itoa(len(out.Namespaces)),
		"tables":                strconv.Itoa(len(out.Tables)),
		"declared_only_skipped": strconv.Itoa(len(out.Skipped)),
	})
	return out, nil
}

// declaredRefusal reports whether a register failure is the catalog refusing the location itself
// (nothing there to register), as opposed to a failure worth stopping the undrop for.
func declaredRefusal(err error) bool {
	switch nserr.CodeOf(err) {
	case nserr.TableNotFound, nserr.InvalidInput, nserr.InvalidTableState:
		return true
	}
	return false
}

// undropFailed is the answer of an undrop that stopped part way: its own code, saying that
// another undrop finishes the job.
func (t *Trash) undropFailed(_ context.Context, id ident.ID, err error) error {
	return nserr.Wrap(nserr.CodeOf(err), err, "undropping namespace "+id.Join(t.delim)+" stopped part way ("+err.Error()+
		"); what is back stays back: retry POST /v1/namespace/"+id.PathSegment(t.delim)+"/undrop to finish")
}

// rebind restores the warehouse binding of a trashed top-level namespace. The warehouse must
// still exist and be active: a namespace is never brought back into a deleted or quarantined
// warehouse. A binding already there converges when it is the same one; another warehouse
// having taken the name is a conflict.
func (t *Trash) rebind(ctx context.Context, b registry.Binding) error {
	wh, _, err := registry.Read[registry.Warehouse](ctx, t.store, registry.WarehouseKey(b.WarehouseID))
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return nserr.PermissionDeniedf("namespace %s lived in warehouse %s, which no longer exists: it cannot be undropped", b.TopNamespace, b.WarehouseID)
	case err != nil:
		return registryError(err)
	case !wh.Active():
		return nserr.PermissionDeniedf("namespace %s lives in warehouse %s, which is %s: activate the warehouse, then undrop", b.TopNamespace, b.WarehouseID, wh.Status)
	}
	err = registry.Create(ctx, t.store, registry.BindingKey(b.TopNamespace), b)
	if !errors.Is(err, registry.ErrExists) {
		if err != nil {
			return registryError(err)
		}
		return nil
	}
	cur, _, err := registry.Read[registry.Binding](ctx, t.store, registry.BindingKey(b.TopNamespace))
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return nserr.ConcurrentModificationf("the binding of namespace %s changed during the undrop; retry", b.TopNamespace)
	case err != nil:
		return registryError(err)
	case cur != b:
		return nserr.NamespaceAlreadyExistsf("namespace %s is bound to warehouse %s now (it was in %s when dropped): it cannot be undropped",
			b.TopNamespace, cur.WarehouseID, b.WarehouseID)
	}
	return nil
}
