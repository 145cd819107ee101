package maintenance

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/faults"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
)

// The orphan scan and its repair, report first (rask-catalog §5.5, issue 17 item 5).
//
// Per table: the table root is listed FIRST, then every live version (every version of this
// branch, and every branch's versions reaching in through a base path) is read for what it
// references. A file committed between the two is in the references we read after, so a writer
// racing the scan is never reported; a writer's files not committed yet are unreferenced but
// young, and only findings older than the grace period are ever acted on.
//
// Never reported: _refs/ (tags, branches), tree/ (branch directories: their own datasets),
// _maintenance/ (our lease, stamps, tasks), any .lance-reserved marker, the version hint, every
// manifest, blob sidecars data/<stem>/… of a referenced data file, anything a live version
// references. Refused (not checked, the reason said): a table whose manifests name base paths
// (a shallow clone or multi-base table: its files are not all under its root), a table with a
// MemWAL (_mem_wal/), a manifest feature we do not know.
//
// What repair may delete: only files under Lance's managed directories (data/, _deletions/,
// _indices/, _transactions/, _versions/.tmp*) that a cleared report listed, that the fresh
// scan made under the table's lease lists again, and that are older than the grace period. A
// key is never taken from the report: it must come from the fresh listing of the table's own
// root, so a crafted report (or a crafted object name) cannot point repair outside the root or
// at a referenced file. Anything else (foreign objects) is reported with no action: the
// catalog cannot prove it owns it.

// Finding categories.
const (
	OrphanUnreferencedFile = "unreferenced_file" // a Lance file no live version references
	OrphanForeignObject    = "foreign_object"    // not a Lance file: left to an operator
)

// Kill points of repair, for crash tests.
const (
	FaultRepairDelete = "maintenance.repair.delete" // before each delete
)

// DefaultOrphanGrace is how old an unreferenced file must be before repair removes it: Lance's
// unverified age (a concurrent writer's files are unreferenced until it commits).
const DefaultOrphanGrace = lance.DefaultUnverifiedAge

// OrphanFinding is one object the scan found no reference to.
type OrphanFinding struct {
	Category string    `json:"category"`
	Table    []string  `json:"table"`
	Key      string    `json:"key"` // relative to the table root
	Size     int64     `json:"size"`
	ModTime  time.Time `json:"mod_time"`
	// Action is what repair would do: "delete", or "none" with Reason.
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
}

// OrphanRefusal is a table the scan did not check, and why.
type OrphanRefusal struct {
	Table  []string `json:"table"`
	Reason string   `json:"reason"`
}

// OrphanReport is one scan (and, after repair, what it removed).
type OrphanReport struct {
	Tables   int             `json:"tables"`
	Checked  int             `json:"checked"`
	Findings []OrphanFinding `json:"findings"`
	Refused  []OrphanRefusal `json:"refused,omitempty"`
	// Skipped are the categories of the issue this scan does not check yet, with the reason:
	// a report with a skipped category is not a full account of the root.
	Skipped      map[string]string `json:"skipped,omitempty"`
	DryRun       bool              `json:"dry_run"`
	Removed      []OrphanFinding   `json:"removed,omitempty"`
	BytesRemoved int64             `json:"bytes_removed,omitempty"`
	// ScannedAt is when the scan began: the drift findings of a cleared report are repaired only
	// once it is older than the grace period.
	ScannedAt time.Time `json:"scanned_at"`
	// Drift are the findings above tables (drift.go): rows, directories, governance records.
	Drift []DriftFinding `json:"drift"`
	// Repaired are the drift findings repair acted on (in a dry run: would act on).
	Repaired []DriftFinding `json:"repaired,omitempty"`
}

// orphanSkipped are the categories a report does not check, with the reason: a report with a
// skipped category is not a full account of the root.
func (s *Service) orphanSkipped(under ident.ID) map[string]string {
	out := map[string]string{}
	switch {
	case s.Drift == nil:
		for _, c := range []string{DriftDanglingRow, DriftUnregisteredDir, DriftDanglingProtection, DriftDanglingPolicy, DriftDanglingBinding, DriftDanglingTrash, DriftDanglingTuples} {
			out[c] = "not checked: no drift source wired (the roots and records above tables)"
		}
	case len(under) > 0:
		for _, c := range []string{DriftDanglingRow, DriftUnregisteredDir, DriftDanglingProtection, DriftDanglingPolicy, DriftDanglingBinding, DriftDanglingTrash, DriftDanglingTuples} {
			out[c] = "not checked: drift above tables is checked by a scan of the whole catalog only"
		}
	}
	return out
}

// managedKey says whether key is a file Lance manages under a table root (the only files repair
// may delete), after checking it is a plain relative key (no "..", no absolute path).
func managedKey(key string) bool {
	if key == "" || strings.HasPrefix(key, "/") || path.Clean(key) != key || storage.ValidateKey(key) != nil {
		return false
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return false
		}
	}
	for _, dir := range []string{lance.DataDir, lance.DeletionsDir, lance.IndicesDir, lance.TransactionsDir} {
		if strings.HasPrefix(key, dir) && len(key) > len(dir) {
			return true
		}
	}
	return strings.HasPrefix(key, lance.VersionsDir+".tmp")
}

// neverReported says whether key is one of the objects an orphan scan must never report.
func neverReported(key string) bool {
	for _, p := range []string{"_refs/", "tree/", MaintenanceDir} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return path.Base(key) == ".lance-reserved" || key == lance.VersionHintKey
}

// scanTable scans one table: its findings, or the reason it was not checked.
func scanTable(ctx context.Context, id ident.ID, ds *lance.Dataset, now time.Time, grace time.Duration) ([]OrphanFinding, string, error) {
	store := ds.Store()
	objs, err := storage.ListAll(ctx, store, "")
	if err != nil {
		return nil, "", fmt.Errorf("maintenance: orphans: list %s: %w", strings.Join(id, "."), err)
	}
	for _, o := range objs {
		if strings.HasPrefix(o.Key, "_mem_wal/") {
			return nil, "the table has a MemWAL (_mem_wal/): lancecat does not know what it references", nil
		}
	}
	refs, err := ds.References(ctx)
	if errors.Is(err, lance.ErrUnsupportedFeature) {
		return nil, err.Error(), nil
	}
	if errors.Is(err, lance.ErrDatasetNotFound) {
		return nil, "no version (declared, never written)", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("maintenance: orphans: %s: %w", strings.Join(id, "."), err)
	}
	if len(refs.BasePaths) > 0 {
		return nil, fmt.Sprintf("its manifests name base paths %v (a shallow clone or multi-base table): its files are not all under its root", refs.BasePaths), nil
	}
	var out []OrphanFinding
	for _, o := range objs {
		if neverReported(o.Key) || refs.Has(o.Key) {
			continue
		}
		f := OrphanFinding{Table: id, Key: o.Key, Size: o.Size, ModTime: o.ModTime, Category: OrphanUnreferencedFile}
		switch {
		case !managedKey(o.Key):
			f.Category, f.Action, f.Reason = OrphanForeignObject, "none", "not a file Lance manages: the catalog cannot prove it owns it"
		case now.Sub(o.ModTime) < grace:
			f.Action, f.Reason = "none", fmt.Sprintf("younger than the grace period (%v): a writer may not have committed yet", grace)
		default:
			f.Action = "delete"
		}
		out = append(out, f)
	}
	return out, "", nil
}

// OrphanOptions choose what a scan covers and how old a finding must be to act on.
type OrphanOptions struct {
	// Under limits the scan to tables under this namespace (nil: every table).
	Under ident.ID
	// Grace (0: DefaultOrphanGrace).
	Grace time.Duration
	// DriftGrace is how old a cleared report must be before its drift findings are repaired
	// (0: DefaultDriftGrace).
	DriftGrace time.Duration
}

func (o OrphanOptions) driftGrace() time.Duration {
	if o.DriftGrace <= 0 {
		return DefaultDriftGrace
	}
	return o.DriftGrace
}

func (o OrphanOptions) grace() time.Duration {
	if o.Grace <= 0 {
		return DefaultOrphanGrace
	}
	return o.Grace
}

// ScanOrphans is the report: every table under opts.Under scanned, nothing changed.
func (s *Service) ScanOrphans(ctx context.Context, opts OrphanOptions) (OrphanReport, error) {
	s.init()
	rep := OrphanReport{DryRun: true, Findings: []OrphanFinding{}, Drift: []DriftFinding{}, Skipped: s.orphanSkipped(opts.Under), ScannedAt: s.Now()}
	if s.Drift != nil && len(opts.Under) == 0 {
		if err := s.scanDrift(ctx, &rep); err != nil {
			return rep, err
		}
	}
	all, err := s.allTables(ctx, opts.Under)
	if err != nil {
		return rep, err
	}
	for _, t := range all {
		rep.Tables++
		found, refused, err := scanTable(ctx, t.id, t.ds, s.Now(), opts.grace())
		if err != nil {
			return rep, err
		}
		if refused != "" {
			rep.Refused = append(rep.Refused, OrphanRefusal{Table: t.id, Reason: refused})
			continue
		}
		rep.Checked++
		rep.Findings = append(rep.Findings, found...)
	}
	return rep, nil
}

// EventOrphansRemoved is recorded when repair removed something.
const EventOrphansRemoved = "orphans_removed"

// Reconcile repairs what cleared (an earlier report, e.g. ScanOrphans) found: per table, under
// its lease, it scans again and deletes only the findings both scans list with action "delete"
// (same key, size and modification time). With dryRun it says what it would delete. Tables that
// are protected, or while the catalog is read-only, are left alone.
func (s *Service) Reconcile(ctx context.Context, cleared OrphanReport, dryRun bool, opts OrphanOptions) (OrphanReport, error) {
	s.init()
	rep := OrphanReport{DryRun: dryRun, Findings: []OrphanFinding{}, Drift: []DriftFinding{}, Skipped: s.orphanSkipped(opts.Under), ScannedAt: s.Now()}
	if s.Drift != nil && len(opts.Under) == 0 {
		if s.ReadOnly {
			rep.Skipped["drift_repair"] = "the catalog is in read-only mode"
		} else {
			if err := s.scanDrift(ctx, &rep); err != nil {
				return rep, err
			}
			if err := s.repairDrift(ctx, cleared, dryRun, opts.driftGrace(), &rep); err != nil {
				return rep, err
			}
		}
	}
	type fkey struct {
		table, key string
		size       int64
		mod        int64
	}
	ok := map[fkey]bool{}
	for _, f := range cleared.Findings {
		if f.Action == "delete" {
			ok[fkey{strings.Join(f.Table, "\x00"), f.Key, f.Size, f.ModTime.UnixNano()}] = true
		}
	}
	isCleared := func(f OrphanFinding) bool {
		return ok[fkey{strings.Join(f.Table, "\x00"), f.Key, f.Size, f.ModTime.UnixNano()}]
	}
	all, err := s.allTables(ctx, opts.Under)
	if err != nil {
		return rep, err
	}
	for _, t := range all {
		rep.Tables++
		if s.ReadOnly {
			rep.Refused = append(rep.Refused, OrphanRefusal{Table: t.id, Reason: "the catalog is in read-only mode"})
			continue
		}
		if p, why := s.protected(ctx, t.id); p {
			rep.Refused = append(rep.Refused, OrphanRefusal{Table: t.id, Reason: "protected: " + why})
			continue
		}
		err := s.reconcileTable(ctx, t, isCleared, dryRun, opts, &rep)
		if errors.Is(err, ErrLeaseHeld) {
			rep.Refused = append(rep.Refused, OrphanRefusal{Table: t.id, Reason: err.Error()})
			continue
		}
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func (s *Service) reconcileTable(ctx context.Context, t located, cleared func(OrphanFinding) bool, dryRun bool, opts OrphanOptions, rep *OrphanReport) error {
	store := t.ds.Store()
	// A table with no version has nothing to repair, and its lease would be the first object in
	// its directory (a dangling row's empty location filled by us).
	if _, err := t.ds.LatestLocation(ctx); errors.Is(err, lance.ErrDatasetNotFound) {
		rep.Refused = append(rep.Refused, OrphanRefusal{Table: t.id, Reason: "no version (declared, never written)"})
		return nil
	}
	workCtx := ctx
	if !dryRun {
		l, err := acquireLease(ctx, store, s.Holder, s.LeaseTTL, s.Now)
		if err != nil {
			return err
		}
		var stop func() error
		workCtx, stop = holdLease(ctx, l, s.LeaseTTL)
		defer func() { _ = stop() }()
	}
	found, refused, err := scanTable(workCtx, t.id, t.ds, s.Now(), opts.grace())
	if err != nil {
		return err
	}
	if refused != "" {
		rep.Refused = append(rep.Refused, OrphanRefusal{Table: t.id, Reason: refused})
		return nil
	}
	rep.Checked++
	rep.Findings = append(rep.Findings, found...)
	var removed []OrphanFinding
	var bytes int64
	for _, f := range found {
		if f.Action != "delete" || !managedKey(f.Key) || !cleared(f) {
			continue
		}
		if !dryRun {
			faults.Point(FaultRepairDelete)
			if err := workCtx.Err(); err != nil {
				return fmt.Errorf("maintenance: reconcile: lease lost: %w", err)
			}
			if err := store.Delete(workCtx, f.Key); err != nil {
				return fmt.Errorf("maintenance: reconcile: delete %s: %w", f.Key, err)
			}
		}
		removed = append(removed, f)
		bytes += f.Size
	}
	rep.Removed = append(rep.Removed, removed...)
	rep.BytesRemoved += bytes
	if !dryRun && len(removed) > 0 {
		s.emitOrphans(t.id, len(removed), bytes)
	}
	return nil
}

func (s *Service) emitOrphans(id ident.ID, files int, bytes int64) {
	if s.Events == nil {
		return
	}
	s.Events.Emit(governance.Event{Type: EventOrphansRemoved, At: s.Now(), Actor: "service:maintenance",
		Object: "table:" + strings.Join(id, "."), Attributes: map[string]string{
			"files_removed": strconv.Itoa(files), "bytes_removed": strconv.FormatInt(bytes, 10),
		}})
}

// emitDrift records the drift repair made (one orphans_removed event per finding: material work).
func (s *Service) emitDrift(done []DriftFinding) {
	if s.Events == nil {
		return
	}
	for _, f := range done {
		obj := f.Kind + ":" + strings.Join(f.ID, ".")
		if len(f.ID) == 0 {
			obj = "root:" + f.Root
		}
		s.Events.Emit(governance.Event{Type: EventOrphansRemoved, At: s.Now(), Actor: "service:maintenance", Object: obj,
			Attributes: map[string]string{"category": f.Category, "action": f.Action, "key": f.Key, "location": f.Location}})
	}
}
