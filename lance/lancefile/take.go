package lancefile

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/lance/pb/filepb"
)

// Fields is the Lance schema the file records, flattened in pre-order with
// the field ids of the dataset that wrote it.
func (r *Reader) Fields() []*filepb.Field {
	var out []*filepb.Field
	var walk func(n *field)
	walk = func(n *field) {
		out = append(out, n.pb)
		for _, c := range n.children {
			walk(c)
		}
	}
	for _, n := range r.roots {
		walk(n)
	}
	return out
}

// projection resolves ReadOptions' FieldIDs or Columns to schema roots.
func (r *Reader) projection(opts ReadOptions) ([]*field, []arrow.Field, error) {
	if opts.FieldIDs == nil {
		return r.project(opts.Columns)
	}
	nodes := make([]*field, 0, len(opts.FieldIDs))
	fs := make([]arrow.Field, 0, len(opts.FieldIDs))
	for _, id := range opts.FieldIDs {
		i := slices.IndexFunc(r.roots, func(n *field) bool { return n.pb.GetId() == id })
		if i < 0 {
			return nil, nil, fmt.Errorf("no top-level field with id %d in file", id)
		}
		nodes = append(nodes, r.roots[i])
		fs = append(fs, r.roots[i].arrow)
	}
	return nodes, fs, nil
}

// Take decodes the given rows (offsets into the file, in any order,
// repeats allowed) of the columns opts selects (its Offset and Limit are
// ignored). Rows are read in ascending order in runs of consecutive rows,
// and each page a run touches is fetched and decoded once, however many
// rows fall into it; the result is in the order of rows.
func (r *Reader) Take(ctx context.Context, mem memory.Allocator, rows []uint64, opts ReadOptions) (arrow.RecordBatch, error) {
	nodes, fields, err := r.projection(opts)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		if row >= r.numRows {
			return nil, fmt.Errorf("take row %d of a file of %d rows", row, r.numRows)
		}
	}
	md := r.schema.Metadata()
	schema := arrow.NewSchema(fields, &md)
	sorted := slices.Clone(rows)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	// runs of consecutive rows: [start, end)
	var runs [][2]uint64
	for _, row := range sorted {
		if n := len(runs); n > 0 && runs[n-1][1] == row {
			runs[n-1][1]++
		} else {
			runs = append(runs, [2]uint64{row, row + 1})
		}
	}
	inOrder := len(sorted) == len(rows) && slices.IsSorted(rows)
	// Columns are independent: decode them in parallel.
	cols := make([]arrow.Array, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cols[i], errs[i] = r.takeColumn(ctx, mem, n, rows, sorted, runs, inOrder)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("column %q: %w", n.arrow.Name, errs[i])
			}
		}()
	}
	wg.Wait()
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(schema, cols, int64(len(rows))), nil
}

// takeColumn takes rows of one top-level field: straight from the entries
// when the layout allows random access, else by decoding each page the
// rows touch once.
func (r *Reader) takeColumn(ctx context.Context, mem memory.Allocator, n *field, rows, sorted []uint64, runs [][2]uint64, inOrder bool) (arrow.Array, error) {
	if len(sorted) > 0 {
		a, ok, err := r.takeFullZip(ctx, mem, n, sorted)
		if err != nil {
			return nil, err
		}
		if ok {
			defer a.Release()
			return gatherSorted(mem, a, sorted, rows, inOrder)
		}
		a, at, ok, err := r.takeMiniBlock(ctx, mem, n, sorted)
		if err != nil {
			return nil, err
		}
		if ok {
			defer a.Release()
			return pick(mem, a, at, sorted, rows)
		}
	}
	pc := &pageCache{pages: map[[2]int]*leafPage{}}
	parts := make([]arrow.Array, 0, len(runs))
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for _, run := range runs {
		var a arrow.Array
		var err error
		if r.footer.Version == V2_0 {
			a, err = r.decode20(ctx, mem, n, run[0], run[1])
		} else {
			a, _, err = r.decode21(ctx, mem, n, run[0], run[1], pc)
		}
		if err != nil {
			return nil, err
		}
		parts = append(parts, a)
		if uint64(a.Len()) != run[1]-run[0] {
			return nil, fmt.Errorf("decoded %d rows, want %d: %w", a.Len(), run[1]-run[0], ErrCorrupt)
		}
	}
	return gather(mem, n.arrow.Type, parts, runs, rows, inOrder)
}

// gatherSorted arranges a, one entry per row of sorted, in the order of
// rows.
func gatherSorted(mem memory.Allocator, a arrow.Array, sorted, rows []uint64, inOrder bool) (arrow.Array, error) {
	if inOrder {
		a.Retain()
		return a, nil
	}
	var pieces []arrow.Array
	defer func() {
		for _, p := range pieces {
			p.Release()
		}
	}()
	for i := 0; i < len(rows); {
		k, _ := slices.BinarySearch(sorted, rows[i])
		j := i + 1
		for j < len(rows) && k+(j-i) < len(sorted) && rows[j] == sorted[k+(j-i)] {
			j++
		}
		pieces = append(pieces, array.NewSlice(a, int64(k), int64(k+(j-i))))
		i = j
	}
	return array.Concatenate(pieces, mem)
}

// gather assembles the rows of the output from the decoded runs.
func gather(mem memory.Allocator, dt arrow.DataType, parts []arrow.Array, runs [][2]uint64, rows []uint64, inOrder bool) (arrow.Array, error) {
	if len(rows) == 0 {
		return array.MakeArrayOfNull(mem, dt, 0), nil
	}
	if inOrder {
		if len(parts) == 1 {
			parts[0].Retain()
			return parts[0], nil
		}
		return array.Concatenate(parts, mem)
	}
	// One slice per maximal stretch of output rows that are consecutive in
	// the same run.
	var pieces []arrow.Array
	defer func() {
		for _, p := range pieces {
			p.Release()
		}
	}()
	for i := 0; i < len(rows); {
		k, _ := slices.BinarySearchFunc(runs, rows[i], func(run [2]uint64, row uint64) int {
			switch {
			case run[1] <= row:
				return -1
			case run[0] > row:
				return 1
			}
			return 0
		})
		run := runs[k]
		j := i + 1
		for j < len(rows) && rows[j] == rows[j-1]+1 && rows[j] < run[1] {
			j++
		}
		lo := int64(rows[i] - run[0])
		pieces = append(pieces, array.NewSlice(parts[k], lo, lo+int64(j-i)))
		i = j
	}
	return array.Concatenate(pieces, mem)
}

// Cursor reads a file's rows in ascending windows (a scan in batches):
// each page is fetched and decoded once, kept while later windows still
// need it and dropped once a window has read past it.
type Cursor struct {
	r      *Reader
	mem    memory.Allocator
	nodes  []*field
	schema *arrow.Schema
	pc     *pageCache
	ends   map[int][]uint64 // per column, the end row of each page
}

// NewCursor prepares windowed reads of the columns opts selects (its
// Offset and Limit are ignored).
func (r *Reader) NewCursor(mem memory.Allocator, opts ReadOptions) (*Cursor, error) {
	nodes, fields, err := r.projection(opts)
	if err != nil {
		return nil, err
	}
	md := r.schema.Metadata()
	return &Cursor{r: r, mem: mem, nodes: nodes, schema: arrow.NewSchema(fields, &md),
		pc:   &pageCache{pages: map[[2]int]*leafPage{}, raws: map[[2]int]*rawMini{}, spans: map[int]*span{}},
		ends: map[int][]uint64{}}, nil
}

// Schema is the schema of the records Read returns.
func (c *Cursor) Schema() *arrow.Schema { return c.schema }

// Read decodes rows [lo, hi). Windows should ascend; a window that goes
// back before an earlier one is correct but decodes its pages again.
func (c *Cursor) Read(ctx context.Context, lo, hi uint64) (arrow.RecordBatch, error) {
	r := c.r
	if lo > hi || hi > r.numRows {
		return nil, fmt.Errorf("rows [%d, %d) outside %d rows", lo, hi, r.numRows)
	}
	cols := make([]arrow.Array, 0, len(c.nodes))
	defer func() {
		for _, a := range cols {
			a.Release()
		}
	}()
	defer func() {
		if end := c.pc.hi; hi == r.numRows || end != 0 && hi >= end {
			// the cursor's last rows: no later window reads its spans
			for col := range c.pc.spans {
				c.pc.retire(col)
				delete(c.pc.spans, col)
			}
			c.pc.releaseRaws()
		}
		c.pc.release() // the arrays are built (or dropped): spans' offsets are free
	}()
	for _, n := range c.nodes {
		var a arrow.Array
		var err error
		if r.footer.Version == V2_0 {
			a, err = r.decode20(ctx, c.mem, n, lo, hi)
		} else {
			a, _, err = r.decode21(ctx, c.mem, n, lo, hi, c.pc)
		}
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", n.arrow.Name, err)
		}
		cols = append(cols, a)
		if uint64(a.Len()) != hi-lo {
			return nil, fmt.Errorf("column %q decoded %d rows, want %d: %w", n.arrow.Name, a.Len(), hi-lo, ErrCorrupt)
		}
	}
	ended := func(col, p int) bool {
		ends, ok := c.ends[col]
		if !ok {
			var row uint64
			for _, pg := range r.columns[col].GetPages() {
				row += pg.GetLength()
				ends = append(ends, row)
			}
			c.ends[col] = ends
		}
		return ends[p] <= hi
	}
	for key := range c.pc.pages {
		if ended(key[0], key[1]) {
			delete(c.pc.pages, key)
		}
	}
	for key := range c.pc.raws {
		if ended(key[0], key[1]) {
			c.pc.releaseRaw(key)
		}
	}
	for col, sp := range c.pc.spans {
		if ended(col, sp.page) {
			c.pc.retire(col)
			delete(c.pc.spans, col)
		}
	}
	rec := array.NewRecordBatch(c.schema, cols, int64(hi-lo))
	return rec, nil
}

// Close drops the cached pages.
func (c *Cursor) Close() {
	for col := range c.pc.spans {
		c.pc.retire(col)
	}
	c.pc.release()
	c.pc.releaseRaws()
	clear(c.pc.pages)
	clear(c.pc.raws)
	clear(c.pc.spans)
}
