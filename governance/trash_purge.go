package governance

// The trash expiry purge. Past its deadline a table's trash record and its bytes are taken: the
// record is claimed (Purging), the bytes deleted in the root the table lived in, the record
// deleted last. A namespace record has no bytes; it goes once no table record under it remains
// (those may still need it to find their root). The purge runs from `lancecat trash purge` or in
// the background on every replica; runs may overlap, and every step is idempotent: two purgers
// may both delete the same bytes and the same record. What must never happen is deleting bytes a
// live table uses; restoreTable (trash.go) has the argument against an undrop, and the catalog
// refuses to delete a location any table of its root references (namespace.DeleteLocation).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/lancecat/lancecat/authz"
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
	DescribeTable(ctx context.Context, id ident.ID) (*namespace.Table, error)
	DeleteTableBytes(ctx context.Context, rootURI, location string) (namespace.Deleted, error)
}

// PurgeOptions tune one purge run.
type PurgeOptions struct {
	DryRun bool      // say what would happen; write and delete nothing
	Limit  int       // act on at most this many expired records (0: all)
	Now    time.Time // the deadline clock (zero: now)
}

// What the purge did with a record.
const (
	PurgePurged     = "purged"      // bytes and record deleted (a namespace: its record)
	PurgeKept       = "kept"        // a live table uses the bytes: only the record was deleted
	PurgeSkipped    = "skipped"     // left as it is, for Reason; a later run tries again
	PurgeWouldPurge = "would_purge" // dry run
	PurgeWouldKeep  = "would_keep"  // dry run
)

// PurgeItem is one expired record the purge acted on.
type PurgeItem struct {
	Kind     string   `json:"kind"`
	ID       []string `json:"id"`
	Location string   `json:"location,omitempty"`
	// RootURI is the root the table's bytes live in; "" is the catalog root.
	RootURI string `json:"root_uri,omitempty"`
	Action  string `json:"action"`
	Reason  string `json:"reason,omitempty"`
	Objects int    `json:"objects,omitempty"`
	Bytes   int64  `json:"bytes,omitempty"`
	// Grants is what became of the purged object's tuples: GrantsRevoked, GrantsQueued (GrantsWhy
	// says why), GrantsInUse; empty when there are none to revoke (authorization off, or kept).
	Grants    string `json:"grants,omitempty"`
	GrantsWhy string `json:"grants_why,omitempty"`
}

// PurgeReport is what one run did.
type PurgeReport struct {
	DryRun bool        `json:"dry_run"`
	Now    time.Time   `json:"now"`
	Items  []PurgeItem `json:"items"`
	// Pending counts the records not expired yet.
	Pending int `json:"pending"`
	// Unreadable are the keys of records that could not be read: never purged, and while there
	// are any no namespace record is removed (they might be tables under it).
	Unreadable []string `json:"unreadable,omitempty"`
	// Truncated says Limit stopped the run before every expired record was looked at.
	Truncated bool `json:"truncated,omitempty"`
	// RevocationsDone counts the tuple revocations earlier runs queued that this one did;
	// RevocationsQueued those still waiting for a run that reaches the authorization service
	// (this run's GrantsQueued items among them).
	RevocationsDone   int `json:"revocations_done,omitempty"`
	RevocationsQueued int `json:"revocations_queued,omitempty"`
}

// Count is how many items took action.
func (r PurgeReport) Count(action string) int {
	n := 0
	for _, it := range r.Items {
		if it.Action == action {
			n++
		}
	}
	return n
}

// TrashRecords lists every trash record (kind, then id order) and the keys of those that could
// not be read.
func (t *Trash) TrashRecords(ctx context.Context) ([]registry.Trash, []string, error) {
	listed, err := registry.List[registry.Trash](ctx, t.store, registry.TrashPrefix)
	if err != nil {
		return nil, nil, registryError(err)
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

type listedTrash struct {
	key string
	rec registry.Trash
}

// PurgeExpired takes every trash record past its deadline: tables first (deepest ids first), so
// a cascade's namespace records go in the same run as its tables. A purged object's tuples are
// revoked, or queued when they cannot be (trash_revoke.go); queued ones are retried first. A record that cannot be acted
// on is reported and left for the next run; only a control root that cannot be listed fails the
// run.
func (t *Trash) PurgeExpired(ctx context.Context, opts PurgeOptions) (rep PurgeReport, err error) {
	if t.bytes == nil {
		return PurgeReport{}, nserr.Unsupportedf("the trash purge is not available: this server has no catalog to delete bytes in")
	}
	now := opts.Now
	if now.IsZero() {
		now = t.now()
	}
	now = now.UTC()
	listed, err := registry.List[registry.Trash](ctx, t.store, registry.TrashPrefix)
	if err != nil {
		return PurgeReport{}, registryError(err)
	}
	rep = PurgeReport{DryRun: opts.DryRun, Now: now, Items: []PurgeItem{}, Unreadable: listed.Skipped}
	// What earlier runs could not revoke goes first; a control root that cannot list the queue
	// only postpones it.
	if done, queued, err := t.retryRevocations(ctx, opts.DryRun); err == nil {
		rep.RevocationsDone, rep.RevocationsQueued = done, queued
	} else {
		t.log.LogAttrs(ctx, slog.LevelWarn, "the queued grant revocations could not be listed", slog.String("error", err.Error()))
	}
	defer func() {
		for _, it := range rep.Items {
			if it.Grants == GrantsQueued {
				rep.RevocationsQueued++
			}
		}
	}()
	var tables, namespaces []listedTrash
	tableKeys := map[string][]string{} // every table record left, expired or not, by key
	for i, rec := range listed.Records {
		if rec.Kind == registry.KindTable {
			tableKeys[listed.Keys[i]] = rec.ID
		}
		if !rec.Expired(now) {
			rep.Pending++
			continue
		}
		switch rec.Kind {
		case registry.KindTable:
			tables = append(tables, listedTrash{listed.Keys[i], rec})
		case registry.KindNamespace:
			namespaces = append(namespaces, listedTrash{listed.Keys[i], rec})
		}
	}
	deepestFirst := func(a, b listedTrash) int {
		if d := len(b.rec.ID) - len(a.rec.ID); d != 0 {
			return d
		}
		return slices.Compare(a.rec.ID, b.rec.ID)
	}
	slices.SortFunc(tables, deepestFirst)
	slices.SortFunc(namespaces, deepestFirst)

	acted := 0
	full := func() bool {
		if opts.Limit > 0 && acted >= opts.Limit {
			rep.Truncated = true
			return true
		}
		acted++
		return false
	}
	for _, lt := range tables {
		if full() {
			return rep, nil
		}
		item := t.purgeTable(ctx, lt.key, lt.rec, now, opts.DryRun)
		if item.Action != PurgeSkipped {
			delete(tableKeys, lt.key)
		}
		rep.Items = append(rep.Items, item)
	}
	for _, lt := range namespaces {
		if full() {
			return rep, nil
		}
		rep.Items = append(rep.Items, t.purgeNamespace(ctx, lt.key, lt.rec, now, opts.DryRun, tableKeys, len(listed.Skipped) > 0))
	}
	return rep, nil
}

func itemOf(rec registry.Trash) PurgeItem {
	return PurgeItem{Kind: rec.Kind, ID: slices.Clone(rec.ID), Location: rec.Location}
}

func (it PurgeItem) skipped(reason string) PurgeItem {
	it.Action, it.Reason = PurgeSkipped, reason
	return it
}

var (
	errUnchanged      = errors.New("unchanged")
	errNotExpired     = errors.New("the record was replaced by a newer drop and is not expired")
	errBeingUndropped = errors.New("an undrop holds the record")
)

// purgeTable takes one expired table record (see the file comment and restoreTable).
func (t *Trash) purgeTable(ctx context.Context, key string, rec registry.Trash, now time.Time, dry bool) PurgeItem {
	id := ident.ID(rec.ID)
	if dry {
		item := itemOf(rec)
		if rec.Undropping && !claimStale(rec.UndroppingSince, now) {
			return item.skipped(errBeingUndropped.Error())
		}
		binding, reason, err := t.tableRoot(ctx, rec)
		if binding != nil {
			item.RootURI = binding.RootURI
		}
		if err != nil || reason != "" {
			return item.skipped(reasonOf(reason, err))
		}
		keep, why, err := t.liveAt(ctx, id, rec.Location)
		switch {
		case err != nil:
			return item.skipped(err.Error())
		case keep:
			item.Action, item.Reason = PurgeWouldKeep, why
		default:
			item.Action = PurgeWouldPurge
		}
		return item
	}

	claimed, err := registry.Mutate(ctx, t.store, key, func(r *registry.Trash) error {
		switch {
		case r.Undropping && !claimStale(r.UndroppingSince, now):
			return errBeingUndropped
		case !r.Expired(now):
			return errNotExpired
		}
		// Another purger's fresh claim is taken over too: both may go on, every step is idempotent.
		r.Purging, r.PurgingSince = true, &now
		r.Undropping, r.UndroppingSince = false, nil
		return nil
	})
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return itemOf(rec).skipped("the record is gone: undropped or purged meanwhile")
	case err != nil:
		return itemOf(rec).skipped(err.Error())
	}
	rec = claimed
	item := itemOf(rec)
	binding, reason, err := t.tableRoot(ctx, rec)
	if binding != nil {
		item.RootURI = binding.RootURI
	}
	if err != nil || reason != "" {
		t.releasePurge(ctx, key, now)
		return item.skipped(reasonOf(reason, err))
	}
	keep, why, err := t.liveAt(ctx, id, rec.Location)
	if err != nil {
		t.releasePurge(ctx, key, now)
		return item.skipped(err.Error())
	}
	if !keep {
		deleted, err := t.bytes.DeleteTableBytes(ctx, item.RootURI, rec.Location)
		item.Objects, item.Bytes = deleted.Objects, deleted.Bytes
		switch {
		case errors.Is(err, namespace.ErrLocationInUse):
			keep, why = true, err.Error()
		case err != nil:
			if deleted.Objects == 0 {
				t.releasePurge(ctx, key, now)
			} // else the claim stays: the bytes are half gone, no undrop may bring them back
			t.log.LogAttrs(ctx, slog.LevelError, "the trash purge could not delete a table's bytes", slog.String("table", id.Join(t.delim)),
				slog.String("root", item.RootURI), slog.String("location", rec.Location), slog.String("error", err.Error()))
			return item.skipped("deleting the bytes failed: " + err.Error())
		}
	}
	if err := t.dropClaimed(ctx, key, rec); err != nil {
		// The bytes are gone (or spared); the next run finds nothing to delete and removes the
		// record.
		return item.skipped("the record could not be removed: " + err.Error())
	}
	attrs := map[string]string{"location": rec.Location, "root": item.RootURI,
		"objects": strconv.Itoa(item.Objects), "bytes": strconv.FormatInt(item.Bytes, 10)}
	if keep {
		item.Action, item.Reason = PurgeKept, why
		attrs["kept"] = "true"
	} else {
		item.Action = PurgePurged
		item.Grants, item.GrantsWhy = t.revokeGone(ctx, registry.KindTable, id)
	}
	t.emit(ctx, EventTablePurged, purgeActor, authz.TableObject(id).String(), attrs)
	return item
}

func reasonOf(reason string, err error) string {
	if err != nil {
		return err.Error()
	}
	return reason
}

// tableRoot is the binding of the warehouse root table record rec's bytes live in (nil: the
// catalog root), or why the purge may not touch them (reason), or a failure to find out. A table
// in a bound namespace lives in the warehouse's root; one whose warehouse is deactivated is
// quarantined and one whose warehouse is gone is no longer ours to delete in: both are skipped.
func (t *Trash) tableRoot(ctx context.Context, rec registry.Trash) (*registry.Binding, string, error) {
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

// liveAt reports whether the table registered at id now uses location (an undrop that did not
// clear its record, or one the purge raced: restoreTable): then the bytes stay. Another table at
// id (made once the record expired) has bytes of its own. An id the catalog cannot answer for
// (quarantined, unavailable) is a failure: nothing is deleted on a guess.
func (t *Trash) liveAt(ctx context.Context, id ident.ID, location string) (bool, string, error) {
	live, err := t.bytes.DescribeTable(ctx, id)
	switch {
	case err == nil && live.Location == location:
		return true, "table " + id.Join(t.delim) + " is registered at this location again", nil
	case err == nil, nserr.Is(err, nserr.ErrTableNotFound), nserr.Is(err, nserr.ErrNamespaceNotFound):
		return false, "", nil
	}
	return false, "", fmt.Errorf("cannot tell whether table %s lives again: %w", id.Join(t.delim), err)
}

// releasePurge lifts this run's claim (since) from the record at key when it leaves the record
// be, best effort: a claim left behind only keeps undrops out for TrashClaimTTL.
func (t *Trash) releasePurge(ctx context.Context, key string, since time.Time) {
	t.releaseClaim(ctx, key, since, "the trash purge", func(r *registry.Trash) (*bool, **time.Time) { return &r.Purging, &r.PurgingSince })
}

// dropClaimed deletes the record at key if it is still the claimed record of the same drop. A
// newer drop of a table at the id replaces the record (unclaimed, another location): that one is
// not the purge's. The store has no conditional delete, so a replacement landing between the
// read and the delete is lost; the window is one round trip.
func (t *Trash) dropClaimed(ctx context.Context, key string, rec registry.Trash) error {
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

// purgeNamespace removes one expired namespace record once no table record under it remains.
func (t *Trash) purgeNamespace(ctx context.Context, key string, rec registry.Trash, now time.Time, dry bool, tables map[string][]string, unreadable bool) PurgeItem {
	item := itemOf(rec)
	id := ident.ID(rec.ID)
	if unreadable {
		return item.skipped("some trash records cannot be read: they may be tables under this namespace")
	}
	for _, tid := range tables {
		if under(tid, id) {
			return item.skipped("table " + ident.ID(tid).Join(t.delim) + " under it is still in the trash")
		}
	}
	if dry {
		item.Action = PurgeWouldPurge
		return item
	}
	// A new drop of the namespace replaces the record: that one is not expired.
	cur, _, err := registry.Read[registry.Trash](ctx, t.store, key)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return item.skipped("the record is gone: undropped or purged meanwhile")
	case err != nil:
		return item.skipped(registryError(err).Error())
	case !cur.Expired(now):
		return item.skipped(errNotExpired.Error())
	}
	if err := t.discard(ctx, key); err != nil {
		return item.skipped(err.Error())
	}
	item.Action = PurgePurged
	item.Grants, item.GrantsWhy = t.revokeGone(ctx, registry.KindNamespace, id)
	attrs := map[string]string{}
	if rec.Binding != nil {
		attrs["warehouse_id"] = rec.Binding.WarehouseID
	}
	t.emit(ctx, EventNamespacePurged, purgeActor, authz.NamespaceObject(id).String(), attrs)
	return item
}

// claimStale reports whether a claim taken at since no longer holds at now.
func claimStale(since *time.Time, now time.Time) bool {
	return since == nil || now.Sub(*since) >= TrashClaimTTL
}

func beingPurged(name string, since time.Time) error {
	return nserr.ConcurrentModificationf("table %s is being purged (since %s): its trash deadline passed and its bytes are being deleted; it cannot be undropped",
		name, since.UTC().Format(time.RFC3339))
}
