package index

import (
	"context"
	"fmt"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/lance/lancefile"
)

// ZONEMAP (Lance's zonemap.rs; measured on files pylance 4.0.0 and 14.0.2
// wrote): zonemap.lance, one row per zone
//
//	min, max     T nullable   the zone's least and greatest non-null value
//	                          (NaN above every number); null when the zone
//	                          has no non-null value
//	null_count   uint32       nulls in the zone
//	nan_count    uint32       NaNs in the zone (float columns)
//	fragment_id  uint64
//	zone_start   uint64       the zone's first row offset in the fragment
//	zone_length  uint64       last offset - first offset + 1
//
// with schema metadata rows_per_zone (default "8192"); index_details
// /lance.table.ZoneMapIndexDetails, empty (Lance 14 adds fields older
// readers skip), index_version 0.

// ZoneMapFile is the ZONEMAP index file.
const ZoneMapFile = "zonemap.lance"

// DefaultRowsPerZone is Lance's rows per zone (ZONEMAP).
const DefaultRowsPerZone = 8192

type zoneMapBuilder struct {
	zoneTraining
	opts BuildOptions
}

func newZoneMapBuilder(dt arrow.DataType, opts BuildOptions) *zoneMapBuilder {
	return &zoneMapBuilder{zoneTraining: zoneTraining{keyChunks: newKeyChunks(dt)}, opts: opts}
}

func (b *zoneMapBuilder) Add(values arrow.Array, addrs []uint64) error { return b.add(values, addrs) }

func (b *zoneMapBuilder) Finish(ctx context.Context, st Store) ([]File, error) {
	defer b.release()
	all, err := b.concat(b.opts.Mem)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	rowsPerZone := uint64(b.opts.RowsPerZone)
	if rowsPerZone == 0 {
		rowsPerZone = DefaultRowsPerZone
	}
	var mins, maxs []int64 // -1: null
	var nulls, nans []uint32
	var zones zoneCols
	err = zoneSplit(b.addrs, byAddress(b.addrs), rowsPerZone, func(z zoneBound, pos []int64) error {
		lo, hi := int64(-1), int64(-1)
		var nn, nan uint32
		for _, p := range pos {
			if b.keys.null[p] {
				nn++
				continue
			}
			if b.keys.isNaN(p) {
				nan++
			}
			if lo < 0 || b.keys.compare(p, lo) < 0 {
				lo = p
			}
			if hi < 0 || b.keys.compare(p, hi) > 0 {
				hi = p
			}
		}
		mins, maxs = append(mins, lo), append(maxs, hi)
		nulls, nans = append(nulls, nn), append(nans, nan)
		zones.add(z)
		return nil
	})
	if err != nil {
		return nil, err
	}
	minA, err := takeNullable(ctx, all, mins, b.opts.Mem)
	if err != nil {
		return nil, err
	}
	defer minA.Release()
	maxA, err := takeNullable(ctx, all, maxs, b.opts.Mem)
	if err != nil {
		return nil, err
	}
	defer maxA.Release()
	cols := append([]arrow.Array{minA, maxA, u32Array(nulls, b.opts.Mem), u32Array(nans, b.opts.Mem)},
		zones.arrays(b.opts.Mem)...)
	for _, c := range cols[2:] {
		defer c.Release()
	}
	md := arrow.NewMetadata([]string{"rows_per_zone"}, []string{strconv.FormatUint(rowsPerZone, 10)})
	schema := arrow.NewSchema(append([]arrow.Field{
		{Name: "min", Type: b.dt, Nullable: true},
		{Name: "max", Type: b.dt, Nullable: true},
		{Name: "null_count", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "nan_count", Type: arrow.PrimitiveTypes.Uint32},
	}, zoneFields()...), &md)
	return writeRecordFile(ctx, st, ZoneMapFile, b.opts, schema, cols, zones.len())
}

// ---- reading ----

type zoneStats struct {
	zoneBound
	min, max        any // nil: null
	nullCount, nans uint32
}

type zoneMapReader struct {
	zones       []zoneStats
	rowsPerZone uint64
	nullRows    *roaring64.Bitmap // nil: not recorded
}

func openZoneMap(ctx context.Context, st Store) (Reader, error) {
	rec, lf, err := readAll(ctx, st, ZoneMapFile, nil)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	r := &zoneMapReader{rowsPerZone: DefaultRowsPerZone}
	md := lf.Schema().Metadata()
	if i := md.FindKey("rows_per_zone"); i >= 0 {
		n, err := strconv.ParseUint(md.Values()[i], 10, 64)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("%w: rows_per_zone %q", ErrCorrupt, md.Values()[i])
		}
		r.rowsPerZone = n
	}
	if r.nullRows, err = nullRowsOf(ctx, md, lf.GlobalBuffer, lf.NumGlobalBuffers()); err != nil {
		return nil, err
	}
	mins, maxs, nulls, err := valueStats(rec, "ZONEMAP")
	if err != nil {
		return nil, err
	}
	nans, err := column(rec, "nan_count", arrow.UINT32)
	if err != nil {
		return nil, err
	}
	bounds, err := zoneColumns(rec)
	if err != nil {
		return nil, err
	}
	for i, z := range bounds {
		if nulls.IsNull(i) || nans.IsNull(i) {
			return nil, fmt.Errorf("%w: null zone count", ErrCorrupt)
		}
		r.zones = append(r.zones, zoneStats{zoneBound: z, min: valueAt(mins, i), max: valueAt(maxs, i),
			nullCount: nulls.(*array.Uint32).Value(i), nans: nans.(*array.Uint32).Value(i)})
	}
	return r, nil
}

func (r *zoneMapReader) Type() Type { return ZoneMap }

// Search answers the rows of every zone that may hold a match (a
// superset: the caller rechecks); IS NULL is exact when the file records
// its null rows.
func (r *zoneMapReader) Search(ctx context.Context, p Predicate) (*roaring64.Bitmap, error) {
	m, err := newMatcher(p)
	if err != nil {
		return nil, err
	}
	switch p.Op {
	case Equals, Range, IsIn, IsNull:
	default:
		return nil, fmt.Errorf("%w: predicate op %d on a ZONEMAP index", ErrUnsupported, p.Op)
	}
	if p.Op == IsNull && r.nullRows != nil {
		return r.nullRows.Clone(), nil
	}
	out := roaring64.New()
	for _, z := range r.zones {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.mayMatch(z, m) {
			z.addTo(out, p.FragmentRows)
		}
	}
	return out, nil
}

// mayMatch is Lance's evaluate_zone_against_query: may zone z hold a row
// matching m?
func (r *zoneMapReader) mayMatch(z zoneStats, m *matcher) bool {
	if m.p.Op == IsNull {
		return z.nullCount > 0
	}
	if z.min == nil || z.max == nil {
		// No comparable value, or bounds a writer did not record: keep
		// the zone unless its counts prove it holds only nulls and NaNs.
		if z.length <= uint64(z.nullCount)+uint64(z.nans) {
			return m.wantsNaN() && z.nans > 0
		}
		return true
	}
	if m.wantsNaN() && z.nans > 0 {
		return true
	}
	return m.overlaps(z.min, z.max)
}

// wantsNaN: does the predicate match NaN values (an equality with NaN)?
func (m *matcher) wantsNaN() bool {
	if m.p.Op != Equals && m.p.Op != IsIn {
		return false
	}
	for _, v := range m.values {
		if f, ok := v.(float64); ok && f != f {
			return true
		}
	}
	return false
}

// ---- helpers shared by the zoned builders ----

func concatOrEmpty(chunks []arrow.Array, dt arrow.DataType, mem memory.Allocator) (arrow.Array, error) {
	if len(chunks) == 0 {
		return array.MakeArrayOfNull(mem, dt, 0), nil
	}
	return array.Concatenate(chunks, mem)
}

// takeNullable gathers values[idx...], a negative index giving a null.
func takeNullable(ctx context.Context, values arrow.Array, idx []int64, mem memory.Allocator) (arrow.Array, error) {
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	for _, i := range idx {
		if i < 0 {
			ib.AppendNull()
		} else {
			ib.Append(i)
		}
	}
	ia := ib.NewArray()
	defer ia.Release()
	return takeWith(ctx, values, ia, mem)
}

func u32Array(v []uint32, mem memory.Allocator) arrow.Array {
	b := array.NewUint32Builder(mem)
	defer b.Release()
	b.AppendValues(v, nil)
	return b.NewArray()
}

func u64Array(v []uint64, mem memory.Allocator) arrow.Array {
	b := array.NewUint64Builder(mem)
	defer b.Release()
	b.AppendValues(v, nil)
	return b.NewArray()
}

func takeWith(ctx context.Context, values, idx arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	return compute.TakeArray(compute.WithAllocator(ctx, mem), values, idx)
}

// writeRecordFile writes the index file of the one record of cols.
func writeRecordFile(ctx context.Context, st Store, name string, opts BuildOptions, schema *arrow.Schema, cols []arrow.Array, rows int) ([]File, error) {
	rec := array.NewRecordBatch(schema, cols, int64(rows))
	defer rec.Release()
	f, err := writeIndexFile(ctx, st, name, opts, schema, rec)
	if err != nil {
		return nil, err
	}
	return []File{f}, nil
}

// writeIndexFile writes one index file of one record (none when empty).
func writeIndexFile(ctx context.Context, st Store, name string, opts BuildOptions, schema *arrow.Schema, rec arrow.RecordBatch, globals ...[]byte) (File, error) {
	var rows func(*lancefile.Writer) error
	if rec.NumRows() > 0 {
		rows = func(w *lancefile.Writer) error { return w.Write(rec) }
	}
	return writeVectorFile(ctx, st, name, schema, rows, opts.FileVersion, globals...)
}
