package query

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"golang.org/x/sync/errgroup"
)

// countIndexed counts a filter's rows with the scalar indices (ok false:
// no index serves the filter, the caller scans). The rows an index
// selected are counted without reading them unless a residual conjunct
// remains; the fragments no index covers are scanned with the filter.
func (p *planned) countIndexed(ctx context.Context) (n uint64, ok bool, err error) {
	if p.idx == nil {
		return 0, false, nil
	}
	if err := p.resolveIndex(ctx); err != nil || p.idx == nil {
		return 0, false, err
	}
	cols := tableOrder(p.full, p.filterCols)
	scanFilter, residual, err := p.taskFilters(cols)
	if err != nil {
		return 0, false, err
	}
	tasks := p.filterTasks()
	counts := make([]uint64, len(tasks))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers())
	for ti, t := range tasks {
		filter := filterFor(t, scanFilter, residual)
		if filter == nil && t.addrs != nil {
			counts[ti] = uint64(len(t.addrs))
			continue
		}
		g.Go(func() error {
			return p.readTask(gctx, t, cols, p.needRowID, false, func(rec arrow.RecordBatch) error {
				if filter == nil {
					counts[ti] += uint64(rec.NumRows())
					return nil
				}
				c, err := filter.CountTrue(batchCtx(gctx, p), rec)
				if err != nil {
					return err
				}
				counts[ti] += uint64(c)
				return nil
			})
		})
	}
	if err := g.Wait(); err != nil {
		return 0, false, err
	}
	for _, c := range counts {
		n += c
	}
	return n, true, nil
}
