package query

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancecat/lancecat/lance"
)

// task is a piece of a scan: a range of the live rows of one fragment.
type task struct {
	frag uint64
	off  int64 // live rows of the fragment to skip
	n    int64 // live rows to read; < 0: to the fragment's end
	// addrs, when set, are the rows of the fragment a scalar index
	// selected (ascending addresses): the task takes them instead.
	addrs []uint64
}

// chunkRows is the most live rows of one task. A task is a whole fragment:
// splitting a fragment into row ranges (tried: 64Ki rows) made every range
// decode the pages it starts in from their beginning — Lance 2.1/2.2
// mini-block pages (ints, strings) hold tens of thousands of rows — and a
// 200,000-row scan of id or of a utf8 column took 2–4× longer on 2 cores.
// Fragments (up to a million rows each) are the unit of parallelism.
const chunkRows = 1 << 40

// tasks cuts the version's fragments into tasks, in manifest order.
// skip and take (take < 0: all) restrict them to a window of the live rows
// (an offset/limit pushed down into a plain scan).
func (p *planned) tasks(skip, take int64) []task {
	var out []task
	for _, f := range p.ver.Fragments() {
		if take == 0 {
			break
		}
		if !f.RowsKnown {
			// the count needs the files: one task reads the whole fragment
			// (only without a window: a window needs the count)
			out = append(out, task{frag: f.ID, n: -1})
			continue
		}
		live := int64(f.LiveRows())
		if skip >= live {
			skip -= live
			continue
		}
		lo, hi := skip, live
		skip = 0
		if take > 0 && hi-lo > take {
			hi = lo + take
		}
		if take > 0 {
			take -= hi - lo
		}
		for a := lo; a < hi; a += chunkRows {
			out = append(out, task{frag: f.ID, off: a, n: min(chunkRows, hi-a)})
		}
	}
	return out
}

// countSplitRows is the rows of a count task: a fragment's rows are
// counted by several tasks side by side (a table is often one fragment).
// Cursors decode mini-block pages by spans of chunks, so a task starting
// inside a page decodes only its own chunks (lance/lancefile read_span.go); a
// multiple of Lance's 8192-row batches, so no batch is split.
const countSplitRows = 8 * lance.DefaultBatchRows

// splitTasks cuts tasks of known length into pieces of at most rows rows.
func splitTasks(tasks []task, rows int64) []task {
	var out []task
	for _, t := range tasks {
		if t.n <= rows || t.addrs != nil {
			out = append(out, t)
			continue
		}
		for a := int64(0); a < t.n; a += rows {
			out = append(out, task{frag: t.frag, off: t.off + a, n: min(rows, t.n-a)})
		}
	}
	return out
}

// windowable: every fragment's live count is in the manifest, so an
// offset/limit can be pushed into the tasks.
func (p *planned) windowable() bool {
	for _, f := range p.ver.Fragments() {
		if !f.RowsKnown {
			return false
		}
	}
	return true
}

// scanTask reads the task's rows of cols, handing each batch to fn (valid
// during the call).
func (p *planned) scanTask(ctx context.Context, t task, cols []string, withRowID, withAddr bool, fn func(arrow.RecordBatch) error) error {
	opts := lance.ScanOptions{At: p.ver, Columns: cols, Fragments: []uint64{t.frag}, Offset: t.off,
		WithRowID: withRowID, WithRowAddress: withAddr, Mem: p.mem}
	if t.n == 0 {
		return nil
	}
	if t.n > 0 {
		opts.Limit = t.n
	}
	s, err := p.ds.Scan(ctx, opts)
	if err != nil {
		return err
	}
	defer s.Release()
	st := p.stage(stScan)
	for {
		start := now()
		if !s.Next() {
			break
		}
		rec := s.RecordBatch()
		st.add(rec.NumRows(), since(start))
		if err := fn(rec); err != nil {
			return err
		}
	}
	return s.Err()
}

// item is what a task worker hands the consumer: a batch or an error.
type item struct {
	rec arrow.RecordBatch
	err error
}

// ordered is an array.RecordReader over tasks run by at most workers()
// goroutines at a time, whose batches come out in task order. Memory is
// bounded: at most 2×workers tasks are started ahead of the consumer, each
// holding at most itemBuffer+1 batches.
type ordered struct {
	parent context.Context
	schema *arrow.Schema
	cancel context.CancelFunc
	order  chan chan item
	curCh  chan item
	cur    arrow.RecordBatch
	err    error
	refs   atomic.Int64
	skip   int64
	left   int64 // < 0: unlimited
	closed bool
	onRows func(int64)
}

const itemBuffer = 1

// runOrdered starts the tasks; work turns one task into batches, emitting
// each (emit retains what it is given). Offset and limit (limit < 0:
// none) apply to the ordered output.
func runOrdered(ctx context.Context, schema *arrow.Schema, tasks []task, offset, limit int64,
	work func(ctx context.Context, t task, emit func(arrow.RecordBatch) error) error) *ordered {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	o := &ordered{parent: parent, schema: schema, cancel: cancel, order: make(chan chan item, workers()), skip: offset, left: limit}
	o.refs.Store(1)
	go func() {
		defer close(o.order)
		sem := make(chan struct{}, workers())
		var wg sync.WaitGroup
		defer wg.Wait()
		for _, t := range tasks {
			ch := make(chan item, itemBuffer)
			select {
			case o.order <- ch:
			case <-ctx.Done():
				return
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				close(ch)
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				defer close(ch)
				err := work(ctx, t, func(rec arrow.RecordBatch) error {
					rec.Retain()
					select {
					case ch <- item{rec: rec}:
						return nil
					case <-ctx.Done():
						rec.Release()
						return ctx.Err()
					}
				})
				if err != nil && ctx.Err() == nil {
					select {
					case ch <- item{err: err}:
					case <-ctx.Done():
					}
				}
			}()
		}
	}()
	return o
}

func (o *ordered) Schema() *arrow.Schema          { return o.schema }
func (o *ordered) Err() error                     { return o.err }
func (o *ordered) RecordBatch() arrow.RecordBatch { return o.cur }
func (o *ordered) Record() arrow.RecordBatch      { return o.cur }
func (o *ordered) Retain()                        { o.refs.Add(1) }
func (o *ordered) Release() {
	if o.refs.Add(-1) == 0 {
		o.stop()
	}
}

var _ array.RecordReader = (*ordered)(nil)

// stop cancels the workers and releases every batch still queued; it
// returns when every worker is done.
func (o *ordered) stop() {
	if o.cur != nil {
		o.cur.Release()
		o.cur = nil
	}
	if o.closed {
		return
	}
	o.closed = true
	o.cancel()
	drain := func(ch chan item) {
		for it := range ch {
			if it.rec != nil {
				it.rec.Release()
			}
		}
	}
	if o.curCh != nil {
		drain(o.curCh)
		o.curCh = nil
	}
	for ch := range o.order {
		drain(ch)
	}
}

func (o *ordered) Next() bool {
	if o.cur != nil {
		o.cur.Release()
		o.cur = nil
	}
	if o.closed || o.err != nil {
		return false
	}
	for o.left != 0 {
		if err := o.parent.Err(); err != nil {
			o.err = err
			o.stop()
			return false
		}
		if o.curCh == nil {
			ch, ok := <-o.order
			if !ok {
				o.err = o.parent.Err()
				o.stop()
				return false
			}
			o.curCh = ch
		}
		it, ok := <-o.curCh
		if !ok {
			o.curCh = nil
			continue
		}
		if it.err != nil {
			o.err = it.err
			o.stop()
			return false
		}
		rec := it.rec
		n := rec.NumRows()
		if o.skip >= n {
			o.skip -= n
			rec.Release()
			continue
		}
		lo, hi := o.skip, n
		o.skip = 0
		if o.left > 0 && hi-lo > o.left {
			hi = lo + o.left
		}
		if o.left > 0 {
			o.left -= hi - lo
		}
		if lo != 0 || hi != n {
			s := rec.NewSlice(lo, hi)
			rec.Release()
			rec = s
		}
		if o.onRows != nil {
			o.onRows(rec.NumRows())
		}
		o.cur = rec
		return true
	}
	o.stop()
	return false
}

// sliceReader is an array.RecordReader over batches already computed.
type sliceReader struct {
	schema *arrow.Schema
	cur    arrow.RecordBatch
	refs   atomic.Int64
	next   func() (arrow.RecordBatch, error) // more batches on demand; nil rec: end
	err    error
	done   func()
}

func newGenReader(schema *arrow.Schema, next func() (arrow.RecordBatch, error), done func()) *sliceReader {
	r := &sliceReader{schema: schema, next: next, done: done}
	r.refs.Store(1)
	return r
}

func (r *sliceReader) Schema() *arrow.Schema          { return r.schema }
func (r *sliceReader) Err() error                     { return r.err }
func (r *sliceReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *sliceReader) Record() arrow.RecordBatch      { return r.cur }
func (r *sliceReader) Retain()                        { r.refs.Add(1) }
func (r *sliceReader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		if r.done != nil {
			r.done()
			r.done = nil
		}
		r.next = nil
	}
}

func (r *sliceReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	for r.next != nil && r.err == nil {
		rec, err := r.next()
		if err != nil {
			r.err = err
			return false
		}
		if rec == nil {
			r.next = nil
			return false
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		r.cur = rec
		return true
	}
	return false
}
