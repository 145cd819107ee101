package index

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

// Open opens the segment of type t stored in st. The lookup data (the
// BTREE page table, the BITMAP keys and bitmaps) is read now; BTREE pages
// are read per search.
func Open(ctx context.Context, t Type, st Store) (Reader, error) {
	switch t {
	case BTree:
		return openBTree(ctx, st)
	case Bitmap, LabelList:
		return openBitmap(ctx, t, st)
	case ZoneMap:
		return openZoneMap(ctx, st)
	case BloomFilter:
		return openBloom(ctx, st)
	case NGram:
		return openNGram(ctx, st)
	}
	return nil, fmt.Errorf("%w: index type %q", ErrUnsupported, t)
}

// sourceOf adapts a ReaderAt to the file reader's Source.
type sourceOf struct{ r ReaderAt }

func (s sourceOf) Size() int64 { return s.r.Size() }
func (s sourceOf) ReadRange(ctx context.Context, off, n int64) ([]byte, error) {
	return s.r.ReadRange(ctx, off, n)
}

// readAll opens an index file and reads all of it (the lookup files).
func readAll(ctx context.Context, st Store, name string, cols []string) (arrow.RecordBatch, *lancefile.Reader, error) {
	r, err := openFile(ctx, st, name)
	if err != nil {
		return nil, nil, err
	}
	rec, err := r.Read(ctx, memory.DefaultAllocator, lancefile.ReadOptions{Columns: cols, Limit: -1})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, name, err)
	}
	return rec, r, nil
}

func openFile(ctx context.Context, st Store, name string) (*lancefile.Reader, error) {
	f, err := st.Open(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("lance index: open %s: %w", name, err)
	}
	r, err := lancefile.Open(ctx, sourceOf{f})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, name, err)
	}
	return r, nil
}

// column finds a named column of rec, checking its type.
func column(rec arrow.RecordBatch, name string, want arrow.Type) (arrow.Array, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return nil, fmt.Errorf("%w: no column %q", ErrCorrupt, name)
	}
	c := rec.Column(idx[0])
	if want != arrow.NULL && c.DataType().ID() != want {
		return nil, fmt.Errorf("%w: column %q is %s", ErrCorrupt, name, c.DataType())
	}
	return c, nil
}

// valueStats are the min, max and null_count columns that BTREE pages
// and ZONEMAP zones both record, min's type the indexed column's.
func valueStats(rec arrow.RecordBatch, kind string) (mins, maxs, nulls arrow.Array, err error) {
	if mins, err = column(rec, "min", arrow.NULL); err != nil {
		return nil, nil, nil, err
	}
	if !supportedValueType(mins.DataType()) {
		return nil, nil, nil, fmt.Errorf("%w: %s over %s", ErrUnsupported, kind, mins.DataType())
	}
	if maxs, err = column(rec, "max", mins.DataType().ID()); err != nil {
		return nil, nil, nil, err
	}
	if nulls, err = column(rec, "null_count", arrow.UINT32); err != nil {
		return nil, nil, nil, err
	}
	return mins, maxs, nulls, nil
}

// ---- BTREE ----

type btreePage struct {
	min, max  any // nil: null
	nullCount uint32
	idx       uint32
}

type btreeReader struct {
	st        Store
	batchSize int64
	pages     []btreePage
	data      *lancefile.Reader
	dataRows  uint64
}

func openBTree(ctx context.Context, st Store) (Reader, error) {
	rec, lf, err := readAll(ctx, st, PageLookupFile, nil)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	md := lf.Schema().Metadata()
	r := &btreeReader{st: st, batchSize: DefaultBatchSize}
	if i := md.FindKey("batch_size"); i >= 0 {
		n, err := strconv.ParseInt(md.Values()[i], 10, 64)
		if err != nil || n <= 0 || n > 1<<30 {
			return nil, fmt.Errorf("%w: batch_size %q", ErrCorrupt, md.Values()[i])
		}
		r.batchSize = n
	}
	if i := md.FindKey("range_partitioned"); i >= 0 && md.Values()[i] == "true" {
		return nil, fmt.Errorf("%w: range-partitioned BTREE", ErrUnsupported)
	}
	mins, maxs, nulls, err := valueStats(rec, "BTREE")
	if err != nil {
		return nil, err
	}
	idxs, err := column(rec, "page_idx", arrow.UINT32)
	if err != nil {
		return nil, err
	}
	for i := range int(rec.NumRows()) {
		if nulls.IsNull(i) || idxs.IsNull(i) {
			return nil, fmt.Errorf("%w: null page entry", ErrCorrupt)
		}
		r.pages = append(r.pages, btreePage{
			min: valueAt(mins, i), max: valueAt(maxs, i),
			nullCount: nulls.(*array.Uint32).Value(i), idx: idxs.(*array.Uint32).Value(i),
		})
	}
	if r.data, err = openFile(ctx, st, PageDataFile); err != nil {
		return nil, err
	}
	r.dataRows = r.data.NumRows()
	if len(r.data.Schema().Fields()) < 2 || !arrow.TypeEqual(r.data.Schema().Field(0).Type, mins.DataType()) {
		return nil, fmt.Errorf("%w: page data schema %s", ErrCorrupt, r.data.Schema())
	}
	return r, nil
}

func (r *btreeReader) Type() Type { return BTree }

func (r *btreeReader) Search(ctx context.Context, p Predicate) (*roaring64.Bitmap, error) {
	m, err := newMatcher(p)
	if err != nil {
		return nil, err
	}
	if p.Op == HasAny || p.Op == HasAll {
		return nil, fmt.Errorf("%w: list predicate on a BTREE index", ErrUnsupported)
	}
	out := roaring64.New()
	for _, pg := range r.pages {
		var want bool
		if p.Op == IsNull {
			want = pg.nullCount > 0
		} else {
			// The page's non-null values lie in [first non-null, max];
			// with nulls in the page its min is null (open below).
			lo := pg.min
			switch {
			case pg.max == nil:
				want = false // only nulls
			case lo == nil:
				want = m.overlapsBelow(pg.max)
			default:
				want = m.overlaps(lo, pg.max)
			}
		}
		if !want {
			continue
		}
		if err := r.searchPage(ctx, pg.idx, m, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *btreeReader) searchPage(ctx context.Context, page uint32, m *matcher, out *roaring64.Bitmap) error {
	off := int64(page) * r.batchSize
	if off < 0 || uint64(off) >= r.dataRows {
		return fmt.Errorf("%w: page %d beyond %d rows", ErrCorrupt, page, r.dataRows)
	}
	rec, err := r.data.Read(ctx, memory.DefaultAllocator, lancefile.ReadOptions{Columns: []string{"values", "ids"}, Offset: off, Limit: r.batchSize})
	if err != nil {
		return fmt.Errorf("%w: page %d: %v", ErrCorrupt, page, err)
	}
	defer rec.Release()
	vals := rec.Column(0)
	ids, ok := rec.Column(1).(*array.Uint64)
	if !ok {
		return fmt.Errorf("%w: ids of type %s", ErrCorrupt, rec.Column(1).DataType())
	}
	for i := range vals.Len() {
		if ids.IsNull(i) {
			return fmt.Errorf("%w: null row id", ErrCorrupt)
		}
		v := valueAt(vals, i)
		if m.p.Op == IsNull {
			if v == nil {
				out.Add(ids.Value(i))
			}
			continue
		}
		if m.match(v) {
			out.Add(ids.Value(i))
		}
	}
	return nil
}

// overlapsBelow: may a page whose non-null values are at most hi hold a
// match?
func (m *matcher) overlapsBelow(hi any) bool {
	switch m.p.Op {
	case Equals, IsIn:
		for _, w := range m.values {
			if c, ok := compareValues(w, hi); w != nil && (!ok || c <= 0) {
				return true
			}
		}
		return false
	case Range:
		if m.lo != nil && m.lo.Value != nil {
			if c, ok := compareValues(hi, m.lo.Value); ok && (c < 0 || (c == 0 && !m.lo.Inclusive)) {
				return false
			}
		}
		return true
	}
	return false
}

// ---- BITMAP and LABEL_LIST ----

type bitmapReader struct {
	t       Type
	keys    []any
	bitmaps [][]byte
	nullIdx int // index of the null key, -1 if none
	// nullLists are the rows whose label list is null (LABEL_LIST,
	// lance:label_list_nulls).
	nullLists *roaring64.Bitmap
}

func openBitmap(ctx context.Context, t Type, st Store) (Reader, error) {
	rec, lf, err := readAll(ctx, st, BitmapPageLookupFile, []string{"keys", "bitmaps"})
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	nullLists := roaring64.New()
	if md := lf.Schema().Metadata(); t == LabelList && md.FindKey(LabelListNullsKey) >= 0 {
		v := md.Values()[md.FindKey(LabelListNullsKey)]
		i, err := strconv.Atoi(v)
		if err != nil || i <= 0 || i >= lf.NumGlobalBuffers() {
			return nil, fmt.Errorf("%w: %s = %q", ErrCorrupt, LabelListNullsKey, v)
		}
		b, err := lf.GlobalBuffer(ctx, i)
		if err != nil {
			return nil, fmt.Errorf("%w: label list nulls: %v", ErrCorrupt, err)
		}
		if nullLists, err = DecodeTreeMap(b); err != nil {
			return nil, err
		}
	}
	keys, err := column(rec, "keys", arrow.NULL)
	if err != nil {
		return nil, err
	}
	if !supportedValueType(keys.DataType()) {
		return nil, fmt.Errorf("%w: %s over %s", ErrUnsupported, t, keys.DataType())
	}
	bms, err := column(rec, "bitmaps", arrow.BINARY)
	if err != nil {
		bms, err = column(rec, "bitmaps", arrow.LARGE_BINARY)
		if err != nil {
			return nil, err
		}
	}
	r := &bitmapReader{t: t, nullIdx: -1, nullLists: nullLists}
	for i := range keys.Len() {
		k := valueAt(keys, i)
		if k == nil {
			r.nullIdx = i
		}
		r.keys = append(r.keys, k)
		b, _ := binaryAt(bms, i) // of a binary type: column checked it
		r.bitmaps = append(r.bitmaps, append([]byte(nil), b...))
	}
	return r, nil
}

func (r *bitmapReader) Type() Type { return r.t }

func (r *bitmapReader) rowsOf(i int) (*roaring64.Bitmap, error) {
	if len(r.bitmaps[i]) == 0 {
		return roaring64.New(), nil
	}
	return DecodeTreeMap(r.bitmaps[i])
}

func (r *bitmapReader) Search(ctx context.Context, p Predicate) (*roaring64.Bitmap, error) {
	m, err := newMatcher(p)
	if err != nil {
		return nil, err
	}
	if p.Op == IsNull {
		if r.t == LabelList {
			// The rows whose list is null (an index without the nulls
			// buffer, written before Lance tracked them, knows none).
			return r.nullLists.Clone(), nil
		}
		if r.nullIdx < 0 {
			return roaring64.New(), nil
		}
		return r.rowsOf(r.nullIdx)
	}
	if p.Op == HasAll {
		if r.t != LabelList {
			return nil, fmt.Errorf("%w: array_has_all on a %s index", ErrUnsupported, r.t)
		}
		var out *roaring64.Bitmap
		for _, w := range m.values {
			rows := roaring64.New()
			for i, k := range r.keys {
				if k == nil || w == nil {
					continue
				}
				if c, ok := compareValues(k, w); ok && c == 0 {
					b, err := r.rowsOf(i)
					if err != nil {
						return nil, err
					}
					rows.Or(b)
				}
			}
			if out == nil {
				out = rows
			} else {
				out.And(rows)
			}
		}
		if out == nil {
			out = roaring64.New()
		}
		return out, nil
	}
	if p.Op == HasAny && r.t != LabelList {
		return nil, fmt.Errorf("%w: array_has_any on a %s index", ErrUnsupported, r.t)
	}
	out := roaring64.New()
	for i, k := range r.keys {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if k == nil || !m.match(k) {
			continue
		}
		b, err := r.rowsOf(i)
		if err != nil {
			return nil, err
		}
		out.Or(b)
	}
	return out, nil
}
