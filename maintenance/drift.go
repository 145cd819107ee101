package maintenance

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// The drift scan: what lies above tables (issue 17 item 5, rask-catalog §5.5), report first,
// repaired under the same rules as the per-table orphan repair (a cleared report, a fresh scan
// that finds the same thing, the grace period, a lease), never touching table data.
//
//   - dangling_manifest_row: a __manifest table row whose location holds no object at all (not
//     even the .lance-reserved marker every declared table has): someone removed the directory.
//     Repair unlinks the row (namespace.UnlinkEmpty: inside the manifest commit the location is
//     listed again, so a writer that just put its first file there wins). No object is deleted.
//   - unregistered_table_dir: a top-level directory of a root that no row names, that is not a
//     reserved path, not a compatibility-mode root table (<name>.lance: the Lance directory
//     namespace knows those by listing alone, so they are tables, not drift) and not a trashed
//     table's location. Report only, never repaired: such a directory is a deregistered table
//     (Lance's deregister keeps the data on purpose), a drop that stopped between unlinking and
//     deleting, or another writer's create not committed yet, and nothing tells them apart.
//     Registering it would resurrect a drop; deleting it could destroy a deregistered table.
//     The report says what the directory holds and what an operator may do.
//   - dangling_protection, dangling_policy: a protection or policy record (table or namespace)
//     whose object the catalog answers "not found" for, and that no trash record holds (an
//     undrop gives a table its records back). Repair clears the record (governance's
//     ClearProtection/ClearPolicy): a record of nothing protects nothing.
//   - dangling_binding: a binding whose warehouse record is gone. Report only: unbinding routes
//     a namespace away, an operator's decision.
//   - dangling_trash: a table's trash record whose location holds nothing (an undrop cannot
//     bring it back). Report only: the purge clears the record at its deadline.
//   - dangling_tuples: authorization tuples whose table, namespace, warehouse or project is
//     gone (drift_tuples.go). Repair revokes them (RevokeAll). Not checked when authorization
//     is off (Drift.Tuples nil); said in Skipped.
//
// An object the catalog cannot read (a quarantined warehouse: 403; an unreadable record) is
// never "gone": only NotFound counts.

// Drift categories.
const (
	DriftDanglingRow        = "dangling_manifest_row"
	DriftUnregisteredDir    = "unregistered_table_dir"
	DriftDanglingProtection = "dangling_protection"
	DriftDanglingPolicy     = "dangling_policy"
	DriftDanglingBinding    = "dangling_binding"
	DriftDanglingTrash      = "dangling_trash"
)

// Repair actions of drift findings.
const (
	ActionNone   = "none"
	ActionUnlink = "unlink" // remove the manifest row (the location is empty)
	ActionClear  = "clear"  // remove the governance record
)

// DefaultDriftGrace is how long ago the cleared report must have been made before repair acts
// on its drift findings: a dangling state seen then and again now has lasted that long.
const DefaultDriftGrace = time.Hour

// FaultDriftRepair is the kill point before each drift repair, for crash tests.
const FaultDriftRepair = "maintenance.drift.repair"

// DriftRoot is one root the drift scan reads: the catalog root or a warehouse's.
type DriftRoot struct {
	URI       string
	Namespace *namespace.Namespace
}

// Drift is what the drift scan reads above tables; the server wires it (nil on the Service:
// the categories are reported as not checked).
type Drift struct {
	// Roots are every root of the catalog (the catalog root first).
	Roots func(ctx context.Context) ([]DriftRoot, error)
	// Records is the control root's record store (protection, policies, bindings, warehouses).
	Records *registry.Store
	// Trash lists the trash records (and the keys of those that cannot be read).
	Trash func(ctx context.Context) ([]registry.Trash, []string, error)
	// Clear removes a governance record of a gone object (governance.Service has them).
	Clear RecordClearer
	// Tuples lists and revokes authorization tuples (*authz.OpenFGA); nil: authorization is
	// off here, dangling_tuples is reported as not checked.
	Tuples TupleSource
}

// RecordClearer removes the records of an object (*governance.Service has it).
type RecordClearer interface {
	ClearProtection(ctx context.Context, kind string, id ident.ID) error
	ClearPolicy(ctx context.Context, kind string, id ident.ID) error
}

// DriftFinding is one piece of drift above tables.
type DriftFinding struct {
	Category string   `json:"category"`
	Root     string   `json:"root,omitempty"`
	Kind     string   `json:"kind,omitempty"`
	ID       []string `json:"id,omitempty"`
	Location string   `json:"location,omitempty"` // relative to Root
	Key      string   `json:"key,omitempty"`      // a governance record's key
	Action   string   `json:"action"`
	Reason   string   `json:"reason,omitempty"`
}

func (f DriftFinding) same(o DriftFinding) bool {
	return f.Category == o.Category && f.Root == o.Root && f.Kind == o.Kind && slices.Equal(f.ID, o.ID) &&
		f.Location == o.Location && f.Key == o.Key && f.Action == o.Action
}

// objectGone says whether the catalog answers NotFound for (kind, id); any other error (a
// quarantined warehouse, an unreadable root) is not an answer.
func (s *Service) objectGone(ctx context.Context, kind string, id ident.ID) (bool, error) {
	var err error
	switch kind {
	case registry.KindTable:
		_, err = s.Catalog.LoadTable(ctx, id)
	case registry.KindNamespace:
		err = s.Catalog.NamespaceExists(ctx, id)
	default:
		return false, nil
	}
	if err == nil {
		return false, nil
	}
	var nerr *nserr.Error
	if errors.As(err, &nerr) && (nerr.Code == nserr.TableNotFound || nerr.Code == nserr.NamespaceNotFound) {
		return true, nil
	}
	return false, err
}

// trashIndex is what the trash holds: the objects an undrop may bring back, and their locations.
type trashIndex struct {
	recs       []registry.Trash
	unreadable []string
	locations  map[string]bool
}

func (t trashIndex) holds(kind string, id ident.ID) bool {
	for _, r := range t.recs {
		switch {
		case r.Kind == kind && slices.Equal(r.ID, id):
			return true
		case r.Kind == registry.KindNamespace && len(id) > len(r.ID) && slices.Equal(id[:len(r.ID)], r.ID):
			return true // inside a trashed namespace
		}
	}
	return false
}

// scanDrift adds the drift findings to rep; categories that could not be checked go to
// rep.Skipped with the reason.
func (s *Service) scanDrift(ctx context.Context, rep *OrphanReport) error {
	d := s.Drift
	var trash trashIndex
	trash.locations = map[string]bool{}
	if d.Trash != nil {
		recs, unreadable, err := d.Trash(ctx)
		if err != nil {
			return fmt.Errorf("maintenance: drift: trash: %w", err)
		}
		trash.recs, trash.unreadable = recs, unreadable
		for _, r := range recs {
			if r.Location != "" {
				trash.locations[path.Clean(strings.Trim(r.Location, "/"))] = true
			}
		}
	}
	if len(trash.unreadable) > 0 {
		rep.Skipped["trash"] = fmt.Sprintf("%d trash records cannot be read (%s…): nothing a trash record might hold is repaired", len(trash.unreadable), trash.unreadable[0])
	}
	roots, err := d.Roots(ctx)
	if err != nil {
		return fmt.Errorf("maintenance: drift: roots: %w", err)
	}
	for _, r := range roots {
		if err := s.scanRoot(ctx, r, trash, rep); err != nil {
			return err
		}
	}
	if err := s.scanTuples(ctx, trash, rep); err != nil {
		return err
	}
	if d.Records != nil {
		if err := s.scanRecords(ctx, d.Records, roots, trash, rep); err != nil {
			return err
		}
	} else {
		for _, c := range []string{DriftDanglingProtection, DriftDanglingPolicy, DriftDanglingBinding, DriftDanglingTrash} {
			rep.Skipped[c] = "not checked: no control root records here"
		}
	}
	return nil
}

// scanRoot finds the dangling rows and unregistered directories of one root.
func (s *Service) scanRoot(ctx context.Context, r DriftRoot, trash trashIndex, rep *OrphanReport) error {
	ns, bucket := r.Namespace, r.Namespace.RootBucket()
	// The top level is listed before the manifest is read: a create that commits between the two
	// is in the rows we read after, so its directory is never reported.
	var dirs []string
	opts := storage.ListOptions{Delimiter: true, Limit: storage.MaxListLimit}
	for {
		page, err := bucket.List(ctx, "", opts)
		if err != nil {
			return fmt.Errorf("maintenance: drift: list %s: %w", r.URI, err)
		}
		for _, p := range page.CommonPrefixes {
			dirs = append(dirs, strings.TrimSuffix(p, "/"))
		}
		if page.NextStartAfter == "" || page.NextStartAfter <= opts.StartAfter {
			break
		}
		opts.StartAfter = page.NextStartAfter
	}
	entries, err := ns.TableEntries(ctx)
	if err != nil {
		return fmt.Errorf("maintenance: drift: %s: %w", r.URI, err)
	}
	v1, err := ns.DirectoryTables(ctx)
	if err != nil {
		return fmt.Errorf("maintenance: drift: %s: %w", r.URI, err)
	}
	for _, e := range entries {
		if e.Location == "" {
			continue // outside the root (or the whole root): not ours to judge
		}
		empty, err := dirEmpty(ctx, bucket, e.Location)
		if err != nil {
			return fmt.Errorf("maintenance: drift: %s: %w", r.URI, err)
		}
		if empty {
			rep.Drift = append(rep.Drift, DriftFinding{Category: DriftDanglingRow, Root: r.URI, Kind: registry.KindTable, ID: e.ID,
				Location: e.Location, Action: ActionUnlink,
				Reason: "the row's location holds no object (not even the declared marker): repair removes the row, deleting nothing"})
		}
	}
	reserved := ns.ReservedPaths()
	held := func(dir string) bool {
		low := strings.ToLower(dir)
		for _, p := range reserved {
			if overlapsDir(low, strings.ToLower(p)) {
				return true
			}
		}
		for _, e := range entries {
			if e.Location != "" && overlapsDir(dir, e.Location) {
				return true
			}
		}
		for loc := range trash.locations {
			if overlapsDir(dir, loc) {
				return true
			}
		}
		return slices.Contains(v1, dir) || dir+"/" == MaintenanceDir
	}
	for _, dir := range dirs {
		if held(dir) {
			continue
		}
		f := DriftFinding{Category: DriftUnregisteredDir, Root: r.URI, Location: dir, Action: ActionNone}
		f.Reason, err = describeDir(ctx, bucket, dir)
		if err != nil {
			return fmt.Errorf("maintenance: drift: %s: %w", r.URI, err)
		}
		rep.Drift = append(rep.Drift, f)
	}
	return nil
}

func overlapsDir(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

func dirEmpty(ctx context.Context, bucket storage.Bucket, dir string) (bool, error) {
	page, err := bucket.List(ctx, dir+"/", storage.ListOptions{Limit: 1})
	if err != nil {
		return false, err
	}
	return len(page.Objects) == 0 && len(page.CommonPrefixes) == 0, nil
}

// describeDir says what an unregistered directory holds and what an operator may do with it.
func describeDir(ctx context.Context, bucket storage.Bucket, dir string) (string, error) {
	marker := func(name string) (bool, error) {
		_, err := bucket.Stat(ctx, dir+"/"+name)
		if errors.Is(err, storage.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	if ok, err := marker(namespace.CreatingMarker); err != nil || ok {
		return "a create is filling it, or crashed doing so (" + namespace.CreatingMarker + "): left alone", err
	}
	if ok, err := marker(namespace.DeregisteredMarker); err != nil || ok {
		return "a deregistered table: Lance keeps its data on purpose; register it again or delete it by hand", err
	}
	loc, err := lance.NewDataset(storage.Sub(bucket, dir+"/")).LatestLocation(ctx)
	switch {
	case err == nil:
		return fmt.Sprintf("holds a Lance dataset (version %d) no row names: a deregistered table, a drop that stopped before deleting, or a create not committed yet; nothing tells them apart, so nothing is done: register it (register_table) or delete it by hand", loc.Version), nil
	case errors.Is(err, lance.ErrDatasetNotFound):
		if ok, err := marker(namespace.ReservedMarker); err != nil || ok {
			return "a declared location no row names (" + namespace.ReservedMarker + " only): a declare that did not commit; delete it by hand", err
		}
		return "not a Lance table: the catalog cannot prove it owns it", nil
	default:
		return "", err
	}
}

// scanRecords finds the governance records whose object is gone.
func (s *Service) scanRecords(ctx context.Context, store *registry.Store, roots []DriftRoot, trash trashIndex, rep *OrphanReport) error {
	objectRecords := func(cat string, kindID func(i int) (string, []string, bool), keys []string) error {
		for i, key := range keys {
			kind, id, ok := kindID(i)
			if !ok || (kind != registry.KindTable && kind != registry.KindNamespace) {
				continue
			}
			gone, err := s.objectGone(ctx, kind, id)
			if err != nil || !gone {
				continue // present, or unanswerable: not drift
			}
			f := DriftFinding{Category: cat, Kind: kind, ID: id, Key: key, Action: ActionClear,
				Reason: "the " + kind + " no longer exists: a record of nothing"}
			if trash.holds(kind, id) {
				continue // an undrop gives it back
			}
			if len(trash.unreadable) > 0 || s.Drift.Clear == nil {
				f.Action, f.Reason = ActionNone, f.Reason+" (not repaired here: "+map[bool]string{true: "unreadable trash records", false: "no record clearer"}[len(trash.unreadable) > 0]+")"
			}
			rep.Drift = append(rep.Drift, f)
		}
		return nil
	}
	prot, err := registry.List[registry.Protection](ctx, store, registry.ProtectionPrefix)
	if err != nil {
		return fmt.Errorf("maintenance: drift: %w", err)
	}
	if err := objectRecords(DriftDanglingProtection, func(i int) (string, []string, bool) {
		return prot.Records[i].Kind, prot.Records[i].ID, true
	}, prot.Keys); err != nil {
		return err
	}
	pol, err := registry.List[registry.Policy](ctx, store, registry.PoliciesPrefix)
	if err != nil {
		return fmt.Errorf("maintenance: drift: %w", err)
	}
	if err := objectRecords(DriftDanglingPolicy, func(i int) (string, []string, bool) {
		return pol.Records[i].Kind, pol.Records[i].ID, true
	}, pol.Keys); err != nil {
		return err
	}
	binds, err := registry.List[registry.Binding](ctx, store, registry.BindingsPrefix)
	if err != nil {
		return fmt.Errorf("maintenance: drift: %w", err)
	}
	for i, b := range binds.Records {
		_, _, err := registry.Read[registry.Warehouse](ctx, store, registry.WarehouseKey(b.WarehouseID))
		if errors.Is(err, registry.ErrNotFound) {
			rep.Drift = append(rep.Drift, DriftFinding{Category: DriftDanglingBinding, Kind: registry.KindNamespace, ID: []string{b.TopNamespace},
				Key: binds.Keys[i], Root: b.RootURI, Action: ActionNone,
				Reason: "warehouse " + b.WarehouseID + " no longer exists; unbinding routes the namespace away: an operator's decision"})
		}
	}
	rootOf := map[string]DriftRoot{}
	for _, r := range roots {
		rootOf[r.URI] = r
	}
	for _, t := range trash.recs {
		if t.Kind != registry.KindTable || t.Location == "" || t.Purging {
			continue
		}
		uri := ""
		if len(roots) > 0 {
			uri = roots[0].URI
		}
		if t.Binding != nil {
			uri = t.Binding.RootURI
		}
		r, ok := rootOf[uri]
		if !ok {
			continue
		}
		empty, err := dirEmpty(ctx, r.Namespace.RootBucket(), path.Clean(strings.Trim(t.Location, "/")))
		if err != nil {
			return fmt.Errorf("maintenance: drift: %w", err)
		}
		if empty {
			rep.Drift = append(rep.Drift, DriftFinding{Category: DriftDanglingTrash, Kind: t.Kind, ID: t.ID, Root: uri, Location: t.Location,
				Key: registry.ObjectKey(registry.TrashPrefix, t.Kind, t.ID), Action: ActionNone,
				Reason: "the trashed table's location holds nothing: an undrop cannot restore it; the purge clears the record at its deadline"})
		}
	}
	return nil
}

// driftLeaseStore is where the root-wide drift repair lease lives: under the control directory
// every root reserves (never a table location).
func driftLeaseStore(root storage.Bucket) storage.Bucket {
	return storage.Sub(root, namespace.ControlDir+"/maintenance-drift/")
}

// repairDrift acts on the drift findings both cleared and the fresh scan in rep list, when the
// cleared report is older than the grace period, under the catalog root's drift lease.
func (s *Service) repairDrift(ctx context.Context, cleared OrphanReport, dryRun bool, grace time.Duration, rep *OrphanReport) error {
	if len(rep.Drift) == 0 {
		return nil
	}
	old := !cleared.ScannedAt.IsZero() && s.Now().Sub(cleared.ScannedAt) >= grace
	isCleared := func(f DriftFinding) bool {
		return slices.ContainsFunc(cleared.Drift, f.same)
	}
	roots, err := s.Drift.Roots(ctx)
	if err != nil || len(roots) == 0 {
		return fmt.Errorf("maintenance: drift: roots: %w", err)
	}
	rootOf := map[string]DriftRoot{}
	for _, r := range roots {
		rootOf[r.URI] = r
	}
	workCtx := ctx
	if !dryRun {
		l, err := acquireLease(ctx, driftLeaseStore(roots[0].Namespace.RootBucket()), s.Holder, s.LeaseTTL, s.Now)
		if err != nil {
			rep.Skipped["drift_repair"] = err.Error()
			return nil
		}
		var stop func() error
		workCtx, stop = holdLease(ctx, l, s.LeaseTTL)
		defer func() { _ = stop() }()
	}
	for _, f := range rep.Drift {
		if f.Action == ActionNone || !isCleared(f) {
			continue
		}
		if !old {
			rep.Skipped["drift_repair"] = fmt.Sprintf("the cleared report is younger than the grace period (%v): drift is repaired only once it has lasted that long", grace)
			return nil
		}
		if p, why := s.protected(workCtx, f.ID); f.Category == DriftDanglingRow && p {
			rep.Refused = append(rep.Refused, OrphanRefusal{Table: f.ID, Reason: "protected: " + why})
			continue
		}
		if !dryRun {
			faultPoint(FaultDriftRepair)
			if err := workCtx.Err(); err != nil {
				return fmt.Errorf("maintenance: drift repair: lease lost: %w", err)
			}
			var err error
			switch f.Action {
			case ActionUnlink:
				r, ok := rootOf[f.Root]
				if !ok {
					continue
				}
				err = r.Namespace.UnlinkEmpty(workCtx, f.ID, f.Location)
				if errors.Is(err, namespace.ErrLocationNotEmpty) {
					rep.Refused = append(rep.Refused, OrphanRefusal{Table: f.ID, Reason: "its location holds objects again: left as it is"})
					continue
				}
			case ActionClear:
				// Gone at the scan; gone still? A table made again under the name since then is
				// a new object whose records are not drift.
				if gone, gerr := s.objectGone(workCtx, f.Kind, f.ID); gerr != nil || !gone {
					rep.Refused = append(rep.Refused, OrphanRefusal{Table: f.ID, Reason: "the " + f.Kind + " exists again (or cannot be read): its record is kept"})
					continue
				}
				if f.Category == DriftDanglingProtection {
					err = s.Drift.Clear.ClearProtection(workCtx, f.Kind, f.ID)
				} else {
					err = s.Drift.Clear.ClearPolicy(workCtx, f.Kind, f.ID)
				}
			case ActionRevoke:
				why, rerr := s.repairTuples(workCtx, f)
				if why != "" {
					rep.Refused = append(rep.Refused, OrphanRefusal{Table: f.ID, Reason: why})
					continue
				}
				err = rerr
			default:
				continue
			}
			var nerr *nserr.Error
			if errors.As(err, &nerr) && nerr.Code == nserr.ConcurrentModification {
				rep.Refused = append(rep.Refused, OrphanRefusal{Table: f.ID, Reason: err.Error()})
				continue
			}
			if err != nil {
				return fmt.Errorf("maintenance: drift repair %s %v: %w", f.Category, f.ID, err)
			}
		}
		rep.Repaired = append(rep.Repaired, f)
	}
	if !dryRun && len(rep.Repaired) > 0 {
		s.emitDrift(rep.Repaired)
	}
	return nil
}
