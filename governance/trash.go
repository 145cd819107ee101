package governance

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/registry"
)

// Recoverable drops (opt-in, --trash-grace-days). With a grace period, a table drop without
// purge=true files a registry.Trash record FIRST and then only deregisters the table: its bytes
// stay where they are until the deadline (and until a purge takes them; nothing here deletes
// bytes). POST /v1/table/{id}/undrop re-registers the table at its recorded location and clears
// the record; a create, declare or register at an id that still has a live record is refused
// (409 naming the undrop route). With no grace period a drop destroys, the spec's semantics, but
// records left from an earlier configuration are still honoured and can still be undropped.
//
// A cascading namespace drop is recoverable the same way (trash_namespace.go): the subtree is
// detached, every table and namespace filed in the trash, and POST /v1/namespace/{id}/undrop
// rebuilds it. A Restrict namespace drop is never trashed: it only removes an empty namespace.

// EventTableUndropped is emitted when a trashed table is registered again.
const EventTableUndropped = "table_undropped"

// TableRegistrar is what an undrop needs of the catalog: registering a dataset at a location
// relative to the catalog root (and deregistering it again when a purge took the record
// meanwhile), and (a namespace undrop) creating a namespace with its saved properties.
// *namespace.Namespace satisfies it.
type TableRegistrar interface {
	RegisterTable(ctx context.Context, id ident.ID, location, mode string, props map[string]string, opts ...catalog.Option) (*catalog.Entry, error)
	DeregisterTable(ctx context.Context, id ident.ID, opts ...catalog.Option) (*catalog.Entry, error)
	CreateNamespace(ctx context.Context, id ident.ID, props map[string]string, mode string, opts ...catalog.Option) (map[string]string, error)
}

// Trash is the governance service with recoverable drops. It embeds the Service, so it is also
// the lifecycle the spec doors consult.
type Trash struct {
	*Service
	grace  time.Duration
	tables TableRegistrar
	bytes  TrashBytes
	// revoker revokes purged objects' tuples (nil: the service's authorizer); queueReason, when
	// set, queues them instead while there is none (trash_revoke.go).
	revoker     authz.Authorizer
	queueReason string
}

// NewTrash returns svc with recoverable drops of grace (0: drops destroy); tables restores
// undropped tables and namespaces (nil: undrop is Unsupported). When tables can also delete a
// dropped table's bytes in the root it lived in (TrashBytes: the router can), the purge (maintenance.PurgeTrash) works.
func NewTrash(svc *Service, grace time.Duration, tables TableRegistrar) *Trash {
	t := &Trash{Service: svc, grace: max(grace, 0), tables: tables}
	t.bytes, _ = tables.(TrashBytes)
	return t
}

// TrashGrace is how long a dropped table or namespace stays recoverable; 0: drops destroy.
func (t *Trash) TrashGrace() time.Duration { return t.grace }

func trashKey(id ident.ID) string {
	return registry.ObjectKey(registry.TrashPrefix, registry.KindTable, id)
}

// readTrash is the trash record of table id; malformed is 503, never absent.
func (t *Trash) readTrash(ctx context.Context, id ident.ID) (registry.Trash, bool, error) {
	return t.readTrashAt(ctx, trashKey(id))
}

// readTrashAt is the trash record at key, if any; malformed is 503, never absent.
func (s *Service) readTrashAt(ctx context.Context, key string) (registry.Trash, bool, error) {
	rec, _, err := registry.Read[registry.Trash](ctx, s.store, key)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return registry.Trash{}, false, nil
	case err != nil:
		return registry.Trash{}, false, registryError(err)
	}
	return rec, true, nil
}

// TrashTable files the trash record of table id, about to be deregistered by a recoverable drop:
// location is the table directory relative to the root it lives in, props its properties. The
// record also says which root that is (the warehouse binding of its top-level namespace, none
// for the catalog root), read now because a later cascade unbinds it and a later bind may name
// another warehouse: the purge deletes the bytes there. A record left at id by an earlier drop is
// replaced (the new table could only be created once that one expired); what it pointed at is
// logged, its bytes are left behind. cascade is the token of the namespace drop filing the record
// ("" for a table dropped on its own): only that namespace's undrop brings the table back.
func (t *Trash) TrashTable(ctx context.Context, p authz.Principal, id ident.ID, location string, props map[string]string, cascade string) (registry.Trash, error) {
	if err := t.objectShape(registry.KindTable, id); err != nil {
		return registry.Trash{}, err
	}
	old, found, err := t.readTrash(ctx, id)
	if err != nil {
		return registry.Trash{}, err
	}
	if found {
		t.log.LogAttrs(ctx, slog.LevelWarn, "replacing an expired trash record", slog.String("table", id.Join(t.delim)),
			slog.String("location", old.Location), slog.Time("expires_at", old.ExpiresAt))
	}
	// A table of the root namespace lives in the catalog root: no binding (its one part is its
	// own name, which a bound top-level namespace may share).
	var binding *registry.Binding
	if len(id) > 1 {
		if binding, err = t.bindingOf(ctx, id[0]); err != nil {
			return registry.Trash{}, err
		}
	}
	return t.file(ctx, p, trashKey(id), registry.Trash{
		Kind: registry.KindTable, ID: slices.Clone(id), Location: location, Properties: props, Binding: binding, Placed: true,
		Cascade: cascade,
	})
}

// bindingOf is the warehouse binding of top-level namespace name, nil when it is not bound.
func (s *Service) bindingOf(ctx context.Context, name string) (*registry.Binding, error) {
	b, _, err := registry.Read[registry.Binding](ctx, s.store, registry.BindingKey(name))
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, registryError(err)
	}
	return &b, nil
}

// file stamps rec (who dropped it, when, and its deadline) and writes it at key, replacing any
// record there.
func (t *Trash) file(ctx context.Context, p authz.Principal, key string, rec registry.Trash) (registry.Trash, error) {
	now := t.now().UTC()
	rec.DroppedBy, rec.DroppedAt, rec.ExpiresAt = actor(p), now, now.Add(t.grace)
	if err := registry.Put(ctx, t.store, key, rec); err != nil {
		return registry.Trash{}, registryError(err)
	}
	return rec, nil
}

// DiscardTrash deletes the trash record of table id (a recoverable drop whose deregister failed,
// or an undrop that completed). Idempotent.
func (t *Trash) DiscardTrash(ctx context.Context, id ident.ID) error {
	return t.discard(ctx, trashKey(id))
}

func (t *Trash) discard(ctx context.Context, key string) error {
	if err := registry.Delete(ctx, t.store, key); err != nil {
		return registryError(err)
	}
	return nil
}

// CheckNotTrashed is the guard of the doors that create a table at id (create, declare,
// register, the destination of a rename): while a live trash record holds the id, they are 409
// TableAlreadyExists naming the undrop route and the deadline. An expired record does not hold
// the id.
func (t *Trash) CheckNotTrashed(ctx context.Context, id ident.ID) error {
	if id.IsRoot() || id.Validate(t.delim) != nil {
		return nil // not a table id: the catalog answers
	}
	return t.heldByTrash(ctx, trashKey(id), id, "table", nserr.TableAlreadyExists)
}

// heldByTrash is the 409 (code: the kind's AlreadyExists) of a create at id while the live trash record at key
// holds it, naming the undrop route of kind ("table" or "namespace") and the deadline; nil when
// no record, or an expired one, is there.
func (s *Service) heldByTrash(ctx context.Context, key string, id ident.ID, kind string, code nserr.Code) error {
	rec, found, err := s.readTrashAt(ctx, key)
	if err != nil || !found || rec.Expired(s.now()) {
		return err
	}
	return nserr.Newf(code, "%s %s was dropped and is recoverable until %s: restore it with POST /v1/%s/%s/undrop, or wait for the deadline",
		kind, id.Join(s.delim), rec.ExpiresAt.UTC().Format(time.RFC3339), kind, id.PathSegment(s.delim))
}

// TableTask is one pending trash record of a table id.
type TableTask struct {
	registry.Trash
	Expired bool
}

// TableTasks is GET /v1/table/{id}/tasks: the pending trash record of table id, if any, and
// whether its deadline passed. Gated like describing the table; an id with nothing pending is an
// empty list, whether or not a table lives there.
func (t *Trash) TableTasks(ctx context.Context, p authz.Principal, id ident.ID) ([]TableTask, error) {
	p, err := t.caller(p)
	if err != nil {
		return nil, err
	}
	if err := t.objectShape(registry.KindTable, id); err != nil {
		return nil, err
	}
	if err := t.authz.Check(ctx, p, authz.TableTasks, authz.TableObject(id)); err != nil {
		return nil, err
	}
	rec, found, err := t.readTrash(ctx, id)
	if err != nil || !found {
		return []TableTask{}, err
	}
	return []TableTask{{Trash: rec, Expired: rec.Expired(t.now())}}, nil
}

// NamespaceTasks are the pending trash records of every id strictly under namespace ns (its
// whole subtree: tables and namespaces), each with whether its deadline passed, in the trash's
// listing order. Authorization is the door's (read on the namespace covers its subtree).
func (t *Trash) NamespaceTasks(ctx context.Context, ns ident.ID) ([]TableTask, error) {
	listed, err := t.ListTrash(ctx)
	if err != nil {
		return nil, err
	}
	now := t.now()
	out := []TableTask{}
	for _, rec := range listed.Records {
		if len(rec.ID) > len(ns) && slices.Equal(rec.ID[:len(ns)], ns) {
			out = append(out, TableTask{Trash: rec, Expired: rec.Expired(now)})
		}
	}
	return out, nil
}

// UndropTable is POST /v1/table/{id}/undrop: re-register a recoverably dropped table at its
// recorded location, then clear the record. No record is 404 (TableNotFound); a record past its
// deadline still undrops (the bytes are there until a purge takes them) and says so in the log,
// unless a purge has claimed it (409 ConcurrentModification: restoreTable). A table already
// registered at id is taken as an earlier undrop that did not clear its record. Owner tier
// (can_drop); no tuples are seeded: the undrop restores, it does not create.
func (t *Trash) UndropTable(ctx context.Context, p authz.Principal, id ident.ID) (registry.Trash, error) {
	p, err := t.caller(p)
	if err != nil {
		return registry.Trash{}, err
	}
	if err := t.objectShape(registry.KindTable, id); err != nil {
		return registry.Trash{}, err
	}
	if err := t.authz.Check(ctx, p, authz.TableUndrop, authz.TableObject(id)); err != nil {
		return registry.Trash{}, err
	}
	if t.tables == nil {
		return registry.Trash{}, nserr.Newf(nserr.Unsupported, "undrop is not available: this server has no catalog to register tables in")
	}
	rec, err := t.restoreTable(ctx, id)
	if err != nil {
		return registry.Trash{}, err
	}
	t.emit(ctx, EventTableUndropped, p, authz.TableObject(id).String(), map[string]string{"location": rec.Location})
	return rec, nil
}

// restoreTable registers trashed table id again at its recorded location and clears its record;
// both undrops use it. It must never hand back a table whose bytes a purge is deleting, and the
// two only ever meet on the record:
//
//  1. The undrop claims the record first (Undropping, an ETag-guarded Mutate) and refuses one a
//     purge has claimed (Purging, 409 "being purged"). A purge claims the same way and leaves a
//     record an undrop has claimed alone. Claims are exclusive, so while both are fresh an undrop
//     and a purge never work on one record at the same time.
//  2. A claim older than TrashClaimTTL was left by a process that died: a purge takes such a
//     record over, an undrop clears the stale purge claim and goes on. Then they may overlap after
//     all (the "dead" one was only slow), and the purge's order — claim, look for a live table at
//     the id, delete the bytes, delete the record — meets the undrop's — claim, register, read the
//     record again — this way: if the register came before the purge looked, the purge sees the
//     table and spares the bytes (it only deletes the record); if it came after, the purge's claim
//     was already on the record, so the re-read finds it (or finds the record gone) and the undrop
//     deregisters the table again and answers 409. Either the purge spares the bytes or the
//     undrop backs out: a registered table never points at deleted bytes. A backed-out undrop
//     files the record again if the purge removed it, so bytes the purge spared are not orphaned.
func (t *Trash) restoreTable(ctx context.Context, id ident.ID) (registry.Trash, error) {
	name := id.Join(t.delim)
	key := trashKey(id)
	now := t.now().UTC()
	rec, err := registry.Mutate(ctx, t.store, key, func(r *registry.Trash) error {
		switch {
		case r.Purging && !claimStale(r.PurgingSince, now):
			return beingPurged(name, *r.PurgingSince)
		case r.Undropping && !claimStale(r.UndroppingSince, now):
			return nserr.ConcurrentModificationf("table %s is being undropped by another request (since %s); retry", name, r.UndroppingSince.Format(time.RFC3339))
		}
		if r.Purging {
			t.log.LogAttrs(ctx, slog.LevelWarn, "undrop clears a stale purge claim", slog.String("table", name), slog.Time("purging_since", *r.PurgingSince))
		}
		r.Purging, r.PurgingSince = false, nil
		r.Undropping, r.UndroppingSince = true, &now
		return nil
	})
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return registry.Trash{}, nserr.Wrap(nserr.TableNotFound, errNotInTrash, "table "+name+" is not in the trash: there is nothing to undrop")
	case err != nil:
		return registry.Trash{}, registryError(err)
	}
	if rec.Expired(now) {
		t.log.LogAttrs(ctx, slog.LevelWarn, "undropping a table past its trash deadline", slog.String("table", name),
			slog.Time("expires_at", rec.ExpiresAt))
	}
	_, err = t.tables.RegisterTable(ctx, id, rec.Location, "", rec.Properties)
	registered := err == nil
	if err != nil && !nserr.Is(err, nserr.ErrTableAlreadyExists) {
		t.releaseUndrop(ctx, key, now)
		return registry.Trash{}, err
	}
	if nserr.Is(err, nserr.ErrTableAlreadyExists) {
		// Taken as an earlier undrop that did not clear its record, unless another table has the
		// id now (made there after the deadline): then the trashed one must stay findable.
		if d, ok := t.tables.(tableDescriber); ok {
			if live, derr := d.DescribeTable(ctx, id); derr == nil && live.Location != rec.Location {
				t.releaseUndrop(ctx, key, now)
				return registry.Trash{}, nserr.TableAlreadyExistsf("table %s is another table now (at %s); the dropped one stays in the trash (at %s): drop or rename the new one, then undrop",
					name, live.Location, rec.Location)
			}
		}
	}
	cur, found, err := t.readTrash(ctx, id)
	if err != nil {
		return registry.Trash{}, nserr.Wrap(nserr.CodeOf(err), err, "table "+name+
			" is registered again but its trash record could not be read back; undrop it again: "+err.Error())
	}
	if !found || cur.Purging {
		return registry.Trash{}, t.backOut(ctx, id, rec, registered, found)
	}
	if !cur.Undropping || cur.UndroppingSince == nil || !cur.UndroppingSince.Equal(now) {
		// Dropped again since the register (a new record, not ours to clear): the table is back
		// in the trash, which is where its owner put it.
		return rec, nil
	}
	if err := t.DiscardTrash(ctx, id); err != nil {
		return registry.Trash{}, nserr.Wrap(nserr.CodeOf(err), err, "table "+name+
			" is registered again but its trash record could not be cleared; undrop it again: "+err.Error())
	}
	return rec, nil
}

// tableDescriber is what restoreTable asks of a catalog that can tell which table holds an id.
type tableDescriber interface {
	DescribeTable(ctx context.Context, id ident.ID) (*catalog.Entry, error)
}

// errNotInTrash is the cause of an undrop of a table without a record.
var errNotInTrash = errors.New("not in the trash")

// backOut undoes an undrop whose record a purge took over while it registered the table (see
// restoreTable): the table is deregistered again if this undrop registered it, and a record the
// purge already removed is filed again (without claims), so that bytes it spared stay findable.
func (t *Trash) backOut(ctx context.Context, id ident.ID, rec registry.Trash, registered, found bool) error {
	name := id.Join(t.delim)
	t.log.LogAttrs(ctx, slog.LevelWarn, "undrop backs out: a purge took the trash record over", slog.String("table", name),
		slog.String("location", rec.Location), slog.Bool("record_found", found))
	if registered {
		if _, err := t.tables.DeregisterTable(ctx, id); err != nil && !nserr.Is(err, nserr.ErrTableNotFound) {
			return nserr.Wrap(nserr.CodeOf(err), err, "table "+name+" is being purged, and the undrop that registered it meanwhile could not deregister it again ("+
				err.Error()+"): drop it")
		}
	}
	if !found {
		rec.Purging, rec.PurgingSince, rec.Undropping, rec.UndroppingSince = false, nil, false, nil
		if err := registry.Create(ctx, t.store, trashKey(id), rec); err != nil && !errors.Is(err, registry.ErrExists) {
			t.log.LogAttrs(ctx, slog.LevelError, "an undrop that backed out could not file the trash record again", slog.String("table", name),
				slog.String("location", rec.Location), slog.String("error", err.Error()))
		}
	}
	return nserr.ConcurrentModificationf("table %s is being purged: its trash deadline passed and a purge took it while it was undropped; "+
		"retry the undrop (it works if the purge left the bytes)", name)
}

// releaseUndrop lifts this undrop's claim (since) from the record at key, best effort: a claim
// left behind only delays the purge by TrashClaimTTL.
func (t *Trash) releaseUndrop(ctx context.Context, key string, since time.Time) {
	t.releaseClaim(ctx, key, since, "an undrop", func(r *registry.Trash) (*bool, **time.Time) { return &r.Undropping, &r.UndroppingSince })
}

// releaseClaim clears the claim claim(r) points at from the record at key if it is still the one
// made at since; best effort, the caller's log names who (a claim left behind only waits out
// TrashClaimTTL).
func (t *Trash) releaseClaim(ctx context.Context, key string, since time.Time, who string, claim func(*registry.Trash) (*bool, **time.Time)) {
	_, err := registry.Mutate(ctx, t.store, key, func(r *registry.Trash) error {
		held, at := claim(r)
		if !*held || *at == nil || !(*at).Equal(since) {
			return errUnchanged
		}
		*held, *at = false, nil
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) && !errors.Is(err, registry.ErrNotFound) {
		t.log.LogAttrs(ctx, slog.LevelWarn, who+" could not release its claim", slog.String("key", key), slog.String("error", err.Error()))
	}
}
