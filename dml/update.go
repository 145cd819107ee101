package dml

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/expr"
	"github.com/lancecat/lancecat/lance"
)

// Update sets columns of the rows matching predicate ("" = every row) as
// Lance's Update in RewriteRows mode: the matching rows are read whole,
// the assignments (SQL expressions over the old row, cast to the column's
// type) applied, the new rows written into new fragments and the old ones
// deleted. Unknown columns, malformed expressions and values that do not
// fit the column are InvalidInput, and nothing is committed.
func Update(ctx context.Context, ds *lance.Dataset, predicate string, set []Assignment) (Result, error) {
	if len(set) == 0 {
		return Result{}, invalid("update needs at least one column to set")
	}
	return withRetry(ctx, func() (Result, error) { return updateOnce(ctx, ds, predicate, set) })
}

type assign struct {
	col   int
	bound *expr.Bound
	name  string
}

func updateOnce(ctx context.Context, ds *lance.Dataset, src string, set []Assignment) (Result, error) {
	ver, schema, err := head(ctx, ds)
	if err != nil {
		return Result{}, err
	}
	p, err := compilePredicate(src, schema)
	if err != nil {
		return Result{}, err
	}
	assigns := make([]assign, 0, len(set))
	seen := map[int]bool{}
	var fieldIDs []uint32
	for _, a := range set {
		idx := schema.FieldIndices(a.Column)
		if len(idx) == 0 {
			for i, f := range schema.Fields() {
				if strings.EqualFold(f.Name, a.Column) {
					idx = []int{i}
				}
			}
		}
		if len(idx) != 1 {
			return Result{}, invalid("update: no column %q in the table", a.Column)
		}
		if seen[idx[0]] {
			return Result{}, invalid("update: column %q is set twice", a.Column)
		}
		seen[idx[0]] = true
		b, err := expr.Compile(a.Expr, schema)
		if err != nil {
			return Result{}, err
		}
		to := schema.Field(idx[0]).Type
		if !canCast(b.Type(), to) && b.Type().ID() != arrow.NULL {
			return Result{}, invalid("update: column %q is %s; the value %q is %s", a.Column, to, a.Expr, b.Type())
		}
		assigns = append(assigns, assign{col: idx[0], bound: b, name: schema.Field(idx[0]).Name})
		for _, f := range ver.Fields() {
			if f.GetParentId() == -1 && f.GetName() == schema.Field(idx[0]).Name {
				fieldIDs = append(fieldIDs, uint32(f.GetId()))
			}
		}
	}
	stable := ver.StableRowIDs()
	s, err := ds.Scan(ctx, lance.ScanOptions{At: ver, WithRowID: stable, WithRowAddress: true})
	if err != nil {
		return Result{}, err
	}
	defer s.Release()
	us := &updateStream{ctx: ctx, s: s, p: p, assigns: assigns, schema: schema, rows: lance.RowDeletes{}, stable: stable}
	frags, err := lance.WriteFragments(ctx, ds.Store(), schema, ver.Fields(), us, writeOptions(ver))
	if err != nil {
		return Result{}, err
	}
	us.release()
	if stable {
		// Rewritten rows keep their row ids, as in Lance.
		if err := lance.SetRowIDs(frags, us.ids); err != nil {
			return Result{}, err
		}
	}
	op := &lance.UpdateRows{Rows: us.rows, Read: readFragments(ver), NewFragments: frags, FieldsForPreservingFragBitmap: fieldIDs}
	v, err := ds.Commit(ctx, op, lance.CommitOptions{ReadVersion: ver.Number()})
	if err != nil {
		return Result{}, err
	}
	return Result{Version: v, Updated: us.rows.Len()}, nil
}

// updateStream turns the scan into the updated rows, recording the
// addresses of the rows it rewrites.
type updateStream struct {
	ctx     context.Context
	s       *lance.Scanner
	p       *predicate
	assigns []assign
	schema  *arrow.Schema
	rows    lance.RowDeletes
	stable  bool
	ids     []uint64 // stable row ids of the rewritten rows, in order
	cur     arrow.RecordBatch
	err     error
}

func (u *updateStream) Schema() *arrow.Schema          { return u.schema }
func (u *updateStream) RecordBatch() arrow.RecordBatch { return u.cur }
func (u *updateStream) Err() error {
	if u.err != nil {
		return u.err
	}
	return u.s.Err()
}

func (u *updateStream) release() {
	if u.cur != nil {
		u.cur.Release()
		u.cur = nil
	}
}

func (u *updateStream) Next() bool {
	u.release()
	for u.err == nil && u.s.Next() {
		rec := u.s.RecordBatch()
		out, err := u.apply(rec)
		if err != nil {
			u.err = err
			return false
		}
		if out == nil {
			continue
		}
		u.cur = out
		return true
	}
	return false
}

// apply filters rec to the matching rows and computes their new values.
func (u *updateStream) apply(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	m, err := u.p.mask(u.ctx, rec)
	if err != nil {
		return nil, err
	}
	b := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer b.Release()
	addrs := rowAddresses(rec)
	n := 0
	for i, hit := range m {
		b.Append(hit)
		if hit {
			addRow(u.rows, addrs.Value(i))
			if u.stable {
				u.ids = append(u.ids, rowIDs(rec).Value(i))
			}
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	mask := b.NewArray()
	defer mask.Release()
	base := dropLast(rec, u.schema)
	defer base.Release()
	sel := base
	if n != len(m) {
		if sel, err = compute.FilterRecordBatch(u.ctx, base, mask, compute.DefaultFilterOptions()); err != nil {
			return nil, err
		}
		defer sel.Release()
	}
	cols := make([]arrow.Array, sel.NumCols())
	for i := range cols {
		cols[i] = sel.Column(i)
		cols[i].Retain()
	}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, a := range u.assigns {
		v, err := a.bound.Eval(u.ctx, sel)
		if err != nil {
			return nil, err
		}
		c, err := castTo(u.ctx, v, u.schema.Field(a.col).Type, a.name)
		v.Release()
		if err != nil {
			return nil, err
		}
		cols[a.col].Release()
		cols[a.col] = c
	}
	return array.NewRecordBatch(u.schema, cols, sel.NumRows()), nil
}
