package mview

// Computed columns and their backfill. A computed column is declared with a SQL expression over
// the row (add_columns `computed`): the column joins the schema all-null without a byte of data
// (a Lance Merge commit of the same fragments and the new schema; a fragment without a file for
// a field reads it as null, in Lance as here), its expression kept in the field's metadata
// (ComputedKey). A backfill fills it as a job in the table's task history: fragment by fragment,
// each fragment's values are written as a new data file holding only the column, and every
// batch of fragments is one commit (the checkpoint), after which the job records which
// fragments it filled (with their fingerprint). A backfill of the same column and filter whose
// job did not finish (crashed, cut off, failed) resumes: the fragments it filled and that did
// not change since are skipped.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/dml"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/expr"
	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/pb/filepb"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/maintenance/tasks"
)

// ComputedKey is the field metadata key holding a computed column's expression.
const ComputedKey = "lancecat.computed"

// TaskKindBackfill is a backfill's kind in the table's task history.
const TaskKindBackfill = "backfill"

// DefaultBackfillBatch is how many fragments one backfill commit (checkpoint) fills.
const DefaultBackfillBatch = 8

// maxBackfillRounds bounds how often a backfill looks again for fragments other writers
// replaced during it (a writer appending without end must not keep it running).
const maxBackfillRounds = 3

// tombstone is Lance's field id of a field a data file no longer provides (a later file does).
const tombstone = -2

// DeclareComputed adds computed columns to table t's schema, all-null, each with its
// expression in its field metadata; their types are the expressions' over the table's columns.
// It answers the version it committed. The commit is the handle's (CommitPrepared), so the
// catalog's layers see the write (catalog/governed records its event).
func (s *Service) DeclareComputed(ctx context.Context, t catalog.Table, cols []catalog.ComputedColumn) (uint64, error) {
	v, err := declareComputed(ctx, t, cols)
	if err != nil {
		return 0, err
	}
	return v.Number(), nil
}

func declareComputed(ctx context.Context, t catalog.Table, cols []catalog.ComputedColumn) (*lance.Version, error) {
	ds, err := t.Dataset()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	for attempt := 0; ; attempt++ {
		head, err := ds.OpenLatest(ctx)
		if err != nil {
			return nil, err
		}
		schema, err := head.ArrowSchema()
		if err != nil {
			return nil, err
		}
		var fields []arrow.Field
		for _, c := range cols {
			if c.Name == "" || strings.Contains(c.Name, ".") {
				return nil, nserr.InvalidInputf("computed column name %q is not valid", c.Name)
			}
			if hasField(schema, c.Name) || slices.ContainsFunc(fields, func(f arrow.Field) bool { return strings.EqualFold(f.Name, c.Name) }) {
				return nil, nserr.InvalidInputf("column %q already exists", c.Name)
			}
			b, err := expr.Compile(c.Expr, schema)
			if err != nil {
				return nil, err
			}
			if b.Type().ID() == arrow.NULL {
				return nil, nserr.InvalidInputf("the type of computed column %q (%s) is unknown; CAST it", c.Name, c.Expr)
			}
			md := arrow.NewMetadata([]string{ComputedKey}, []string{c.Expr})
			fields = append(fields, arrow.Field{Name: c.Name, Type: b.Type(), Nullable: true, Metadata: md})
		}
		added, err := lancefile.LanceFields(arrow.NewSchema(fields, nil), head.MaxFieldID()+1)
		if err != nil {
			return nil, nserr.InvalidInputf("computed columns: %v", err)
		}
		v, err := t.CommitPrepared(ctx, catalog.PreparedCommit{
			What: catalog.PreparedColumnsDeclared, Columns: names, ReadVersion: head.Number(),
			Op: &lance.Merge{
				Fragments: head.Manifest().GetFragments(), Schema: append(slices.Clone(head.Fields()), added...),
				SchemaMetadata: head.Manifest().GetSchemaMetadata(),
			},
		})
		if errors.Is(err, lance.ErrCommitConflict) && attempt < 3 {
			continue
		}
		return v, err
	}
}

// backfillProgress is a backfill task's checkpoint.
type backfillProgress struct {
	Column string            `json:"column"`
	Expr   string            `json:"expr"`
	Where  string            `json:"where,omitempty"`
	Total  int               `json:"total"`
	Filled map[uint64]string `json:"filled"` // fragment id → fingerprint after its commit
}

// BackfillResult is a backfill task's result.
type BackfillResult struct {
	Column    string `json:"column"`
	Filled    int    `json:"fragments_filled"`
	Resumed   int    `json:"fragments_resumed"` // skipped: filled by an earlier unfinished job
	Commits   int    `json:"commits"`
	Version   uint64 `json:"version"`
	ResumedOf string `json:"resumed_of,omitempty"`
}

// errCrash is what a test's fault hook answers to cut a job off as a crash would: its record is
// left running (its writer "died").
var errCrash = errors.New("mview: simulated crash")

// computedOf finds column's field and its expression; UDF-backed (virtual) columns are
// Unsupported with why.
func computedOf(ver *lance.Version, column string) (*filepb.Field, string, error) {
	var f *filepb.Field
	for _, x := range ver.Fields() {
		if x.GetParentId() == -1 && x.GetName() == column {
			f = x
		}
	}
	if f == nil {
		return nil, "", nserr.Newf(nserr.TableColumnNotFound, "column %q not found", column)
	}
	e, ok := f.GetMetadata()[ComputedKey]
	if ok {
		return f, string(e), nil
	}
	for k := range f.GetMetadata() {
		if strings.Contains(strings.ToLower(k), "udf") || strings.Contains(strings.ToLower(k), "virtual") {
			return nil, "", nserr.Unsupportedf("column %q is a virtual (UDF-backed) column: backfilling it runs user code (a pickled Python UDF in a worker runtime), and this server has no user-code runtime; columns declared with a SQL expression (add_columns computed) are backfilled", column)
		}
	}
	return nil, "", nserr.InvalidInputf("column %q is not a computed column (declare one with add_columns computed)", column)
}

// Backfill starts a backfill job of req's computed column in table t and answers its id. Its
// checkpoints are commits of the handle (CommitPrepared), so the catalog's layers see each.
func (s *Service) Backfill(ctx context.Context, t catalog.Table, req catalog.BackfillRequest) (string, error) {
	// A batch larger than the table is the whole table in one commit (backfill takes
	// min(batch, fragments left)): only a negative one is wrong.
	if req.Batch < 0 {
		return "", nserr.InvalidInputf("checkpoint_size %d must be positive (fragments per commit; 0 is the default %d)", req.Batch, DefaultBackfillBatch)
	}
	ds, err := t.Dataset()
	if err != nil {
		return "", err
	}
	head, err := ds.OpenLatest(ctx)
	if err != nil {
		return "", err
	}
	_, e, err := computedOf(head, req.Column)
	if err != nil {
		return "", err
	}
	if _, err := s.backfillExpr(head, req.Column, e, req.Where); err != nil {
		return "", err
	}
	log := &tasks.Log{Store: ds.Store()}
	// An unfinished backfill of the same column, expression and filter: resume from its
	// checkpoint.
	prev := backfillProgress{}
	resumedOf := ""
	if recs, err := log.List(ctx); err == nil {
		for _, r := range recs {
			var p backfillProgress
			if r.Kind != TaskKindBackfill || json.Unmarshal(r.Progress, &p) != nil || p.Column != req.Column {
				continue
			}
			if r.State != tasks.StateSucceeded && p.Expr == e && p.Where == req.Where {
				prev, resumedOf = p, r.ID
			}
			break // the newest backfill of the column decides
		}
	}
	task, err := log.Start(ctx, tasks.Spec{Kind: TaskKindBackfill, Table: req.Table, Origin: "door", Holder: s.Holder})
	if err != nil {
		return "", err
	}
	id := task.Record().ID
	jobCtx := context.WithoutCancel(ctx)
	s.jobs.Add(1)
	go func() {
		defer s.jobs.Done()
		res, err := s.backfill(jobCtx, t, ds, task, req, e, prev)
		res.ResumedOf = resumedOf
		if errors.Is(err, errCrash) {
			return
		}
		_ = task.Finish(jobCtx, res, err)
	}()
	return id, nil
}

// backfillExpr binds the value a backfill writes: the expression, or under a filter CASE WHEN
// filter THEN expression ELSE the column END (the other rows keep their value).
func (s *Service) backfillExpr(ver *lance.Version, column, e, where string) (expr.Expr, error) {
	x, err := expr.Parse(e)
	if err != nil {
		return nil, err
	}
	selfRef := false
	expr.VisitColumns(x, func(c *expr.Column) { selfRef = selfRef || strings.EqualFold(c.Path[0], column) })
	if selfRef {
		return nil, nserr.InvalidInputf("computed column %q refers to itself", column)
	}
	if where != "" {
		w, err := expr.Parse(where)
		if err != nil {
			return nil, err
		}
		x = &expr.Case{Whens: []expr.When{{Cond: w, Then: x}}, Else: col(0, column)}
	}
	schema, err := ver.ArrowSchema()
	if err != nil {
		return nil, err
	}
	b, err := expr.Bind(x, schema)
	if err != nil {
		return nil, err
	}
	f, _ := schema.FieldsByName(column)
	if len(f) == 1 && !arrow.TypeEqual(f[0].Type, b.Type()) {
		return nil, nserr.InvalidInputf("computed column %q is %s but its expression is %s now", column, f[0].Type, b.Type())
	}
	return x, nil
}

func (s *Service) backfill(ctx context.Context, t catalog.Table, ds *lance.Dataset, task *tasks.Task, req catalog.BackfillRequest, e string, prev backfillProgress) (BackfillResult, error) {
	res := BackfillResult{Column: req.Column}
	batch := req.Batch
	if batch <= 0 {
		batch = DefaultBackfillBatch
	}
	head, err := ds.OpenLatest(ctx)
	if err != nil {
		return res, err
	}
	prog := backfillProgress{Column: req.Column, Expr: e, Where: req.Where, Filled: map[uint64]string{}}
	var todo []uint64
	for _, f := range head.Manifest().GetFragments() {
		if fp, ok := prev.Filled[f.GetId()]; ok && fp == fingerprint(f) {
			prog.Filled[f.GetId()] = fp
			res.Resumed++
			continue
		}
		todo = append(todo, f.GetId())
	}
	prog.Total = len(head.Manifest().GetFragments())
	if err := task.Progress(ctx, prog); err != nil {
		return res, err
	}
	res.Version = head.Number()
	for round := 0; len(todo) > 0; {
		n := min(batch, len(todo))
		ver, err := s.fillBatch(ctx, t, ds, req, e, todo[:n])
		if err != nil {
			return res, err
		}
		res.Version = ver.Number()
		res.Commits++
		res.Filled += n
		for _, f := range ver.Manifest().GetFragments() {
			if slices.Contains(todo[:n], f.GetId()) {
				prog.Filled[f.GetId()] = fingerprint(f)
			}
		}
		todo = todo[n:]
		if err := task.Progress(ctx, prog); err != nil {
			return res, err
		}
		if s.hook != nil {
			if err := s.hook("backfill.checkpoint"); err != nil {
				return res, err
			}
		}
		if len(todo) == 0 && round < maxBackfillRounds {
			// Another writer may have replaced fragments meanwhile (a compaction rewrites
			// them under new ids): fill what the head holds that this job did not.
			round++
			head, err := ds.OpenLatest(ctx)
			if err != nil {
				return res, err
			}
			for _, f := range head.Manifest().GetFragments() {
				if fp, ok := prog.Filled[f.GetId()]; !ok || fp != fingerprint(f) {
					todo = append(todo, f.GetId())
				}
			}
			prog.Total = len(head.Manifest().GetFragments())
		}
	}
	return res, nil
}

// fillBatch fills the column in fragments ids and commits them (retrying on the new head when
// another writer committed meanwhile).
func (s *Service) fillBatch(ctx context.Context, t catalog.Table, ds *lance.Dataset, req catalog.BackfillRequest, e string, ids []uint64) (*lance.Version, error) {
	for attempt := 0; ; attempt++ {
		head, err := ds.OpenLatest(ctx)
		if err != nil {
			return nil, err
		}
		field, cur, err := computedOf(head, req.Column)
		if err != nil {
			return nil, err
		}
		if cur != e {
			return nil, nserr.Newf(nserr.ConcurrentModification, "computed column %q was redeclared during its backfill", req.Column)
		}
		x, err := s.backfillExpr(head, req.Column, e, req.Where)
		if err != nil {
			return nil, err
		}
		frags := cloneAll(head.Manifest().GetFragments())
		for _, f := range frags {
			if !slices.Contains(ids, f.GetId()) {
				continue
			}
			if err := s.fillFragment(ctx, ds, head, field, x, f); err != nil {
				return nil, err
			}
		}
		v, err := t.CommitPrepared(ctx, catalog.PreparedCommit{
			What: catalog.PreparedColumnFilled, Columns: []string{req.Column}, ReadVersion: head.Number(),
			Op:    &lance.Merge{Fragments: frags, Schema: head.Fields(), SchemaMetadata: head.Manifest().GetSchemaMetadata()},
			Attrs: map[string]string{"fragments": strconv.Itoa(len(ids))},
		})
		if errors.Is(err, lance.ErrCommitConflict) && attempt < 5 {
			continue // the written files are orphans the orphan scan reports
		}
		return v, err
	}
}

func cloneAll(frags []*tablepb.DataFragment) []*tablepb.DataFragment {
	out := make([]*tablepb.DataFragment, len(frags))
	for i, f := range frags {
		out[i] = proto.CloneOf(f)
	}
	return out
}

// fillFragment computes the column over every physical row of fragment f (deleted ones too, so
// the file lines up with the fragment's others), writes it as a data file holding only the
// column, and makes f read the column from it: files holding only the column go, the column's
// ids in other files are tombstoned.
func (s *Service) fillFragment(ctx context.Context, ds *lance.Dataset, head *lance.Version, field *filepb.Field, x expr.Expr, f *tablepb.DataFragment) error {
	schema, err := head.ArrowSchema()
	if err != nil {
		return err
	}
	var read []string
	expr.VisitColumns(x, func(c *expr.Column) {
		for _, sf := range schema.Fields() {
			if strings.EqualFold(sf.Name, c.Path[0]) && !slices.Contains(read, sf.Name) {
				read = append(read, sf.Name)
			}
		}
	})
	if len(read) == 0 {
		read = []string{schema.Field(0).Name}
	}
	var scanFields []arrow.Field
	for _, c := range read {
		sf, _ := schema.FieldsByName(c)
		scanFields = append(scanFields, sf[0])
	}
	b, err := expr.Bind(x, arrow.NewSchema(scanFields, nil))
	if err != nil {
		return err
	}
	ids := subtree(head.Fields(), field.GetId())
	var colFields []*filepb.Field
	for _, lf := range head.Fields() {
		if slices.Contains(ids, lf.GetId()) {
			colFields = append(colFields, lf)
		}
	}
	outField, _ := schema.FieldsByName(field.GetName())
	out := arrow.NewSchema([]arrow.Field{outField[0]}, nil)
	scan, err := ds.Scan(ctx, lance.ScanOptions{At: head.WithoutDeletions(), Columns: read, Fragments: []uint64{f.GetId()}})
	if err != nil {
		return err
	}
	defer scan.Release()
	ms := dml.MapScan(scan, out, func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
		a, err := b.Eval(ctx, rec)
		if err != nil {
			return nil, err
		}
		defer a.Release()
		return array.NewRecordBatch(out, []arrow.Array{a}, rec.NumRows()), nil
	})
	opts := lance.WriteOptions{DataStorageVersion: head.DataStorageVersion(), MaxRowsPerFile: 1 << 31, MaxBytesPerFile: 1 << 62}
	written, err := lance.WriteFragments(ctx, ds.Store(), out, colFields, ms, opts)
	ms.Release()
	if err != nil {
		return err
	}
	if err := ms.Err(); err != nil {
		return err
	}
	rows := uint64(0)
	for _, w := range written {
		rows += w.GetPhysicalRows()
	}
	if len(written) > 1 || rows != f.GetPhysicalRows() {
		return fmt.Errorf("mview: fragment %d: wrote %d rows for its %d", f.GetId(), rows, f.GetPhysicalRows())
	}
	kept := f.GetFiles()[:0:0]
	for _, df := range f.GetFiles() {
		only := true
		for _, id := range df.GetFields() {
			if !slices.Contains(ids, id) && id != tombstone {
				only = false
			}
		}
		if only {
			continue // a file of nothing but this column (an earlier backfill's): replaced
		}
		df = proto.CloneOf(df)
		for i, id := range df.GetFields() {
			if slices.Contains(ids, id) {
				df.Fields[i] = tombstone
			}
		}
		kept = append(kept, df)
	}
	if len(written) == 1 {
		kept = append(kept, written[0].GetFiles()...)
	}
	f.Files = kept
	return nil
}

// subtree is id and the ids of its descendants.
func subtree(fields []*filepb.Field, id int32) []int32 {
	out := []int32{id}
	for changed := true; changed; {
		changed = false
		for _, f := range fields {
			if slices.Contains(out, f.GetParentId()) && !slices.Contains(out, f.GetId()) {
				out = append(out, f.GetId())
				changed = true
			}
		}
	}
	return out
}
