package governance

// The trash records API the expiry purge works through (the purge itself is maintenance.
// PurgeTrash). Past its deadline a table's trash record is claimed (Purging), its bytes deleted in
// the root the table lived in, the record deleted last; the steps here are each idempotent, so
// two purgers may both run them. What must never happen is deleting bytes a live table uses;
// restoreTable (trash.go) has the argument against an undrop, and the catalog refuses to delete a
// location any table of its root references (namespace.DeleteLocation).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
)

// Events of the purge.
const (
	EventTablePurged     = "table_purged"
	EventNamespacePurged = "namespace_purged"
)

// TrashClaimTTL is how long a purge or undrop claim on a trash record holds: an older one was
// left by a process that died. It bounds how long a purge may take between its claim and its
// delete before an undrop may go ahead.
const TrashClaimTTL = time.Hour

// purgeActor is who the purge's events name.
const purgeActor = authz.Principal("service:trash-purge")

// TrashBytes is what the purge needs of the catalog: the table registered at an id now (routed
// as every request is), and deleting every object under a location in the root at rootURI (""
// the catalog root; refused when a table there references the location, namespace.
// ErrLocationInUse). *routing.Router satisfies it.
type TrashBytes interface {
	DescribeTable(ctx context.Context, id ident.ID) (*catalog.Entry, error)
	DeleteTableBytes(ctx context.Context, rootURI, location string) (namespace.Deleted, error)
}

// Why a purge step left a record as it is (ClaimPurge, DiscardExpired).
var (
	ErrTrashGone      = errors.New("the record is gone: undropped or purged meanwhile")
	ErrNotExpired     = errors.New("the record was replaced by a newer drop and is not expired")
	ErrBeingUndropped = errors.New("an undrop holds the record")
	errUnchanged      = errors.New("unchanged")
)

// TrashRecords lists every trash record (kind, then id order) and the keys of those that could
// not be read.
func (t *Trash) TrashRecords(ctx context.Context) ([]registry.Trash, []string, error) {
	listed, err := t.ListTrash(ctx)
	if err != nil {
		return nil, nil, err
	}
	recs := listed.Records
	slices.SortFunc(recs, func(a, b registry.Trash) int {
		if a.Kind != b.Kind {
			if a.Kind == registry.KindNamespace {
				return -1
			}
			return 1
		}
		return slices.Compare(a.ID, b.ID)
	})
	return recs, listed.Skipped, nil
}

// ListTrash lists every trash record with its key (store order) and the keys of those that could
// not be read.
func (t *Trash) ListTrash(ctx context.Context) (registry.Listed[registry.Trash], error) {
	listed, err := registry.List[registry.Trash](ctx, t.store, registry.TrashPrefix)
	if err != nil {
		return registry.Listed[registry.Trash]{}, registryError(err)
	}
	return listed, nil
}

// CanPurge says why this trash cannot purge (nil: it can): it needs a catalog to delete bytes in.
func (t *Trash) CanPurge() error {
	if t.bytes == nil {
		return nserr.Unsupportedf("the trash purge is not available: this server has no catalog to delete bytes in")
	}
	return nil
}

// Now is the service's clock.
func (t *Trash) Now() time.Time { return t.now() }

// Delimiter joins id parts in messages.
func (t *Trash) Delimiter() string { return t.delim }

// Logger is the service's logger.
func (t *Trash) Logger() *slog.Logger { return t.log }

// TableAt is the table registered at id now, routed as every request is (CanPurge must hold).
func (t *Trash) TableAt(ctx context.Context, id ident.ID) (*catalog.Entry, error) {
	return t.bytes.DescribeTable(ctx, id)
}

// DeleteTableBytes deletes every object under location in the root at rootURI ("" the catalog
// root); refused (namespace.ErrLocationInUse) when a table there references it.
func (t *Trash) DeleteTableBytes(ctx context.Context, rootURI, location string) (namespace.Deleted, error) {
	return t.bytes.DeleteTableBytes(ctx, rootURI, location)
}

// ClaimPurge marks the expired record at key Purging since now and answers it as claimed. An
// undrop's fresh claim wins (ErrBeingUndropped), a record replaced by a newer drop is not
// expired (ErrNotExpired), a record gone is ErrTrashGone. Another purger's fresh claim is taken
// over: both may go on, every step is idempotent.
func (t *Trash) ClaimPurge(ctx context.Context, key string, now time.Time) (registry.Trash, error) {
	claimed, err := registry.Mutate(ctx, t.store, key, func(r *registry.Trash) error {
		switch {
		case r.Undropping && !claimStale(r.UndroppingSince, now):
			return ErrBeingUndropped
		case !r.Expired(now):
			return ErrNotExpired
		}
		r.Purging, r.PurgingSince = true, &now
		r.Undropping, r.UndroppingSince = false, nil
		return nil
	})
	if errors.Is(err, registry.ErrNotFound) {
		return registry.Trash{}, ErrTrashGone
	}
	return claimed, err
}

// UndropHolds reports whether an undrop's claim on rec still holds at now.
func UndropHolds(rec registry.Trash, now time.Time) bool {
	return rec.Undropping && !claimStale(rec.UndroppingSince, now)
}

// ReleasePurge lifts a purge's claim (since) from the record at key when it leaves the record
// be, best effort: a claim left behind only keeps undrops out for TrashClaimTTL.
func (t *Trash) ReleasePurge(ctx context.Context, key string, since time.Time) {
	t.releaseClaim(ctx, key, since, "the trash purge", func(r *registry.Trash) (*bool, **time.Time) { return &r.Purging, &r.PurgingSince })
}

// DropClaimed deletes the record at key if it is still the claimed record of the same drop. A
// newer drop of a table at the id replaces the record (unclaimed, another location): that one is
// not the purge's. The store has no conditional delete, so a replacement landing between the
// read and the delete is lost; the window is one round trip.
func (t *Trash) DropClaimed(ctx context.Context, key string, rec registry.Trash) error {
	cur, _, err := registry.Read[registry.Trash](ctx, t.store, key)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return nil
	case err != nil:
		return registryError(err)
	case !cur.Purging || cur.Location != rec.Location || !cur.DroppedAt.Equal(rec.DroppedAt):
		return nil
	}
	return t.discard(ctx, key)
}

// DiscardExpired deletes the record at key if it is still expired at now (a new drop of a
// namespace replaces its record: that one is not expired, ErrNotExpired); gone is ErrTrashGone.
func (t *Trash) DiscardExpired(ctx context.Context, key string, now time.Time) error {
	cur, _, err := registry.Read[registry.Trash](ctx, t.store, key)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return ErrTrashGone
	case err != nil:
		return registryError(err)
	case !cur.Expired(now):
		return ErrNotExpired
	}
	return t.discard(ctx, key)
}

// TableRoot is the binding of the warehouse root table record rec's bytes live in (nil: the
// catalog root), or why the purge may not touch them (reason), or a failure to find out. A table
// in a bound namespace lives in the warehouse's root; one whose warehouse is deactivated is
// quarantined and one whose warehouse is gone is no longer ours to delete in: both are skipped.
func (t *Trash) TableRoot(ctx context.Context, rec registry.Trash) (*registry.Binding, string, error) {
	binding := rec.Binding
	if !rec.Placed {
		// Filed before records said where the table lived: where its namespace's binding, kept by
		// a cascade's record of the top-level namespace or still in place, sends it.
		top, found, err := t.readNamespaceTrash(ctx, ident.ID{rec.ID[0]})
		switch {
		case err != nil:
			return nil, "", err
		case found && top.Binding != nil:
			binding = top.Binding
		default:
			if binding, err = t.bindingOf(ctx, rec.ID[0]); err != nil {
				return nil, "", err
			}
		}
	}
	if binding == nil {
		return nil, "", nil
	}
	wh, _, err := registry.Read[registry.Warehouse](ctx, t.store, registry.WarehouseKey(binding.WarehouseID))
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return binding, fmt.Sprintf("warehouse %s, which the table lived in, no longer exists: its bytes are not the catalog's to delete", binding.WarehouseID), nil
	case err != nil:
		return binding, "", registryError(err)
	case !wh.Active():
		return binding, fmt.Sprintf("warehouse %s is %s: quarantine forbids touching its bytes", binding.WarehouseID, wh.Status), nil
	}
	return binding, "", nil
}

// RevokeGone revokes the tuples of a purged object (kind, id), or queues the revocation
// (trash_revoke.go): what it did (GrantsRevoked, GrantsQueued, GrantsInUse, "") and why.
func (t *Trash) RevokeGone(ctx context.Context, kind string, id ident.ID) (string, string) {
	return t.revokeGone(ctx, kind, id)
}

// RetryRevocations does the revocations earlier purges queued, when this one reaches the
// authorization service: how many it did and how many are still queued.
func (t *Trash) RetryRevocations(ctx context.Context, dry bool) (done, pending int, err error) {
	return t.retryRevocations(ctx, dry)
}

// EmitPurged records one purge event (EventTablePurged, EventNamespacePurged) on object, naming
// the purge as the actor.
func (t *Trash) EmitPurged(ctx context.Context, typ, object string, attrs map[string]string) {
	t.emit(ctx, typ, purgeActor, object, attrs)
}

// claimStale reports whether a claim taken at since no longer holds at now.
func claimStale(since *time.Time, now time.Time) bool {
	return since == nil || now.Sub(*since) >= TrashClaimTTL
}

func beingPurged(name string, since time.Time) error {
	return nserr.ConcurrentModificationf("table %s is being purged (since %s): its trash deadline passed and its bytes are being deleted; it cannot be undropped",
		name, since.UTC().Format(time.RFC3339))
}
