// Package mview backs the spec's query-backed materialized views and computed-column backfill.
//
// A view is a Lance table at the view's id (readable by any Lance client) whose schema metadata
// holds its definition and what it was last refreshed from (MetadataKey). A refresh is a tracked
// job in the view table's task history (maintenance/tasks: GET /v1/table/{id}/tasks shows it),
// runs under the view's refresh lease (lease.go: one at a time across replicas) and commits one
// Lance Overwrite carrying both the rows and the new state, so the state can never describe rows
// other than the ones committed with it. A refresh is incremental when the source only appended
// since the last one: a per-row view (no aggregate, ORDER BY or LIMIT) adds the new fragments'
// rows after its own; an aggregate view continues its groups' accumulators (state.go) over the
// new fragments and rewrites its rows from them. Otherwise it recomputes the view, and says why.
package mview

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/lease"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/maintenance/tasks"
	"github.com/lancecat/lancecat/query"
)

// MetadataKey is the view table's schema metadata key holding its State (JSON).
const MetadataKey = "lancecat.materialized_view"

// TaskKindRefresh is a refresh's kind in the view table's task history.
const TaskKindRefresh = "materialized_view.refresh"

// State is a view's definition and what it was last refreshed from.
type State struct {
	Kind        string   `json:"kind"` // "query"
	SourceQuery string   `json:"source_query"`
	Source      []string `json:"source"` // the source table's id
	// Refreshed is the source version the rows were computed from (nil: never refreshed) and
	// the source's fragments then (id → fingerprint), to tell an append from any other change.
	Refreshed *Refreshed `json:"refreshed,omitempty"`
	// Groups names the group state of an aggregate view's rows (state.go): what an incremental
	// refresh merges appended rows into. nil: none kept (count(DISTINCT), or never refreshed).
	Groups *GroupState `json:"groups,omitempty"`
}

// Refreshed is what the last refresh read.
type Refreshed struct {
	Version   uint64            `json:"version"`
	Fragments map[uint64]string `json:"fragments"`
	// ViewRows is the digest of the view's fragments this refresh committed (viewRowsDigest):
	// the next refresh continues from them only if the view's head still holds exactly them.
	ViewRows string `json:"view_rows,omitempty"`
}

// RefreshResult is a refresh task's result.
type RefreshResult struct {
	Mode string `json:"mode"` // full or incremental
	// Reason says why a refresh recomputed the view instead of merging the source's appends.
	Reason        string `json:"reason,omitempty"`
	SourceVersion uint64 `json:"source_version"`
	// SourceRowsRead is how many source rows the refresh read (after an append, incremental: the
	// appended fragments' rows only).
	SourceRowsRead int64  `json:"source_rows_read"`
	Rows           int64  `json:"rows"` // view rows the refresh wrote (per-row incremental: the new ones)
	ViewVersion    uint64 `json:"view_version"`
}

// Service creates and refreshes views in a catalog.
type Service struct {
	Catalog catalog.Catalog
	Holder  string // the replica, as task records and refresh leases name it (default host:pid)
	// Heartbeat is how often a running refresh renews its lease and task record (0:
	// DefaultRefreshHeartbeat); StaleAfter is how long a lease or task may go unrenewed before
	// another replica may take over (0: DefaultRefreshStaleAfter). Several heartbeats.
	Heartbeat, StaleAfter time.Duration
	// Now is the clock of leases and task records (tests); nil: time.Now.
	Now func() time.Time

	jobs sync.WaitGroup
	// hook, when set (tests), runs at named points of a job: fault injection.
	hook func(point string) error
}

// Wait waits for the refresh and backfill jobs started so far (tests, shutdown).
func (s *Service) Wait() { s.jobs.Wait() }

// SourceOf resolves the table a view's query reads: a one-part name is in the view's
// namespace, a dotted one is a full id.
func SourceOf(view ident.ID, q *Query) ident.ID {
	if len(q.From) == 1 {
		return append(slices.Clone(view[:len(view)-1]), q.From[0])
	}
	return slices.Clone(q.From)
}

// Definition parses sql and resolves its source (for the caller's authorization).
func Definition(view ident.ID, sql string) (*Query, ident.ID, error) {
	q, err := Parse(sql)
	if err != nil {
		return nil, nil, err
	}
	return q, SourceOf(view, q), nil
}

// QuerySource is the table sql reads as the source of view (for the caller's authorization,
// before Create): an error when sql does not parse.
func (s *Service) QuerySource(view ident.ID, sql string) (ident.ID, error) {
	_, src, err := Definition(view, sql)
	return src, err
}

// source loads the source table and opens the version to read (nil: latest).
func (s *Service) source(ctx context.Context, id ident.ID, version *int64) (*lance.Dataset, *lance.Version, error) {
	t, err := s.Catalog.LoadTable(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	ds, err := t.Dataset()
	if err != nil {
		return nil, nil, err
	}
	var ver *lance.Version
	if version != nil {
		ver, err = ds.OpenVersion(ctx, uint64(*version))
	} else {
		ver, err = ds.OpenLatest(ctx)
	}
	if errors.Is(err, lance.ErrDatasetNotFound) {
		return nil, nil, nserr.TableNotFoundf("source table %s has no data yet", strings.Join(id, "."))
	}
	if errors.Is(err, lance.ErrVersionNotFound) {
		return nil, nil, nserr.TableVersionNotFoundf("source table %s has no version %d", strings.Join(id, "."), *version)
	}
	if err != nil {
		return nil, nil, err
	}
	return ds, ver, nil
}

// planFor binds q to the columns of ver it reads, in that order: the schema of the scans that
// feed it (a plan binds column positions).
func planFor(q *Query, ver *lance.Version) (*Plan, error) {
	schema, err := ver.ArrowSchema()
	if err != nil {
		return nil, err
	}
	full, err := NewPlan(q, schema)
	if err != nil {
		return nil, err
	}
	cols := full.Columns
	if len(cols) == 0 && schema.NumFields() > 0 {
		cols = []string{schema.Field(0).Name} // count(*) alone: read the narrowest thing we can name
	}
	var fields []arrow.Field
	for _, c := range cols {
		for _, f := range schema.Fields() {
			if f.Name == c {
				fields = append(fields, f)
			}
		}
	}
	p, err := NewPlan(q, arrow.NewSchema(fields, nil))
	if err != nil {
		return nil, err
	}
	p.Columns = cols
	return p, nil
}

// Create creates view id for sql over its source: the view's table with the query's schema,
// empty. Unless withNoData, a refresh job is started and its id answered.
func (s *Service) Create(ctx context.Context, id ident.ID, sql string, withNoData bool) (uint64, string, error) {
	if len(id) < 1 {
		return 0, "", nserr.InvalidInputf("a materialized view needs an id")
	}
	q, src, err := Definition(id, sql)
	if err != nil {
		return 0, "", err
	}
	if slices.Equal(src, id) {
		return 0, "", nserr.InvalidInputf("a materialized view cannot read itself")
	}
	_, ver, err := s.source(ctx, src, nil)
	if err != nil {
		return 0, "", err
	}
	p, err := planFor(q, ver)
	if err != nil {
		return 0, "", err
	}
	st, err := json.Marshal(State{Kind: "query", SourceQuery: sql, Source: src})
	if err != nil {
		return 0, "", err
	}
	md := arrow.NewMetadata([]string{MetadataKey}, []string{string(st)})
	schema := arrow.NewSchema(p.Schema().Fields(), &md)
	_, v, err := s.Catalog.CreateTable(ctx, id, catalog.NewTable{Schema: schema})
	if err != nil {
		return 0, "", err
	}
	if withNoData {
		return v, "", nil
	}
	job, err := s.Refresh(ctx, id, nil)
	return v, job, err
}

// view loads view id and its state.
func (s *Service) view(ctx context.Context, id ident.ID) (catalog.Table, *lance.Dataset, *lance.Version, State, error) {
	t, err := s.Catalog.LoadTable(ctx, id)
	if err != nil {
		return nil, nil, nil, State{}, err
	}
	ds, err := t.Dataset()
	if err != nil {
		return nil, nil, nil, State{}, err
	}
	ver, err := ds.OpenLatest(ctx)
	if err != nil {
		return nil, nil, nil, State{}, err
	}
	raw, ok := ver.Manifest().GetSchemaMetadata()[MetadataKey]
	var st State
	if !ok || json.Unmarshal(raw, &st) != nil || st.Kind != "query" {
		return nil, nil, nil, State{}, nserr.InvalidInputf("table %s is not a materialized view of this server", strings.Join(id, "."))
	}
	return t, ds, ver, st, nil
}

// Source is the source table of view id (for the caller's authorization).
func (s *Service) Source(ctx context.Context, id ident.ID) (ident.ID, error) {
	_, _, _, st, err := s.view(ctx, id)
	return st.Source, err
}

// Refresh starts a refresh job of view id (from the source's version srcVersion; nil: latest)
// and answers its id. The job holds the view's refresh lease (lease.go): while another refresh
// of the view runs, on this replica or another, the answer is ConcurrentModification (409)
// naming it. The job runs after the request (its context's values, not its cancellation); its
// record in the view's task history says how it ended.
func (s *Service) Refresh(ctx context.Context, id ident.ID, srcVersion *int64) (string, error) {
	if srcVersion != nil && *srcVersion <= 0 {
		return "", nserr.InvalidInputf("src_version %d is not a table version (1 or more)", *srcVersion)
	}
	_, ds, _, st, err := s.view(ctx, id)
	if err != nil {
		return "", err
	}
	if _, err := Parse(st.SourceQuery); err != nil {
		return "", err
	}
	l, err := s.acquireRefresh(ctx, ds.Store(), id)
	if err != nil {
		return "", err
	}
	log := &tasks.Log{Store: ds.Store(), Now: s.Now}
	task, err := log.Start(ctx, tasks.Spec{Kind: TaskKindRefresh, Table: id, Origin: "door", Holder: s.holder(), StaleAfter: s.staleAfter()})
	if err != nil {
		_ = l.Release(ctx)
		return "", err
	}
	jobID := task.Record().ID
	l.SetTask(jobID)
	if err := l.Renew(context.WithoutCancel(ctx)); err != nil {
		_ = task.Finish(ctx, nil, err)
		return "", err
	}
	jobCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.jobs.Add(1)
	go func() {
		defer s.jobs.Done()
		defer cancel()
		s.runRefresh(jobCtx, l, task, id, srcVersion)
	}()
	return jobID, nil
}

// runRefresh is one refresh job under its lease: a heartbeat renews the lease and the task record
// while it works and cancels it when either is lost; the task ends with the result or the error,
// and the lease is released.
func (s *Service) runRefresh(ctx context.Context, l *lease.Lease, task *tasks.Task, id ident.ID, srcVersion *int64) {
	// The heartbeat writes the task after the lease; stop waits for it, so the task's writes
	// (one ETag) never overlap.
	work, stop := l.Hold(ctx, s.heartbeat(), func(ctx context.Context) error {
		return task.Progress(context.WithoutCancel(ctx), map[string]string{"phase": "refreshing"})
	})
	if s.hook != nil {
		context.AfterFunc(work, func() {
			if c := context.Cause(work); c != nil && !errors.Is(c, context.Canceled) {
				_ = s.hook("refresh.lease_lost")
			}
		})
	}
	res, err := s.refresh(work, l.Check, id, srcVersion)
	lost := stop()
	switch {
	case lost != nil && err != nil:
		err = fmt.Errorf("lost the refresh lease or task record (another replica took over): %w", errors.Join(lost, err))
	case errors.Is(err, lease.ErrLost): // the check before the commit
		err = fmt.Errorf("lost the refresh lease (not renewed in time: another replica may take over): %w", err)
	}
	var result any
	if err == nil {
		result = res
	}
	// The lease first: a client that saw the task end may refresh again at once.
	if lost == nil {
		_ = l.Release(ctx)
	}
	_ = task.Finish(ctx, result, err)
}

// fingerprint names a fragment's content: its files and deletion file. Equal fingerprints at
// two versions mean the fragment's rows did not change.
func fingerprint(f *tablepb.DataFragment) string {
	var b strings.Builder
	for _, df := range f.GetFiles() {
		b.WriteString(df.GetPath())
		b.WriteByte(';')
	}
	if d := f.GetDeletionFile(); d != nil {
		fmt.Fprintf(&b, "del:%d:%d", d.GetId(), d.GetReadVersion())
	}
	return b.String()
}

func fingerprints(ver *lance.Version) map[uint64]string {
	out := map[uint64]string{}
	for _, f := range ver.Manifest().GetFragments() {
		out[f.GetId()] = fingerprint(f)
	}
	return out
}

// appended answers the fragments of ver added since r, or ok false when anything other than
// appends happened (a fragment changed or went away).
func appended(r *Refreshed, ver *lance.Version) (added []uint64, ok bool) {
	now := fingerprints(ver)
	for id, fp := range r.Fragments {
		if now[id] != fp {
			return nil, false
		}
	}
	for _, f := range ver.Manifest().GetFragments() {
		if _, old := r.Fragments[f.GetId()]; !old {
			added = append(added, f.GetId())
		}
	}
	return added, true
}

// refresh is one refresh job: incremental when it can be (see incrementalBlocker), else a full
// recompute whose reason the result records.
func (s *Service) refresh(ctx context.Context, held func() error, id ident.ID, srcVersion *int64) (RefreshResult, error) {
	vt, vds, vver, st, err := s.view(ctx, id)
	if err != nil {
		return RefreshResult{}, err
	}
	q, err := Parse(st.SourceQuery)
	if err != nil {
		return RefreshResult{}, err
	}
	sds, sver, err := s.source(ctx, st.Source, srcVersion)
	if err != nil {
		return RefreshResult{}, err
	}
	p, err := planFor(q, sver)
	if err != nil {
		return RefreshResult{}, err
	}
	res := RefreshResult{Mode: "full", SourceVersion: sver.Number()}
	added, reason := incrementalBlocker(st, vver, sver, p)
	var seed arrow.RecordBatch
	if reason == "" && p.agg {
		if st.Groups == nil {
			reason = "the view's last refresh kept no group state"
		} else if seed, err = readState(ctx, vds.Store(), st.Groups, p); err != nil {
			reason = "the group state is unreadable (" + err.Error() + ")"
		}
	}
	if seed != nil {
		defer seed.Release()
	}
	// The group state the new head names: kept when nothing new was read, written anew otherwise;
	// none for a plan that cannot merge (count(DISTINCT)) or has no groups (per-row).
	keepState := p.agg && p.mergeBlocker() == ""
	var rec, state arrow.RecordBatch
	keep := false // keep the view's fragments and add rec's rows after them
	counted := &countingBatches{}
	switch {
	case reason == "" && !p.agg:
		res.Mode, keep = "incremental", true
		if len(added) > 0 {
			scan, err := sds.Scan(ctx, lance.ScanOptions{At: sver, Columns: p.Columns, Fragments: added})
			if err != nil {
				return res, err
			}
			counted.Batches = scan
			rec, err = p.Run(ctx, counted, false)
			scan.Release()
			if err != nil {
				return res, err
			}
		}
	case reason == "" && len(added) == 0:
		// Aggregate, nothing appended: the rows and their state stay as they are.
		res.Mode, keep = "incremental", true
	case reason == "":
		// Aggregate over appends: continue the groups' accumulators over the new fragments only.
		res.Mode = "incremental"
		scan, err := sds.Scan(ctx, lance.ScanOptions{At: sver, Columns: p.Columns, Fragments: added})
		if err != nil {
			return res, err
		}
		counted.Batches = scan
		rec, state, err = p.RunState(ctx, counted, false, seed, true)
		scan.Release()
		if err != nil {
			return res, err
		}
	default:
		res.Reason = reason
		req := query.Request{At: sver, Columns: p.Columns}
		if q.Where != nil {
			req.Filter = q.Where.String()
		}
		rr, err := query.Run(ctx, sds, req)
		if err != nil {
			return res, err
		}
		counted.Batches = rr
		rec, state, err = p.RunState(ctx, counted, true, nil, keepState)
		rr.Release()
		if err != nil {
			return res, err
		}
	}
	res.SourceRowsRead = counted.rows
	if rec != nil {
		defer rec.Release()
		res.Rows = rec.NumRows()
	}
	groups := st.Groups
	if state != nil {
		defer state.Release()
		if groups, err = writeState(ctx, vds.Store(), state); err != nil {
			return res, err
		}
	} else if !keepState || !keep {
		groups = nil
	}
	if s.hook != nil {
		if err := s.hook("refresh.before_commit"); err != nil {
			return res, err
		}
	}
	// The lease keeps other refreshes out; a refresh whose lease was taken over while it worked
	// (a stalled replica), or a write to the view table meanwhile, must not land now.
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if err := held(); err != nil {
		return res, err
	}
	if head, err := vds.OpenLatest(ctx); err != nil {
		return res, err
	} else if head.Number() != vver.Number() {
		return res, nserr.ConcurrentModificationf("materialized view %s: version %d was committed while this refresh worked from version %d; nothing committed",
			strings.Join(id, "."), head.Number(), vver.Number())
	}
	st.Refreshed = &Refreshed{Version: sver.Number(), Fragments: fingerprints(sver)}
	st.Groups = groups
	v, err := s.commitView(ctx, vt, vds, vver, p.Schema(), st, rec, keep, res.Mode)
	if err != nil {
		return res, err
	}
	res.ViewVersion = v.Number()
	// Housekeeping under the lease: the state files the new head does not name (the replaced
	// head's, a crashed refresh's) are no refresh's to continue from (a refresh starts from the
	// head, and a head that is not a refresh's commit recomputes). A failure leaves stray files.
	keepPath := ""
	if groups != nil {
		keepPath = groups.Path
	}
	sweepStates(context.WithoutCancel(ctx), vds.Store(), keepPath)
	return res, nil
}

// incrementalBlocker answers the source fragments appended since the view's last refresh, or
// why the refresh must recompute the view ("" when it need not).
func incrementalBlocker(st State, vver, sver *lance.Version, p *Plan) ([]uint64, string) {
	if st.Refreshed == nil {
		return nil, "first refresh"
	}
	if r := p.mergeBlocker(); r != "" {
		return nil, r
	}
	if st.Refreshed.ViewRows == "" {
		return nil, "the view's last refresh recorded no digest of its rows (it predates incremental aggregate refresh)"
	}
	if _, ok := vver.Transaction().GetOperation().(*tablepb.Transaction_Overwrite_); !ok ||
		st.Refreshed.ViewRows != viewRowsDigest(vver.Manifest().GetFragments()) {
		return nil, fmt.Sprintf("the view table was written since its last refresh (version %d is not that refresh's commit)", vver.Number())
	}
	if sver.Number() < st.Refreshed.Version {
		return nil, fmt.Sprintf("source version %d is older than version %d the view was refreshed from", sver.Number(), st.Refreshed.Version)
	}
	if vschema, err := vver.ArrowSchema(); err != nil || !sameFields(vschema, p.Schema()) {
		return nil, "the view's schema is not its query's over the source's schema now"
	}
	added, ok := appended(st.Refreshed, sver)
	if !ok {
		return nil, fmt.Sprintf("the source changed other than by appends since version %d (rows deleted, updated or rewritten)", st.Refreshed.Version)
	}
	return added, ""
}

// viewRowsDigest names the rows of a view's fragments (their files and deletion files), so a
// refresh can tell that the view's head holds exactly what the last refresh committed.
func viewRowsDigest(frags []*tablepb.DataFragment) string {
	fps := make([]string, len(frags))
	for i, f := range frags {
		fps[i] = fingerprint(f)
	}
	slices.Sort(fps)
	sum := sha256.Sum256([]byte(strings.Join(fps, "\n")))
	return hex.EncodeToString(sum[:])
}

// countingBatches counts the source rows a refresh read.
type countingBatches struct {
	Batches
	rows int64
}

func (c *countingBatches) Next() bool {
	if !c.Batches.Next() {
		return false
	}
	c.rows += c.RecordBatch().NumRows()
	return true
}

func sameFields(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.Fields() {
		if a.Field(i).Name != b.Field(i).Name || !arrow.TypeEqual(a.Field(i).Type, b.Field(i).Type) {
			return false
		}
	}
	return true
}

// commitView writes rec as new fragments of the view and commits one Overwrite holding them
// (after the view's current fragments when keep) and the new state, through the view table's
// handle t (CommitPrepared: the catalog's layers see the refresh); mode is the refresh's.
func (s *Service) commitView(ctx context.Context, t catalog.Table, ds *lance.Dataset, head *lance.Version, schema *arrow.Schema, st State, rec arrow.RecordBatch, keep bool, mode string) (*lance.Version, error) {
	fields := head.Fields()
	if !keep {
		var err error
		if fields, err = lancefile.LanceFields(schema, 0); err != nil {
			return nil, err
		}
	}
	var frags []*tablepb.DataFragment
	if keep {
		// Kept fragments keep their ids (fragment 0 first: an id of 0 is what the commit
		// numbers), the new ones are numbered after them.
		for _, f := range head.Manifest().GetFragments() {
			frags = append(frags, proto.CloneOf(f))
		}
		slices.SortFunc(frags, func(a, b *tablepb.DataFragment) int { return int(a.GetId()) - int(b.GetId()) })
	}
	if rec != nil && rec.NumRows() > 0 {
		written, err := lance.WriteFragments(ctx, ds.Store(), schema, fields, &oneBatch{rec: rec, schema: schema},
			lance.WriteOptions{DataStorageVersion: head.DataStorageVersion()})
		if err != nil {
			return nil, err
		}
		next := uint64(0)
		for _, f := range frags {
			next = max(next, f.GetId()+1)
		}
		for _, f := range written {
			if len(frags) > 0 {
				f.Id = next
				next++
			}
			frags = append(frags, f)
		}
	}
	if st.Refreshed != nil {
		st.Refreshed.ViewRows = viewRowsDigest(frags)
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	md := map[string][]byte{}
	for k, v := range head.Manifest().GetSchemaMetadata() {
		md[k] = v
	}
	md[MetadataKey] = raw
	return t.CommitPrepared(ctx, catalog.PreparedCommit{
		What: catalog.PreparedViewRefreshed, ReadVersion: head.Number(), Attrs: map[string]string{"mode": mode},
		Op: &lance.Overwrite{Fragments: frags, Schema: fields, SchemaMetadata: md, DataStorageVersion: head.DataStorageVersion()},
	})
}

// oneBatch streams one record.
type oneBatch struct {
	rec    arrow.RecordBatch
	schema *arrow.Schema
	done   bool
}

func (o *oneBatch) Schema() *arrow.Schema { return o.schema }
func (o *oneBatch) Next() bool {
	if o.done {
		return false
	}
	o.done = true
	return true
}
func (o *oneBatch) RecordBatch() arrow.RecordBatch { return o.rec }
func (o *oneBatch) Err() error                     { return nil }
