package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cespare/xxhash/v2"
)

// BLOOMFILTER (Lance's bloomfilter.rs; measured on files pylance 4.0.0
// and 14.0.2 wrote): bloomfilter.lance, one row per zone of
// bloomfilter_item rows
//
//	fragment_id, zone_start, zone_length  uint64 (as ZONEMAP)
//	has_null                              bool
//	bloom_filter_data                     binary, a split block bloom
//	                                      filter (SBBF) of the zone's values
//
// with schema metadata bloomfilter_item ("8192") and
// bloomfilter_probability ("0.00057"); index_details
// /lance.index.pb.BloomFilterIndexDetails, empty; index_version 0.
//
// The SBBF is Parquet's: 32-byte blocks of eight little-endian u32 words;
// a value's hash is xxHash64 (seed 0) of its little-endian bytes at the
// column's width (strings and binaries: their bytes); the block is
// ((hash >> 32) * blocks) >> 32 and word i gets bit (uint32(hash) *
// salt[i]) >> 27. Lance sizes the filter from the item count and the
// probability: 32 KiB for its defaults (measured; Lance's comment says
// 16 KiB).

// BloomFilterFile is the BLOOMFILTER index file.
const BloomFilterFile = "bloomfilter.lance"

// Lance's bloom filter defaults.
const (
	DefaultBloomItems       = 8192
	DefaultBloomProbability = "0.00057"
	// defaultBloomBytes is the filter size Lance's SbbfBuilder gives
	// 8192 items at probability 0.00057 (measured on pylance 4.0.0's and
	// 14.0.2's files: 32768 bytes, the power of two above Parquet's
	// -8n/ln(1-p^(1/8)) bits).
	defaultBloomBytes = 32768
	// maxBloomBytes is the largest filter a file may hold (Lance's
	// maximum, 128 MiB).
	maxBloomBytes = 128 << 20
)

var sbbfSalt = [8]uint32{0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31}

// sbbf is a split block bloom filter over its serialized bytes.
type sbbf []byte

func (f sbbf) blocks() uint64 { return uint64(len(f) / 32) }

func (f sbbf) block(h uint64) []byte {
	i := ((h >> 32) * f.blocks()) >> 32
	return f[i*32 : i*32+32]
}

func (f sbbf) insert(h uint64) {
	b := f.block(h)
	for i, s := range sbbfSalt {
		w := binary.LittleEndian.Uint32(b[i*4:])
		binary.LittleEndian.PutUint32(b[i*4:], w|1<<((uint32(h)*s)>>27))
	}
}

func (f sbbf) check(h uint64) bool {
	b := f.block(h)
	for i, s := range sbbfSalt {
		if binary.LittleEndian.Uint32(b[i*4:])&(1<<((uint32(h)*s)>>27)) == 0 {
			return false
		}
	}
	return true
}

// bloomSupported: the value types Lance's bloom filter hashes, the
// scalar value types but bool.
func bloomSupported(dt arrow.DataType) bool {
	return dt.ID() != arrow.BOOL && supportedValueType(dt)
}

// hashAt is the hash Lance gives element i of a (not null).
func hashAt(a arrow.Array, i int) uint64 {
	var b [8]byte
	switch a := a.(type) {
	case *array.Int8:
		return xxhash.Sum64([]byte{byte(a.Value(i))})
	case *array.Uint8:
		return xxhash.Sum64([]byte{a.Value(i)})
	case *array.Int16:
		binary.LittleEndian.PutUint16(b[:], uint16(a.Value(i)))
		return xxhash.Sum64(b[:2])
	case *array.Uint16:
		binary.LittleEndian.PutUint16(b[:], a.Value(i))
		return xxhash.Sum64(b[:2])
	case *array.Int32:
		binary.LittleEndian.PutUint32(b[:], uint32(a.Value(i)))
		return xxhash.Sum64(b[:4])
	case *array.Uint32:
		binary.LittleEndian.PutUint32(b[:], a.Value(i))
		return xxhash.Sum64(b[:4])
	case *array.Date32:
		binary.LittleEndian.PutUint32(b[:], uint32(a.Value(i)))
		return xxhash.Sum64(b[:4])
	case *array.Time32:
		binary.LittleEndian.PutUint32(b[:], uint32(a.Value(i)))
		return xxhash.Sum64(b[:4])
	case *array.Float32:
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(a.Value(i)))
		return xxhash.Sum64(b[:4])
	case *array.Int64:
		binary.LittleEndian.PutUint64(b[:], uint64(a.Value(i)))
	case *array.Uint64:
		binary.LittleEndian.PutUint64(b[:], a.Value(i))
	case *array.Date64:
		binary.LittleEndian.PutUint64(b[:], uint64(a.Value(i)))
	case *array.Time64:
		binary.LittleEndian.PutUint64(b[:], uint64(a.Value(i)))
	case *array.Timestamp:
		binary.LittleEndian.PutUint64(b[:], uint64(a.Value(i)))
	case *array.Float64:
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(a.Value(i)))
	case *array.String:
		return xxhash.Sum64String(a.Value(i))
	case *array.LargeString:
		return xxhash.Sum64String(a.Value(i))
	case *array.Binary:
		return xxhash.Sum64(a.Value(i))
	case *array.LargeBinary:
		return xxhash.Sum64(a.Value(i))
	}
	return xxhash.Sum64(b[:])
}

// queryHashes are the hashes a predicate value may have in a filter: the
// file does not record the column's type, so an integer is hashed at
// every width it fits and a float as float64 and (when exact) float32;
// zero also with the other sign, which the SDK's filter tells apart and
// the scan does not. Checking all of them only adds false positives.
func queryHashes(v any) []uint64 {
	var out []uint64
	var b [8]byte
	put := func(n int) { out = append(out, xxhash.Sum64(b[:n])) }
	switch v := v.(type) {
	case int64:
		if v >= math.MinInt8 && v <= math.MaxUint8 {
			b[0] = byte(v)
			put(1)
		}
		if v >= math.MinInt16 && v <= math.MaxUint16 {
			binary.LittleEndian.PutUint16(b[:], uint16(v))
			put(2)
		}
		if v >= math.MinInt32 && v <= math.MaxUint32 {
			binary.LittleEndian.PutUint32(b[:], uint32(v))
			put(4)
		}
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		put(8)
	case uint64:
		if v <= math.MaxInt64 {
			return queryHashes(int64(v))
		}
		binary.LittleEndian.PutUint64(b[:], v)
		put(8)
	case float64:
		fs := []float64{v}
		if v == 0 {
			fs = append(fs, -v)
		}
		for _, f := range fs {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(f))
			put(8)
			if f32 := float32(f); float64(f32) == f || f != f {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(f32))
				put(4)
			}
		}
	case string:
		out = append(out, xxhash.Sum64String(v))
	case bool:
		// Lance hashes no booleans: never built on one.
	}
	return out
}

type bloomBuilder struct {
	zoneTraining
	opts BuildOptions
}

func newBloomBuilder(dt arrow.DataType, opts BuildOptions) (Builder, error) {
	if !bloomSupported(dt) {
		return nil, fmt.Errorf("%w: a BLOOMFILTER index cannot be created on a column of type %s", ErrUnsupported, dt)
	}
	return &bloomBuilder{zoneTraining: zoneTraining{keyChunks: newKeyChunks(dt)}, opts: opts}, nil
}

func (b *bloomBuilder) Add(values arrow.Array, addrs []uint64) error { return b.add(values, addrs) }

func (b *bloomBuilder) Finish(ctx context.Context, st Store) ([]File, error) {
	defer b.release()
	all, err := b.concat(b.opts.Mem)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	var zones zoneCols
	var hasNull []bool
	var filters [][]byte
	err = zoneSplit(b.addrs, byAddress(b.addrs), DefaultBloomItems, func(z zoneBound, pos []int64) error {
		f := make(sbbf, defaultBloomBytes)
		null := false
		for _, p := range pos {
			if all.IsNull(int(p)) {
				null = true
				continue
			}
			f.insert(hashAt(all, int(p)))
		}
		zones.add(z)
		hasNull, filters = append(hasNull, null), append(filters, f)
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	bb := array.NewBooleanBuilder(b.opts.Mem)
	bb.AppendValues(hasNull, nil)
	nullA := bb.NewArray()
	bb.Release()
	defer nullA.Release()
	db := array.NewBinaryBuilder(b.opts.Mem, arrow.BinaryTypes.Binary)
	db.AppendValues(filters, nil)
	dataA := db.NewArray()
	db.Release()
	defer dataA.Release()
	cols := zones.arrays(b.opts.Mem)
	for _, c := range cols {
		defer c.Release()
	}
	md := arrow.NewMetadata([]string{"bloomfilter_item", "bloomfilter_probability"},
		[]string{strconv.Itoa(DefaultBloomItems), DefaultBloomProbability})
	schema := arrow.NewSchema(append(zoneFields(),
		arrow.Field{Name: "has_null", Type: arrow.FixedWidthTypes.Boolean},
		arrow.Field{Name: "bloom_filter_data", Type: arrow.BinaryTypes.Binary},
	), &md)
	return writeRecordFile(ctx, st, BloomFilterFile, b.opts, schema, append(cols, nullA, dataA), zones.len())
}

// ---- reading ----

type bloomZone struct {
	zoneBound
	hasNull bool
	filter  sbbf
}

type bloomReader struct {
	zones    []bloomZone
	nullRows *roaring64.Bitmap // nil: not recorded
}

func openBloom(ctx context.Context, st Store) (Reader, error) {
	rec, lf, err := readAll(ctx, st, BloomFilterFile, nil)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	r := &bloomReader{}
	if r.nullRows, err = nullRowsOf(ctx, lf.Schema().Metadata(), lf.GlobalBuffer, lf.NumGlobalBuffers()); err != nil {
		return nil, err
	}
	bounds, err := zoneColumns(rec)
	if err != nil {
		return nil, err
	}
	nulls, err := column(rec, "has_null", arrow.BOOL)
	if err != nil {
		return nil, err
	}
	data, err := column(rec, "bloom_filter_data", arrow.NULL)
	if err != nil {
		return nil, err
	}
	for i, z := range bounds {
		b, ok := binaryAt(data, i)
		if !ok {
			return nil, fmt.Errorf("%w: bloom_filter_data is %s", ErrCorrupt, data.DataType())
		}
		if data.IsNull(i) || len(b) == 0 || len(b)%32 != 0 || len(b) > maxBloomBytes {
			return nil, fmt.Errorf("%w: bloom filter of %d bytes", ErrCorrupt, len(b))
		}
		if nulls.IsNull(i) {
			return nil, fmt.Errorf("%w: null has_null", ErrCorrupt)
		}
		r.zones = append(r.zones, bloomZone{zoneBound: z, hasNull: nulls.(*array.Boolean).Value(i), filter: sbbf(append([]byte(nil), b...))})
	}
	return r, nil
}

func (r *bloomReader) Type() Type { return BloomFilter }

// Search answers the rows of every zone whose filter may hold a value
// (a superset); IS NULL is exact when the file records its null rows.
func (r *bloomReader) Search(ctx context.Context, p Predicate) (*roaring64.Bitmap, error) {
	var hashes []uint64
	switch p.Op {
	case IsNull:
		if r.nullRows != nil {
			return r.nullRows.Clone(), nil
		}
	case Equals, IsIn:
		if p.Op == Equals && len(p.Values) != 1 {
			return nil, fmt.Errorf("%w: equality with %d values", ErrUnsupported, len(p.Values))
		}
		for _, v := range p.Values {
			n, err := normalize(v)
			if err != nil {
				return nil, err
			}
			hashes = append(hashes, queryHashes(n)...)
		}
	default:
		return nil, fmt.Errorf("%w: predicate op %d on a BLOOMFILTER index", ErrUnsupported, p.Op)
	}
	out := roaring64.New()
	for _, z := range r.zones {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// A value no width hashes (never built: Lance filters no
		// booleans) keeps every zone.
		hit := (p.Op == IsNull && z.hasNull) || (p.Op != IsNull && len(hashes) == 0)
		for _, h := range hashes {
			if hit {
				break
			}
			hit = z.filter.check(h)
		}
		if hit {
			z.addTo(out, p.FragmentRows)
		}
	}
	return out, nil
}
