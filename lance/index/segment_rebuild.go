package index

// Rebuilding a scalar segment from an existing one: what Lance's
// ScalarIndex::remap (compaction moved rows) and ScalarIndex::update
// (optimize_indices added unindexed rows) do for BTREE, BITMAP and
// LABEL_LIST. The old segment's (value, row) pairs are read back, passed
// through a row map, merged with new rows and written as a new segment
// with the same layout (the builder's: sorted by value, then row id).

import (
	"context"
	"fmt"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/lance/lancefile"
)

// RowMap maps a row id an index recorded to the row's id now: keep false
// drops the row (it was deleted and compaction removed it); rows the map
// does not know keep their id.
type RowMap func(id uint64) (newID uint64, keep bool)

// ScalarRebuild is one rebuilt segment: the old segments' rows (through
// Map, when set) plus the rows Add gives.
type ScalarRebuild struct {
	b *builder
	x inexactRebuild // ZONEMAP, BLOOMFILTER, NGRAM (inexact_rebuild.go)
}

// NewScalarRebuild starts a segment of type t over the value type of the
// old segments (for LABEL_LIST the label type). batchSize 0 keeps
// DefaultBatchSize.
func NewScalarRebuild(t Type, valueType arrow.DataType, opts BuildOptions) (*ScalarRebuild, error) {
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if !t.Exact() {
		x, err := newInexactRebuild(t, valueType, opts)
		if err != nil {
			return nil, err
		}
		return &ScalarRebuild{x: x}, nil
	}
	if t != BTree && t != Bitmap && t != LabelList {
		return nil, fmt.Errorf("%w: rebuilding a %s index", ErrUnsupported, t)
	}
	if !supportedValueType(valueType) {
		return nil, fmt.Errorf("%w: %s index on values of type %s", ErrUnsupported, t, valueType)
	}
	return &ScalarRebuild{b: &builder{t: t, keyChunks: newKeyChunks(valueType), opts: opts}}, nil
}

// ScalarSegmentInfo is what a rebuild needs to know of an old segment.
type ScalarSegmentInfo struct {
	// ValueType is the indexed value type (LABEL_LIST: the label type).
	ValueType arrow.DataType
	// BatchSize is the BTREE page size the segment was written with.
	BatchSize int
}

// InspectScalar reads the value type (and BTREE page size) of the segment
// of type t in st.
func InspectScalar(ctx context.Context, t Type, st Store) (ScalarSegmentInfo, error) {
	if !t.Exact() {
		return inspectInexact(ctx, t, st)
	}
	switch t {
	case BTree:
		r, err := openFile(ctx, st, PageLookupFile)
		if err != nil {
			return ScalarSegmentInfo{}, err
		}
		info := ScalarSegmentInfo{BatchSize: DefaultBatchSize}
		md := schemaMeta(r.Schema())
		if v, ok := md["batch_size"]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 || n > 1<<30 {
				return ScalarSegmentInfo{}, fmt.Errorf("%w: batch_size %q", ErrCorrupt, v)
			}
			info.BatchSize = n
		}
		if md["range_partitioned"] == "true" {
			return ScalarSegmentInfo{}, fmt.Errorf("%w: range-partitioned BTREE", ErrUnsupported)
		}
		if info.ValueType, err = schemaFieldType(r.Schema(), PageLookupFile, "min"); err != nil {
			return ScalarSegmentInfo{}, err
		}
		return info, nil
	case Bitmap, LabelList:
		dt, err := fieldType(ctx, st, BitmapPageLookupFile, "keys")
		return ScalarSegmentInfo{ValueType: dt}, err
	}
	return ScalarSegmentInfo{}, fmt.Errorf("%w: index type %q", ErrUnsupported, t)
}

// fieldType is the type of field of index file name in st.
func fieldType(ctx context.Context, st Store, name, field string) (arrow.DataType, error) {
	r, err := openFile(ctx, st, name)
	if err != nil {
		return nil, err
	}
	return schemaFieldType(r.Schema(), name, field)
}

func schemaFieldType(schema *arrow.Schema, name, field string) (arrow.DataType, error) {
	f := schema.FieldIndices(field)
	if len(f) != 1 {
		return nil, fmt.Errorf("%w: %s without %s", ErrCorrupt, name, field)
	}
	return schema.Field(f[0]).Type, nil
}

// AddSegment adds every (value, row) pair of the old segment in st (of
// the rebuild's type), with its rows mapped by m (nil: kept as they are).
func (r *ScalarRebuild) AddSegment(ctx context.Context, st Store, m RowMap) error {
	if r.x != nil {
		return r.x.addSegment(ctx, st, m)
	}
	switch r.b.t {
	case BTree:
		return r.addBTree(ctx, st, m)
	default:
		return r.addBitmap(ctx, st, m)
	}
}

func (r *ScalarRebuild) addBTree(ctx context.Context, st Store, m RowMap) error {
	f, err := openFile(ctx, st, PageDataFile)
	if err != nil {
		return err
	}
	// Page by page: a BTREE of 10^7 rows is not read in one record.
	const chunk = 1 << 16
	rows := int64(f.NumRows())
	for off := int64(0); off < rows; off += chunk {
		rec, err := f.Read(ctx, r.b.opts.Mem, lancefile.ReadOptions{Columns: []string{"values", "ids"}, Offset: off, Limit: min(chunk, rows-off)})
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrCorrupt, PageDataFile, err)
		}
		err = r.addMapped(rec.Column(0), rec.Column(1), m)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// addMapped adds values[i] for ids[i] where m keeps the row.
func (r *ScalarRebuild) addMapped(values, idCol arrow.Array, m RowMap) error {
	ids, ok := idCol.(*array.Uint64)
	if !ok || ids.NullN() > 0 {
		return fmt.Errorf("%w: row ids of type %s", ErrCorrupt, idCol.DataType())
	}
	if !arrow.TypeEqual(values.DataType(), r.b.dt) {
		return fmt.Errorf("%w: values of type %s in a segment of %s", ErrCorrupt, values.DataType(), r.b.dt)
	}
	var keep []int
	var out []uint64
	for i, id := range ids.Uint64Values() {
		if m != nil {
			nid, ok := m(id)
			if !ok {
				continue
			}
			id = nid
		}
		keep = append(keep, i)
		out = append(out, id)
	}
	if len(keep) == values.Len() {
		r.addFlat(values, out)
		return nil
	}
	idx := make([]int64, len(keep))
	for i, k := range keep {
		idx[i] = int64(k)
	}
	taken, err := r.b.take(context.Background(), values, idx)
	if err != nil {
		return err
	}
	r.addFlat(taken, out)
	taken.Release()
	return nil
}

// addFlat adds one (value, row) pair per element (the builder's scalar
// path, for label lists too: their old pairs are already unnested).
func (r *ScalarRebuild) addFlat(values arrow.Array, ids []uint64) {
	b := r.b
	b.rows += uint64(len(ids))
	b.keep(values)
	b.ids = append(b.ids, ids...)
}

func (r *ScalarRebuild) addBitmap(ctx context.Context, st Store, m RowMap) error {
	rec, lf, err := readAll(ctx, st, BitmapPageLookupFile, []string{"keys", "bitmaps"})
	if err != nil {
		return err
	}
	defer rec.Release()
	keys, err := column(rec, "keys", arrow.NULL)
	if err != nil {
		return err
	}
	bms, err := column(rec, "bitmaps", arrow.NULL)
	if err != nil {
		return err
	}
	var take []int64
	var ids []uint64
	for i := range keys.Len() {
		raw, ok := binaryAt(bms, i)
		if !ok {
			return fmt.Errorf("%w: bitmaps of type %s", ErrCorrupt, bms.DataType())
		}
		if len(raw) == 0 {
			continue
		}
		rows, err := DecodeTreeMap(raw)
		if err != nil {
			return err
		}
		eachMapped(rows, m, func(id uint64) {
			take = append(take, int64(i))
			ids = append(ids, id)
		})
	}
	if len(ids) > 0 {
		values, err := r.b.take(ctx, keys, take)
		if err != nil {
			return err
		}
		r.addFlat(values, ids)
		values.Release()
	}
	if r.b.t != LabelList {
		return nil
	}
	md := schemaMeta(lf.Schema())
	v, ok := md[LabelListNullsKey]
	if !ok {
		return nil
	}
	gi, err := strconv.Atoi(v)
	if err != nil || gi <= 0 || gi >= lf.NumGlobalBuffers() {
		return fmt.Errorf("%w: %s = %q", ErrCorrupt, LabelListNullsKey, v)
	}
	buf, err := lf.GlobalBuffer(ctx, gi)
	if err != nil {
		return fmt.Errorf("%w: label list nulls: %v", ErrCorrupt, err)
	}
	nulls, err := DecodeTreeMap(buf)
	if err != nil {
		return err
	}
	eachMapped(nulls, m, func(id uint64) {
		if r.b.nullLists == nil {
			r.b.nullLists = roaring64.New()
		}
		r.b.nullLists.Add(id)
	})
	return nil
}

// eachMapped calls fn with every row id of rows through m (nil: as is),
// skipping the rows m drops.
func eachMapped(rows *roaring64.Bitmap, m RowMap, fn func(id uint64)) {
	it := rows.Iterator()
	for it.HasNext() {
		id := it.Next()
		if m != nil {
			nid, ok := m(id)
			if !ok {
				continue
			}
			id = nid
		}
		fn(id)
	}
}

// Add adds new rows: values of the indexed column (a list column for
// LABEL_LIST) for row ids.
func (r *ScalarRebuild) Add(values arrow.Array, ids []uint64) error {
	if r.x != nil {
		return r.x.Add(values, ids)
	}
	return r.b.Add(values, ids)
}

// Rows are the (value, row) pairs added so far.
func (r *ScalarRebuild) Rows() uint64 {
	if r.x != nil {
		return r.x.Rows()
	}
	return r.b.Rows()
}

// Finish writes the new segment into st.
func (r *ScalarRebuild) Finish(ctx context.Context, st Store) ([]File, error) {
	if r.x != nil {
		return r.x.Finish(ctx, st)
	}
	return r.b.Finish(ctx, st)
}
