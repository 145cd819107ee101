package lance

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/lance/lancefile"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// TakeOptions select the columns and version of a take.
type TakeOptions struct {
	// Columns are top-level column names; nil means all.
	Columns []string
	// At, Version, Tag pick the version as in ScanOptions.
	At      *Version
	Version uint64
	Tag     string
	// WithRowID and WithRowAddress add _rowid and _rowaddr.
	WithRowID, WithRowAddress bool
	Mem                       memory.Allocator
}

func (o TakeOptions) scan() ScanOptions {
	return ScanOptions{Columns: o.Columns, At: o.At, Version: o.Version, Tag: o.Tag,
		WithRowID: o.WithRowID, WithRowAddress: o.WithRowAddress, Mem: o.Mem}
}

// Take returns the rows at the given offsets among the live rows in scan
// order (what a scan with Offset k, Limit 1 returns first), in the order
// given; repeats are allowed.
func (d *Dataset) Take(ctx context.Context, offsets []uint64, opts TakeOptions) (arrow.RecordBatch, error) {
	s, err := d.Scan(ctx, opts.scan())
	if err != nil {
		return nil, err
	}
	defer s.Release()
	addrs, err := d.offsetsToAddresses(ctx, s.ver, offsets)
	if err != nil {
		return nil, err
	}
	return d.take(ctx, s, addrs)
}

// TakeRowAddresses returns the rows at the given addresses (fragment id
// << 32 | offset), in the order given. An address of a deleted row or
// past its fragment is an InvalidInput error.
func (d *Dataset) TakeRowAddresses(ctx context.Context, addrs []uint64, opts TakeOptions) (arrow.RecordBatch, error) {
	s, err := d.Scan(ctx, opts.scan())
	if err != nil {
		return nil, err
	}
	defer s.Release()
	return d.take(ctx, s, addrs)
}

// TakeRowIDs returns the rows with the given row ids: stable row ids on a
// dataset that has them (resolved through every fragment's row id
// sequence), else row addresses.
func (d *Dataset) TakeRowIDs(ctx context.Context, ids []uint64, opts TakeOptions) (arrow.RecordBatch, error) {
	s, err := d.Scan(ctx, opts.scan())
	if err != nil {
		return nil, err
	}
	defer s.Release()
	if !s.stable {
		return d.take(ctx, s, ids)
	}
	where := map[uint64]uint64{}
	for _, id := range ids {
		where[id] = ^uint64(0)
	}
	for _, f := range s.ver.Manifest().GetFragments() {
		seq, err := d.FragmentRowIDs(ctx, f)
		if err != nil {
			return nil, err
		}
		for off, id := range seq {
			if _, ok := where[id]; ok {
				where[id] = RowAddress(f.GetId(), uint32(off))
			}
		}
	}
	addrs := make([]uint64, len(ids))
	for i, id := range ids {
		a := where[id]
		if a == ^uint64(0) {
			return nil, Errorf(ErrInvalidInput, "lance: no row with row id %d in version %d", id, s.ver.Number())
		}
		addrs[i] = a
	}
	return d.take(ctx, s, addrs)
}

// offsetsToAddresses maps live-row offsets to row addresses.
func (d *Dataset) offsetsToAddresses(ctx context.Context, ver *Version, offsets []uint64) ([]uint64, error) {
	type span struct {
		start, live uint64 // first live offset, live rows
		frag        *tablepb.DataFragment
		dv          *DeletionVector
	}
	var spans []*span
	var total uint64
	for _, f := range ver.Manifest().GetFragments() {
		phys := f.GetPhysicalRows()
		if phys == 0 {
			files, closeFiles, err := d.openFragmentFiles(ctx, ver, f)
			if err != nil {
				return nil, err
			}
			if len(files) > 0 {
				phys = files[0].NumRows()
			}
			closeFiles()
		}
		sp := &span{start: total, frag: f, live: phys}
		if del := f.GetDeletionFile(); del != nil {
			store, err := d.BaseStore(ver, del.BaseId)
			if err != nil {
				return nil, err
			}
			if sp.dv, err = ReadDeletionFile(ctx, store, f.GetId(), del); err != nil {
				return nil, err
			}
			sp.live = phys - min(phys, sp.dv.Len())
		}
		spans = append(spans, sp)
		total += sp.live
	}
	out := make([]uint64, len(offsets))
	for i, off := range offsets {
		if off >= total {
			return nil, Errorf(ErrInvalidInput, "lance: row offset %d outside the %d rows of version %d", off, total, ver.Number())
		}
		k := sort.Search(len(spans), func(j int) bool { return spans[j].start+spans[j].live > off })
		sp := spans[k]
		local := off - sp.start
		phys := local
		if sp.dv != nil {
			// the smallest p with p+1-deleted(0..p) == local+1
			phys = uint64(sort.Search(int(local+sp.dv.Len()+1), func(p int) bool {
				return uint64(p)+1-sp.dv.countIn(0, uint64(p)+1) >= local+1
			}))
		}
		out[i] = RowAddress(sp.frag.GetId(), uint32(phys))
	}
	return out, nil
}

// take reads rows by address with the scanner's projection.
func (d *Dataset) take(ctx context.Context, s *Scanner, addrs []uint64) (arrow.RecordBatch, error) {
	mem := s.opts.Mem
	byID := map[uint64]*tablepb.DataFragment{}
	for _, f := range s.ver.Manifest().GetFragments() {
		byID[f.GetId()] = f
	}
	type group struct {
		frag  *tablepb.DataFragment
		rows  []uint64 // offsets, in output order
		outAt []int
		rec   arrow.RecordBatch
	}
	var groups []*group
	gi := map[uint64]int{}
	where := make([][2]int, len(addrs)) // group, row in group
	for i, a := range addrs {
		fid, off := SplitRowAddress(a)
		f := byID[fid]
		if f == nil {
			return nil, Errorf(ErrInvalidInput, "lance: row address %d: version %d has no fragment %d", a, s.ver.Number(), fid)
		}
		k, ok := gi[fid]
		if !ok {
			k = len(groups)
			gi[fid] = k
			groups = append(groups, &group{frag: f})
		}
		g := groups[k]
		where[i] = [2]int{k, len(g.rows)}
		g.rows = append(g.rows, uint64(off))
		g.outAt = append(g.outAt, i)
	}
	defer func() {
		for _, g := range groups {
			if g.rec != nil {
				g.rec.Release()
			}
		}
	}()
	for _, g := range groups {
		rec, err := d.takeFromFragment(ctx, s, g.frag, g.rows)
		if err != nil {
			return nil, err
		}
		g.rec = rec
	}
	if len(groups) == 1 {
		groups[0].rec.Retain()
		return groups[0].rec, nil
	}
	cols := make([]arrow.Array, s.schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for c := range cols {
		if len(addrs) == 0 {
			cols[c] = array.MakeArrayOfNull(mem, s.schema.Field(c).Type, 0)
			continue
		}
		var pieces []arrow.Array
		for i := 0; i < len(addrs); {
			g, r := where[i][0], where[i][1]
			j := i + 1
			for j < len(addrs) && where[j][0] == g && where[j][1] == r+(j-i) {
				j++
			}
			pieces = append(pieces, array.NewSlice(groups[g].rec.Column(c), int64(r), int64(r+(j-i))))
			i = j
		}
		var err error
		cols[c], err = array.Concatenate(pieces, mem)
		for _, p := range pieces {
			p.Release()
		}
		if err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(s.schema, cols, int64(len(addrs))), nil
}

// takeFromFragment reads rows (physical offsets) of one fragment.
func (d *Dataset) takeFromFragment(ctx context.Context, s *Scanner, f *tablepb.DataFragment, rows []uint64) (arrow.RecordBatch, error) {
	mem := s.opts.Mem
	files, closeFiles, err := d.openFragmentFiles(ctx, s.ver, f)
	if err != nil {
		return nil, err
	}
	defer closeFiles()
	phys := f.GetPhysicalRows()
	if phys == 0 && len(files) > 0 {
		phys = files[0].NumRows()
	}
	var dv *DeletionVector
	if del := f.GetDeletionFile(); del != nil {
		store, err := d.BaseStore(s.ver, del.BaseId)
		if err != nil {
			return nil, err
		}
		if dv, err = ReadDeletionFile(ctx, store, f.GetId(), del); err != nil {
			return nil, err
		}
	}
	for _, r := range rows {
		if r >= phys {
			return nil, Errorf(ErrInvalidInput, "lance: row address %d: fragment %d has %d rows", RowAddress(f.GetId(), uint32(r)), f.GetId(), phys)
		}
		if dv != nil && dv.Contains(uint32(r)) {
			return nil, Errorf(ErrInvalidInput, "lance: row address %d is deleted", RowAddress(f.GetId(), uint32(r)))
		}
	}
	n := len(rows)
	cols := make([]arrow.Array, 0, s.schema.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	// Columns in the same file are taken together.
	byFile := map[int][]int{}
	roots := make([]int32, len(s.columns))
	out := make([]arrow.Array, len(s.columns))
	for k, col := range s.columns {
		fi, root := fileFor(f, files, col)
		roots[k] = root
		if fi < 0 {
			out[k] = array.MakeArrayOfNull(mem, col.arrow.Type, n)
			continue
		}
		byFile[fi] = append(byFile[fi], k)
	}
	defer func() {
		for _, a := range out {
			if a != nil {
				a.Release()
			}
		}
	}()
	for _, fi := range slices.Sorted(maps.Keys(byFile)) {
		ks := byFile[fi]
		ids := make([]int32, len(ks))
		for i, k := range ks {
			ids[i] = roots[k]
		}
		rec, err := files[fi].Take(ctx, mem, rows, lancefile.ReadOptions{FieldIDs: ids})
		if err != nil {
			return nil, fmt.Errorf("lance: fragment %d: %w", f.GetId(), err)
		}
		for i, k := range ks {
			a, err := conformer(mem, files[fi].Fields(), roots[k], s.ver.Fields(), s.columns[k])(rec.Column(i))
			if err != nil {
				rec.Release()
				return nil, fmt.Errorf("lance: fragment %d column %q: %w", f.GetId(), s.columns[k].field.GetName(), err)
			}
			out[k] = a
		}
		rec.Release()
	}
	for k := range out {
		cols = append(cols, out[k])
		out[k] = nil
	}
	if s.opts.WithRowID {
		var seq []uint64
		if s.stable {
			if seq, err = d.FragmentRowIDs(ctx, f); err != nil {
				return nil, err
			}
		}
		b := array.NewUint64Builder(mem)
		for _, r := range rows {
			if seq != nil {
				b.Append(seq[r])
			} else {
				b.Append(RowAddress(f.GetId(), uint32(r)))
			}
		}
		cols = append(cols, b.NewArray())
		b.Release()
	}
	if s.opts.WithRowAddress {
		b := array.NewUint64Builder(mem)
		for _, r := range rows {
			b.Append(RowAddress(f.GetId(), uint32(r)))
		}
		cols = append(cols, b.NewArray())
		b.Release()
	}
	return array.NewRecordBatch(s.schema, cols, int64(n)), nil
}
