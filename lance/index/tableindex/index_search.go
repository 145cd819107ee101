package tableindex

// The scalar index lookup the query engine uses: which index can answer a
// predicate on a column, and the live row addresses it finds in the
// fragments it covers (the other fragments are scanned, as Lance does).

import (
	"context"
	"slices"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/index"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
)

// ScalarIndexMatch is an index's answer to a predicate at one version.
type ScalarIndexMatch struct {
	// Index is the name of the index that answered, Type its type.
	Index string
	Type  index.Type
	// Rows are the row addresses (fragment id << 32 | offset) of the live
	// rows of the covered fragments that match: exactly, or a superset
	// when Type is not Exact.
	Rows *roaring64.Bitmap
	// Covered are the fragments of the version the index covers, in
	// manifest order; rows of the other fragments must be filtered by a
	// scan.
	Covered []uint64
}

// ScalarIndexFor finds the index of v on column (a top-level column name)
// that answers op: a LABEL_LIST for HasAny/HasAll, an NGRAM for Contains,
// else a BITMAP for Equals/IsIn/IsNull and a BTREE for Range (either one
// when the preferred type is missing), then a BLOOMFILTER (not for Range)
// or a ZONEMAP, whose answers are a superset (Type.Exact).
// ErrIndexNotFound when there is none.
func ScalarIndexFor(v *lance.Version, column string, op index.Op) (string, index.Type, error) {
	f, err := lance.FieldByPath(v.Fields(), column)
	if err != nil {
		return "", "", err
	}
	// Exact types first; the inexact ones (zoned, n-gram) answer a
	// superset the caller rechecks.
	var prefer []index.Type
	switch op {
	case index.HasAny, index.HasAll:
		prefer = []index.Type{index.LabelList}
	case index.Range:
		prefer = []index.Type{index.BTree, index.Bitmap, index.ZoneMap}
	case index.Contains:
		prefer = []index.Type{index.NGram}
	case index.IsNull:
		prefer = []index.Type{index.Bitmap, index.BTree, index.ZoneMap, index.BloomFilter, index.NGram}
	default:
		prefer = []index.Type{index.Bitmap, index.BTree, index.BloomFilter, index.ZoneMap}
	}
	for _, want := range prefer {
		for _, info := range lance.ListIndices(v) {
			segs := segmentsNamed(v, info.Name)
			if len(segs) == 0 || !slices.Equal(segs[0].GetFields(), []int32{f.GetId()}) {
				continue
			}
			if index.TypeName(segs[0].GetIndexDetails().GetTypeUrl()) == string(want) {
				return info.Name, want, nil
			}
		}
	}
	return "", "", lance.Errorf(lance.ErrIndexNotFound, "lance: no index on column %q answers this predicate", column)
}

// SearchScalarIndex answers p on column with the column's index at v
// (ScalarIndexFor): every segment is searched, row ids are turned into row
// addresses (stable row ids through the fragments' row id sequences), and
// rows deleted since the index was built are dropped.
func SearchScalarIndex(ctx context.Context, d *lance.Dataset, v *lance.Version, column string, p index.Predicate) (*ScalarIndexMatch, error) {
	name, typ, err := ScalarIndexFor(v, column, p.Op)
	if err != nil {
		return nil, err
	}
	segs := segmentsNamed(v, name)
	covered, err := coveredFragments(segs)
	if err != nil {
		return nil, err
	}
	if !typ.Exact() && p.FragmentRows == nil {
		// zones are clipped to the data (a zone file's spans are not trusted)
		p.FragmentRows = map[uint64]uint64{}
		for _, f := range v.Manifest().GetFragments() {
			rows := f.GetPhysicalRows()
			if rows == 0 {
				rows = 1 << 32 // not recorded: the resolution below checks
			}
			p.FragmentRows[f.GetId()] = rows
		}
	}
	stable := v.Manifest().GetReaderFeatureFlags()&lance.FlagStableRowIDs != 0
	// ids are stable row ids (on a dataset with them), addrs row addresses: segments of either
	// domain may answer (an index rebuilt by Lance 14 beside older segments).
	ids, addrs := roaring64.New(), roaring64.New()
	for _, s := range segs {
		r, err := OpenScalarIndex(ctx, d, v, s)
		if err != nil {
			return nil, err
		}
		rows, err := r.Search(ctx, p)
		if err != nil {
			return nil, err
		}
		if stable && !lance.IndexStoresAddresses(s) {
			ids.Or(rows)
		} else {
			addrs.Or(rows)
		}
	}
	m := &ScalarIndexMatch{Index: name, Type: typ, Rows: roaring64.New()}
	for _, f := range v.Manifest().GetFragments() {
		if !covered[uint32(f.GetId())] {
			continue
		}
		m.Covered = append(m.Covered, f.GetId())
		var dv *lance.DeletionVector
		if del := f.GetDeletionFile(); del != nil {
			store, err := d.BaseStore(v, del.BaseId)
			if err != nil {
				return nil, err
			}
			if dv, err = lance.ReadDeletionFile(ctx, store, f.GetId(), del); err != nil {
				return nil, err
			}
		}
		if err := addressesOf(ctx, d, f, addrs, false, dv, m.Rows); err != nil {
			return nil, err
		}
		if stable && !ids.IsEmpty() {
			if err := addressesOf(ctx, d, f, ids, true, dv, m.Rows); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// addressesOf adds to out the live row addresses of fragment f whose row
// id is in ids.
func addressesOf(ctx context.Context, d *lance.Dataset, f *tablepb.DataFragment, ids *roaring64.Bitmap, stable bool, dv *lance.DeletionVector, out *roaring64.Bitmap) error {
	live := func(off uint32) bool { return dv == nil || !dv.Contains(off) }
	if !stable {
		lo := lance.RowAddress(f.GetId(), 0)
		hi := lance.RowAddress(f.GetId(), uint32(min(f.GetPhysicalRows(), 1<<32-1)))
		it := ids.Iterator()
		it.AdvanceIfNeeded(lo)
		for it.HasNext() {
			a := it.Next()
			if a >= hi {
				break
			}
			if _, off := lance.SplitRowAddress(a); live(off) {
				out.Add(a)
			}
		}
		return nil
	}
	rowIDs, err := d.FragmentRowIDs(ctx, f)
	if err != nil {
		return err
	}
	for off, id := range rowIDs {
		if ids.Contains(id) && live(uint32(off)) {
			out.Add(lance.RowAddress(f.GetId(), uint32(off)))
		}
	}
	return nil
}

// IndexCoverage lists the fragments of v the named index covers, in
// manifest order (what a query planner shows before searching it).
func IndexCoverage(v *lance.Version, name string) ([]uint64, error) {
	segs, err := IndexSegments(v, name)
	if err != nil {
		return nil, err
	}
	covered, err := coveredFragments(segs)
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, f := range v.Manifest().GetFragments() {
		if covered[uint32(f.GetId())] {
			out = append(out, f.GetId())
		}
	}
	return out, nil
}

// RowResolver turns the row ids an index recorded into live row
// addresses of one version, for the fragments an index covers: the id is
// the address on a table without stable row ids, else it is looked up in
// the fragments' row id sequences; rows deleted since the build, and rows
// of fragments outside the set, resolve to nothing.
type RowResolver struct {
	stable bool
	frags  map[uint64]resolvedFrag
	ids    map[uint64]uint64 // stable row id -> address
}

type resolvedFrag struct {
	phys uint64
	dv   *lance.DeletionVector
}

// NewRowResolver prepares the resolution of row ids in the fragments
// frags of v.
func NewRowResolver(ctx context.Context, d *lance.Dataset, v *lance.Version, frags []uint64) (*RowResolver, error) {
	r := &RowResolver{stable: v.Manifest().GetReaderFeatureFlags()&lance.FlagStableRowIDs != 0, frags: map[uint64]resolvedFrag{}}
	want := map[uint64]bool{}
	for _, f := range frags {
		want[f] = true
	}
	if r.stable {
		r.ids = map[uint64]uint64{}
	}
	for _, f := range v.Manifest().GetFragments() {
		if !want[f.GetId()] {
			continue
		}
		rf := resolvedFrag{phys: f.GetPhysicalRows()}
		if del := f.GetDeletionFile(); del != nil {
			store, err := d.BaseStore(v, del.BaseId)
			if err != nil {
				return nil, err
			}
			if rf.dv, err = lance.ReadDeletionFile(ctx, store, f.GetId(), del); err != nil {
				return nil, err
			}
		}
		if rf.phys == 0 {
			rf.phys = 1 << 32 // unknown: the take checks the bound
		}
		r.frags[f.GetId()] = rf
		if r.stable {
			seq, err := d.FragmentRowIDs(ctx, f)
			if err != nil {
				return nil, err
			}
			for off, id := range seq {
				r.ids[id] = lance.RowAddress(f.GetId(), uint32(off))
			}
		}
	}
	return r, nil
}

// Address is the live row address of row id (ok false: deleted, or not in
// the fragments).
func (r *RowResolver) Address(id uint64) (uint64, bool) {
	addr := id
	if r.stable {
		a, ok := r.ids[id]
		if !ok {
			return 0, false
		}
		addr = a
	}
	fid, off := lance.SplitRowAddress(addr)
	f, ok := r.frags[fid]
	if !ok || uint64(off) >= f.phys || f.dv != nil && f.dv.Contains(off) {
		return 0, false
	}
	return addr, true
}
