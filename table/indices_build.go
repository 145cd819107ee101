package table

// Background index builds. A create_table_index on a large table (IndexBuildOptions' thresholds)
// is checked up front (bad input is still a 400 and nothing is written), then answered at once
// and built by a goroutine of this replica, recorded in the table's task log
// (maintenance/tasks, on the table root, so every replica's GET /v1/table/{id}/tasks sees it) with
// its phase and rows done. The index is listed only once its CreateIndex transaction committed:
// the remote SDK's wait (wait_timeout) polls list_indices and index stats until the index appears
// with no unindexed rows, which is exactly then.
//
// One build per index name per table at a time, across replicas: a build holds a claim on the
// table root, _maintenance/index_builds/<hex of branch and name>.json (the catalog's lease
// protocol, internal/lease: put-if-absent, renewed by its heartbeat with put-if-match, deleted
// when the build ends), and a create of the same name while the claim is live answers
// ConcurrentModification naming the running task. A
// build whose replica died stops renewing: its claim goes stale and may be taken over, its task
// is listed abandoned (its record's own stale-after), and nothing was committed (the commit is the
// build's last step), so nothing is listed. Its files under _indices/<uuid>/ are orphans no
// version references (the orphan scan's to report).

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/internal/lease"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/maintenance/tasks"
	"github.com/lancecat/lancecat/storage"
)

// TaskKindCreateIndex is the kind of a background index build in a table's task log.
const TaskKindCreateIndex = "create_index"

// indexClaimPrefix is where the claims of running builds live on a table root: beside the task
// log, in a directory Lance never lists.
const indexClaimPrefix = "_maintenance/index_builds/"

// The defaults of IndexBuildOptions.
const (
	DefaultBackgroundIndexRows  = 1_000_000
	DefaultBackgroundIndexBytes = 2 << 30
	DefaultIndexBuildHeartbeat  = 10 * time.Second
	DefaultIndexBuildStaleAfter = 2 * time.Minute
)

// IndexBuildOptions say which index builds run in the background and how they report.
type IndexBuildOptions struct {
	// BackgroundRows: a build on a table with at least this many live rows runs in the
	// background (0: DefaultBackgroundIndexRows; negative: never by rows).
	BackgroundRows int64
	// BackgroundBytes: likewise by the bytes of the table's data files (0:
	// DefaultBackgroundIndexBytes; negative: never by bytes).
	BackgroundBytes int64
	// Holder names this replica in task records and claims (default host:pid).
	Holder string
	// Heartbeat is how often a running build renews its claim and reports its progress (0:
	// DefaultIndexBuildHeartbeat).
	Heartbeat time.Duration
	// StaleAfter is how long a build may go without a heartbeat before its claim may be taken
	// over and its task is listed abandoned (0: DefaultIndexBuildStaleAfter). Several heartbeats.
	StaleAfter time.Duration
	// Now is the clock of claims and task records (tests); nil is time.Now.
	Now func() time.Time
	// Logger takes what a background build has to say after its request was answered (nil:
	// slog.Default()).
	Logger *slog.Logger
}

func (o IndexBuildOptions) withDefaults() IndexBuildOptions {
	if o.BackgroundRows == 0 {
		o.BackgroundRows = DefaultBackgroundIndexRows
	}
	if o.BackgroundBytes == 0 {
		o.BackgroundBytes = DefaultBackgroundIndexBytes
	}
	if o.Holder == "" {
		host, _ := os.Hostname()
		o.Holder = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultIndexBuildHeartbeat
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = DefaultIndexBuildStaleAfter
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// background says whether a build over rows live rows and bytes of data runs in the background.
func (o IndexBuildOptions) background(rows, bytes int64) bool {
	return (o.BackgroundRows > 0 && rows >= o.BackgroundRows) || (o.BackgroundBytes > 0 && bytes >= o.BackgroundBytes)
}

// Builds are the background index builds of one root (its replica's): the root makes them once
// (NewBuilds) and hands them to its tables (Root.IndexBuilds).
type Builds struct {
	opts IndexBuildOptions
	wg   sync.WaitGroup

	mu      sync.Mutex
	cancels map[*int]context.CancelFunc
	// closed: Cancel was called (the replica is shutting down); a cancelled build's task says
	// so, and no new build starts.
	closed bool

	// phaseHook, set by tests (SetPhaseHook), runs when a build reaches a phase (after the
	// phase is recorded); it may block (to observe a running build) and answering true makes the
	// build stop dead there (no finish, no release, no more heartbeats): a replica killed
	// mid-build. Fault injection only.
	phaseHook func(phase string) bool
}

// NewBuilds are the background builds of a root, as opts say.
func NewBuilds(opts IndexBuildOptions) *Builds { return &Builds{opts: opts.withDefaults()} }

// Wait waits until the background index builds started have ended.
func (b *Builds) Wait() { b.wg.Wait() }

// ErrShuttingDown is the error of a background build cancelled because its replica shut down,
// and of a build asked for after that.
var ErrShuttingDown = errors.New("cancelled: this lancecat replica is shutting down")

// Cancel cancels the running background index builds (a shutting-down replica): each ends its
// task failed with ErrShuttingDown, releases its claim and commits nothing (unless its commit
// was already under way: then it ends succeeded). Builds asked for afterwards are refused (503).
// Wait then waits for them to end.
func (b *Builds) Cancel() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for _, cancel := range b.cancels {
		cancel()
	}
}

// SetPhaseHook makes the builds call hook at each phase they reach (after recording it): it may
// block, and true kills the build there (fault injection in tests: a replica that died
// mid-build). Set it before anything is built.
func (b *Builds) SetPhaseHook(hook func(phase string) bool) { b.phaseHook = hook }

func (b *Builds) shuttingDown() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// indexPlan is a create_table_index resolved to its build: what it checks up front and how it
// builds (each kind's own, in indices.go, indices_vector.go, indices_fts.go).
type indexPlan struct {
	name, kind, column, branch string
	// check runs the build's checks that read no data (nil: none beyond the build's own).
	check func(ctx context.Context, ds *lance.Dataset) error
	// build builds and commits, returning the new version.
	build func(ctx context.Context, ds *lance.Dataset) (uint64, error)
}

// runIndexPlan builds p: here and now on a small table, in the background on a large one.
func (h *Table) runIndexPlan(ctx context.Context, p indexPlan) (uint64, error) {
	t := h.t
	b := h.root.IndexBuilds()
	ds, err := h.branchDataset(ctx, p.branch)
	if err != nil {
		return 0, err
	}
	head, err := h.latestOf(ctx, ds, p.branch)
	if err != nil {
		return 0, Err(t, err)
	}
	root := h.root.Dataset(t).Store()
	key := buildClaimKey(p.branch, p.name)
	if !b.opts.background(lance.LiveRows(head), lance.DataBytes(head)) {
		if err := lease.Probe(ctx, root, key, b.claimOptions(p)); err != nil {
			return 0, claimErr(t, p.name, err)
		}
		return p.build(ctx, ds)
	}
	if p.check != nil {
		if err := p.check(ctx, ds); err != nil {
			return 0, indexErr(t, err)
		}
	}
	return 0, b.start(ctx, h, ds, root, key, p)
}

// buildProgress is a background build's progress as its task records it.
type buildProgress struct {
	Index     string `json:"index_name"`
	IndexType string `json:"index_type"`
	Column    string `json:"column"`
	Branch    string `json:"branch,omitempty"`
	Phase     string `json:"phase"`
	RowsDone  int64  `json:"rows_done,omitempty"`
	RowsTotal int64  `json:"rows_total,omitempty"`
}

// buildResult is a finished build's result.
type buildResult struct {
	Index   string `json:"index_name"`
	Version uint64 `json:"version,omitempty"`
}

// start claims the name, records the task and runs the build in a goroutine that outlives the
// request (its context keeps the request's values, not its deadline).
func (b *Builds) start(ctx context.Context, h *Table, ds *lance.Dataset, root storage.Bucket, key string, p indexPlan) error {
	t := h.t
	if b.shuttingDown() {
		return nserr.Wrap(nserr.ServiceUnavailable, ErrShuttingDown, "table "+quoteID(t.ID)+": no index build starts now")
	}
	c, err := lease.Acquire(ctx, root, key, b.claimOptions(p))
	if err != nil {
		return claimErr(t, p.name, err)
	}
	log := &tasks.Log{Store: root, Now: b.opts.Now}
	task, err := log.Start(ctx, tasks.Spec{Kind: TaskKindCreateIndex, Table: t.ID, Origin: "door", Holder: b.opts.Holder, StaleAfter: b.opts.StaleAfter})
	if err != nil {
		_ = c.Release(ctx)
		return fmt.Errorf("namespace: index build task: %w", err)
	}
	c.SetTask(task.Record().ID)
	if err := c.Renew(context.WithoutCancel(ctx)); err != nil {
		_ = task.Finish(ctx, nil, err)
		return fmt.Errorf("namespace: index build claim: %w", err)
	}
	prog := &progressState{cur: buildProgress{Index: p.name, IndexType: p.kind, Column: p.column, Branch: p.branch, Phase: "starting"}}
	if err := task.Progress(ctx, prog.snapshot()); err != nil {
		_ = c.Release(ctx)
		return fmt.Errorf("namespace: index build task: %w", err)
	}

	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	token := new(int)
	b.mu.Lock()
	if b.cancels == nil {
		b.cancels = map[*int]context.CancelFunc{}
	}
	b.cancels[token] = cancel
	if b.closed { // CancelIndexBuilds ran since the check above: it ends at once, cancelled
		cancel()
	}
	b.mu.Unlock()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer func() {
			cancel()
			b.mu.Lock()
			delete(b.cancels, token)
			b.mu.Unlock()
		}()
		b.run(runCtx, b.opts.Logger, c, task, prog, ds, p)
	}()
	return nil
}

// run is one background build: the heartbeat renews the claim and writes the progress; a phase
// change is written at once. The task ends succeeded with the version, or failed with the error;
// the claim is released either way.
func (b *Builds) run(ctx context.Context, logger *slog.Logger, c *lease.Lease, task *tasks.Task, prog *progressState, ds *lance.Dataset, p indexPlan) {
	var (
		mu   sync.Mutex // serialises the task's writes (it holds one ETag)
		lost error      // a progress write failed: the task record is another replica's now
		died bool
	)
	report := func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if died || lost != nil {
			return nil
		}
		if err := task.Progress(context.WithoutCancel(ctx), prog.snapshot()); err != nil {
			lost = err
			return err
		}
		return nil
	}
	// The heartbeat renews the claim, then reports; it cancels work when either is lost.
	work, stop := c.Hold(ctx, b.opts.Heartbeat, report)
	buildCtx, cancel := context.WithCancel(work)
	defer cancel()
	buildCtx = tableindex.WithIndexProgress(buildCtx, func(phase string, done, total int64) {
		if !prog.set(phase, done, total) {
			return
		}
		if report(buildCtx) != nil {
			cancel()
		}
		if b.phaseHook != nil && b.phaseHook(phase) {
			mu.Lock()
			died = true
			mu.Unlock()
			_ = stop() // no more heartbeats: the replica is dead
			cancel()
		}
	})
	ver, err := p.build(buildCtx, ds)
	held := stop()
	mu.Lock()
	defer mu.Unlock()
	if died {
		return // as if the replica died here: no finish, no release
	}
	if lost == nil {
		lost = held
	}
	if lost != nil && err == nil {
		// The commit went through although the claim was lost on the way: the index is there.
		lost = nil
	}
	switch {
	case err != nil && ctx.Err() != nil && b.shuttingDown():
		// Cancelled by the shutdown (a progress write it cut short may have set lost too).
		err = ErrShuttingDown
	case lost != nil:
		err = fmt.Errorf("lost the build's claim or task record: %w", lost)
	}
	var res any
	if err == nil {
		res = buildResult{Index: p.name, Version: ver}
	}
	// The build's context may be cancelled (a shutdown, a lost claim): the task's end is written
	// regardless, so it is not left running until it goes stale.
	if ferr := task.Finish(context.WithoutCancel(ctx), res, err); ferr != nil {
		logger.Warn("index build: task record", slog.String("index", p.name), slog.String("error", ferr.Error()))
	}
	if err != nil {
		logger.Warn("index build failed", slog.String("index", p.name), slog.String("error", err.Error()))
	}
	// A claim another replica took over is left to it (Release writes nothing then).
	if rerr := c.Release(ctx); rerr != nil && !errors.Is(rerr, lease.ErrLost) {
		logger.Warn("index build: claim release", slog.String("index", p.name), slog.String("error", rerr.Error()))
	}
}

// progressState is a build's latest progress, set from the build's goroutine and read by the
// heartbeat's.
type progressState struct {
	mu  sync.Mutex
	cur buildProgress
}

// set records the phase and rows; true when the phase changed (written at once).
func (s *progressState) set(phase string, done, total int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := s.cur.Phase != phase
	s.cur.Phase, s.cur.RowsDone, s.cur.RowsTotal = phase, done, total
	return changed
}

func (s *progressState) snapshot() buildProgress {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// buildClaimKey is the claim of index name on branch: hex, so any name is one flat key.
func buildClaimKey(branch, name string) string {
	return indexClaimPrefix + hex.EncodeToString([]byte(branch+"\x00"+name)) + ".json"
}

// claimPayload is a claim record's own fields (beside the lease protocol's).
type claimPayload struct {
	Index  string `json:"index_name"`
	Branch string `json:"branch,omitempty"`
}

// claimOptions are the claim of p's name as this replica takes it: deleted when released (claims
// are one per index name, and replicas from before internal/lease know no released record).
func (b *Builds) claimOptions(p indexPlan) lease.Options {
	return lease.Options{Holder: b.opts.Holder, StaleAfter: b.opts.StaleAfter, Now: b.opts.Now,
		Payload: claimPayload{Index: p.name, Branch: p.branch}, DeleteOnRelease: true}
}

// claimErr is the error of a create that found the name claimed (ConcurrentModification naming
// the running task), or that could not read or write the claim.
func claimErr(t *catalog.Entry, name string, err error) error {
	var held *lease.HeldError
	if errors.As(err, &held) {
		return nserr.ConcurrentModificationf("table %s: index %q is being built (task %s on %s, last heard of %s); wait for it (GET /v1/table/{id}/tasks) or retry when it ended",
			quoteID(t.ID), name, held.Record.Task, held.Who(), held.Record.RenewedAt.UTC().Format(time.RFC3339))
	}
	return fmt.Errorf("namespace: index build claim: %w", err)
}
