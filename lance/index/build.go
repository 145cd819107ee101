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

// Builder trains one scalar index segment from the column's values and the
// row ids they belong to (row addresses without stable row ids). It holds
// the whole column in memory while training, as Lance's in-memory sort
// does for a segment.
type Builder interface {
	// Add takes one batch: values[i] is the value of row ids[i]. Add
	// retains values until Finish.
	Add(values arrow.Array, ids []uint64) error
	// Finish writes the index files into st and releases what Add kept.
	Finish(ctx context.Context, st Store) ([]File, error)
	// Rows is the number of rows added.
	Rows() uint64
}

// BuildOptions tune the index files.
type BuildOptions struct {
	// FileVersion is the Lance file version of the index files (the zero
	// value is 2.1, which every supported SDK reads).
	FileVersion lancefile.Version
	// BatchSize is the rows per BTREE page (0: DefaultBatchSize).
	BatchSize int
	// RowsPerZone is the rows per zone of a ZONEMAP (0: Lance's 8192).
	RowsPerZone int
	Mem         memory.Allocator
}

// NewBuilder starts a segment of type t over values of type dt (for
// LABEL_LIST a list of such values).
func NewBuilder(t Type, dt arrow.DataType, opts BuildOptions) (Builder, error) {
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	valueType := dt
	if t == LabelList {
		lt, ok := dt.(arrow.ListLikeType)
		if !ok || (dt.ID() != arrow.LIST && dt.ID() != arrow.LARGE_LIST) {
			return nil, fmt.Errorf("%w: a LABEL_LIST index needs a list column, not %s", ErrUnsupported, dt)
		}
		valueType = lt.Elem()
	}
	if !supportedValueType(valueType) {
		return nil, fmt.Errorf("%w: %s index on values of type %s", ErrUnsupported, t, valueType)
	}
	switch t {
	case ZoneMap:
		return newZoneMapBuilder(valueType, opts), nil
	case BloomFilter:
		return newBloomBuilder(valueType, opts)
	case NGram:
		return newNGramBuilder(valueType, opts)
	case Bitmap:
		// LanceDB refuses it too ("A Bitmap index cannot be created on
		// the field `v` which has data type Float64").
		if valueType.ID() == arrow.FLOAT32 || valueType.ID() == arrow.FLOAT64 {
			return nil, fmt.Errorf("%w: a BITMAP index cannot be created on a column of type %s", ErrUnsupported, valueType)
		}
	case BTree, LabelList:
	default:
		return nil, fmt.Errorf("%w: index type %q", ErrUnsupported, t)
	}
	return &builder{t: t, keyChunks: newKeyChunks(valueType), opts: opts}, nil
}

type builder struct {
	t Type
	keyChunks
	opts BuildOptions
	ids  []uint64
	rows uint64
	// nullLists are the rows whose label list is null (LABEL_LIST).
	nullLists *roaring64.Bitmap
}

func (b *builder) Rows() uint64 { return b.rows }

func (b *builder) Add(values arrow.Array, ids []uint64) error {
	if values.Len() != len(ids) {
		return fmt.Errorf("lance index: %d values for %d row ids", values.Len(), len(ids))
	}
	b.rows += uint64(len(ids))
	if b.t != LabelList {
		if err := b.addChunk(values); err != nil {
			return err
		}
		b.ids = append(b.ids, ids...)
		return nil
	}
	// A label list is unnested: one (label, row) pair per element.
	list, ok := values.(array.ListLike)
	if !ok {
		return fmt.Errorf("lance index: label list values of type %s", values.DataType())
	}
	elems := list.ListValues()
	if !arrow.TypeEqual(elems.DataType(), b.dt) {
		return fmt.Errorf("lance index: labels of type %s, index of %s", elems.DataType(), b.dt)
	}
	var take []int64
	for i := range ids {
		if list.IsNull(i) {
			if b.nullLists == nil {
				b.nullLists = roaring64.New()
			}
			b.nullLists.Add(ids[i])
			continue
		}
		lo, hi := list.ValueOffsets(i)
		b.keys.appendRange(elems, int(lo), int(hi))
		for j := lo; j < hi; j++ {
			take = append(take, j)
			b.ids = append(b.ids, ids[i])
		}
	}
	idx := array.NewInt64Builder(b.opts.Mem)
	defer idx.Release()
	idx.AppendValues(take, nil)
	ia := idx.NewArray()
	defer ia.Release()
	labels, err := compute.TakeArray(compute.WithAllocator(context.Background(), b.opts.Mem), elems, ia)
	if err != nil {
		return err
	}
	b.chunks = append(b.chunks, labels)
	return nil
}

func (b *builder) release() {
	b.keyChunks.release()
	b.ids = nil
}

// keyChunks are the value chunks a build keeps and their keys.
type keyChunks struct {
	dt     arrow.DataType
	chunks []arrow.Array
	keys   keyColumn
}

func newKeyChunks(dt arrow.DataType) keyChunks {
	return keyChunks{dt: dt, keys: keyColumn{kind: kindOf(dt)}}
}

// addChunk keeps values, which must be of the index's type.
func (k *keyChunks) addChunk(values arrow.Array) error {
	if !arrow.TypeEqual(values.DataType(), k.dt) {
		return fmt.Errorf("lance index: values of type %s, index of %s", values.DataType(), k.dt)
	}
	k.keep(values)
	return nil
}

// keep keeps values, of the index's type.
func (k *keyChunks) keep(values arrow.Array) {
	values.Retain()
	k.chunks = append(k.chunks, values)
	k.keys.appendRange(values, 0, values.Len())
}

// concat is the chunks as one array (an empty one when there are none).
func (k *keyChunks) concat(mem memory.Allocator) (arrow.Array, error) {
	return concatOrEmpty(k.chunks, k.dt, mem)
}

func (k *keyChunks) release() {
	for _, c := range k.chunks {
		c.Release()
	}
	k.chunks, k.keys = nil, keyColumn{}
}

// sorted returns the permutation that orders the pairs by value (nulls
// first), then by row id: the order of Lance's index files.
func (b *builder) sorted() []int64 { return b.keys.sorted(b.ids) }

func (b *builder) Finish(ctx context.Context, st Store) ([]File, error) {
	defer b.release()
	all, err := b.concat(b.opts.Mem)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	perm := b.sorted()
	switch b.t {
	case BTree:
		return b.finishBTree(ctx, st, all, perm)
	default:
		return b.finishBitmap(ctx, st, all, perm)
	}
}

// take gathers values[idx...] into a new array.
func (b *builder) take(ctx context.Context, values arrow.Array, idx []int64) (arrow.Array, error) {
	ib := array.NewInt64Builder(b.opts.Mem)
	defer ib.Release()
	ib.AppendValues(idx, nil)
	ia := ib.NewArray()
	defer ia.Release()
	return compute.TakeArray(compute.WithAllocator(ctx, b.opts.Mem), values, ia)
}

func (b *builder) finishBTree(ctx context.Context, st Store, all arrow.Array, perm []int64) ([]File, error) {
	values, err := b.take(ctx, all, perm)
	if err != nil {
		return nil, err
	}
	defer values.Release()
	ids := make([]uint64, len(perm))
	for i, p := range perm {
		ids[i] = b.ids[p]
	}
	dataSchema := arrow.NewSchema([]arrow.Field{
		{Name: "values", Type: b.dt, Nullable: true},
		{Name: "ids", Type: arrow.PrimitiveTypes.Uint64},
	}, nil)
	idb := array.NewUint64Builder(b.opts.Mem)
	defer idb.Release()
	idb.AppendValues(ids, nil)
	ida := idb.NewArray()
	defer ida.Release()
	data := array.NewRecordBatch(dataSchema, []arrow.Array{values, ida}, int64(len(ids)))
	defer data.Release()
	dataFile, err := b.write(ctx, st, PageDataFile, dataSchema, data)
	if err != nil {
		return nil, err
	}

	// One lookup row per page: the first and last value of the page (the
	// first is null when the page holds nulls, as Lance records it).
	bs := b.opts.BatchSize
	var mins, maxs []int64
	var nulls, pages []uint32
	for p, lo := 0, 0; lo < len(perm); p, lo = p+1, lo+bs {
		hi := min(lo+bs, len(perm))
		mins = append(mins, int64(lo))
		maxs = append(maxs, int64(hi-1))
		var n uint32
		for i := lo; i < hi && values.IsNull(i); i++ {
			n++
		}
		nulls = append(nulls, n)
		pages = append(pages, uint32(p))
	}
	minA, err := b.take(ctx, values, mins)
	if err != nil {
		return nil, err
	}
	defer minA.Release()
	maxA, err := b.take(ctx, values, maxs)
	if err != nil {
		return nil, err
	}
	defer maxA.Release()
	u32 := func(v []uint32) arrow.Array {
		bld := array.NewUint32Builder(b.opts.Mem)
		defer bld.Release()
		bld.AppendValues(v, nil)
		return bld.NewArray()
	}
	nullA, pageA := u32(nulls), u32(pages)
	defer nullA.Release()
	defer pageA.Release()
	md := arrow.NewMetadata([]string{"batch_size", "range_partitioned"}, []string{strconv.Itoa(bs), "false"})
	lookupSchema := arrow.NewSchema([]arrow.Field{
		{Name: "min", Type: b.dt, Nullable: true},
		{Name: "max", Type: b.dt, Nullable: true},
		{Name: "null_count", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "page_idx", Type: arrow.PrimitiveTypes.Uint32},
	}, &md)
	lookup := array.NewRecordBatch(lookupSchema, []arrow.Array{minA, maxA, nullA, pageA}, int64(len(pages)))
	defer lookup.Release()
	lookupFile, err := b.write(ctx, st, PageLookupFile, lookupSchema, lookup)
	if err != nil {
		return nil, err
	}
	return []File{dataFile, lookupFile}, nil
}

func (b *builder) finishBitmap(ctx context.Context, st Store, all arrow.Array, perm []int64) ([]File, error) {
	var firsts []int64
	var maps [][]byte
	for lo := 0; lo < len(perm); {
		hi := lo + 1
		for hi < len(perm) && b.keys.same(perm[lo], perm[hi]) {
			hi++
		}
		run := make([]uint64, 0, hi-lo)
		for _, p := range perm[lo:hi] {
			run = append(run, b.ids[p])
		}
		enc, err := encodeSortedTreeMap(run)
		if err != nil {
			return nil, err
		}
		firsts = append(firsts, perm[lo])
		maps = append(maps, enc)
		lo = hi
	}
	keys, err := b.take(ctx, all, firsts)
	if err != nil {
		return nil, err
	}
	defer keys.Release()
	bb := array.NewBinaryBuilder(b.opts.Mem, arrow.BinaryTypes.Binary)
	defer bb.Release()
	bb.AppendValues(maps, nil)
	bitmaps := bb.NewArray()
	defer bitmaps.Release()
	mdKeys := []string{"lance:index_stats"}
	mdValues := []string{fmt.Sprintf(`{"num_bitmaps":%d}`, len(maps))}
	var globals [][]byte
	if b.t == LabelList {
		// The rows whose list is null, in global buffer 1 (Lance requires
		// it from label list index_version 1 on).
		nulls := b.nullLists
		if nulls == nil {
			nulls = roaring64.New()
		}
		enc, err := EncodeTreeMap(nulls)
		if err != nil {
			return nil, err
		}
		globals = append(globals, enc)
		mdKeys = append(mdKeys, LabelListNullsKey)
		mdValues = append(mdValues, "1")
	}
	md := arrow.NewMetadata(mdKeys, mdValues)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "keys", Type: b.dt, Nullable: true},
		{Name: "bitmaps", Type: arrow.BinaryTypes.Binary, Nullable: true},
	}, &md)
	rec := array.NewRecordBatch(schema, []arrow.Array{keys, bitmaps}, int64(len(maps)))
	defer rec.Release()
	f, err := b.write(ctx, st, BitmapPageLookupFile, schema, rec, globals...)
	if err != nil {
		return nil, err
	}
	return []File{f}, nil
}

// write writes one index file of one record.
func (b *builder) write(ctx context.Context, st Store, name string, schema *arrow.Schema, rec arrow.RecordBatch, globals ...[]byte) (File, error) {
	return writeIndexFile(ctx, st, name, b.opts, schema, rec, globals...)
}
