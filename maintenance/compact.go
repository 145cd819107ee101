package maintenance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/index/tableindex"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// Compaction as Lance plans and commits it (rust/lance/src/dataset/optimize.rs):
//
//   - a fragment is a candidate when its deleted fraction passes the
//     threshold (rewritten even alone: its deletions are materialized) or
//     when it has fewer physical rows than the target (rewritten only with
//     a neighbour);
//   - adjacent candidates covered by the same set of indices form a bin; a
//     bin of one fragment that only wants neighbours is dropped; bins are
//     split so that each holds at least the target rows where the rest can
//     make another such bin;
//   - each bin's live rows are read in order and written as new fragments
//     (at most the target rows each) in the table's own data storage
//     version; rows keep their stable row ids (and created-at /
//     last-updated-at versions) when the table has them;
//   - one Rewrite transaction replaces every bin's fragments.
//
// Indices: with stable row ids Lance keeps every index and moves its
// fragment bitmap to the new fragments; we do the same. Without stable row
// ids Lance (by default: defer_index_remap is false in the SDK's
// compaction) reserves the new fragments' ids with a ReserveFragments
// commit, rewrites every index covering a rewritten fragment with its row
// addresses mapped to the rows' new addresses, and lists the copies in the
// Rewrite's rewritten_indices; we do the same for BTREE, BITMAP,
// LABEL_LIST, IVF_FLAT and IVF_PQ segments (lance.RemapIndexSegment).
// Fragments covered by an index we cannot remap (INVERTED, NGRAM, HNSW,
// an index without a fragment bitmap…) are left out of the plan
// (Plan.Excluded, Report.Excluded say which and why), so no index is ever
// left pointing at a removed fragment.

// DefaultTargetRowsPerFragment and DefaultMaterializeDeletionsThreshold are
// Lance's CompactionOptions defaults.
const (
	DefaultTargetRowsPerFragment         = 1024 * 1024
	DefaultMaterializeDeletionsThreshold = 0.1
)

// CompactOptions tune Plan and Compact. Zero values are Lance's defaults.
type CompactOptions struct {
	// TargetRowsPerFragment: fragments with fewer physical rows are merged
	// with their neighbours, and new fragments hold at most this many.
	TargetRowsPerFragment uint64
	// MaterializeDeletionsThreshold is the deleted fraction above which a
	// fragment is rewritten on its own (nil: 0.1; <= 0 every fragment with
	// deletions; >= 1 never).
	MaterializeDeletionsThreshold *float64
	// BatchRows is the scan batch size (0: the scanner's default).
	BatchRows int

	// unremappable are index segments (by uuid) a remap refused at run
	// time (a layout lancecat does not read): their fragments are planned
	// as for an index that cannot be remapped.
	unremappable map[string]string
}

func (o CompactOptions) target() uint64 {
	if o.TargetRowsPerFragment == 0 {
		return DefaultTargetRowsPerFragment
	}
	return o.TargetRowsPerFragment
}

func (o CompactOptions) threshold() float64 {
	if o.MaterializeDeletionsThreshold == nil {
		return DefaultMaterializeDeletionsThreshold
	}
	return *o.MaterializeDeletionsThreshold
}

// CompactTask is one bin: adjacent fragments rewritten together.
type CompactTask struct {
	Fragments []uint64 // ids, in manifest order
	LiveRows  uint64
}

// ExcludedFragment is a fragment the plan left alone although Lance would
// have rewritten it.
type ExcludedFragment struct {
	ID     uint64
	Reason string
}

// CompactPlan is what Compact would rewrite at ReadVersion.
type CompactPlan struct {
	ReadVersion uint64
	Fragments   int // fragments of the read version
	Tasks       []CompactTask
	Excluded    []ExcludedFragment
}

// CompactReport is what Compact did.
type CompactReport struct {
	ReadVersion uint64
	// Version is the committed version (0: nothing to do).
	Version          uint64
	FragmentsBefore  int // of the read version
	FragmentsAfter   int // of the committed version (concurrent appends included)
	FragmentsRemoved int
	FragmentsAdded   int
	RowsRewritten    uint64
	// BytesRead are the data files of the rewritten fragments; BytesWritten
	// the new data files.
	BytesRead, BytesWritten uint64
	Excluded                []ExcludedFragment
	// IndicesRemapped are the index segments rewritten for the rows' new
	// addresses (tables without stable row ids); ReservedVersion the
	// ReserveFragments commit that numbered the new fragments first.
	IndicesRemapped int
	ReservedVersion uint64
	Attempts        int
	Duration        time.Duration
}

type fragMetrics struct {
	frag     *tablepb.DataFragment
	physical uint64
	deleted  uint64
}

func (m fragMetrics) live() uint64 { return m.physical - m.deleted }

// Plan computes the compaction of ds's latest version as Lance plans it.
func Plan(ctx context.Context, ds *lance.Dataset, opts CompactOptions) (CompactPlan, error) {
	ver, err := ds.OpenLatest(ctx)
	if err != nil {
		return CompactPlan{}, err
	}
	return planAt(ctx, ds, ver, opts)
}

func planAt(ctx context.Context, ds *lance.Dataset, ver *lance.Version, opts CompactOptions) (CompactPlan, error) {
	frags := ver.Manifest().GetFragments()
	plan := CompactPlan{ReadVersion: ver.Number(), Fragments: len(frags)}
	target, threshold := opts.target(), opts.threshold()
	materialize := threshold < 1
	covering, blocked, err := indexCoverage(ver, opts.unremappable)
	if err != nil {
		return CompactPlan{}, err
	}
	stable := ver.StableRowIDs()

	type bin struct {
		frags     []fragMetrics
		alone     []bool // CompactItself
		indexKeys string
	}
	var bins []*bin
	var cur *bin
	for _, f := range frags {
		m, err := metricsOf(ctx, ds, f)
		if err != nil {
			return CompactPlan{}, err
		}
		candidate, alone := false, false
		if materialize && m.physical > 0 && float64(m.deleted)/float64(m.physical) > threshold {
			candidate, alone = true, true
		} else if m.physical < target {
			candidate = true
		}
		key := covering(f.GetId())
		if candidate && key != "" && !stable {
			if why := blocked(f.GetId()); why != "" {
				plan.Excluded = append(plan.Excluded, ExcludedFragment{ID: f.GetId(),
					Reason: "covered by an index lancecat cannot remap: " + why})
				candidate = false
			}
		}
		switch {
		case !candidate:
			if cur != nil {
				bins = append(bins, cur)
				cur = nil
			}
		case cur != nil && cur.indexKeys == key:
			cur.frags = append(cur.frags, m)
			cur.alone = append(cur.alone, alone)
		default:
			if cur != nil {
				bins = append(bins, cur)
			}
			cur = &bin{frags: []fragMetrics{m}, alone: []bool{alone}, indexKeys: key}
		}
	}
	if cur != nil {
		bins = append(bins, cur)
	}
	for _, b := range bins {
		if len(b.frags) == 1 && !b.alone[0] {
			continue // nothing to merge it with, nothing to materialize
		}
		// Lance's split_for_size: take fragments until the bin holds the
		// target rows; cut there only if the rest reaches it too.
		rest := b.frags
		for len(rest) > 0 {
			n, rows := 0, uint64(0)
			for rows < target && n < len(rest) {
				rows += rest[n].live()
				n++
			}
			var after uint64
			for _, m := range rest[n:] {
				after += m.live()
			}
			if after < target {
				n = len(rest)
			}
			t := CompactTask{}
			for _, m := range rest[:n] {
				t.Fragments = append(t.Fragments, m.frag.GetId())
				t.LiveRows += m.live()
			}
			plan.Tasks = append(plan.Tasks, t)
			rest = rest[n:]
		}
	}
	return plan, nil
}

// indexCoverage answers, per fragment id, a key naming the set of indices
// covering it ("" for none; an index without a fragment bitmap is taken to
// cover every fragment), and why one of them cannot be remapped ("" when
// all can).
func indexCoverage(ver *lance.Version, refused map[string]string) (func(uint64) string, func(uint64) string, error) {
	idxs := ver.Indices()
	sets := make([]map[uint64]bool, len(idxs))
	whyNot := make([]string, len(idxs))
	for i, idx := range idxs {
		if ok, why := tableindex.CanRemapIndex(idx); !ok {
			whyNot[i] = why
		} else if why, ok := refused[string(idx.GetUuid().GetUuid())]; ok {
			whyNot[i] = why
		}
		if idx.GetFragmentBitmap() == nil {
			whyNot[i] = fmt.Sprintf("index %s has no fragment bitmap", idx.GetName())
			continue
		}
		ids, err := index.DecodeFragmentBitmap(idx.GetFragmentBitmap())
		if err != nil {
			return nil, nil, fmt.Errorf("index %s: %w", idx.GetName(), err)
		}
		sets[i] = map[uint64]bool{}
		for _, id := range ids {
			sets[i][uint64(id)] = true
		}
	}
	covers := func(i int, id uint64) bool { return sets[i] == nil || sets[i][id] }
	key := func(id uint64) string {
		k := ""
		for i := range sets {
			if covers(i, id) {
				k += fmt.Sprintf("%d,", i)
			}
		}
		return k
	}
	blocked := func(id uint64) string {
		for i := range sets {
			if covers(i, id) && whyNot[i] != "" {
				return whyNot[i]
			}
		}
		return ""
	}
	return key, blocked, nil
}

func metricsOf(ctx context.Context, ds *lance.Dataset, f *tablepb.DataFragment) (fragMetrics, error) {
	m := fragMetrics{frag: f, physical: f.GetPhysicalRows()}
	if del := f.GetDeletionFile(); del != nil {
		m.deleted = del.GetNumDeletedRows()
		if m.deleted == 0 {
			// Older writers did not record the count: read the vector.
			dv, err := lance.ReadDeletionFile(ctx, ds.Store(), f.GetId(), del)
			if err != nil {
				return fragMetrics{}, err
			}
			m.deleted = dv.Len()
		}
	}
	m.deleted = min(m.deleted, m.physical)
	return m, nil
}

// Compact plans ds's latest version and rewrites every task's fragments,
// committed as one Rewrite transaction. A concurrent commit Lance would
// rebase over (an append, a delete of other fragments…) is rebased over; one
// that touched a planned fragment makes Compact plan and rewrite again
// (at most CompactRetries times).
func Compact(ctx context.Context, ds *lance.Dataset, opts CompactOptions) (CompactReport, error) {
	start := time.Now()
	var rep CompactReport
	var err error
	for attempt := 1; ; attempt++ {
		rep, err = compactOnce(ctx, ds, opts)
		rep.Attempts = attempt
		var ur *unremappableError
		if errors.As(err, &ur) && len(opts.unremappable) < 64 {
			// Plan again without the fragments that index covers (not a
			// conflict: no attempt is spent).
			if opts.unremappable == nil {
				opts.unremappable = map[string]string{}
			}
			opts.unremappable[ur.uuid] = ur.reason
			attempt--
			continue
		}
		if err == nil || !errors.Is(err, lance.ErrRetryableConflict) || attempt > CompactRetries {
			break
		}
		select {
		case <-ctx.Done():
			return rep, ctx.Err()
		case <-time.After(time.Duration(attempt) * 10 * time.Millisecond):
		}
	}
	rep.Duration = time.Since(start)
	return rep, err
}

// beforeCommit, when set (tests), runs between writing the new fragments
// and committing them: where a concurrent writer's commit lands.
var beforeCommit func(read *lance.Version)

// CompactRetries is how often Compact starts over after a retryable
// conflict.
const CompactRetries = 5

func compactOnce(ctx context.Context, ds *lance.Dataset, opts CompactOptions) (CompactReport, error) {
	ver, err := ds.OpenLatest(ctx)
	if err != nil {
		return CompactReport{}, err
	}
	plan, err := planAt(ctx, ds, ver, opts)
	if err != nil {
		return CompactReport{}, err
	}
	rep := CompactReport{ReadVersion: ver.Number(), FragmentsBefore: plan.Fragments, FragmentsAfter: plan.Fragments, Excluded: plan.Excluded}
	if len(plan.Tasks) == 0 {
		return rep, nil
	}
	byID := map[uint64]*tablepb.DataFragment{}
	for _, f := range ver.Manifest().GetFragments() {
		byID[f.GetId()] = f
	}
	groups := make([]lance.RewriteGroup, 0, len(plan.Tasks))
	for _, t := range plan.Tasks {
		var old []*tablepb.DataFragment
		for _, id := range t.Fragments {
			old = append(old, byID[id])
		}
		g, rows, err := rewriteTask(ctx, ds, ver, t, old, opts)
		if err != nil {
			return rep, err
		}
		for _, id := range t.Fragments {
			for _, df := range byID[id].GetFiles() {
				rep.BytesRead += df.GetFileSizeBytes()
			}
		}
		for _, f := range g.New {
			for _, df := range f.GetFiles() {
				rep.BytesWritten += df.GetFileSizeBytes()
			}
		}
		rep.RowsRewritten += rows
		rep.FragmentsRemoved += len(g.Old)
		rep.FragmentsAdded += len(g.New)
		groups = append(groups, g)
	}
	var remapped []lance.RewrittenIndex
	if !ver.StableRowIDs() {
		if remapped, err = remapIndices(ctx, ds, ver, groups, &rep); err != nil {
			return rep, err
		}
	}
	if beforeCommit != nil {
		beforeCommit(ver)
	}
	v, err := ds.Commit(ctx, &lance.Rewrite{Groups: groups, Indices: remapped}, lance.CommitOptions{ReadVersion: ver.Number()})
	if err != nil {
		return rep, err
	}
	rep.Version = v.Number()
	rep.FragmentsAfter = len(v.Manifest().GetFragments())
	return rep, nil
}

// rewriteTask writes the live rows of t's fragments, in order, into new
// fragments in the table's data storage version.
func rewriteTask(ctx context.Context, ds *lance.Dataset, ver *lance.Version, t CompactTask, old []*tablepb.DataFragment, opts CompactOptions) (lance.RewriteGroup, uint64, error) {
	schema, err := ver.ArrowSchema()
	if err != nil {
		return lance.RewriteGroup{}, 0, err
	}
	stable := ver.StableRowIDs()
	s, err := ds.Scan(ctx, lance.ScanOptions{At: ver, Fragments: t.Fragments, WithRowID: stable, BatchRows: opts.BatchRows})
	if err != nil {
		return lance.RewriteGroup{}, 0, err
	}
	defer s.Release()
	rs := newRowsOnly(ctx, s, schema, stable)
	frags, err := lance.WriteFragments(ctx, ds.Store(), schema, ver.Fields(), rs, lance.WriteOptions{
		DataStorageVersion: ver.DataStorageVersion(),
		MaxRowsPerFile:     int(opts.target()),
	})
	rs.stop()
	if err == nil {
		err = rs.Err()
	}
	if err != nil {
		return lance.RewriteGroup{}, 0, err
	}
	if rs.rows != t.LiveRows {
		return lance.RewriteGroup{}, 0, fmt.Errorf("maintenance: compaction read %d rows of fragments %v, expected %d live rows", rs.rows, t.Fragments, t.LiveRows)
	}
	if stable {
		// The rows keep their stable row ids (Lance's rechunk_stable_row_ids).
		if err := lance.SetRowIDs(frags, rs.ids); err != nil {
			return lance.RewriteGroup{}, 0, err
		}
		// And the versions they were created and last updated at.
		if err := ds.CarryRowVersions(ctx, ver, old, frags); err != nil {
			return lance.RewriteGroup{}, 0, err
		}
	}
	return lance.RewriteGroup{Old: old, New: frags}, rs.rows, nil
}

// rowsOnly is the scan without its _rowid column (collected in ids). The scan runs in its own
// goroutine, a few batches ahead of the writer: decoding the old files and encoding the new ones
// overlap (Lance's compaction reads and writes concurrently too), instead of taking turns.
type rowsOnly struct {
	schema *arrow.Schema
	ids    []uint64
	rows   uint64
	cur    arrow.RecordBatch
	ch     chan arrow.RecordBatch
	done   chan struct{}
	cancel context.CancelFunc
	err    error // the scan's, once ch is closed
}

// rowsAhead is how many batches the scan may run ahead of the writer.
const rowsAhead = 2

func newRowsOnly(ctx context.Context, s *lance.Scanner, schema *arrow.Schema, keepIDs bool) *rowsOnly {
	ctx, cancel := context.WithCancel(ctx)
	r := &rowsOnly{schema: schema, ch: make(chan arrow.RecordBatch, rowsAhead), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(r.done)
		defer close(r.ch)
		n := schema.NumFields()
		for s.Next() {
			rec := s.RecordBatch()
			if keepIDs {
				r.ids = append(r.ids, rec.Column(int(rec.NumCols())-1).(*array.Uint64).Uint64Values()...)
			}
			r.rows += uint64(rec.NumRows())
			out := array.NewRecordBatch(schema, slices.Clone(rec.Columns()[:n]), rec.NumRows())
			select {
			case r.ch <- out:
			case <-ctx.Done():
				out.Release()
				r.err = ctx.Err()
				return
			}
		}
		r.err = s.Err()
	}()
	return r
}

func (r *rowsOnly) Schema() *arrow.Schema          { return r.schema }
func (r *rowsOnly) RecordBatch() arrow.RecordBatch { return r.cur }

// Err is the scan's error; read only after Next answered false or stop.
func (r *rowsOnly) Err() error {
	select {
	case <-r.done:
		return r.err
	default:
		return nil
	}
}

func (r *rowsOnly) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	rec, ok := <-r.ch
	if !ok {
		<-r.done
		return false
	}
	r.cur = rec
	return true
}

// stop ends the scan (when the writer stopped early) and waits for it: after stop, rows, ids
// and Err are final and the scanner is no longer used.
func (r *rowsOnly) stop() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	r.cancel()
	for rec := range r.ch {
		rec.Release()
	}
	<-r.done
}
