package maintenance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/faults"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/maintenance/tasks"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// The sweep (`lancecat serve --maintenance-interval D`): every replica may run it; per table,
//
//  1. the table's latest version (one listing of _versions/, made by the walk that finds the
//     table: namespace.LoadAllTables) and its last-run stamp are compared: the root's stamp
//     index (stamp_index.go, one listing per root) names the tables idle at their latest
//     manifest; for any other the table's own stamp is read (one listing of _maintenance/: the
//     stamp is the key _maintenance/done-<version>, so no object is read). A table unchanged
//     since its last run records nothing;
//  2. the policy decides (compact_interval_hours since the stamp; the step flags in Run);
//  3. the table's lease is taken (lease.go); a replica that finds it held moves on;
//  4. the stamp and latest version are read again under the lease — another replica may have
//     just worked the table — then protection is checked and Run makes its pass;
//  5. the stamp is written with the version the pass left, the lease released; events only
//     for material work.
//
// Tables are the catalog's (every root, through the router): a trashed table is not in the
// catalog, a quarantined warehouse's tables answer 403 and are skipped.

// Catalog is what the sweep needs of the catalog (catalog.Catalog has it).
type Catalog interface {
	ListAllTables(ctx context.Context, token string, limit int) (catalog.Page, error)
	LoadTable(ctx context.Context, id ident.ID) (catalog.Table, error)
	// NamespaceExists answers the drift scan whether a governed namespace is still there.
	NamespaceExists(ctx context.Context, id ident.ID) error
}

// Governance is what the sweep needs of governance (*governance.Service has it).
type Governance interface {
	ResolvePolicy(ctx context.Context, kind string, id ident.ID) (governance.EffectivePolicy, error)
	CheckNotProtected(ctx context.Context, kind string, id ident.ID, force bool) error
}

// EventSink receives the events of material work (*governance.Events).
type EventSink interface {
	Emit(governance.Event) governance.Event
}

// Events of material work.
const (
	EventTableCompacted = "table_compacted"
	EventTableCleaned   = "table_cleaned"
	EventIndexOptimized = "index_optimized"
)

// Service runs maintenance over a catalog's tables.
type Service struct {
	Catalog    Catalog
	Governance Governance // nil: the default policy, nothing protected
	Events     EventSink  // nil: no events
	Metrics    *Metrics   // nil: no metrics
	Logger     *slog.Logger
	// Holder names this replica in leases (default: a random name).
	Holder   string
	LeaseTTL time.Duration // default DefaultLeaseTTL
	ReadOnly bool
	// Drift is what the orphan scan reads above tables (drift.go); nil: those categories are
	// reported as not checked.
	Drift *Drift
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time
	// Origin names who asks for RunTable passes in their task records (default "door"; the
	// CLI sets "cli"). Sweep passes are recorded as "sweep".
	Origin string

	once sync.Once
	// baseRefs caches, per table location, the base paths its latest manifest names (shallow
	// clone sources): re-read only when the table's latest version changes.
	mu       sync.Mutex
	baseRefs map[string]baseRef
}

type baseRef struct {
	version uint64
	id      string
	bases   []string
}

func (s *Service) init() {
	s.once.Do(func() {
		if s.Holder == "" {
			s.Holder = "replica-" + strconv.FormatUint(rand.Uint64(), 36)
		}
		if s.LeaseTTL <= 0 {
			s.LeaseTTL = DefaultLeaseTTL
		}
		if s.Now == nil {
			s.Now = time.Now
		}
		if s.Logger == nil {
			s.Logger = slog.New(slog.DiscardHandler)
		}
		s.baseRefs = map[string]baseRef{}
		if s.Origin == "" {
			s.Origin = OriginDoor
		}
	})
}

// TableResult is what the sweep did with one table.
type TableResult struct {
	ID      []string   `json:"id"`
	Outcome string     `json:"outcome"` // worked, idle, interval, leased, skipped, failed
	Reason  string     `json:"reason,omitempty"`
	Report  *RunReport `json:"report,omitempty"`
}

// Sweep outcomes.
const (
	OutcomeWorked   = "worked"
	OutcomeIdle     = "idle"     // unchanged since its last run
	OutcomeInterval = "interval" // changed, but compact_interval_hours has not passed
	OutcomeLeased   = "leased"   // another replica holds the lease
	OutcomeSkipped  = "skipped"  // quarantined, gone, not a Lance table here
	OutcomeFailed   = "failed"
)

// SweepReport is one sweep.
type SweepReport struct {
	Tables  int            `json:"tables"`
	Counts  map[string]int `json:"counts"`
	Results []TableResult  `json:"results,omitempty"` // every table not idle
}

type located struct {
	id    ident.ID
	table catalog.Table
	ds    *lance.Dataset
}

// Sweep visits every table once.
func (s *Service) Sweep(ctx context.Context) (SweepReport, error) {
	s.init()
	start := time.Now()
	rep := SweepReport{Counts: map[string]int{}}
	tables, skipped, err := s.loadTables(ctx, nil)
	if err != nil {
		return rep, err
	}
	for _, r := range skipped {
		rep.add(r)
	}
	latest := latestOf(ctx, tables) // zero Version: declared, never written: nothing to maintain
	// Each root's stamp index, one listing each (stamp_index.go): a table it names idle at its
	// latest manifest needs no read of its own stamp.
	indices := map[*namespace.Namespace]stampIndex{}
	for _, t := range tables {
		if r := rootOf(t); r != nil {
			if _, ok := indices[r]; !ok {
				indices[r] = readStampIndex(ctx, r.RootBucket())
			}
		}
	}
	// The other tables' stamps, in parallel: 10,000 of them should not wait on each other's
	// round trips.
	stamps := make([]stampRead, len(tables))
	g := new(errgroup.Group)
	g.SetLimit(parallelReads)
	for i, t := range tables {
		if latest[i].Version == 0 {
			continue
		}
		r := rootOf(t)
		loc := t.table.Meta().Location
		if r != nil && indices[r].idle(loc, latest[i]) {
			stamps[i] = stampRead{version: latest[i].Version, noBase: true, indexed: true}
			continue
		}
		g.Go(func() error {
			st := &stamps[i]
			st.version, st.at, st.noBase, _, st.err = readStampFull(ctx, t.ds.Store())
			// The table's own stamp says it is idle, the index does not know it yet (a pass of
			// an older replica, a crash before the entry, a table copied here): tell it, so the
			// next sweep skips this read. A hint only: failing to write it changes nothing.
			if r != nil && st.err == nil && st.noBase && st.version == latest[i].Version && indices[r].err == nil {
				_ = writeIndexEntry(ctx, r.RootBucket(), loc, latest[i], indices[r].byLoc[locationOfKey(indexKey(loc, latest[i]))], true)
			}
			return nil
		})
	}
	_ = g.Wait()
	// Entries of dropped tables go (a hint: failing to prune changes nothing).
	live := map[*namespace.Namespace]map[string]bool{}
	for _, t := range tables {
		if r := rootOf(t); r != nil {
			if live[r] == nil {
				live[r] = map[string]bool{}
			}
			live[r][locationHash(t.table.Meta().Location)] = true
		}
	}
	for r, idx := range indices {
		if err := idx.prune(ctx, r.RootBucket(), live[r]); err != nil {
			s.Logger.Warn("maintenance: stamp index prune", slog.String("error", err.Error()))
		}
	}
	protectedBases := s.shallowCloneBases(ctx, tables, latest, stamps)
	for i, t := range tables {
		if latest[i].Version == 0 {
			rep.add(TableResult{ID: t.id, Outcome: OutcomeIdle})
			continue
		}
		rep.add(s.sweepTable(ctx, t, latest[i], stamps[i], protectedBases))
	}
	if s.Metrics != nil {
		s.Metrics.sweep(time.Since(start))
	}
	return rep, nil
}

func (r *SweepReport) add(res TableResult) {
	r.Tables++
	r.Counts[res.Outcome]++
	if res.Outcome != OutcomeIdle {
		r.Results = append(r.Results, res)
	}
}

// shallowCloneBases maps the location (URI) of every table another table's latest manifest
// names as a base path to that table's id: those are refused (their files are read through the
// clone). The manifests are read once per table version and cached.
//
// stamps (nil: none known) spare the read of an idle table whose stamp says its manifest at the
// latest version names no base path.
func (s *Service) shallowCloneBases(ctx context.Context, tables []located, latest []lance.ManifestLocation, stamps []stampRead) map[string]string {
	out := map[string]string{}
	refs := make([]baseRef, len(tables))
	// The manifests not cached yet are read in parallel (a replica's first sweep reads them all).
	g := new(errgroup.Group)
	g.SetLimit(parallelReads)
	for i, t := range tables {
		if latest[i].Version == 0 {
			continue
		}
		uri := t.table.Meta().URI
		s.mu.Lock()
		ref, ok := s.baseRefs[uri]
		s.mu.Unlock()
		if ok && ref.version == latest[i].Version {
			refs[i] = ref
			continue
		}
		if stamps != nil && stamps[i].err == nil && stamps[i].noBase && stamps[i].version == latest[i].Version {
			continue // idle, and known not to be a clone: no bases to protect
		}
		g.Go(func() error {
			v, err := t.ds.OpenVersion(ctx, latest[i].Version)
			if err != nil {
				return nil
			}
			ref := baseRef{version: latest[i].Version, id: strings.Join(t.id, ".")}
			for _, bp := range v.Manifest().GetBasePaths() {
				ref.bases = append(ref.bases, strings.TrimRight(bp.GetPath(), "/"))
			}
			s.mu.Lock()
			s.baseRefs[uri] = ref
			s.mu.Unlock()
			refs[i] = ref
			return nil
		})
	}
	_ = g.Wait()
	for i, t := range tables {
		if latest[i].Version == 0 {
			continue
		}
		uri := t.table.Meta().URI
		ref := refs[i]
		for _, b := range ref.bases {
			if strings.TrimRight(b, "/") != strings.TrimRight(uri, "/") {
				out[strings.TrimRight(b, "/")] = ref.id
			}
		}
	}
	return out
}

const stampPrefix = MaintenanceDir + "done-"

// noBaseSuffix marks, next to a stamp, that the stamped version's manifest names no base path
// (the table is not a shallow clone): the sweep's clone pre-pass then needs no manifest read for
// an idle table, so a replica's first sweep over 10,000 idle tables costs listings only. It is a
// separate key (done-<version>.nobase), not a new stamp format, so a replica that does not know
// it ignores it (its ParseUint fails) and still reads the stamp itself.
const noBaseSuffix = ".nobase"

// stamp is the version a table's last run left (0: never run), when it was written, whether that
// version is known to name no base path, and every stamp key (to delete when a newer is written).
func readStamp(ctx context.Context, store storage.Bucket) (uint64, time.Time, []string, error) {
	v, at, _, keys, err := readStampFull(ctx, store)
	return v, at, keys, err
}

func readStampFull(ctx context.Context, store storage.Bucket) (uint64, time.Time, bool, []string, error) {
	objs, err := storage.ListAll(ctx, store, stampPrefix)
	if err != nil {
		return 0, time.Time{}, false, nil, err
	}
	var best uint64
	var at time.Time
	var keys []string
	noBase := map[uint64]bool{}
	for _, o := range objs {
		name := strings.TrimPrefix(o.Key, stampPrefix)
		if n, ok := strings.CutSuffix(name, noBaseSuffix); ok {
			if v, err := strconv.ParseUint(n, 10, 64); err == nil {
				noBase[v] = true
				keys = append(keys, o.Key)
			}
			continue
		}
		v, err := strconv.ParseUint(name, 10, 64)
		if err != nil {
			continue
		}
		keys = append(keys, o.Key)
		if v >= best {
			best, at = v, o.ModTime
		}
	}
	return best, at, best != 0 && noBase[best], keys, nil
}

// writeStamp records version as the table's last run (noBase: its manifest names no base path)
// and deletes the older stamp keys.
func writeStamp(ctx context.Context, store storage.Bucket, version uint64, noBase bool, old []string) error {
	key := fmt.Sprintf("%s%020d", stampPrefix, version)
	keep := []string{key}
	if noBase {
		// Before the stamp: a stamp is never trusted without it being true, but a marker without
		// its stamp is ignored.
		if _, err := store.Put(ctx, key+noBaseSuffix, bytes.NewReader(nil), 0); err != nil {
			return err
		}
		keep = append(keep, key+noBaseSuffix)
	}
	if _, err := store.Put(ctx, key, bytes.NewReader(nil), 0); err != nil {
		return err
	}
	for _, k := range old {
		if !slices.Contains(keep, k) {
			if err := store.Delete(ctx, k); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Service) policyOf(ctx context.Context, id ident.ID) (registry.PolicySettings, error) {
	if s.Governance == nil {
		return governance.DefaultPolicy(), nil
	}
	p, err := s.Governance.ResolvePolicy(ctx, registry.KindTable, id)
	return p.Policy, err
}

// protected says whether the table or a namespace above it is protected; a record that cannot
// be read counts as protected (fail toward not deleting).
func (s *Service) protected(ctx context.Context, id ident.ID) (bool, string) {
	if s.Governance == nil {
		return false, ""
	}
	check := func(kind string, id ident.ID) (bool, string) {
		err := s.Governance.CheckNotProtected(ctx, kind, id, false)
		if err == nil {
			return false, ""
		}
		return true, err.Error()
	}
	if p, why := check(registry.KindTable, id); p {
		return p, why
	}
	for n := len(id) - 1; n >= 1; n-- {
		if p, why := check(registry.KindNamespace, id[:n]); p {
			return p, why
		}
	}
	return false, ""
}

// stampRead is a table's stamp as the sweep read it.
type stampRead struct {
	version uint64
	at      time.Time
	noBase  bool // the stamped version's manifest names no base path
	indexed bool // known from the root's stamp index (at unknown)
	err     error
}

func (s *Service) sweepTable(ctx context.Context, t located, latest lance.ManifestLocation, stamp stampRead, bases map[string]string) TableResult {
	res := TableResult{ID: t.id}
	last, lastAt, err := stamp.version, stamp.at, stamp.err
	if err != nil {
		res.Outcome, res.Reason = OutcomeFailed, err.Error()
		return res
	}
	if last == latest.Version {
		res.Outcome = OutcomeIdle
		return res
	}
	pol, err := s.policyOf(ctx, t.id)
	if err != nil {
		// An unreadable policy could be a longer retention: do nothing rather than guess.
		res.Outcome, res.Reason = OutcomeFailed, "policy: "+err.Error()
		return res
	}
	pol = pol.Over(governance.DefaultPolicy())
	if !lastAt.IsZero() && s.Now().Sub(lastAt) < time.Duration(*pol.CompactIntervalHours)*time.Hour {
		res.Outcome = OutcomeInterval
		return res
	}
	rep, err := s.runLeased(ctx, t, RunOptions{Policy: pol, BaseOf: bases[strings.TrimRight(t.table.Meta().URI, "/")]}, true)
	switch {
	case errors.Is(err, ErrLeaseHeld):
		res.Outcome, res.Reason = OutcomeLeased, err.Error()
	case errors.Is(err, errAlreadyDone):
		res.Outcome = OutcomeIdle
	case err != nil:
		res.Outcome, res.Reason, res.Report = OutcomeFailed, err.Error(), &rep
	default:
		res.Outcome, res.Report = OutcomeWorked, &rep
	}
	return res
}

var errAlreadyDone = errors.New("maintenance: another replica already worked this version")

// TaskKind is the kind of a maintenance pass in a table's task history (maintenance/tasks).
const TaskKind = "maintenance"

// Origins of a pass, as its task records them.
const (
	OriginDoor  = "door"
	OriginCLI   = "cli"
	OriginSweep = "sweep"
)

// taskLog is the task history on a table's root (the same root as its lease).
func (s *Service) taskLog(store storage.Bucket) *tasks.Log {
	return &tasks.Log{Store: store, Now: s.Now}
}

// taskProgress is a pass's progress: the steps that ended so far.
type taskProgress struct {
	Steps []StepReport `json:"steps"`
}

// runLeased makes one pass over a table under its lease, recorded in the table's task history
// (started once the lease is held, its progress after every step, its report at the end). With
// sweep set, a table whose stamp already names its latest version (another replica just worked
// it) is left alone and nothing is recorded. A dry run changes nothing, so it takes no lease
// (it must not make a real pass wait, nor wait for one) and writes no stamp.
func (s *Service) runLeased(ctx context.Context, t located, opts RunOptions, sweep bool) (RunReport, error) {
	store := t.ds.Store()
	workCtx := ctx
	if !opts.DryRun {
		l, err := acquireLease(ctx, store, s.Holder, s.LeaseTTL, s.Now)
		if err != nil {
			if errors.Is(err, ErrLeaseHeld) && s.Metrics != nil {
				s.Metrics.leaseConflict()
			}
			return RunReport{}, err
		}
		var stop func() error
		workCtx, stop = holdLease(ctx, l, s.LeaseTTL)
		defer func() {
			if err := stop(); err != nil {
				s.Logger.Warn("maintenance: lease release", slog.String("table", strings.Join(t.id, ".")), slog.String("error", err.Error()))
			}
		}()
	}
	last, _, oldStamps, err := readStamp(workCtx, store)
	if err != nil {
		return RunReport{}, err
	}
	if sweep {
		loc, err := t.ds.LatestLocation(workCtx)
		if err != nil {
			return RunReport{}, err
		}
		if loc.Version == last {
			return RunReport{}, errAlreadyDone
		}
	}
	origin := s.Origin
	if sweep {
		origin = OriginSweep
	}
	opts.ReadOnly = opts.ReadOnly || s.ReadOnly
	// The record is a report, not a guard: a task that cannot be recorded does not stop the pass.
	// A dry run and a read-only pass write nothing, not even their record.
	var task *tasks.Task
	if !opts.DryRun && !opts.ReadOnly {
		var terr error
		task, terr = s.taskLog(store).Start(workCtx, tasks.Spec{Kind: TaskKind, Table: t.id, Origin: origin, Holder: s.Holder})
		if terr != nil {
			s.Logger.Warn("maintenance: task record", slog.String("table", strings.Join(t.id, ".")), slog.String("error", terr.Error()))
			task = nil
		}
	}
	var progress taskProgress
	callerOnStep := opts.OnStep // the CLI's progress bar, say
	opts.OnStep = func(sr StepReport) {
		if callerOnStep != nil {
			callerOnStep(sr)
		}
		if task == nil {
			return
		}
		progress.Steps = append(progress.Steps, sr)
		if err := task.Progress(workCtx, progress); err != nil {
			s.Logger.Warn("maintenance: task progress", slog.String("table", strings.Join(t.id, ".")), slog.String("error", err.Error()))
		}
	}
	opts.Protected, _ = s.protected(workCtx, t.id)
	opts.Now = s.Now()
	start := time.Now()
	faultPoint(FaultRunStart)
	rep, runErr := Run(workCtx, t.ds, opts)
	if s.Metrics != nil {
		s.Metrics.run(rep, runErr, time.Since(start))
	}
	if !opts.DryRun && rep.Version != 0 && runErr == nil {
		m, noBase := s.namesNoBase(workCtx, t.ds, rep.Version)
		if err := writeStamp(workCtx, store, rep.Version, noBase, oldStamps); err != nil {
			runErr = fmt.Errorf("maintenance: stamp: %w", err)
		} else if r := rootOf(t); r != nil && noBase {
			// After the table's own stamp: the index entry is a hint of it (stamp_index.go).
			if err := writeIndexEntry(workCtx, r.RootBucket(), t.table.Meta().Location, m, nil, false); err != nil {
				s.Logger.Warn("maintenance: stamp index", slog.String("table", strings.Join(t.id, ".")), slog.String("error", err.Error()))
			}
		}
	}
	if task != nil {
		if err := task.Finish(workCtx, rep, runErr); err != nil {
			s.Logger.Warn("maintenance: task finish", slog.String("table", strings.Join(t.id, ".")), slog.String("error", err.Error()))
		}
	}
	s.emit(t.id, rep)
	return rep, runErr
}

// namesNoBase says whether version's manifest is known to name no base path (one manifest read
// per worked table, so the next sweeps of the idle table need none; false when unreadable).
func (s *Service) namesNoBase(ctx context.Context, ds *lance.Dataset, version uint64) (lance.ManifestLocation, bool) {
	v, err := ds.OpenVersion(ctx, version)
	if err != nil {
		return lance.ManifestLocation{}, false
	}
	return v.Location, len(v.Manifest().GetBasePaths()) == 0
}

func (s *Service) emit(id ident.ID, rep RunReport) {
	if s.Events == nil || rep.DryRun {
		return
	}
	obj := "table:" + strings.Join(id, ".")
	if c := rep.Step(StepCompact); c.Status == StatusDone {
		s.Events.Emit(governance.Event{Type: EventTableCompacted, At: s.Now(), Actor: "service:maintenance", Object: obj, Attributes: map[string]string{
			"version": strconv.FormatUint(c.Version, 10), "fragments_before": strconv.Itoa(c.FragmentsBefore),
			"fragments_after": strconv.Itoa(c.FragmentsAfter), "rows_rewritten": strconv.FormatUint(c.RowsRewritten, 10),
			"bytes_rewritten": strconv.FormatUint(c.BytesRewritten, 10),
		}})
	}
	if c := rep.Step(StepOptimizeIndices); c.Status == StatusDone {
		// One event per index the step changed (an up-to-date or skipped index is no work).
		for _, r := range c.Indices {
			if r.Status != tableindex.IndexOptimized {
				continue
			}
			s.Events.Emit(governance.Event{Type: EventIndexOptimized, At: s.Now(), Actor: "service:maintenance", Object: obj, Attributes: map[string]string{
				"version": strconv.FormatUint(c.Version, 10), "index": r.Name, "index_type": r.Type,
				"fragments_added": strconv.Itoa(r.UnindexedFragments), "rows_added": strconv.FormatUint(r.UnindexedRows, 10),
				"segments_before": strconv.Itoa(r.SegmentsBefore), "segments_after": strconv.Itoa(r.SegmentsAfter),
			}})
		}
	}
	if c := rep.Step(StepCleanup); c.Status == StatusDone {
		s.Events.Emit(governance.Event{Type: EventTableCleaned, At: s.Now(), Actor: "service:maintenance", Object: obj, Attributes: map[string]string{
			"versions_removed": strconv.Itoa(c.VersionsRemoved), "files_removed": strconv.Itoa(c.FilesRemoved),
			"bytes_removed": strconv.FormatInt(c.BytesRemoved, 10),
		}})
	}
}

// RunTable is one pass over table id on request (the control door, `lancecat maintenance run`):
// the policy resolved, protection and read-only honoured, under the table's lease.
func (s *Service) RunTable(ctx context.Context, id ident.ID, opts RunOptions) (RunReport, error) {
	s.init()
	if err := ValidateSteps(opts.Steps); err != nil {
		return RunReport{}, nserr.InvalidInputf("%v", err)
	}
	if err := opts.validate(); err != nil {
		return RunReport{}, err
	}
	t, err := s.Catalog.LoadTable(ctx, id)
	if err != nil {
		return RunReport{}, err
	}
	ds, err := t.Dataset()
	if err != nil {
		return RunReport{}, err
	}
	pol, err := s.policyOf(ctx, id)
	if err != nil {
		return RunReport{}, err
	}
	opts.Policy = pol
	one := located{id: id, table: t, ds: ds}
	// The sweep refuses the base of a shallow clone; so must a pass on request: the clone reads
	// this table's files through its base path and its versions pin them.
	base, err := s.cloneOf(ctx, one)
	if err != nil {
		return RunReport{}, err
	}
	opts.BaseOf = base
	rep, err := s.runLeased(ctx, one, opts, false)
	if errors.Is(err, ErrLeaseHeld) {
		return rep, nserr.ConcurrentModificationf("%v: try again when its pass ends", err)
	}
	return rep, err
}

// cloneOf names the table whose latest manifest names t as its base path ("" when none). It
// reads every table's latest version (manifests cached per version, as the sweep does): a clone
// may live under any namespace.
func (s *Service) cloneOf(ctx context.Context, t located) (string, error) {
	all, err := s.allTables(ctx, nil)
	if err != nil {
		return "", err
	}
	return s.shallowCloneBases(ctx, all, latestOf(ctx, all), nil)[strings.TrimRight(t.table.Meta().URI, "/")], nil
}

// parallelReads bounds the listings and manifest reads a walk over every table has in flight:
// on object storage each is a round trip, so one at a time makes a large catalog slow.
const parallelReads = 16

// latestOf is every table's latest manifest location, listed in parallel (zero Version: the table
// has no version, or it could not be listed).
func latestOf(ctx context.Context, tables []located) []lance.ManifestLocation {
	latest := make([]lance.ManifestLocation, len(tables))
	g := new(errgroup.Group)
	g.SetLimit(parallelReads)
	for i, t := range tables {
		if loc, ok := t.table.KnownLatest(); ok {
			latest[i] = loc // listed a moment ago by the load: a version written since is the next sweep's
			continue
		}
		g.Go(func() error {
			if loc, err := t.ds.LatestLocation(ctx); err == nil {
				latest[i] = loc
			}
			return nil
		})
	}
	_ = g.Wait()
	return latest
}

// allTablesLoader is a catalog that loads every table in one walk, each table checked once
// (routing.Router and namespace.Namespace have it): the sweep's walk then costs one check per
// table instead of a check to list it and another to load it.
type allTablesLoader interface {
	LoadAllTables(ctx context.Context) ([]catalog.Table, error)
}

// allTables loads every table of the catalog whose id starts with under (nil: all; a table id
// itself: that table); tables that cannot be loaded or are not Lance tables here are left out.
func (s *Service) allTables(ctx context.Context, under ident.ID) ([]located, error) {
	out, _, err := s.loadTables(ctx, under)
	return out, err
}

// loadTables loads every table whose id starts with under, in the listing's order, loads in
// parallel (a compatibility-mode root table's load is a listing and stats); the tables that
// cannot be loaded, or are not Lance tables here, are answered as skipped results.
func (s *Service) loadTables(ctx context.Context, under ident.ID) ([]located, []TableResult, error) {
	if all, ok := s.Catalog.(allTablesLoader); ok {
		tables, err := all.LoadAllTables(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("maintenance: list tables: %w", err)
		}
		var out []located
		var skipped []TableResult
		for _, t := range tables {
			id := t.Meta().ID
			if len(id) < len(under) || !slices.Equal(id[:len(under)], under) {
				continue
			}
			ds, err := t.Dataset()
			if err != nil {
				skipped = append(skipped, TableResult{ID: id, Outcome: OutcomeSkipped, Reason: err.Error()})
				continue
			}
			out = append(out, located{id: id, table: t, ds: ds})
		}
		return out, skipped, nil
	}
	var ids []ident.ID
	token := ""
	for {
		// One page (limit 0: all): every page of a listing recomputes it, and the root's
		// compatibility-mode tables cost a listing and stats each, so 1,000-name pages made a
		// 10,000-table sweep list the root ten times (measured: 143 s cold for 10,000 tables).
		page, err := s.Catalog.ListAllTables(ctx, token, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("maintenance: list tables: %w", err)
		}
		for _, oid := range page.Names {
			id := namespace.SplitID(oid)
			if len(id) >= len(under) && slices.Equal(id[:len(under)], under) {
				ids = append(ids, id)
			}
		}
		if page.NextToken == "" {
			break
		}
		token = page.NextToken
	}
	loaded := make([]located, len(ids))
	why := make([]string, len(ids))
	g := new(errgroup.Group)
	g.SetLimit(parallelReads)
	for i, id := range ids {
		g.Go(func() error {
			t, err := s.Catalog.LoadTable(ctx, id)
			if err != nil {
				why[i] = err.Error()
				return nil
			}
			ds, err := t.Dataset()
			if err != nil {
				why[i] = err.Error()
				return nil
			}
			loaded[i] = located{id: id, table: t, ds: ds}
			return nil
		})
	}
	_ = g.Wait()
	var out []located
	var skipped []TableResult
	for i, id := range ids {
		if why[i] != "" {
			skipped = append(skipped, TableResult{ID: id, Outcome: OutcomeSkipped, Reason: why[i]})
			continue
		}
		out = append(out, loaded[i])
	}
	return out, skipped, nil
}

// TableTasks is the task history of table id, newest first (empty when the table is not in the
// catalog: a dropped table's history went with it). Authorization is the door's.
func (s *Service) TableTasks(ctx context.Context, id ident.ID) ([]tasks.Record, error) {
	s.init()
	t, err := s.Catalog.LoadTable(ctx, id)
	if err != nil {
		var nerr *nserr.Error
		if errors.As(err, &nerr) && (nerr.Code == nserr.TableNotFound || nerr.Code == nserr.NamespaceNotFound) {
			return []tasks.Record{}, nil
		}
		return nil, err
	}
	ds, err := t.Dataset()
	if err != nil {
		return []tasks.Record{}, nil // not a Lance table here: it has no task log
	}
	return s.taskLog(ds.Store()).List(ctx)
}

// NamespaceTasks is the task history of every table under namespace ns (its whole subtree),
// newest first. Authorization is the door's (read on the namespace covers its subtree).
func (s *Service) NamespaceTasks(ctx context.Context, ns ident.ID) ([]tasks.Record, error) {
	s.init()
	all, err := s.allTables(ctx, ns)
	if err != nil {
		return nil, err
	}
	// One listing per table of the subtree, in parallel.
	lists := make([][]tasks.Record, len(all))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelReads)
	for i, t := range all {
		g.Go(func() error {
			recs, err := s.taskLog(t.ds.Store()).List(gctx)
			lists[i] = recs
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := []tasks.Record{}
	for _, recs := range lists {
		out = append(out, recs...)
	}
	slices.SortStableFunc(out, func(a, b tasks.Record) int { return strings.Compare(b.ID, a.ID) })
	return out, nil
}

// Every runs Sweep every interval until ctx ends; the first sweep waits a random part of the
// interval so replicas started together do not sweep in step.
func (s *Service) Every(ctx context.Context, interval time.Duration) {
	s.init()
	wait := time.Duration(rand.Int64N(int64(interval)))
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = interval
		rep, err := s.Sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			s.Logger.Warn("maintenance sweep failed", slog.String("error", err.Error()))
		case rep.Counts[OutcomeWorked]+rep.Counts[OutcomeFailed] > 0:
			s.Logger.Info("maintenance sweep", slog.Int("tables", rep.Tables), slog.Int("worked", rep.Counts[OutcomeWorked]),
				slog.Int("failed", rep.Counts[OutcomeFailed]), slog.Int("leased", rep.Counts[OutcomeLeased]))
		}
	}
}

// faultPoint is a crash-test kill point (internal/faults); a no-op unless a test arms it.
func faultPoint(name string) { faults.Point(name) }

// Kill points of a pass, for crash tests.
const (
	FaultRunStart = "maintenance.run.start" // lease held, task recorded, nothing written yet
)
