package index

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/lance/lancefile"
)

// Rebuilding the inexact segments (ZONEMAP, BLOOMFILTER, NGRAM): what
// Lance's update (optimize added rows) and remap (compaction moved rows)
// do. A zone is kept with its summary and its rows mapped: the rows that
// survive in new places become one zone per run of consecutive new
// addresses (Lance's remap_zone for the bloom filter), whose summary,
// over a superset of its rows, still bounds them. New rows get zones of
// their own, as Lance's rebuild_zones appends them. An n-gram segment's
// posting lists are mapped row by row and merged with the new rows'.

// inexactRebuild is the rebuild of one inexact type.
type inexactRebuild interface {
	Builder
	addSegment(ctx context.Context, st Store, m RowMap) error
}

func newInexactRebuild(t Type, valueType arrow.DataType, opts BuildOptions) (inexactRebuild, error) {
	switch t {
	case ZoneMap, BloomFilter:
		return &zoneRebuild{t: t, dt: valueType, opts: opts}, nil
	case NGram:
		b, err := newNGramBuilder(arrow.BinaryTypes.String, opts)
		if err != nil {
			return nil, err
		}
		return &ngramRebuild{ngramBuilder: b.(*ngramBuilder)}, nil
	}
	return nil, fmt.Errorf("%w: rebuilding a %s index", ErrUnsupported, t)
}

// inspectInexact is InspectScalar for the inexact types (a bloom filter
// does not record its value type: nil, the rows added decide).
func inspectInexact(ctx context.Context, t Type, st Store) (ScalarSegmentInfo, error) {
	switch t {
	case ZoneMap:
		dt, err := fieldType(ctx, st, ZoneMapFile, "min")
		return ScalarSegmentInfo{ValueType: dt}, err
	case BloomFilter:
		return ScalarSegmentInfo{}, nil
	case NGram:
		return ScalarSegmentInfo{ValueType: arrow.BinaryTypes.String}, nil
	}
	return ScalarSegmentInfo{}, fmt.Errorf("%w: index type %q", ErrUnsupported, t)
}

// ---- zones ----

// zoneEmit is one zone of the rebuilt segment: row src of the old
// records' zone columns over bound.
type zoneEmit struct {
	src   int
	bound zoneBound
}

type zoneRebuild struct {
	t     Type
	dt    arrow.DataType
	opts  BuildOptions
	olds  []arrow.RecordBatch
	md    *arrow.Metadata // the first segment's schema metadata
	emits []zoneEmit
	base  int // rows of the old records so far
	fresh Builder
}

func (r *zoneRebuild) file() string {
	if r.t == ZoneMap {
		return ZoneMapFile
	}
	return BloomFilterFile
}

func (r *zoneRebuild) addSegment(ctx context.Context, st Store, m RowMap) error {
	rec, lf, err := readAll(ctx, st, r.file(), nil)
	if err != nil {
		return err
	}
	if r.md == nil {
		r.md = zoneMetadata(lf.Schema().Metadata())
	}
	return r.addRecord(rec, m)
}

// zoneMetadata is a zone file's schema metadata without Lance 14's
// null_bitmap (the rebuilt file has no such global buffer: the zones'
// null flags answer IS NULL, as for older segments).
func zoneMetadata(md arrow.Metadata) *arrow.Metadata {
	var keys, values []string
	for i, k := range md.Keys() {
		if k != ZoneNullBitmapKey {
			keys, values = append(keys, k), append(values, md.Values()[i])
		}
	}
	out := arrow.NewMetadata(keys, values)
	return &out
}

// sameFields: do two zone files have the same columns (names and types)?
func sameFields(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.NumFields() {
		if a.Field(i).Name != b.Field(i).Name || !arrow.TypeEqual(a.Field(i).Type, b.Field(i).Type) {
			return false
		}
	}
	return true
}

// addRecord takes rec (a zone file's rows; released by Finish) with its
// zones' rows mapped by m.
func (r *zoneRebuild) addRecord(rec arrow.RecordBatch, m RowMap) error {
	if len(r.olds) > 0 && !sameFields(r.olds[0].Schema(), rec.Schema()) {
		schema := rec.Schema()
		rec.Release()
		return fmt.Errorf("%w: segments of different schemas (%s)", ErrUnsupported, schema)
	}
	bounds, err := zoneColumns(rec)
	if err != nil {
		rec.Release()
		return err
	}
	r.olds = append(r.olds, rec)
	for i, z := range bounds {
		zs, err := remapZone(z, m)
		if err != nil {
			return err
		}
		for _, nz := range zs {
			r.emits = append(r.emits, zoneEmit{src: r.base + i, bound: nz})
		}
	}
	r.base += len(bounds)
	return nil
}

// remapZone maps zone z's rows through m: one zone per run of
// consecutive new addresses in one fragment (nil m: z itself).
func remapZone(z zoneBound, m RowMap) ([]zoneBound, error) {
	if m == nil {
		return []zoneBound{z}, nil
	}
	if z.length > maxRemapSpan {
		return nil, fmt.Errorf("%w: remapping a zone of %d rows", ErrUnsupported, z.length)
	}
	var addrs []uint64
	for off := z.start; off < z.start+z.length; off++ {
		if n, keep := m(z.frag<<32 | off); keep {
			addrs = append(addrs, n)
		}
	}
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	var out []zoneBound
	for lo := 0; lo < len(addrs); {
		hi := lo + 1
		for hi < len(addrs) && addrs[hi] == addrs[hi-1]+1 && addrs[hi]>>32 == addrs[lo]>>32 {
			hi++
		}
		out = append(out, zoneBound{frag: addrs[lo] >> 32, start: addrs[lo] & math.MaxUint32, length: uint64(hi - lo)})
		lo = hi
	}
	return out, nil
}

// maxRemapSpan bounds the row offsets one zone's remap visits (a zone
// holds rows-per-zone rows; its span is wider only by deleted rows).
var maxRemapSpan uint64 = 1 << 26

func (r *zoneRebuild) Add(values arrow.Array, addrs []uint64) error {
	if r.fresh == nil {
		dt := r.dt
		if dt == nil {
			dt = values.DataType()
		}
		opts := r.opts
		if r.t == ZoneMap && r.md != nil {
			if i := r.md.FindKey("rows_per_zone"); i >= 0 {
				var n int
				if _, err := fmt.Sscan(r.md.Values()[i], &n); err == nil && n > 0 {
					opts.RowsPerZone = n
				}
			}
		}
		b, err := NewBuilder(r.t, dt, opts)
		if err != nil {
			return err
		}
		r.fresh = b
	}
	return r.fresh.Add(values, addrs)
}

func (r *zoneRebuild) Rows() uint64 {
	if r.fresh == nil {
		return 0
	}
	return r.fresh.Rows()
}

func (r *zoneRebuild) release() {
	for _, rec := range r.olds {
		rec.Release()
	}
	r.olds = nil
}

func (r *zoneRebuild) Finish(ctx context.Context, st Store) ([]File, error) {
	defer r.release()
	if r.fresh != nil && r.fresh.Rows() > 0 {
		// The new rows' zones, built as a segment of their own and read
		// back as one more record.
		mem := &zoneMemStore{files: map[string][]byte{}}
		if _, err := r.fresh.Finish(ctx, mem); err != nil {
			return nil, err
		}
		rec, lf, err := readAll(ctx, mem, r.file(), nil)
		if err != nil {
			return nil, err
		}
		if r.md == nil {
			r.md = zoneMetadata(lf.Schema().Metadata())
		}
		if err := r.addRecord(rec, nil); err != nil {
			return nil, err
		}
	}
	if len(r.olds) == 0 {
		return nil, fmt.Errorf("%w: rebuilding a %s index without a segment", ErrUnsupported, r.t)
	}
	slices.SortStableFunc(r.emits, func(a, b zoneEmit) int {
		return cmp.Or(cmp.Compare(a.bound.frag, b.bound.frag), cmp.Compare(a.bound.start, b.bound.start))
	})
	mem := r.opts.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	schema := r.olds[0].Schema()
	idx := make([]int64, len(r.emits))
	var zones zoneCols
	for i, e := range r.emits {
		idx[i] = int64(e.src)
		zones.add(e.bound)
	}
	frags, starts, lengths := zones.frags, zones.starts, zones.lengths
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for fi, f := range schema.Fields() {
		switch f.Name {
		case "fragment_id":
			cols[fi] = u64Array(frags, mem)
		case "zone_start":
			cols[fi] = u64Array(starts, mem)
		case "zone_length":
			if f.Type.ID() == arrow.UINT32 {
				v := make([]uint32, len(lengths))
				for i, l := range lengths {
					v[i] = uint32(l)
				}
				cols[fi] = u32Array(v, mem)
			} else {
				cols[fi] = u64Array(lengths, mem)
			}
		default:
			parts := make([]arrow.Array, len(r.olds))
			for i, rec := range r.olds {
				parts[i] = rec.Column(fi)
			}
			all, err := array.Concatenate(parts, mem)
			if err != nil {
				return nil, err
			}
			taken, err := takeNullable(ctx, all, idx, mem)
			all.Release()
			if err != nil {
				return nil, err
			}
			cols[fi] = capCounts(f.Name, taken, lengths, mem)
		}
	}
	out := arrow.NewSchema(schema.Fields(), r.md)
	return writeRecordFile(ctx, st, r.file(), r.opts, out, cols, len(idx))
}

// capCounts bounds a zone's null and NaN counts by its (remapped) length:
// a count of a zone's old rows may exceed the rows a run kept.
func capCounts(name string, a arrow.Array, lengths []uint64, mem memory.Allocator) arrow.Array {
	c, ok := a.(*array.Uint32)
	if !ok || (name != "null_count" && name != "nan_count") {
		return a
	}
	defer c.Release()
	v := make([]uint32, c.Len())
	for i := range v {
		v[i] = uint32(min(uint64(c.Value(i)), lengths[i]))
	}
	return u32Array(v, mem)
}

// ---- n-grams ----

type ngramRebuild struct {
	*ngramBuilder
}

func (r *ngramRebuild) addSegment(ctx context.Context, st Store, m RowMap) error {
	lf, err := openFile(ctx, st, NGramFile)
	if err != nil {
		return err
	}
	rec, err := lf.Read(ctx, memory.DefaultAllocator, lancefile.ReadOptions{Columns: []string{"tokens", "posting_list"}, Limit: -1})
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, NGramFile, err)
	}
	defer rec.Release()
	toks, ok := rec.Column(0).(*array.Uint32)
	if !ok {
		return fmt.Errorf("%w: tokens of type %s", ErrCorrupt, rec.Column(0).DataType())
	}
	lists, ok := rec.Column(1).(*array.Binary)
	if !ok {
		return fmt.Errorf("%w: posting_list of type %s", ErrCorrupt, rec.Column(1).DataType())
	}
	for i := range toks.Len() {
		if toks.IsNull(i) {
			continue
		}
		rows, err := DecodeTreemap(lists.Value(i))
		if err != nil {
			return err
		}
		l := r.list(toks.Value(i))
		eachMapped(rows, m, func(id uint64) { l.Add(id) })
	}
	return nil
}

// ---- an in-memory Store ----

type zoneMemStore struct{ files map[string][]byte }

func (s *zoneMemStore) Open(_ context.Context, name string) (ReaderAt, error) {
	b, ok := s.files[name]
	if !ok {
		return nil, fmt.Errorf("lance index: no file %s", name)
	}
	return zoneMemFile(b), nil
}

func (s *zoneMemStore) Put(_ context.Context, name string, r io.Reader, _ int64) error {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r); err != nil {
		return err
	}
	s.files[name] = buf.Bytes()
	return nil
}

type zoneMemFile []byte

func (f zoneMemFile) Size() int64  { return int64(len(f)) }
func (f zoneMemFile) Close() error { return nil }
func (f zoneMemFile) ReadRange(_ context.Context, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > int64(len(f)) {
		return nil, fmt.Errorf("%w: read of %d bytes at %d in %d", ErrCorrupt, n, off, len(f))
	}
	return f[off : off+n], nil
}
