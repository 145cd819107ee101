package lancefile

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancecat/lancecat/lance/pb/enc20pb"
	"github.com/lancecat/lancecat/lance/pb/file2pb"
)

// Format 2.0: one column per schema node. Leaves hold their values (with
// an Arrow-style validity bitmap), a list holds per-row end offsets into
// its item column, a struct column holds nothing (2.0 has no struct
// validity).

func (r *Reader) decode20(ctx context.Context, mem memory.Allocator, n *field, lo, hi uint64) (arrow.Array, error) {
	switch t := n.arrow.Type.(type) {
	case *arrow.StructType:
		children := make([]arrow.Array, 0, len(n.children))
		defer func() {
			for _, c := range children {
				c.Release()
			}
		}()
		cd := make([]arrow.ArrayData, 0, len(n.children))
		for _, c := range n.children {
			a, err := r.decode20(ctx, mem, c, lo, hi)
			if err != nil {
				return nil, err
			}
			children = append(children, a)
			cd = append(cd, a.Data())
		}
		return makeArray(t, int(hi-lo), []*memory.Buffer{nil}, cd, 0), nil
	case *arrow.ListType, *arrow.LargeListType:
		return r.decodeList20(ctx, mem, n, lo, hi)
	}
	_, direct := n.arrow.Type.(*arrow.DictionaryType)
	vals, valid, err := r.decodeLeaf20(ctx, n.column, lo, hi, direct)
	if err != nil {
		return nil, err
	}
	return buildArray(mem, n.arrow.Type, vals, valid)
}

func arrayEncoding20(page *file2pb.ColumnMetadata_Page) (*enc20pb.ArrayEncoding, error) {
	raw := page.GetEncoding().GetDirect().GetEncoding()
	if raw == nil {
		return nil, fmt.Errorf("page without a direct encoding: %w", ErrUnsupported)
	}
	var a anypb.Any
	if err := proto.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("page encoding: %v: %w", err, ErrCorrupt)
	}
	if a.GetTypeUrl() != "/lance.encodings.ArrayEncoding" {
		return nil, fmt.Errorf("page encoding %q in a 2.0 file: %w", a.GetTypeUrl(), ErrUnsupported)
	}
	var enc enc20pb.ArrayEncoding
	if err := proto.Unmarshal(a.GetValue(), &enc); err != nil {
		return nil, fmt.Errorf("page encoding: %v: %w", err, ErrCorrupt)
	}
	return &enc, nil
}

// decodeLeaf20 decodes rows [lo, hi) of a value column.
//
// direct is set for Arrow dictionary columns, whose dictionary pages carry
// the Arrow keys as they are; plain string columns that Lance chose to
// dictionary-encode use 1-based keys with 0 for null.
func (r *Reader) decodeLeaf20(ctx context.Context, col int, lo, hi uint64, direct bool) (*values, []bool, error) {
	pages, starts := r.pagesFor(col, lo, hi)
	var vals *values
	var parts []*values
	var valid []bool
	anyNull := false
	for i, p := range pages {
		page := r.columns[col].GetPages()[p]
		if page.GetLength() > maxValues {
			return nil, nil, fmt.Errorf("page of %d rows: %w", page.GetLength(), ErrCorrupt)
		}
		enc, err := arrayEncoding20(page)
		if err != nil {
			return nil, nil, err
		}
		bufs, err := r.readPageBuffers(ctx, page)
		if err != nil {
			return nil, nil, err
		}
		v, pv, err := decodeArray20(enc, bufs, int(page.GetLength()), direct)
		if err != nil {
			return nil, nil, fmt.Errorf("page %d: %w", p, err)
		}
		a := int(max(lo, starts[i]) - starts[i])
		b := int(min(hi, starts[i]+page.GetLength()) - starts[i])
		v = v.slice(a, b)
		if pv != nil {
			pv = pv[a:b]
			anyNull = true
		} else {
			pv = allTrue(b - a)
		}
		valid = append(valid, pv...)
		parts = append(parts, v)
	}
	if len(parts) > 0 {
		var err error
		if vals, err = concatValues(parts); err != nil {
			return nil, nil, err
		}
	}
	if vals == nil {
		vals = nullValues(0)
	}
	if !anyNull {
		valid = nil
	}
	return vals, valid, nil
}

func allTrue(n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = true
	}
	return out
}

func pageBuffer(bufs [][]byte, b *enc20pb.Buffer) ([]byte, error) {
	if b.GetBufferType() != enc20pb.Buffer_page {
		return nil, fmt.Errorf("2.0 %s buffers: %w", b.GetBufferType(), ErrUnsupported)
	}
	if int(b.GetBufferIndex()) >= len(bufs) {
		return nil, fmt.Errorf("buffer %d of %d: %w", b.GetBufferIndex(), len(bufs), ErrCorrupt)
	}
	return bufs[b.GetBufferIndex()], nil
}

// decodeArray20 decodes n values of a 2.0 array encoding; valid is nil
// when all are valid.
func decodeArray20(enc *enc20pb.ArrayEncoding, bufs [][]byte, n int, direct ...bool) (*values, []bool, error) {
	if n < 0 || n > maxValues {
		return nil, nil, fmt.Errorf("array of %d values: %w", n, ErrCorrupt)
	}
	switch e := enc.GetArrayEncoding().(type) {
	case *enc20pb.ArrayEncoding_Nullable:
		switch nn := e.Nullable.GetNullability().(type) {
		case *enc20pb.Nullable_NoNulls:
			return decodeArray20(nn.NoNulls.GetValues(), bufs, n)
		case *enc20pb.Nullable_AllNulls:
			return nullValues(n), make([]bool, n), nil
		case *enc20pb.Nullable_SomeNulls:
			vb, _, err := decodeArray20(nn.SomeNulls.GetValidity(), bufs, n)
			if err != nil {
				return nil, nil, fmt.Errorf("validity: %w", err)
			}
			if vb.kind != kindBool {
				return nil, nil, fmt.Errorf("validity is not a bitmap: %w", ErrCorrupt)
			}
			v, inner, err := decodeArray20(nn.SomeNulls.GetValues(), bufs, n)
			if err != nil {
				return nil, nil, err
			}
			valid := boolsToValid(vb.data)
			for i := range inner {
				valid[i] = valid[i] && inner[i]
			}
			return v, valid, nil
		}
	case *enc20pb.ArrayEncoding_Flat:
		buf, err := pageBuffer(bufs, e.Flat.GetBuffer())
		if err != nil {
			return nil, nil, err
		}
		if s := e.Flat.GetCompression().GetScheme(); s != "" {
			if s != "zstd" {
				return nil, nil, fmt.Errorf("2.0 flat compression %q: %w", s, ErrUnsupported)
			}
			if buf, err = zstdDecompress(buf); err != nil {
				return nil, nil, err
			}
		}
		bits := e.Flat.GetBitsPerValue()
		if bits == 1 {
			data, err := unpackBools(buf, n)
			if err != nil {
				return nil, nil, err
			}
			return &values{kind: kindBool, n: n, width: 1, data: data}, nil, nil
		}
		if bits == 0 || bits%8 != 0 || bits > 8<<20 {
			return nil, nil, fmt.Errorf("2.0 flat of %d bits: %w", bits, ErrUnsupported)
		}
		v, err := fixedValues(buf, int(bits/8), n)
		return v, nil, err
	case *enc20pb.ArrayEncoding_Binary:
		return decodeBinary20(e.Binary, bufs, n)
	case *enc20pb.ArrayEncoding_FixedSizeList:
		dim := e.FixedSizeList.GetDimension()
		if dim == 0 || uint64(n)*uint64(dim) > maxValues {
			return nil, nil, fmt.Errorf("fixed-size list of %d × %d: %w", n, dim, ErrCorrupt)
		}
		child, cv, err := decodeArray20(e.FixedSizeList.GetItems(), bufs, n*int(dim))
		if err != nil {
			return nil, nil, err
		}
		v := &values{kind: kindFSL, n: n, dim: int(dim), child: child}
		if cv != nil {
			v.itemValid = make([]byte, len(cv))
			for i, ok := range cv {
				if ok {
					v.itemValid[i] = 1
				}
			}
		}
		return v, nil, nil
	case *enc20pb.ArrayEncoding_Dictionary:
		return decodeDictionary20(e.Dictionary, bufs, n, len(direct) > 0 && direct[0])
	}
	return nil, nil, fmt.Errorf("2.0 encoding %T: %w", enc.GetArrayEncoding(), ErrUnsupported)
}

// decodeBinary20: per row the end offset of its bytes; a null row stores
// previous end + null_adjustment.
func decodeBinary20(b *enc20pb.Binary, bufs [][]byte, n int) (*values, []bool, error) {
	idx, _, err := decodeArray20(b.GetIndices(), bufs, n)
	if err != nil {
		return nil, nil, fmt.Errorf("binary offsets: %w", err)
	}
	if idx.kind != kindFixed || (idx.width != 4 && idx.width != 8) {
		return nil, nil, fmt.Errorf("binary offsets of %d bytes: %w", idx.width, ErrCorrupt)
	}
	// Bytes are a flat of n' bytes; the count comes from the buffer itself.
	flat := b.GetBytes().GetFlat()
	if flat == nil || flat.GetBitsPerValue() != 8 {
		return nil, nil, fmt.Errorf("binary bytes as %T: %w", b.GetBytes().GetArrayEncoding(), ErrUnsupported)
	}
	data, err := pageBuffer(bufs, flat.GetBuffer())
	if err != nil {
		return nil, nil, err
	}
	adj := b.GetNullAdjustment()
	out := &values{kind: kindVariable, n: n, offsets: make([]uint64, n+1), data: data}
	var valid []bool
	var prev uint64
	for i := 0; i < n; i++ {
		var x uint64
		if idx.width == 4 {
			x = uint64(binary.LittleEndian.Uint32(idx.data[4*i:]))
		} else {
			x = binary.LittleEndian.Uint64(idx.data[8*i:])
		}
		if adj > 0 && x >= adj {
			if valid == nil {
				valid = allTrue(n)
			}
			valid[i] = false
			x -= adj
		}
		if x < prev || x > uint64(len(data)) {
			return nil, nil, fmt.Errorf("binary offset %d after %d, %d bytes: %w", x, prev, len(data), ErrCorrupt)
		}
		out.offsets[i+1] = x
		prev = x
	}
	out.data = data[:prev]
	return out, valid, nil
}

// decodeDictionary20: 1-based indices into the items, 0 meaning null (or,
// when direct, the Arrow keys with nulls among the items).
func decodeDictionary20(d *enc20pb.Dictionary, bufs [][]byte, n int, direct bool) (*values, []bool, error) {
	items := int(d.GetNumDictionaryItems())
	if items > maxValues {
		return nil, nil, fmt.Errorf("dictionary of %d items: %w", items, ErrCorrupt)
	}
	dict, dictValid, err := decodeArray20(d.GetItems(), bufs, items)
	if err != nil {
		return nil, nil, fmt.Errorf("dictionary items: %w", err)
	}
	idx, idxValid, err := decodeArray20(d.GetIndices(), bufs, n)
	if err != nil {
		return nil, nil, fmt.Errorf("dictionary indices: %w", err)
	}
	if idx.kind != kindFixed || !validUintWidth(uint64(8*idx.width)) {
		return nil, nil, fmt.Errorf("dictionary indices of %d bytes: %w", idx.width, ErrCorrupt)
	}
	var valid []bool
	zeroBased := &values{kind: kindFixed, n: n, width: 8, data: make([]byte, 8*n)}
	for i := 0; i < n; i++ {
		k := getUint(idx.data, i, 8*idx.width)
		if direct {
			null := (idxValid != nil && !idxValid[i]) || (dictValid != nil && k < uint64(len(dictValid)) && !dictValid[k])
			if null {
				if valid == nil {
					valid = allTrue(n)
				}
				valid[i] = false
			}
			binary.LittleEndian.PutUint64(zeroBased.data[8*i:], k)
			continue
		}
		if k == 0 {
			if valid == nil {
				valid = allTrue(n)
			}
			valid[i] = false
			continue
		}
		binary.LittleEndian.PutUint64(zeroBased.data[8*i:], k-1)
	}
	v, err := dictionaryLookup(dict, zeroBased)
	return v, valid, err
}

// decodeList20 rebuilds list offsets from the offsets column and decodes
// the items they reference from the next column.
func (r *Reader) decodeList20(ctx context.Context, mem memory.Allocator, n *field, lo, hi uint64) (arrow.Array, error) {
	col := n.column
	var itemsBase uint64
	var offs []int64
	var valid []bool
	anyNull := false
	var itemLo uint64
	first := true
	row := uint64(0)
	for _, page := range r.columns[col].GetPages() {
		rows := page.GetLength()
		if rows > maxValues || page.GetEncoding().GetDirect() == nil {
			return nil, fmt.Errorf("list page of %d rows: %w", rows, ErrCorrupt)
		}
		enc, err := arrayEncoding20(page)
		if err != nil {
			return nil, err
		}
		l := enc.GetList()
		if l == nil {
			return nil, fmt.Errorf("list column page encoded as %T: %w", enc.GetArrayEncoding(), ErrUnsupported)
		}
		if row+rows <= lo || row >= hi {
			row += rows
			itemsBase += l.GetNumItems()
			continue
		}
		bufs, err := r.readPageBuffers(ctx, page)
		if err != nil {
			return nil, err
		}
		ends, _, err := decodeArray20(l.GetOffsets(), bufs, int(rows))
		if err != nil {
			return nil, fmt.Errorf("list offsets: %w", err)
		}
		if ends.kind != kindFixed || (ends.width != 4 && ends.width != 8) {
			return nil, fmt.Errorf("list offsets of %d bytes: %w", ends.width, ErrCorrupt)
		}
		adj := l.GetNullOffsetAdjustment()
		var prev uint64
		for i := uint64(0); i < rows; i++ {
			x := getUint(ends.data, int(i), 8*ends.width)
			null := adj > 0 && x >= adj
			if null {
				x -= adj
			}
			if x < prev || x > l.GetNumItems() {
				return nil, fmt.Errorf("list offset %d after %d, %d items: %w", x, prev, l.GetNumItems(), ErrCorrupt)
			}
			r := row + i
			if r >= lo && r < hi {
				if first {
					itemLo = itemsBase + prev
					offs = append(offs, 0)
					first = false
				}
				offs = append(offs, int64(itemsBase+x-itemLo))
				valid = append(valid, !null)
				anyNull = anyNull || null
			}
			prev = x
		}
		row += rows
		itemsBase += l.GetNumItems()
	}
	if first {
		offs = []int64{0}
	}
	itemHi := itemLo + uint64(offs[len(offs)-1])
	child, err := r.decode20(ctx, mem, n.children[0], itemLo, itemHi)
	if err != nil {
		return nil, err
	}
	defer child.Release()
	if !anyNull {
		valid = nil
	}
	vb, nulls, err := validityBuffer(mem, valid, len(offs)-1)
	if err != nil {
		return nil, err
	}
	var ob *memory.Buffer
	if _, large := n.arrow.Type.(*arrow.LargeListType); large {
		ob = newBuffer(mem, arrow.Int64Traits.CastToBytes(offs))
	} else {
		o32 := make([]int32, len(offs))
		for i, o := range offs {
			o32[i] = int32(o)
		}
		ob = newBuffer(mem, arrow.Int32Traits.CastToBytes(o32))
	}
	return makeArray(n.arrow.Type, len(offs)-1, []*memory.Buffer{vb, ob}, []arrow.ArrayData{child.Data()}, nulls), nil
}
