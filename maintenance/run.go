package maintenance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/governance"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/registry"
)

// One table's maintenance pass, in Lance's (and the seed sweep's) fixed order: compact →
// optimize indices → cleanup. A policy or the caller may skip steps, never reorder them. Each
// step answers a StepReport; a step that fails stops the steps after it (cleanup must not run
// over a half-understood table), and the pass still answers what ran.
//
// What stops a step:
//   - the policy: compact_enabled, optimize_indices_enabled, cleanup_enabled false → skipped;
//   - read-only mode (the catalog's maintenance mode: nothing is written) → every step refused;
//   - protection (the table or a namespace above it is protected) → cleanup refused: it removes
//     versions, the one destructive step; compaction keeps every row and every version;
//   - the table is the base of a shallow clone (BaseOf) → every step refused: the clone reads
//     our files through its base path and its versions pin them, which cleanup cannot see;
//   - a manifest feature flag we do not know → refused (lance.ErrUnsupportedFeature).
//
// A trashed (recoverably dropped) table is not in the catalog until undrop, so the sweep never
// finds it and the control door answers 404: it stays frozen as the trash left it.

// Steps, in the order they run.
const (
	StepCompact         = "compact"
	StepOptimizeIndices = "optimize_indices"
	StepCleanup         = "cleanup"
)

// AllSteps is every step in order.
var AllSteps = []string{StepCompact, StepOptimizeIndices, StepCleanup}

// Step statuses.
const (
	StatusDone           = "done"            // ran and changed the table
	StatusNothingToDo    = "nothing_to_do"   // ran; the table needed nothing
	StatusWouldDo        = "would_do"        // dry run: the report says what would change
	StatusSkipped        = "skipped"         // the policy turned the step off
	StatusRefused        = "refused"         // not allowed on this table now (Reason says why)
	StatusNotImplemented = "not_implemented" // lancecat cannot do this step yet
	StatusFailed         = "failed"          // an error; later steps did not run
	StatusNotRun         = "not_run"         // an earlier step failed
)

// RunOptions say what one pass over one table does.
type RunOptions struct {
	// Steps to run (nil: AllSteps); run in AllSteps order whatever order they are given in.
	Steps  []string
	DryRun bool
	// OlderThan, when set, replaces the policy's retention for this pass: versions older than
	// it are removed whatever retain_versions says (an operator cleaning now).
	OlderThan *time.Duration
	// Policy is the resolved policy (governance.ResolvePolicy); nil fields take the defaults.
	Policy registry.PolicySettings
	// Protected, ReadOnly and BaseOf stop steps (see above). BaseOf names the clone.
	Protected bool
	ReadOnly  bool
	BaseOf    string
	// Now is the clock (zero: time.Now()).
	Now time.Time
	// OnStep, when set, is told each step's report as it ends (the service records it as the
	// task's progress).
	OnStep func(StepReport)
}

// validate refuses options no pass can mean: a negative OlderThan would put cleanup's cutoff in
// the future and remove every version but the latest, whatever the policy retains.
func (o RunOptions) validate() error {
	if o.OlderThan != nil && *o.OlderThan < 0 {
		return nserr.InvalidInputf("older_than_seconds must not be negative, got %v (0 or more: versions older than that are removed)", *o.OlderThan)
	}
	return nil
}

// StepReport is what one step did (or, in a dry run, would do).
type StepReport struct {
	Step   string `json:"step"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Compaction.
	FragmentsBefore int    `json:"fragments_before,omitempty"`
	FragmentsAfter  int    `json:"fragments_after,omitempty"`
	RowsRewritten   uint64 `json:"rows_rewritten,omitempty"`
	BytesRead       uint64 `json:"bytes_read,omitempty"`
	BytesRewritten  uint64 `json:"bytes_rewritten,omitempty"`
	// Cleanup.
	VersionsRemoved int   `json:"versions_removed,omitempty"`
	FilesRemoved    int   `json:"files_removed,omitempty"`
	BytesRemoved    int64 `json:"bytes_removed,omitempty"`
	// Index optimization: one entry per index, and the old segments the
	// new ones replaced.
	Indices        []tableindex.IndexOptimizeResult `json:"indices,omitempty"`
	SegmentsMerged int                              `json:"segments_merged,omitempty"`
	// IndicesRemapped (compaction) are the index segments rewritten for
	// the rows' new addresses.
	IndicesRemapped int `json:"indices_remapped,omitempty"`
	// Version is the version the step committed (0: none).
	Version    uint64 `json:"version,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// RunReport is one pass over one table.
type RunReport struct {
	DryRun bool         `json:"dry_run"`
	Steps  []StepReport `json:"steps"`
	// Version is the table's latest version after the pass.
	Version uint64 `json:"version"`
	// IndexHealth are the findings about the table's indices after the
	// pass (when optimize_indices ran): report only.
	IndexHealth []HealthFinding `json:"index_health,omitempty"`
}

// Material says whether the pass changed the table (what events and stamps are for).
func (r RunReport) Material() bool {
	return !r.DryRun && slices.ContainsFunc(r.Steps, func(s StepReport) bool { return s.Status == StatusDone })
}

// Step returns the report of step name (zero if it was not asked for).
func (r RunReport) Step(name string) StepReport {
	for _, s := range r.Steps {
		if s.Step == name {
			return s
		}
	}
	return StepReport{}
}

// ErrUnknownStep is a step name that is not one of AllSteps.
var ErrUnknownStep = errors.New("maintenance: unknown step")

// ValidateSteps checks step names (duplicates are allowed and run once).
func ValidateSteps(steps []string) error {
	for _, s := range steps {
		if !slices.Contains(AllSteps, s) {
			return fmt.Errorf("%w %q (steps are %v)", ErrUnknownStep, s, AllSteps)
		}
	}
	return nil
}

func enabled(b *bool) bool { return b == nil || *b }

// Run makes one pass over ds. The error is nil when every step answered (a failed step is in
// the report, with its error returned as well so callers can translate it).
func Run(ctx context.Context, ds *lance.Dataset, opts RunOptions) (RunReport, error) {
	if err := ValidateSteps(opts.Steps); err != nil {
		return RunReport{}, err
	}
	if err := opts.validate(); err != nil {
		return RunReport{}, err
	}
	steps := opts.Steps
	if steps == nil {
		steps = AllSteps
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	pol := opts.Policy.Over(governance.DefaultPolicy())
	rep := RunReport{DryRun: opts.DryRun}
	var failed error
	healthAfter := false
	for _, name := range AllSteps {
		if !slices.Contains(steps, name) {
			continue
		}
		if failed != nil {
			rep.Steps = append(rep.Steps, StepReport{Step: name, Status: StatusNotRun, Reason: "an earlier step failed"})
			continue
		}
		start := time.Now()
		sr := StepReport{Step: name}
		switch {
		case opts.BaseOf != "":
			sr.Status, sr.Reason = StatusRefused, "the table is the base of shallow clone "+opts.BaseOf+": its files are read through the clone"
		case opts.ReadOnly:
			sr.Status, sr.Reason = StatusRefused, "the catalog is in read-only mode"
		default:
			var err error
			switch name {
			case StepCompact:
				err = runCompact(ctx, ds, opts, pol, &sr)
			case StepOptimizeIndices:
				err = runOptimize(ctx, ds, opts, pol, &sr)
				if sr.Status != StatusSkipped {
					healthAfter = true
				}
			case StepCleanup:
				err = runCleanup(ctx, ds, opts, pol, &sr)
			}
			if errors.Is(err, lance.ErrUnsupportedFeature) {
				sr.Status, sr.Reason = StatusRefused, err.Error()
				err = nil
			}
			if err != nil {
				sr.Status, sr.Reason = StatusFailed, err.Error()
				failed = err
			}
		}
		sr.DurationMS = time.Since(start).Milliseconds()
		rep.Steps = append(rep.Steps, sr)
		if opts.OnStep != nil {
			opts.OnStep(sr)
		}
	}
	if loc, err := ds.LatestLocation(ctx); err == nil {
		rep.Version = loc.Version
	}
	if healthAfter {
		rep.IndexHealth = IndexHealth(ctx, ds)
	}
	return rep, failed
}

func runCompact(ctx context.Context, ds *lance.Dataset, opts RunOptions, pol registry.PolicySettings, sr *StepReport) error {
	if !enabled(pol.CompactEnabled) {
		sr.Status, sr.Reason = StatusSkipped, "policy: compact_enabled is false"
		return nil
	}
	copts := CompactOptions{}
	if pol.TargetRowsPerFragment != nil {
		copts.TargetRowsPerFragment = uint64(*pol.TargetRowsPerFragment)
	}
	if opts.DryRun {
		plan, err := Plan(ctx, ds, copts)
		if err != nil {
			return err
		}
		sr.FragmentsBefore = plan.Fragments
		sr.FragmentsAfter = plan.Fragments
		for _, t := range plan.Tasks {
			sr.RowsRewritten += t.LiveRows
			sr.FragmentsAfter -= len(t.Fragments) - 1 // at least one new fragment per bin
		}
		sr.Status = StatusNothingToDo
		if len(plan.Tasks) > 0 {
			sr.Status = StatusWouldDo
		}
		return nil
	}
	cr, err := Compact(ctx, ds, copts)
	if err != nil {
		return err
	}
	sr.FragmentsBefore, sr.FragmentsAfter = cr.FragmentsBefore, cr.FragmentsAfter
	sr.RowsRewritten, sr.BytesRead, sr.BytesRewritten = cr.RowsRewritten, cr.BytesRead, cr.BytesWritten
	sr.IndicesRemapped = cr.IndicesRemapped
	if len(cr.Excluded) > 0 {
		sr.Reason = fmt.Sprintf("%d fragments left alone: %s", len(cr.Excluded), cr.Excluded[0].Reason)
	}
	sr.Version = cr.Version
	sr.Status = StatusNothingToDo
	if cr.Version != 0 {
		sr.Status = StatusDone
	}
	if sr.FragmentsAfter == 0 {
		sr.FragmentsAfter = sr.FragmentsBefore
	}
	return nil
}

func runCleanup(ctx context.Context, ds *lance.Dataset, opts RunOptions, pol registry.PolicySettings, sr *StepReport) error {
	switch {
	case !enabled(pol.CleanupEnabled):
		sr.Status, sr.Reason = StatusSkipped, "policy: cleanup_enabled is false"
		return nil
	case opts.Protected:
		sr.Status, sr.Reason = StatusRefused, "the table is protected: cleanup removes versions"
		return nil
	}
	copts := lance.CleanupOptions{DryRun: opts.DryRun, Now: opts.Now}
	if opts.OlderThan != nil {
		copts.OlderThan = opts.Now.Add(-*opts.OlderThan)
	} else {
		copts.OlderThan = opts.Now.AddDate(0, 0, -*pol.RetentionDays)
		copts.KeepLast = *pol.RetainVersions
	}
	cr, err := ds.Cleanup(ctx, copts)
	if err != nil {
		return err
	}
	sr.VersionsRemoved, sr.FilesRemoved, sr.BytesRemoved = len(cr.RemovedVersions), len(cr.RemovedFiles), cr.BytesRemoved
	switch {
	case len(cr.RemovedFiles) == 0:
		sr.Status = StatusNothingToDo
	case opts.DryRun:
		sr.Status = StatusWouldDo
	default:
		sr.Status = StatusDone
	}
	return nil
}

func runOptimize(ctx context.Context, ds *lance.Dataset, opts RunOptions, pol registry.PolicySettings, sr *StepReport) error {
	if !enabled(pol.OptimizeIndicesEnabled) {
		sr.Status, sr.Reason = StatusSkipped, "policy: optimize_indices_enabled is false"
		return nil
	}
	or, err := tableindex.OptimizeIndices(ctx, ds, tableindex.OptimizeIndicesOptions{DryRun: opts.DryRun, Now: opts.Now})
	if err != nil {
		return err
	}
	sr.Indices = or.Indices
	sr.Version = or.Version
	sr.Status = StatusNothingToDo
	var skipped []string
	for _, r := range or.Indices {
		sr.SegmentsMerged += r.SegmentsMerged
		switch r.Status {
		case tableindex.IndexWouldDo:
			sr.Status = StatusWouldDo
		case tableindex.IndexSkipped:
			skipped = append(skipped, r.Name+": "+r.Reason)
		}
	}
	if or.Version != 0 {
		sr.Status = StatusDone
	}
	if len(skipped) > 0 {
		sr.Reason = "indices left as they are: " + strings.Join(skipped, "; ")
	}
	return nil
}
