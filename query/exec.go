package query

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"golang.org/x/sync/errgroup"

	"github.com/lancecat/lancecat/expr"
	"github.com/lancecat/lancecat/lance"
)

// run executes the plan.
func (p *planned) run(ctx context.Context) (array.RecordReader, error) {
	switch {
	case p.knn != nil:
		return p.runKNN(ctx)
	case len(p.order) > 0:
		return p.runOrder(ctx)
	}
	return p.runScan(ctx)
}

// runScan streams a plain (filtered, projected) scan: fragments in
// parallel, batches in manifest order. Without a filter the offset and
// limit are pushed into the tasks (only the rows answered are read).
func (p *planned) runScan(ctx context.Context) (array.RecordReader, error) {
	cols := tableOrder(p.full, p.outCols, p.filterCols)
	if err := p.resolveIndex(ctx); err != nil {
		return nil, err
	}
	filter, residual, err := p.taskFilters(cols)
	if err != nil {
		return nil, err
	}
	limit := int64(-1)
	if p.req.Limit > 0 {
		limit = p.req.Limit
	}
	var tasks []task
	offset := p.req.Offset
	if filter == nil && p.windowable() {
		tasks = p.tasks(offset, limit)
		offset, limit = 0, -1
	} else {
		tasks = p.filterTasks()
	}
	var sh *shaper
	var inSchema *arrow.Schema
	{
		inSchema = p.scanSchema(cols)
		var err error
		if sh, err = p.newShaper(inSchema, -1, -1); err != nil {
			return nil, err
		}
	}
	lp, err := p.lateFor(cols)
	if err != nil {
		return nil, err
	}
	filterSt, projSt := p.stage(stFilter), p.stage(stProject)
	o := runOrdered(compute.WithAllocator(ctx, p.mem), p.schema, tasks, offset, limit,
		func(ctx context.Context, t task, emit func(arrow.RecordBatch) error) error {
			filter := filterFor(t, filter, residual)
			shape := func(rec arrow.RecordBatch) error {
				if rec.NumRows() == 0 {
					return nil
				}
				start := now()
				out, err := sh.shape(batchCtx(ctx, p), rec)
				if err != nil {
					return err
				}
				defer out.Release()
				projSt.add(out.NumRows(), since(start))
				return emit(out)
			}
			if lp != nil && t.addrs == nil {
				// A scanned fragment under a filter: the filter's columns first, the rest
				// taken for the rows that pass (late.go).
				var done uint64
				err := p.scanLate(ctx, t, lp, &done, shape)
				if !errors.Is(err, errNotSelective) {
					return err
				}
				// The rest of the fragment, the plain way.
				t.off += int64(done)
				if t.n > 0 {
					if t.n -= int64(done); t.n == 0 {
						return nil
					}
				}
			}
			return p.readFiltered(ctx, t, cols, false, filter, filterSt, shape)
		})
	if st := p.stage(stLimit); st != nil {
		o.onRows = func(n int64) { st.add(n, 0) }
	}
	return o, nil
}

func count(ctx context.Context, ds *lance.Dataset, at *lance.Version, filter string) (uint64, error) {
	ver := at
	if ver == nil {
		var err error
		if ver, err = ds.OpenLatest(ctx); err != nil {
			return 0, err
		}
	}
	filter = expr.FilterText(strings.TrimSpace(filter))
	if filter == "" {
		n, err := ver.CountRows()
		if !errors.Is(err, lance.ErrRowCountUnknown) {
			return n, err
		}
		// an old manifest without the counts: scan no column at all
	}
	p, err := plan(ctx, ds, Request{At: ver, Filter: filter, Columns: []string{}})
	if err != nil {
		return 0, err
	}
	if n, ok, err := p.countIndexed(ctx); ok || err != nil {
		return n, err // a scalar index served the filter (count_index.go)
	}
	var bound *expr.Bound
	if p.filterText != "" {
		if bound, err = expr.Compile(p.filterText, p.scanSchema(tableOrder(p.full, p.filterCols))); err != nil {
			return 0, err
		}
	}
	tasks := splitTasks(p.tasks(0, -1), countSplitRows)
	var n atomic.Uint64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers())
	// The filter is evaluated by its own workers, not by the goroutine that
	// reads the batches: a table is often one big fragment (one task), whose
	// pages decode once and then hand out windows quickly, so evaluating in
	// the reader left the other cores idle while the filter ran batch after
	// batch (count_rows with `id % 3 = 0 AND name LIKE 'vector-%'` over one
	// fragment of 200,000 rows). At most workers() batches wait for or are in
	// evaluation (ev.Go blocks the reader): memory stays bounded.
	//
	// The evaluations hang off ctx, not gctx: g.Wait cancels gctx when the
	// reading is done, while the last batches are still being evaluated
	// (and those stop on cancellation: expr.WithInterrupt).
	ev, evctx := errgroup.WithContext(ctx)
	ev.SetLimit(workers())
	for _, t := range tasks {
		g.Go(func() error {
			return p.scanTask(gctx, t, tableOrder(p.full, p.filterCols), p.needRowID, false, func(rec arrow.RecordBatch) error {
				if bound == nil {
					n.Add(uint64(rec.NumRows()))
					return nil
				}
				if err := evctx.Err(); err != nil {
					return err // an evaluation failed: stop reading
				}
				rec.Retain()
				ev.Go(func() error {
					defer rec.Release()
					// the TRUE rows only, on bitmaps (expr/count.go)
					c, err := bound.CountTrue(batchCtx(evctx, p), rec)
					if err != nil {
						return err
					}
					n.Add(uint64(c))
					return nil
				})
				return nil
			})
		})
	}
	err = g.Wait()
	if everr := ev.Wait(); everr != nil {
		return 0, everr // the evaluation's own error, not the cancellation it caused
	}
	if err != nil {
		return 0, err
	}
	return n.Load(), nil
}

// buildStages lists the plan's stages, outermost first.
func (p *planned) buildStages() []*stage {
	st := make([]*stage, nStages)
	use := func(i int, name, detail string) { st[i] = &stage{name: name, detail: detail, used: true} }
	frags := p.ver.Fragments()
	var rows uint64
	for _, f := range frags {
		rows += f.LiveRows()
	}
	var lim []string
	if p.req.Offset > 0 {
		lim = append(lim, fmt.Sprintf("offset=%d", p.req.Offset))
	}
	switch {
	case p.knn != nil:
		lim = append(lim, fmt.Sprintf("k=%d per query vector", p.knn.k))
	case p.req.Limit > 0:
		lim = append(lim, fmt.Sprintf("limit=%d", p.req.Limit))
	}
	if len(lim) > 0 {
		use(stLimit, "Limit", strings.Join(lim, " "))
	}
	var names []string
	for _, it := range p.out {
		if it.expr == nil {
			names = append(names, it.name)
		} else {
			names = append(names, fmt.Sprintf("%s=%s", it.name, it.expr))
		}
	}
	if p.knn != nil {
		if p.rowIDFirst {
			names = append(names, RowIDColumn)
		}
		if !p.selected(DistanceColumn) {
			names = append(names, DistanceColumn)
		}
		if len(p.knn.vectors) > 1 {
			names = append([]string{QueryIndexColumn}, names...)
		}
	}
	if p.req.WithRowID && !p.selected(RowIDColumn) && !p.rowIDFirst {
		names = append(names, RowIDColumn)
	}
	use(stProject, "Project", quoteList(names))
	scanCols := tableOrder(p.full, p.outCols, p.filterCols)
	switch {
	case p.knn != nil:
		take := p.outCols
		if !p.req.Prefilter && p.filterText != "" {
			take = tableOrder(p.full, p.outCols, p.filterCols)
		}
		take = tableOrder(p.full, take, p.orderCols())
		if len(p.order) > 0 {
			use(stSort, "Sort", describeOrder(p.order)+"; of the nearest rows")
		}
		use(stTake, "Take", "columns="+quoteList(take)+" of the nearest rows, by row address")
		switch {
		case p.knn.fast && p.ann != nil:
			use(stKNN, "KNN", p.ann.describe(p.knn)+"; fast_search: the fragments it does not cover are not searched")
		case p.knn.fast:
			use(stKNN, "KNN", "fast_search without a vector index: no rows")
		case p.ann != nil:
			use(stKNN, "KNN", p.ann.describe(p.knn))
		default:
			use(stKNN, "KNN", "flat (no index) "+p.knn.describe())
		}
		scanCols = []string{p.knn.column}
		if p.req.Prefilter && p.filterText != "" {
			scanCols = tableOrder(p.full, scanCols, p.filterCols)
		}
		if p.filterText != "" {
			if p.req.Prefilter {
				use(stFilter, "Filter", "prefilter: "+p.filterText)
			} else {
				use(stFilter, "Filter", "postfilter (after the top-k): "+p.filterText)
			}
		}
	case len(p.order) > 0:
		use(stTake, "Take", "columns="+quoteList(p.outCols)+" of the ordered rows, by row address")
		how := "full sort of the keys"
		if p.req.Limit > 0 {
			how = fmt.Sprintf("top-%d (bounded heap)", p.req.Offset+p.req.Limit)
		}
		use(stSort, "Sort", describeOrder(p.order)+"; "+how)
		scanCols = tableOrder(p.full, p.orderCols(), p.filterCols)
		if p.filterText != "" {
			use(stFilter, "Filter", p.filterText)
		}
	default:
		if p.filterText != "" {
			use(stFilter, "Filter", p.filterText)
		}
	}
	scanned := ""
	if ip := p.idx; ip != nil {
		use(stIndex, "ScalarIndexQuery", ip.describe())
		take := scanCols
		if p.knn == nil && len(p.order) == 0 {
			take = tableOrder(p.full, p.outCols, p.filterCols)
		}
		res := "none"
		if ip.residual != nil {
			res = ip.residual.String()
		}
		use(stIndexTake, "Take", fmt.Sprintf("columns=%s of the rows the index selected; residual filter: %s", quoteList(take), res))
		covered := map[uint64]bool{}
		for _, f := range ip.covered {
			covered[f] = true
		}
		n := 0
		rows = 0
		for _, f := range frags {
			if !covered[f.ID] {
				n++
				rows += f.LiveRows()
			}
		}
		scanned = fmt.Sprintf(" (not covered by the index: fragments=%d rows=%d)", n, rows)
		if s := st[stFilter]; s != nil {
			s.detail += " (on the fragments the index does not cover)"
		}
	}
	if scanned == "" {
		scanned = fmt.Sprintf(" fragments=%d rows=%d", len(frags), rows)
	}
	use(stScan, "Scan", fmt.Sprintf("version=%d%s columns=%s parallel=%d",
		p.ver.Number(), scanned, quoteList(scanCols), workers()))
	return st
}

// display is the order the stages print in, outermost first: a vector
// search takes its rows after the kNN, then postfilters, cuts and sorts
// them.
func (p *planned) display() []int {
	if p.knn == nil {
		return []int{stLimit, stProject, stTake, stSort, stKNN, stFilter, stIndexTake, stIndex, stScan}
	}
	if p.req.Prefilter {
		return []int{stProject, stSort, stLimit, stTake, stKNN, stFilter, stIndexTake, stIndex, stScan}
	}
	return []int{stProject, stSort, stLimit, stFilter, stTake, stKNN, stScan}
}

// explain renders the stages as an indented tree; analyzed adds the rows
// and time of each.
func (p *planned) explain(verbose, analyzed bool) string {
	var b strings.Builder
	depth := 0
	for _, i := range p.display() {
		s := p.stages[i]
		if s == nil || !s.used {
			continue
		}
		fmt.Fprintf(&b, "%s%s: %s", strings.Repeat("  ", depth), s.name, s.detail)
		if analyzed {
			fmt.Fprintf(&b, " [rows=%d elapsed=%s]", s.rows.Load(), time.Duration(s.nanos.Load()).Round(time.Microsecond))
		}
		b.WriteByte('\n')
		depth++
	}
	if verbose {
		fmt.Fprintf(&b, "output schema: %s\n", schemaLine(p.schema))
		fmt.Fprintf(&b, "table schema: %s\n", schemaLine(p.full))
	}
	return b.String()
}

func schemaLine(s *arrow.Schema) string {
	var parts []string
	for _, f := range s.Fields() {
		parts = append(parts, f.Name+": "+f.Type.String())
	}
	return strings.Join(parts, ", ")
}

func analyze(ctx context.Context, ds *lance.Dataset, req Request) (string, error) {
	p, err := plan(ctx, ds, req)
	if err != nil {
		return "", err
	}
	defer p.ann.close()
	start := time.Now()
	rr, err := p.run(ctx)
	if err != nil {
		return "", err
	}
	var rows int64
	for rr.Next() {
		rows += rr.RecordBatch().NumRows()
	}
	err = rr.Err()
	rr.Release()
	if err != nil {
		return "", err
	}
	return p.explain(false, true) + fmt.Sprintf("total: rows=%d elapsed=%s\n", rows, time.Since(start).Round(time.Microsecond)), nil
}

// readFiltered is readTask with filter (nil: none) applied to each batch
// before fn sees it, the filter's rows and time counted in st (nil: not).
func (p *planned) readFiltered(ctx context.Context, t task, cols []string, withAddr bool, filter *expr.Bound, st *stage, fn func(arrow.RecordBatch) error) error {
	return p.readTask(ctx, t, cols, p.needRowID, withAddr, func(rec arrow.RecordBatch) error {
		if filter != nil {
			start := now()
			f, err := filter.Filter(batchCtx(ctx, p), rec)
			if err != nil {
				return err
			}
			defer f.Release()
			rec = f
			st.add(rec.NumRows(), since(start))
		}
		return fn(rec)
	})
}
