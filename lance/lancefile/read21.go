package lancefile

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// decode21 decodes rows [lo, hi) of a schema node of a 2.1 file. Leaves
// decode their pages; structs and lists rebuild their validity and offsets
// from the levels of their first leaf, which every leaf below them shares.
func (r *Reader) decode21(ctx context.Context, mem memory.Allocator, n *field, lo, hi uint64, pc *pageCache) (arrow.Array, unravelers, error) {
	switch t := n.arrow.Type.(type) {
	case *arrow.StructType:
		if len(n.children) == 0 {
			return nil, nil, fmt.Errorf("struct without fields: %w", ErrUnsupported)
		}
		children := make([]arrow.Array, 0, len(n.children))
		defer func() {
			for _, c := range children {
				c.Release()
			}
		}()
		var us unravelers
		for i, c := range n.children {
			a, u, err := r.decode21(ctx, mem, c, lo, hi, pc)
			if err != nil {
				return nil, nil, err
			}
			children = append(children, a)
			if i == 0 {
				us = u
			}
		}
		valid, err := us.validity()
		if err != nil {
			return nil, nil, err
		}
		length := children[0].Len()
		for _, c := range children {
			if c.Len() != length {
				return nil, nil, fmt.Errorf("struct children of %d and %d rows: %w", length, c.Len(), ErrCorrupt)
			}
		}
		vb, nulls, err := validityBuffer(mem, valid, length)
		if err != nil {
			return nil, nil, err
		}
		cd := make([]arrow.ArrayData, len(children))
		for i, c := range children {
			cd[i] = c.Data()
		}
		return makeArray(t, length, []*memory.Buffer{vb}, cd, nulls), us, nil
	case *arrow.ListType, *arrow.LargeListType:
		child, us, err := r.decode21(ctx, mem, n.children[0], lo, hi, pc)
		if err != nil {
			return nil, nil, err
		}
		defer child.Release()
		offs, valid, err := us.offsets()
		if err != nil {
			return nil, nil, err
		}
		if offs[len(offs)-1] != int64(child.Len()) {
			return nil, nil, fmt.Errorf("list offsets end at %d, %d items: %w", offs[len(offs)-1], child.Len(), ErrCorrupt)
		}
		if valid != nil && len(valid) != len(offs)-1 {
			valid = nil
		}
		length := len(offs) - 1
		vb, nulls, err := validityBuffer(mem, valid, length)
		if err != nil {
			return nil, nil, err
		}
		var ob *memory.Buffer
		if _, large := t.(*arrow.LargeListType); large {
			ob = newBuffer(mem, arrow.Int64Traits.CastToBytes(offs))
		} else {
			o32 := make([]int32, len(offs))
			for i, o := range offs {
				o32[i] = int32(o)
			}
			ob = newBuffer(mem, arrow.Int32Traits.CastToBytes(o32))
		}
		return makeArray(t, length, []*memory.Buffer{vb, ob}, []arrow.ArrayData{child.Data()}, nulls), us, nil
	}
	return r.decodeLeaf21(ctx, mem, n, lo, hi, pc)
}

func (r *Reader) decodeLeaf21(ctx context.Context, mem memory.Allocator, n *field, lo, hi uint64, pc *pageCache) (arrow.Array, unravelers, error) {
	pages, starts := r.pagesFor(n.column, lo, hi)
	var us unravelers
	var vals *values
	var parts []*values
	for i, p := range pages {
		page := r.columns[n.column].GetPages()[p]
		a := int(max(lo, starts[i]) - starts[i])
		b := int(min(hi, starts[i]+page.GetLength()) - starts[i])
		var lp *leafPage
		if pc != nil && pc.raws != nil {
			sub, first, ok, err := r.spanPage(ctx, pc, n.column, p, page, starts[i], uint64(a), uint64(b))
			if err != nil {
				return nil, nil, fmt.Errorf("page %d: %w", p, err)
			}
			if ok {
				lp = sub
				a, b = a-int(first), b-int(first)
			}
		}
		// A read of part of a page without a page cache (one window, not a
		// scan) decodes only the mini-block chunks overlapping the rows, or
		// only the rows' entries of a fixed-width full-zip page.
		if pc == nil && (a != 0 || b != int(page.GetLength())) {
			sub, first, ok, err := r.miniBlockRange(ctx, page, uint64(a), uint64(b))
			if err != nil {
				return nil, nil, fmt.Errorf("page %d: %w", p, err)
			}
			if ok {
				lp = sub
				a, b = a-int(first), b-int(first)
			} else if sub, ok, err = r.fullZipRange(ctx, page, uint64(a), uint64(b)); err != nil {
				return nil, nil, fmt.Errorf("page %d: %w", p, err)
			} else if ok {
				lp = sub
				a, b = 0, b-a
			}
		}
		if lp == nil {
			var err error
			if lp, err = r.leafPage21(ctx, n.column, p, n.arrow.Type, pc); err != nil {
				return nil, nil, err
			}
		}
		if a != 0 || b != lp.rows {
			lp.trim(a, b)
		}
		if pc != nil {
			// Unraveling rewrites levels in place; keep the cached page's.
			lp.rep, lp.def = slices.Clone(lp.rep), slices.Clone(lp.def)
		}
		us = append(us, newUnraveler(lp.rep, lp.def, lp.layers, lp.vals.n))
		parts = append(parts, lp.vals)
	}
	if len(parts) > 0 {
		var err error
		if vals, err = concatValues(parts); err != nil {
			return nil, nil, err
		}
	}
	if vals == nil {
		vals = zeroValuesOf(n.arrow.Type, 0)
		if vals == nil {
			vals = nullValues(0)
		}
	}
	if len(us) == 0 {
		return array.MakeArrayOfNull(mem, n.arrow.Type, 0), us, nil
	}
	valid, err := us.validity()
	if err != nil {
		return nil, nil, err
	}
	a, err := buildArray(mem, n.arrow.Type, vals, valid)
	if err != nil {
		return nil, nil, err
	}
	return a, us, nil
}

// trim keeps rows [a, b) of the page: the level entries from the start of
// row a to the start of row b, and the items among them.
func (lp *leafPage) trim(a, b int) {
	if lp.rep == nil {
		if lp.def != nil {
			lp.def = lp.def[a:b]
		}
		lp.vals = lp.vals.slice(a, b)
		lp.rows = b - a
		return
	}
	mr := maxRep(lp.layers)
	mv, _ := maxVisibleDef(lp.layers)
	ea, eb := len(lp.rep), len(lp.rep)
	row := -1
	for i, r := range lp.rep {
		if r == mr {
			row++
			if row == a {
				ea = i
			}
			if row == b {
				eb = i
				break
			}
		}
	}
	visible := func(from, to int) int {
		if lp.def == nil {
			return to - from
		}
		k := 0
		for _, d := range lp.def[from:to] {
			if d <= mv {
				k++
			}
		}
		return k
	}
	ia := visible(0, ea)
	ib := ia + visible(ea, eb)
	lp.rep = lp.rep[ea:eb]
	if lp.def != nil {
		lp.def = lp.def[ea:eb]
	}
	lp.vals = lp.vals.slice(ia, ib)
	lp.rows = b - a
}

// leafPage21 decodes page p of column col, or returns the copy pc holds.
// The result may be trimmed by the caller: trimming replaces the page's
// slices, it never writes into them, so a cached page stays intact.
func (r *Reader) leafPage21(ctx context.Context, col, p int, dt arrow.DataType, pc *pageCache) (*leafPage, error) {
	key := [2]int{col, p}
	if pc != nil {
		if lp, ok := pc.pages[key]; ok {
			cp := *lp
			return &cp, nil
		}
	}
	page := r.columns[col].GetPages()[p]
	bufs, err := r.readPageBuffers(ctx, page)
	if err != nil {
		return nil, err
	}
	lp, err := decodePage21(page, bufs, dt)
	if err != nil {
		return nil, fmt.Errorf("page %d: %w", p, err)
	}
	if pc != nil {
		cp := *lp
		pc.pages[key] = &cp
	}
	return lp, nil
}

// pageCache keeps decoded pages for the duration of one Take, so rows
// that share a page decode it once.
type pageCache struct {
	pages map[[2]int]*leafPage
	// A Cursor's: the raw mini-block pages and the decoded span per
	// column (read_span.go), and the row range it reads ([lo, hi), hi 0:
	// the whole file). nil raws: whole pages only (a Take).
	raws   map[[2]int]*rawMini
	spans  map[int]*span
	lo, hi uint64
	// offsets of replaced spans, pooled when the read ends (read_span.go)
	retired [][]uint64
}
