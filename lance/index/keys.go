package index

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// keyColumn holds the training values unboxed, in one typed slice by the
// kind of the value type, so that sorting 10^5..10^7 keys compares
// machine values (Lance's order: nulls first, then by value, then by row
// id).
type keyColumn struct {
	kind  keyKind
	null  []bool
	ints  []int64
	uints []uint64 // also bools (0, 1)
	flts  []float64
	strs  []string
}

type keyKind int

const (
	kindInt keyKind = iota
	kindUint
	kindFloat
	kindString
)

func kindOf(dt arrow.DataType) keyKind {
	switch dt.ID() {
	case arrow.BOOL, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return kindUint
	case arrow.FLOAT32, arrow.FLOAT64:
		return kindFloat
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return kindString
	}
	return kindInt
}

// appendRange appends a[lo:hi].
func (k *keyColumn) appendRange(a arrow.Array, lo, hi int) {
	for i := lo; i < hi; i++ {
		k.null = append(k.null, a.IsNull(i))
	}
	switch a := a.(type) {
	case *array.Boolean:
		for i := lo; i < hi; i++ {
			var v uint64
			if a.Value(i) {
				v = 1
			}
			k.uints = append(k.uints, v)
		}
	case *array.Int8:
		for _, v := range a.Int8Values()[lo:hi] {
			k.ints = append(k.ints, int64(v))
		}
	case *array.Int16:
		for _, v := range a.Int16Values()[lo:hi] {
			k.ints = append(k.ints, int64(v))
		}
	case *array.Int32:
		for _, v := range a.Int32Values()[lo:hi] {
			k.ints = append(k.ints, int64(v))
		}
	case *array.Int64:
		k.ints = append(k.ints, a.Int64Values()[lo:hi]...)
	case *array.Uint8:
		for _, v := range a.Uint8Values()[lo:hi] {
			k.uints = append(k.uints, uint64(v))
		}
	case *array.Uint16:
		for _, v := range a.Uint16Values()[lo:hi] {
			k.uints = append(k.uints, uint64(v))
		}
	case *array.Uint32:
		for _, v := range a.Uint32Values()[lo:hi] {
			k.uints = append(k.uints, uint64(v))
		}
	case *array.Uint64:
		k.uints = append(k.uints, a.Uint64Values()[lo:hi]...)
	case *array.Float32:
		for _, v := range a.Float32Values()[lo:hi] {
			k.flts = append(k.flts, float64(v))
		}
	case *array.Float64:
		k.flts = append(k.flts, a.Float64Values()[lo:hi]...)
	case *array.String:
		for i := lo; i < hi; i++ {
			k.strs = append(k.strs, a.Value(i))
		}
	case *array.LargeString:
		for i := lo; i < hi; i++ {
			k.strs = append(k.strs, a.Value(i))
		}
	case *array.Binary:
		for i := lo; i < hi; i++ {
			k.strs = append(k.strs, string(a.Value(i)))
		}
	case *array.LargeBinary:
		for i := lo; i < hi; i++ {
			k.strs = append(k.strs, string(a.Value(i)))
		}
	default:
		// Dates, times and timestamps: int32 or int64 storage.
		for i := lo; i < hi; i++ {
			var v int64
			if n, ok := valueAt(a, i).(int64); ok {
				v = n
			}
			k.ints = append(k.ints, v)
		}
	}
}

type sortPair[K cmp.Ordered] struct {
	k  K
	id uint64
	i  int64
}

// sortByKey orders the non-null positions by (key, id).
func sortByKey[K cmp.Ordered](keys []K, ids []uint64, pos []int64) {
	ps := make([]sortPair[K], len(pos))
	for n, i := range pos {
		ps[n] = sortPair[K]{keys[i], ids[i], i}
	}
	slices.SortFunc(ps, func(a, b sortPair[K]) int {
		if c := cmp.Compare(a.k, b.k); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	for n, p := range ps {
		pos[n] = p.i
	}
}

// sorted is the permutation of the keys in index order: nulls first (by
// row id), then by value and row id.
func (k *keyColumn) sorted(ids []uint64) []int64 {
	var nulls, vals []int64
	for i, n := range k.null {
		if n {
			nulls = append(nulls, int64(i))
		} else {
			vals = append(vals, int64(i))
		}
	}
	slices.SortFunc(nulls, func(a, b int64) int { return cmp.Compare(ids[a], ids[b]) })
	switch k.kind {
	case kindInt:
		sortByKey(k.ints, ids, vals)
	case kindUint:
		sortByKey(k.uints, ids, vals)
	case kindFloat:
		sortFloats(k.flts, ids, vals)
	case kindString:
		sortStrings(k.strs, ids, vals)
	}
	return append(nulls, vals...)
}

// sortFloats is sortByKey with NaN above every number (cmpFloat).
func sortFloats(keys []float64, ids []uint64, pos []int64) {
	ps := make([]sortPair[float64], len(pos))
	for n, i := range pos {
		ps[n] = sortPair[float64]{keys[i], ids[i], i}
	}
	slices.SortFunc(ps, func(a, b sortPair[float64]) int {
		if c := cmpFloat(a.k, b.k); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	for n, p := range ps {
		pos[n] = p.i
	}
}

// sortStrings orders positions by (string, id) through a dictionary:
// distinct strings are sorted once, then positions are bucketed by rank
// (counting sort, stable), each bucket sorted by id unless already in
// order (the scan hands ids ascending). Low-cardinality columns, the
// BITMAP case, never compare strings per row.
func sortStrings(keys []string, ids []uint64, pos []int64) {
	code := make(map[string]int32)
	codes := make([]int32, len(pos))
	var distinct []string
	for n, i := range pos {
		c, ok := code[keys[i]]
		if !ok {
			c = int32(len(distinct))
			code[keys[i]] = c
			distinct = append(distinct, keys[i])
		}
		codes[n] = c
	}
	order := make([]int32, len(distinct))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(distinct[a], distinct[b]) })
	rank := make([]int32, len(distinct))
	for r, c := range order {
		rank[c] = int32(r)
	}
	start := make([]int, len(distinct)+1)
	for _, c := range codes {
		start[rank[c]+1]++
	}
	for r := 1; r < len(start); r++ {
		start[r] += start[r-1]
	}
	out := make([]int64, len(pos))
	next := slices.Clone(start[:len(distinct)])
	for n, i := range pos {
		r := rank[codes[n]]
		out[next[r]] = i
		next[r]++
	}
	for r := range distinct {
		group := out[start[r]:start[r+1]]
		if !slices.IsSortedFunc(group, func(a, b int64) int { return cmp.Compare(ids[a], ids[b]) }) {
			slices.SortFunc(group, func(a, b int64) int { return cmp.Compare(ids[a], ids[b]) })
		}
	}
	copy(pos, out)
}

// same reports whether positions i and j hold the same key (nulls equal).
func (k *keyColumn) same(i, j int64) bool {
	if k.null[i] || k.null[j] {
		return k.null[i] == k.null[j]
	}
	switch k.kind {
	case kindInt:
		return k.ints[i] == k.ints[j]
	case kindUint:
		return k.uints[i] == k.uints[j]
	case kindFloat:
		return cmpFloat(k.flts[i], k.flts[j]) == 0
	}
	return k.strs[i] == k.strs[j]
}

// encodeSortedTreeMap is EncodeTreeMap of ascending row ids, built one
// fragment at a time without an intermediate 64-bit bitmap.
func encodeSortedTreeMap(ids []uint64) ([]byte, error) {
	var parts [][]byte
	var his []uint32
	lows := make([]uint32, 0, len(ids))
	flush := func(hi uint32) error {
		bm := roaring.New()
		bm.AddMany(lows)
		b, err := bm.ToBytes()
		if err != nil {
			return err
		}
		parts = append(parts, b)
		his = append(his, hi)
		lows = lows[:0]
		return nil
	}
	for n, id := range ids {
		hi := uint32(id >> 32)
		if n > 0 && uint32(ids[n-1]>>32) != hi {
			if err := flush(uint32(ids[n-1] >> 32)); err != nil {
				return nil, err
			}
		}
		lows = append(lows, uint32(id))
	}
	if len(ids) > 0 {
		if err := flush(uint32(ids[len(ids)-1] >> 32)); err != nil {
			return nil, err
		}
	}
	out := binary.LittleEndian.AppendUint32(nil, uint32(len(parts)))
	for n, p := range parts {
		out = binary.LittleEndian.AppendUint32(out, his[n])
		out = binary.LittleEndian.AppendUint32(out, uint32(len(p)))
		out = append(out, p...)
	}
	return out, nil
}
