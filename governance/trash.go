package governance

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/lancecat/lancecat/authz"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
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
// relative to the catalog root, and (a namespace undrop) creating a namespace with its saved
// properties. *namespace.Namespace satisfies it.
type TableRegistrar interface {
	RegisterTable(ctx context.Context, id ident.ID, location, mode string, props map[string]string) (*namespace.Table, error)
	CreateNamespace(ctx context.Context, id ident.ID, props map[string]string, mode string) (map[string]string, error)
}

// Trash is the governance service with recoverable drops. It embeds the Service, so it is also
// the lifecycle the spec doors consult.
type Trash struct {
	*Service
	grace  time.Duration
	tables TableRegistrar
}

// NewTrash returns svc with recoverable drops of grace (0: drops destroy); tables restores
// undropped tables and namespaces (nil: undrop is Unsupported).
func NewTrash(svc *Service, grace time.Duration, tables TableRegistrar) *Trash {
	return &Trash{Service: svc, grace: max(grace, 0), tables: tables}
}

// TrashGrace is how long a dropped table or namespace stays recoverable; 0: drops destroy.
func (t *Trash) TrashGrace() time.Duration { return t.grace }

func trashKey(id ident.ID) string {
	return registry.ObjectKey(registry.TrashPrefix, registry.KindTable, id)
}

// readTrash is the trash record of table id; malformed is 503, never absent.
func (t *Trash) readTrash(ctx context.Context, id ident.ID) (registry.Trash, bool, error) {
	rec, _, err := registry.Read[registry.Trash](ctx, t.store, trashKey(id))
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return registry.Trash{}, false, nil
	case err != nil:
		return registry.Trash{}, false, registryError(err)
	}
	return rec, true, nil
}

// TrashTable files the trash record of table id, about to be deregistered by a recoverable drop:
// location is the table directory relative to the catalog root, props its properties. A record
// left at id by an earlier drop is replaced (the new table could only be created once that one
// expired); what it pointed at is logged, for the purge.
func (t *Trash) TrashTable(ctx context.Context, p authz.Principal, id ident.ID, location string, props map[string]string) (registry.Trash, error) {
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
	return t.file(ctx, p, trashKey(id), registry.Trash{Kind: registry.KindTable, ID: slices.Clone(id), Location: location, Properties: props})
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
	if len(id) < 2 || id.Validate(t.delim) != nil {
		return nil // not a governed table id: the catalog answers
	}
	rec, found, err := t.readTrash(ctx, id)
	if err != nil || !found || rec.Expired(t.now()) {
		return err
	}
	return nserr.TableAlreadyExistsf("table %s was dropped and is recoverable until %s: restore it with POST /v1/table/%s/undrop, or wait for the deadline",
		id.Join(t.delim), rec.ExpiresAt.UTC().Format(time.RFC3339), id.PathSegment(t.delim))
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

// UndropTable is POST /v1/table/{id}/undrop: re-register a recoverably dropped table at its
// recorded location, then clear the record. No record is 404 (TableNotFound); a record past its
// deadline still undrops (the bytes are there until a purge takes them) and says so in the log.
// A table already registered at id is taken as an earlier undrop that did not clear its record.
// Owner tier (can_drop); no tuples are seeded: the undrop restores, it does not create.
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
	rec, found, err := t.readTrash(ctx, id)
	if err != nil {
		return registry.Trash{}, err
	}
	if !found {
		return registry.Trash{}, nserr.TableNotFoundf("table %s is not in the trash: there is nothing to undrop", id.Join(t.delim))
	}
	if rec.Expired(t.now()) {
		t.log.LogAttrs(ctx, slog.LevelWarn, "undropping a table past its trash deadline", slog.String("table", id.Join(t.delim)),
			slog.Time("expires_at", rec.ExpiresAt))
	}
	if _, err := t.tables.RegisterTable(ctx, id, rec.Location, "", rec.Properties); err != nil && !nserr.Is(err, nserr.ErrTableAlreadyExists) {
		return registry.Trash{}, err
	}
	if err := t.DiscardTrash(ctx, id); err != nil {
		return registry.Trash{}, nserr.Wrap(nserr.CodeOf(err), err, "table "+id.Join(t.delim)+
			" is registered again but its trash record could not be cleared; undrop it again: "+err.Error())
	}
	t.emit(ctx, EventTableUndropped, p, authz.TableObject(id).String(), map[string]string{"location": rec.Location})
	return rec, nil
}
