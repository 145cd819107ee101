package query

import (
	"context"
	"errors"
	"fmt"
	mbits "math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"

	"github.com/lancecat/lancecat/expr"
	"github.com/lancecat/lancecat/lance"
)

// Late materialization of a filtered scan (issue 35): a scanned fragment is read first for the
// columns the filter reads, and the other output columns are taken by row address for the rows
// that pass, as Lance's scanner does. Reading every output column of every row and filtering
// afterwards decoded, for `id = 5` over [id, name] on 200,000 rows, every FSST-compressed name:
// half the server's CPU (fsstTable.decodeChunk 26%, its allocations and their GC the rest),
// ~9 ms of a 13 ms answer the SDK embedded gives in 4 ms.

// errNotSelective stops a late read of a fragment where its filter keeps many rows (scanLate).
var errNotSelective = errors.New("query: the filter keeps many rows of the fragment")

// passing counts the rows mask keeps (true, not null).
func passing(mask *array.Boolean) int {
	if mask.NullN() == 0 {
		return bitutil.CountSetBits(mask.Data().Buffers()[1].Bytes(), mask.Data().Offset(), mask.Len())
	}
	n := 0
	eachKept(mask, func(int) { n++ })
	return n
}

// eachKept calls fn with the index of every row mask keeps, in order. Without nulls it skips a
// byte of the bitmap at a time where no row of the eight is kept (the common case under a
// selective filter: the per-row loop was 6% of the CPU of `id = 5`).
func eachKept(mask *array.Boolean, fn func(int)) {
	n, off := mask.Len(), mask.Data().Offset()
	if mask.NullN() == 0 && off%8 == 0 {
		bits := mask.Data().Buffers()[1].Bytes()[off/8:]
		for i := 0; i < n; i += 8 {
			b := bits[i/8]
			for b != 0 {
				k := i + mbits.TrailingZeros8(b)
				if k >= n {
					return
				}
				fn(k)
				b &= b - 1
			}
		}
		return
	}
	for i := 0; i < n; i++ {
		if mask.IsValid(i) && mask.Value(i) {
			fn(i)
		}
	}
}

// latePlan is how runScan reads a scanned fragment under a filter: early are the columns read by
// the scan (the filter's), late those taken afterwards; cols is the order the shaper expects.
type latePlan struct {
	cols, early, late []string
	filter            *expr.Bound // bound over scanSchema(early)
	schema            *arrow.Schema
}

// lateFor is the late plan of a filtered scan over cols, nil when every output column is one the
// filter reads (nothing to take later).
func (p *planned) lateFor(cols []string) (*latePlan, error) {
	if p.filterText == "" {
		return nil, nil
	}
	early := tableOrder(p.full, p.filterCols)
	var late []string
	for _, c := range cols {
		if !slices.Contains(early, c) {
			late = append(late, c)
		}
	}
	if len(late) == 0 || len(early) == 0 {
		return nil, nil
	}
	f, err := expr.Compile(p.filterText, p.scanSchema(early))
	if err != nil {
		return nil, err
	}
	return &latePlan{cols: cols, early: early, late: late, filter: f, schema: p.scanSchema(cols)}, nil
}

// scanLate reads task t (a scanned fragment) the late way: the early columns with their row
// addresses, the filter, then a take of the late columns for the rows that passed. fn gets the
// filtered batch in lp.schema's columns (valid during the call).
//
// It stops with errNotSelective at the first batch whose filter keeps more than a quarter of its
// rows, *consumed then being the live rows of the task it has read and answered.
func (p *planned) scanLate(ctx context.Context, t task, lp *latePlan, consumed *uint64, fn func(arrow.RecordBatch) error) error {
	// Without deletions a row's address is its fragment's id and its place in the scan, so the
	// scanner need not build a _rowaddr column of every row (7% of the CPU of `id = 5`, and its
	// allocation): the addresses of the rows that pass come from the filter's mask.
	withAddr := true
	for _, f := range p.ver.Manifest().GetFragments() {
		if f.GetId() == t.frag {
			withAddr = f.GetDeletionFile() != nil
		}
	}
	filterSt := p.stage(stFilter)
	// next is the live offset of the next batch's first row in the fragment (its physical offset
	// too where there are no deletions).
	next := uint64(max(0, t.off))
	return p.scanTask(ctx, t, lp.early, p.needRowID, withAddr, func(rec arrow.RecordBatch) error {
		start := now()
		bctx := batchCtx(ctx, p)
		m, err := lp.filter.Eval(bctx, rec)
		if err != nil {
			return err
		}
		defer m.Release()
		mask, ok := m.(*array.Boolean)
		if !ok {
			return fmt.Errorf("query: a filter must be a boolean expression, not %s", m.DataType())
		}
		base := next
		next += uint64(rec.NumRows())
		if n := mask.Len(); n >= 64 && passing(mask) > n/4 {
			// Taking many of a batch's rows costs more than scanning them (lancefile's take
			// gathers row by row: 50,000 of 200,000 rows of [id, s] taken, 15 ms; scanned,
			// 8-10 ms): from this batch on, the fragment is read the plain way. What was
			// emitted stays; the rest starts at this batch.
			*consumed = base - uint64(max(0, t.off))
			return errNotSelective
		}
		var addrs []uint64
		if withAddr {
			col, ok := rec.Column(int(rec.NumCols()) - 1).(*array.Uint64)
			if !ok || rec.Schema().Field(int(rec.NumCols())-1).Name != lance.RowAddressColumn {
				return fmt.Errorf("query: the early scan of fragment %d has no %s column", t.frag, lance.RowAddressColumn)
			}
			eachKept(mask, func(i int) { addrs = append(addrs, col.Value(i)) })
		} else {
			eachKept(mask, func(i int) { addrs = append(addrs, lance.RowAddress(t.frag, uint32(base+uint64(i)))) })
		}
		if len(addrs) == 0 {
			filterSt.add(0, since(start))
			return nil
		}
		opts := compute.DefaultFilterOptions()
		opts.NullSelection = compute.SelectionDropNulls
		f, err := compute.FilterRecordBatch(bctx, rec, mask, opts)
		if err != nil {
			return err
		}
		defer f.Release()
		filterSt.add(f.NumRows(), since(start))
		start = now()
		taken, err := p.ds.TakeRowAddresses(ctx, addrs, lance.TakeOptions{At: p.ver, Columns: lp.late, Mem: p.mem})
		if err != nil {
			return err
		}
		defer taken.Release()
		p.stage(stTake).add(taken.NumRows(), since(start))
		arrs := make([]arrow.Array, 0, lp.schema.NumFields())
		ei, li := 0, 0
		for _, c := range lp.cols {
			if ei < len(lp.early) && lp.early[ei] == c {
				arrs = append(arrs, f.Column(ei))
				ei++
			} else {
				arrs = append(arrs, taken.Column(li))
				li++
			}
		}
		if p.needRowID {
			arrs = append(arrs, f.Column(len(lp.early))) // _rowid comes before _rowaddr
		}
		out := array.NewRecordBatch(lp.schema, arrs, f.NumRows())
		defer out.Release()
		return fn(out)
	})
}
