package maintenance

// The trash expiry purge. Past its deadline a table's trash record and its bytes are taken: the
// record is claimed (Purging), the bytes deleted in the root the table lived in, the record
// deleted last. A namespace record has no bytes; it goes once no table record under it remains
// (those may still need it to find their root). The purge runs from `lancecat trash purge` or in
// the background on every replica (PurgeTrashEvery); runs may overlap, and every step is
// idempotent: two purgers may both delete the same bytes and the same record. What must never
// happen is deleting bytes a live table uses; governance's restoreTable has the argument against
// an undrop, and the catalog refuses to delete a location any table of its root references
// (namespace.DeleteLocation). The records themselves are governance's (governance/trash_purge.go:
// the claim, its release, the conditional delete, where a table's bytes live).

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
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
)

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
	// Grants is what became of the purged object's tuples: governance.GrantsRevoked,
	// GrantsQueued (GrantsWhy says why), GrantsInUse; empty when there are none to revoke
	// (authorization off, or kept).
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

type listedTrash struct {
	key string
	rec registry.Trash
}

// purger is one run over the trash t.
type purger struct {
	t     *governance.Trash
	delim string
	log   *slog.Logger
}

// PurgeTrash takes every trash record of t past its deadline: tables first (deepest ids first), so
// a cascade's namespace records go in the same run as its tables. A purged object's tuples are
// revoked, or queued when they cannot be (governance/trash_revoke.go); queued ones are retried
// first. A record that cannot be acted on is reported and left for the next run; only a control
// root that cannot be listed fails the run.
func PurgeTrash(ctx context.Context, t *governance.Trash, opts PurgeOptions) (rep PurgeReport, err error) {
	if err := t.CanPurge(); err != nil {
		return PurgeReport{}, err
	}
	p := purger{t: t, delim: t.Delimiter(), log: t.Logger()}
	now := opts.Now
	if now.IsZero() {
		now = t.Now()
	}
	now = now.UTC()
	listed, err := t.ListTrash(ctx)
	if err != nil {
		return PurgeReport{}, err
	}
	rep = PurgeReport{DryRun: opts.DryRun, Now: now, Items: []PurgeItem{}, Unreadable: listed.Skipped}
	// What earlier runs could not revoke goes first; a control root that cannot list the queue
	// only postpones it.
	if done, queued, err := t.RetryRevocations(ctx, opts.DryRun); err == nil {
		rep.RevocationsDone, rep.RevocationsQueued = done, queued
	} else {
		p.log.LogAttrs(ctx, slog.LevelWarn, "the queued grant revocations could not be listed", slog.String("error", err.Error()))
	}
	defer func() {
		for _, it := range rep.Items {
			if it.Grants == governance.GrantsQueued {
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
		item := p.purgeTable(ctx, lt.key, lt.rec, now, opts.DryRun)
		if item.Action != PurgeSkipped {
			delete(tableKeys, lt.key)
		}
		rep.Items = append(rep.Items, item)
	}
	for _, lt := range namespaces {
		if full() {
			return rep, nil
		}
		rep.Items = append(rep.Items, p.purgeNamespace(ctx, lt.key, lt.rec, now, opts.DryRun, tableKeys, len(listed.Skipped) > 0))
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

// purgeTable takes one expired table record (see the file comment and governance's
// restoreTable).
func (p purger) purgeTable(ctx context.Context, key string, rec registry.Trash, now time.Time, dry bool) PurgeItem {
	t := p.t
	id := ident.ID(rec.ID)
	if dry {
		item := itemOf(rec)
		if governance.UndropHolds(rec, now) {
			return item.skipped(governance.ErrBeingUndropped.Error())
		}
		binding, reason, err := t.TableRoot(ctx, rec)
		if binding != nil {
			item.RootURI = binding.RootURI
		}
		if err != nil || reason != "" {
			return item.skipped(reasonOf(reason, err))
		}
		keep, why, err := p.liveAt(ctx, id, rec.Location)
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

	claimed, err := t.ClaimPurge(ctx, key, now)
	if err != nil {
		return itemOf(rec).skipped(err.Error())
	}
	rec = claimed
	item := itemOf(rec)
	binding, reason, err := t.TableRoot(ctx, rec)
	if binding != nil {
		item.RootURI = binding.RootURI
	}
	if err != nil || reason != "" {
		t.ReleasePurge(ctx, key, now)
		return item.skipped(reasonOf(reason, err))
	}
	keep, why, err := p.liveAt(ctx, id, rec.Location)
	if err != nil {
		t.ReleasePurge(ctx, key, now)
		return item.skipped(err.Error())
	}
	if !keep {
		deleted, err := t.DeleteTableBytes(ctx, item.RootURI, rec.Location)
		item.Objects, item.Bytes = deleted.Objects, deleted.Bytes
		switch {
		case errors.Is(err, namespace.ErrLocationInUse):
			keep, why = true, err.Error()
		case err != nil:
			if deleted.Objects == 0 {
				t.ReleasePurge(ctx, key, now)
			} // else the claim stays: the bytes are half gone, no undrop may bring them back
			p.log.LogAttrs(ctx, slog.LevelError, "the trash purge could not delete a table's bytes", slog.String("table", id.Join(p.delim)),
				slog.String("root", item.RootURI), slog.String("location", rec.Location), slog.String("error", err.Error()))
			return item.skipped("deleting the bytes failed: " + err.Error())
		}
	}
	if err := t.DropClaimed(ctx, key, rec); err != nil {
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
		item.Grants, item.GrantsWhy = t.RevokeGone(ctx, registry.KindTable, id)
	}
	t.EmitPurged(ctx, governance.EventTablePurged, authz.TableObject(id).String(), attrs)
	return item
}

func reasonOf(reason string, err error) string {
	if err != nil {
		return err.Error()
	}
	return reason
}

// liveAt reports whether the table registered at id now uses location (an undrop that did not
// clear its record, or one the purge raced: restoreTable): then the bytes stay. Another table at
// id (made once the record expired) has bytes of its own. An id the catalog cannot answer for
// (quarantined, unavailable) is a failure: nothing is deleted on a guess.
func (p purger) liveAt(ctx context.Context, id ident.ID, location string) (bool, string, error) {
	live, err := p.t.TableAt(ctx, id)
	switch {
	case err == nil && live.Location == location:
		return true, "table " + id.Join(p.delim) + " is registered at this location again", nil
	case err == nil, nserr.Is(err, nserr.ErrTableNotFound), nserr.Is(err, nserr.ErrNamespaceNotFound):
		return false, "", nil
	}
	return false, "", fmt.Errorf("cannot tell whether table %s lives again: %w", id.Join(p.delim), err)
}

// purgeNamespace removes one expired namespace record once no table record under it remains.
func (p purger) purgeNamespace(ctx context.Context, key string, rec registry.Trash, now time.Time, dry bool, tables map[string][]string, unreadable bool) PurgeItem {
	item := itemOf(rec)
	id := ident.ID(rec.ID)
	if unreadable {
		return item.skipped("some trash records cannot be read: they may be tables under this namespace")
	}
	for _, tid := range tables {
		if under(tid, id) {
			return item.skipped("table " + ident.ID(tid).Join(p.delim) + " under it is still in the trash")
		}
	}
	if dry {
		item.Action = PurgeWouldPurge
		return item
	}
	// A new drop of the namespace replaces the record: that one is not expired.
	if err := p.t.DiscardExpired(ctx, key, now); err != nil {
		return item.skipped(err.Error())
	}
	item.Action = PurgePurged
	item.Grants, item.GrantsWhy = p.t.RevokeGone(ctx, registry.KindNamespace, id)
	attrs := map[string]string{}
	if rec.Binding != nil {
		attrs["warehouse_id"] = rec.Binding.WarehouseID
	}
	p.t.EmitPurged(ctx, governance.EventNamespacePurged, authz.NamespaceObject(id).String(), attrs)
	return item
}

// under reports whether id is root or below it.
func under(id, root ident.ID) bool {
	return len(id) >= len(root) && slices.Equal(id[:len(root)], root)
}
