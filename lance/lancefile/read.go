package lancefile

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ReadOptions selects what Read decodes.
type ReadOptions struct {
	// Columns are top-level field names, in output order; nil reads all.
	Columns []string
	// FieldIDs, when not nil, select top-level fields by their Lance field
	// id instead of Columns (a dataset renames fields without rewriting
	// its files, so it projects by id).
	FieldIDs []int32
	// Offset is the first row; Limit the number of rows (< 0: to the end).
	Offset, Limit int64
}

// Read decodes the selected columns for the selected rows into one record.
// Only the pages that overlap the rows of the selected columns are fetched.
func (r *Reader) Read(ctx context.Context, mem memory.Allocator, opts ReadOptions) (arrow.RecordBatch, error) {
	nodes, fields, err := r.projection(opts)
	if err != nil {
		return nil, err
	}
	lo := uint64(max(opts.Offset, 0))
	if opts.Offset < 0 || lo > r.numRows {
		return nil, fmt.Errorf("offset %d outside %d rows", opts.Offset, r.numRows)
	}
	hi := r.numRows
	if opts.Limit >= 0 && uint64(opts.Limit) < hi-lo {
		hi = lo + uint64(opts.Limit)
	}
	cols := make([]arrow.Array, 0, len(nodes))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, n := range nodes {
		var a arrow.Array
		var err error
		if r.footer.Version == V2_0 {
			a, err = r.decode20(ctx, mem, n, lo, hi)
		} else {
			a, _, err = r.decode21(ctx, mem, n, lo, hi, nil)
		}
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", n.arrow.Name, err)
		}
		cols = append(cols, a)
		if uint64(a.Len()) != hi-lo {
			return nil, fmt.Errorf("column %q decoded %d rows, want %d: %w", n.arrow.Name, a.Len(), hi-lo, ErrCorrupt)
		}
	}
	md := r.schema.Metadata()
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, int64(hi-lo)), nil
}

func (r *Reader) project(names []string) ([]*field, []arrow.Field, error) {
	if names == nil {
		fs := make([]arrow.Field, len(r.roots))
		for i, n := range r.roots {
			fs[i] = n.arrow
		}
		return r.roots, fs, nil
	}
	nodes := make([]*field, 0, len(names))
	fs := make([]arrow.Field, 0, len(names))
	for _, name := range names {
		var found *field
		for _, n := range r.roots {
			if n.arrow.Name == name {
				found = n
				break
			}
		}
		if found == nil {
			return nil, nil, fmt.Errorf("no column %q in file", name)
		}
		nodes = append(nodes, found)
		fs = append(fs, found.arrow)
	}
	return nodes, fs, nil
}

// pagesFor returns the pages of a column overlapping rows [lo, hi) and the
// first row of each.
func (r *Reader) pagesFor(col int, lo, hi uint64) (pages []int, starts []uint64) {
	var row uint64
	for i, p := range r.columns[col].GetPages() {
		end := row + p.GetLength()
		if end > lo && row < hi {
			pages = append(pages, i)
			starts = append(starts, row)
		}
		row = end
	}
	return pages, starts
}
