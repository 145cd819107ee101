package index

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The zoned indices (ZONEMAP, BLOOMFILTER) split each fragment into zones
// of at most rows-per-zone indexed rows and keep a summary per zone; a
// search answers every row address of the zones whose summary may hold a
// match, a superset the caller rechecks (Lance's SearchResult::AtMost).
// A zone is (fragment_id, zone_start, zone_length): the row offsets
// [zone_start, zone_start+zone_length) of the fragment, the span from its
// first to its last indexed row. Zones hold row addresses whatever the
// dataset's row ids (Lance's results_are_row_addresses).

// zoneBound is one zone of a fragment.
type zoneBound struct {
	frag, start, length uint64
}

// addTo adds the zone's row addresses to out, clipped to the fragment's
// physical rows when rows is set (Predicate.FragmentRows).
func (z zoneBound) addTo(out *roaring64.Bitmap, rows map[uint64]uint64) {
	n := z.length
	if rows != nil {
		phys, ok := rows[z.frag]
		if !ok || z.start >= phys {
			return
		}
		n = min(n, phys-z.start)
	}
	if n == 0 {
		return
	}
	lo := z.frag<<32 | z.start
	out.AddRange(lo, lo+n)
}

// zoneCols collects the (fragment_id, zone_start, zone_length) columns of
// the zones a zoned index file lists.
type zoneCols struct {
	frags, starts, lengths []uint64
}

func (c *zoneCols) add(z zoneBound) {
	c.frags, c.starts, c.lengths = append(c.frags, z.frag), append(c.starts, z.start), append(c.lengths, z.length)
}

func (c *zoneCols) len() int { return len(c.frags) }

// arrays are the three columns, for the caller to release.
func (c *zoneCols) arrays(mem memory.Allocator) []arrow.Array {
	return []arrow.Array{u64Array(c.frags, mem), u64Array(c.starts, mem), u64Array(c.lengths, mem)}
}

// zoneFields are the fields of zoneCols' arrays, as Lance writes them.
func zoneFields() []arrow.Field {
	return []arrow.Field{
		{Name: "fragment_id", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "zone_start", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "zone_length", Type: arrow.PrimitiveTypes.Uint64},
	}
}

// maxZoneLength bounds a zone read from a file: a zone lies within one
// fragment, whose offsets are 32-bit.
const maxZoneLength = 1 << 32

// checkZone validates a zone read from an index file.
func checkZone(z zoneBound) error {
	if z.frag >= 1<<32 || z.start >= maxZoneLength || z.length > maxZoneLength-z.start {
		return fmt.Errorf("%w: zone (fragment %d, start %d, length %d)", ErrCorrupt, z.frag, z.start, z.length)
	}
	return nil
}

// zoneSplit lists the zones of the positions perm (ordered by row address
// addrs[perm[i]]): a new zone starts at every fragment and after
// rowsPerZone rows. fn receives each zone with its positions.
func zoneSplit(addrs []uint64, perm []int64, rowsPerZone uint64, fn func(z zoneBound, pos []int64) error) error {
	for lo := 0; lo < len(perm); {
		frag := addrs[perm[lo]] >> 32
		hi := lo + 1
		for hi < len(perm) && uint64(hi-lo) < rowsPerZone && addrs[perm[hi]]>>32 == frag {
			hi++
		}
		first, last := addrs[perm[lo]]&math.MaxUint32, addrs[perm[hi-1]]&math.MaxUint32
		if err := fn(zoneBound{frag: frag, start: first, length: last - first + 1}, perm[lo:hi]); err != nil {
			return err
		}
		lo = hi
	}
	return nil
}

// byAddress is the permutation of addrs in ascending order (the scan
// hands them in order: then the identity).
func byAddress(addrs []uint64) []int64 {
	perm := make([]int64, len(addrs))
	for i := range perm {
		perm[i] = int64(i)
	}
	if !slices.IsSorted(addrs) {
		slices.SortStableFunc(perm, func(a, b int64) int {
			switch {
			case addrs[a] < addrs[b]:
				return -1
			case addrs[a] > addrs[b]:
				return 1
			}
			return 0
		})
	}
	return perm
}

// zoneColumns reads the zone columns every zoned index file has.
func zoneColumns(rec arrow.RecordBatch) ([]zoneBound, error) {
	cols := make([]*array.Uint64, 3)
	for i, name := range []string{"fragment_id", "zone_start", "zone_length"} {
		c, err := column(rec, name, arrow.NULL)
		if err != nil {
			return nil, err
		}
		switch a := c.(type) {
		case *array.Uint64:
			cols[i] = a
		case *array.Uint32:
			// zone_length is UInt32 in Lance's format notes; widen it.
			b := array.NewUint64Builder(memory.DefaultAllocator)
			for j := range a.Len() {
				b.Append(uint64(a.Value(j)))
			}
			cols[i] = b.NewUint64Array()
			b.Release()
			defer cols[i].Release()
		default:
			return nil, fmt.Errorf("%w: column %q is %s", ErrCorrupt, name, c.DataType())
		}
	}
	out := make([]zoneBound, rec.NumRows())
	for i := range out {
		for _, c := range cols {
			if c.IsNull(i) {
				return nil, fmt.Errorf("%w: null zone bound", ErrCorrupt)
			}
		}
		out[i] = zoneBound{frag: cols[0].Value(i), start: cols[1].Value(i), length: cols[2].Value(i)}
		if err := checkZone(out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// nullRowsOf reads the exact null rows a newer Lance (14) records in the
// global buffer named by the schema metadata key null_bitmap (nil: the
// file has none, the zones' null flags answer IS NULL).
func nullRowsOf(ctx context.Context, md arrow.Metadata, read func(ctx context.Context, i int) ([]byte, error), n int) (*roaring64.Bitmap, error) {
	i := md.FindKey(ZoneNullBitmapKey)
	if i < 0 {
		return nil, nil
	}
	v := md.Values()[i]
	idx, err := strconv.Atoi(v)
	if err != nil || idx <= 0 || idx >= n {
		return nil, fmt.Errorf("%w: %s = %q", ErrCorrupt, ZoneNullBitmapKey, v)
	}
	b, err := read(ctx, idx)
	if err != nil {
		return nil, fmt.Errorf("%w: null bitmap: %v", ErrCorrupt, err)
	}
	return DecodeTreeMap(b)
}

// ZoneNullBitmapKey is the schema metadata key naming the global buffer
// of a zoned index file that holds its exact null rows (Lance 14 writes
// it; older writers, and lancecat, do not).
const ZoneNullBitmapKey = "null_bitmap"

// ---- the training values of a zoned index ----

// zoneTraining keeps the values and row addresses of a zoned build.
type zoneTraining struct {
	keyChunks
	addrs []uint64
	rows  uint64
}

func (t *zoneTraining) Rows() uint64 { return t.rows }

func (t *zoneTraining) add(values arrow.Array, addrs []uint64) error {
	if values.Len() != len(addrs) {
		return fmt.Errorf("lance index: %d values for %d row addresses", values.Len(), len(addrs))
	}
	if err := t.addChunk(values); err != nil {
		return err
	}
	t.addrs = append(t.addrs, addrs...)
	t.rows += uint64(len(addrs))
	return nil
}

func (t *zoneTraining) release() {
	t.keyChunks.release()
	t.addrs = nil
}

// isNaN: is position i a NaN (float columns)?
func (k *keyColumn) isNaN(i int64) bool {
	return k.kind == kindFloat && math.IsNaN(k.flts[i])
}

// compare orders two non-null positions as Lance's statistics do (NaN
// above every number).
func (k *keyColumn) compare(i, j int64) int {
	switch k.kind {
	case kindInt:
		return cmp.Compare(k.ints[i], k.ints[j])
	case kindUint:
		return cmp.Compare(k.uints[i], k.uints[j])
	case kindFloat:
		return cmpFloat(k.flts[i], k.flts[j])
	}
	return cmp.Compare(k.strs[i], k.strs[j])
}
