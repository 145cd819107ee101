package lancefile

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancecat/lancecat/lance/pb/enc21pb"
	"github.com/lancecat/lancecat/lance/pb/file2pb"
)

// leafPage is one decoded 2.1 page of a leaf column.
type leafPage struct {
	layers   []layer
	rep, def []uint16 // nil when absent
	vals     *values  // the visible items
	rows     int
	// fresh: vals share no bytes with the page's buffers (decoded into
	// buffers of their own), so the buffers may be reused (read_span.go)
	fresh bool
}

func pageLayout(page *file2pb.ColumnMetadata_Page) (*enc21pb.PageLayout, error) {
	raw := page.GetEncoding().GetDirect().GetEncoding()
	if raw == nil {
		return nil, fmt.Errorf("page without a direct encoding: %w", ErrUnsupported)
	}
	var a anypb.Any
	if err := proto.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("page encoding: %v: %w", err, ErrCorrupt)
	}
	if a.GetTypeUrl() != "/lance.encodings21.PageLayout" && a.GetTypeUrl() != "type.googleapis.com/lance.encodings21.PageLayout" {
		return nil, fmt.Errorf("page encoding %q in a 2.1 file: %w", a.GetTypeUrl(), ErrUnsupported)
	}
	var pl enc21pb.PageLayout
	if err := proto.Unmarshal(a.GetValue(), &pl); err != nil {
		return nil, fmt.Errorf("page layout: %v: %w", err, ErrCorrupt)
	}
	return &pl, nil
}

// decodePage21 decodes a whole page of a leaf column of Arrow type dt
// (nil when unknown), in a file of format 2.1 or 2.2.
//
// bufs are handed over: a full-zip page of fixed-width values is decoded
// in place in bufs[0].
func decodePage21(page *file2pb.ColumnMetadata_Page, bufs [][]byte, dt arrow.DataType) (*leafPage, error) {
	if page.GetLength() > maxValues {
		return nil, fmt.Errorf("page of %d rows: %w", page.GetLength(), ErrCorrupt)
	}
	rows := int(page.GetLength())
	pl, err := pageLayout(page)
	if err != nil {
		return nil, err
	}
	var lp *leafPage
	switch l := pl.GetLayout().(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		lp, err = decodeMiniBlock(l.MiniBlockLayout, bufs)
	case *enc21pb.PageLayout_FullZipLayout:
		lp, err = decodeFullZip(l.FullZipLayout, bufs, rows)
	case *enc21pb.PageLayout_AllNullLayout:
		lp, err = decodeConstantPage(l.AllNullLayout, bufs, rows, dt)
	default:
		return nil, fmt.Errorf("page layout %T: %w", pl.GetLayout(), ErrUnsupported)
	}
	if err != nil {
		return nil, err
	}
	lp.rows = rows
	return lp, lp.check()
}

// check verifies that levels, items and rows agree, so later stages can
// index without bounds surprises.
func (lp *leafPage) check() error {
	if err := checkLayers(lp.layers); err != nil {
		return err
	}
	if lp.rep != nil && lp.def != nil && len(lp.rep) != len(lp.def) {
		return fmt.Errorf("%d rep levels but %d def levels: %w", len(lp.rep), len(lp.def), ErrCorrupt)
	}
	visible := lp.rows
	mr := maxRep(lp.layers)
	if lp.rep != nil {
		rows := 0
		for _, r := range lp.rep {
			if r > mr {
				return fmt.Errorf("rep level %d above %d: %w", r, mr, ErrCorrupt)
			}
			if r == mr {
				rows++
			}
		}
		if rows != lp.rows || (len(lp.rep) > 0 && lp.rep[0] != mr) {
			return fmt.Errorf("rep levels start %d rows, page has %d: %w", rows, lp.rows, ErrCorrupt)
		}
		visible = len(lp.rep)
	} else if mr > 0 {
		return fmt.Errorf("list layers without repetition levels: %w", ErrCorrupt)
	}
	if lp.def != nil {
		if lp.rep == nil && len(lp.def) != lp.rows {
			return fmt.Errorf("%d def levels for %d rows: %w", len(lp.def), lp.rows, ErrCorrupt)
		}
		var maxDef uint16
		for _, l := range lp.layers {
			maxDef += numDefLevels(l)
		}
		mv, lists := maxVisibleDef(lp.layers)
		visible = 0
		for _, d := range lp.def {
			if d > maxDef {
				return fmt.Errorf("def level %d above %d: %w", d, maxDef, ErrCorrupt)
			}
			if !lists || d <= mv {
				visible++
			}
		}
	}
	if lp.vals.n != visible {
		return fmt.Errorf("page has %d items, levels say %d: %w", lp.vals.n, visible, ErrCorrupt)
	}
	return nil
}

func levelsOf(v *values) ([]uint16, error) {
	if v.kind != kindFixed || v.width != 2 {
		return nil, fmt.Errorf("levels decoded as %d-byte values: %w", v.width, ErrCorrupt)
	}
	out := make([]uint16, v.n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(v.data[2*i:])
	}
	return out, nil
}

func align8(x int) int { return (x + 7) &^ 7 }

const maxChunkValues = 4096

func decodeMiniBlock(l *enc21pb.MiniBlockLayout, bufs [][]byte) (*leafPage, error) {
	return decodeMiniBlockInto(l, bufs, nil)
}

// decodeMiniBlockInto is decodeMiniBlock with spare (nil: none) to hold the
// offsets of FSST strings when its capacity is enough (a Cursor's spans
// reuse the offsets of the spans they replaced: read_span.go).
func decodeMiniBlockInto(l *enc21pb.MiniBlockLayout, bufs [][]byte, spare []uint64) (*leafPage, error) {
	if len(bufs) < 2 {
		return nil, fmt.Errorf("mini-block page with %d buffers: %w", len(bufs), ErrCorrupt)
	}
	meta, err := newMiniMeta(l, bufs[0])
	if err != nil {
		return nil, err
	}
	data := bufs[1]
	numItems := l.GetNumItems()
	numBufs := l.GetNumBuffers()
	if numItems > maxValues || numBufs > 64 {
		return nil, fmt.Errorf("mini-block with %d items, %d buffers: %w", numItems, numBufs, ErrCorrupt)
	}
	var dict *values
	if l.GetDictionary() != nil {
		if len(bufs) < 3 || l.GetNumDictionaryItems() > maxValues {
			return nil, fmt.Errorf("mini-block dictionary missing: %w", ErrCorrupt)
		}
		if dict, err = decodeBlock(l.GetDictionary(), bufs[2], int(l.GetNumDictionaryItems())); err != nil {
			return nil, fmt.Errorf("dictionary: %w", err)
		}
	}
	hasRep, hasDef := l.GetRepCompression() != nil, l.GetDefCompression() != nil
	lp := &leafPage{layers: l.GetLayers()}
	var vals *values
	var parts []*values
	// FSST strings (the SDK's choice for most string columns): the table
	// is parsed once and every chunk expands straight into one page-wide
	// output, instead of a buffer per chunk joined by a copy. A table that
	// does not parse takes the general path, which reports it.
	enc := l.GetValueCompression()
	var fsst *fsstTable
	var fsstOut *values
	if f := enc.GetFsst(); f != nil && dict == nil {
		if t, err := parseFSSTTable(f.GetSymbolTable()); err == nil && !t.raw {
			fsst, enc = t, f.GetValues()
			offs := spare[:0]
			if uint64(cap(spare)) < numItems+1 {
				offs = make([]uint64, 0, numItems+1)
			}
			fsstOut = &values{kind: kindVariable, offsets: append(offs, 0), data: make([]byte, 0, 2*len(data)+64)}
		}
	}
	// The chunk's value buffers go straight into one page-wide output for
	// the two encodings a scan meets most (count_rows with a filter over
	// an int64 and an FSST string column, issue 15): inline bit-packed
	// integers unpack in place (no buffer per chunk, no concatenation),
	// FSST expands from the chunk's raw offsets (no offsets array per
	// chunk). Everything else takes decodeChunk.
	var into func(bufs [][]byte) error
	var fixed []byte // the bit-packed page output
	var chunkN, filled int
	if ib := enc.GetInlineBitpacking(); ib != nil && ib.GetValues() == nil && dict == nil && validUintWidth(ib.GetUncompressedBitsPerValue()) {
		t := int(ib.GetUncompressedBitsPerValue())
		// one block of slack: a chunk unpacks all 1024 slots of its block
		fixed = make([]byte, (int(numItems)+fastLanesBlock)*t/8)
		into = func(bufs [][]byte) error {
			if len(bufs) < 1 || len(bufs[0]) < t/8 {
				return fmt.Errorf("inline bit-packed chunk truncated: %w", ErrCorrupt)
			}
			if chunkN > fastLanesBlock {
				return fmt.Errorf("inline bit-packed chunk of %d values: %w", chunkN, ErrCorrupt)
			}
			w := int(getUint(bufs[0], 0, t))
			if err := unpackFastLanes(fixed[filled*t/8:], bufs[0][t/8:], t, w); err != nil {
				return err
			}
			filled += chunkN
			return nil
		}
	} else if fsst != nil && enc.GetVariable() != nil {
		w, err := offsetWidth(enc.GetVariable().GetOffsets())
		if err != nil {
			return nil, err
		}
		into = func(bufs [][]byte) error {
			if len(bufs) < 1 {
				return fmt.Errorf("fsst chunk without buffers: %w", ErrCorrupt)
			}
			return fsst.decodeChunk(fsstOut, bufs[0], w, chunkN)
		}
	}
	pos, seen := 0, uint64(0)
	nChunks := meta.chunks()
	for c := 0; c < nChunks; c++ {
		size, n := meta.chunk(c)
		if c == nChunks-1 {
			if seen > numItems {
				return nil, fmt.Errorf("mini-block chunks exceed %d items: %w", numItems, ErrCorrupt)
			}
			n = numItems - seen
			// Chunks hold at most 4096 values; without this bound a corrupt
			// item count would size the last chunk's decode.
			if n > maxChunkValues {
				return nil, fmt.Errorf("last mini-block chunk of %d values: %w", n, ErrCorrupt)
			}
		}
		seen += n
		if pos+size > len(data) {
			return nil, fmt.Errorf("mini-block chunk %d at %d+%d outside %d bytes: %w", c, pos, size, len(data), ErrCorrupt)
		}
		chunk := data[pos : pos+size]
		pos += size
		chunkN = int(n)
		rep, def, v, err := decodeMiniChunk(l, enc, chunk, hasRep, hasDef, meta.width == 4, int(numBufs), int(n), into)
		if err != nil {
			return nil, fmt.Errorf("mini-block chunk %d: %w", c, err)
		}
		if fsst != nil && v != nil {
			if v.kind != kindVariable {
				return nil, fmt.Errorf("mini-block chunk %d: fsst over non-variable values: %w", c, ErrCorrupt)
			}
			for i := 0; i < v.n; i++ {
				if fsstOut.data, err = fsst.decode(fsstOut.data, v.value(i)); err != nil {
					return nil, fmt.Errorf("mini-block chunk %d: %w", c, err)
				}
				fsstOut.offsets = append(fsstOut.offsets, uint64(len(fsstOut.data)))
			}
			fsstOut.n += v.n
			v = nil
		}
		if dict != nil {
			if v, err = dictionaryLookup(dict, v); err != nil {
				return nil, err
			}
		}
		if hasRep {
			lp.rep = append(lp.rep, rep...)
		}
		if hasDef {
			lp.def = append(lp.def, def...)
		}
		if v != nil {
			parts = append(parts, v)
		}
	}
	if fsst != nil && nChunks > 0 {
		parts = []*values{fsstOut}
	}
	if fixed != nil && nChunks > 0 {
		t := int(enc.GetInlineBitpacking().GetUncompressedBitsPerValue())
		parts = []*values{{kind: kindFixed, n: filled, width: t / 8, data: fixed[: filled*t/8 : filled*t/8]}}
	}
	if len(parts) > 0 {
		if vals, err = concatValues(parts); err != nil {
			return nil, err
		}
	}
	if seen != numItems {
		return nil, fmt.Errorf("mini-block chunks hold %d of %d items: %w", seen, numItems, ErrCorrupt)
	}
	if vals == nil {
		vals = nullValues(0)
	}
	if hasRep && lp.rep == nil {
		lp.rep = []uint16{}
	}
	if hasDef && lp.def == nil {
		lp.def = []uint16{}
	}
	lp.vals = vals
	// FSST expands into fsstOut, bit-packed integers unpack into fixed:
	// the only paths that never hand out a view of the chunks
	lp.fresh = fsst != nil || fixed != nil
	return lp, nil
}

// decodeMiniChunk splits one chunk: a header of u16 sizes (levels count,
// rep bytes, def bytes, one per value buffer; the value buffer sizes are u32
// in large chunks), then each part 8-aligned.
//
// into, when not nil, takes the value buffers instead of decodeChunk (v is
// then nil).
func decodeMiniChunk(l *enc21pb.MiniBlockLayout, enc *enc21pb.CompressiveEncoding, chunk []byte, hasRep, hasDef, large bool, numBufs, n int, into func(bufs [][]byte) error) (rep, def []uint16, v *values, err error) {
	bufWidth := 2
	if large {
		bufWidth = 4
	}
	hdrLen := 2 + bufWidth*numBufs
	if hasRep {
		hdrLen += 2
	}
	if hasDef {
		hdrLen += 2
	}
	if len(chunk) < hdrLen {
		return nil, nil, nil, fmt.Errorf("chunk header truncated: %w", ErrCorrupt)
	}
	u16 := func(i int) int { return int(binary.LittleEndian.Uint16(chunk[2*i:])) }
	numLevels := u16(0)
	k := 1
	var repSize, defSize int
	if hasRep {
		repSize = u16(k)
		k++
	}
	if hasDef {
		defSize = u16(k)
		k++
	}
	sizes := make([]int, numBufs)
	for i, at := range sizes {
		at = 2*k + bufWidth*i
		if large {
			sizes[i] = int(binary.LittleEndian.Uint32(chunk[at:]))
		} else {
			sizes[i] = int(binary.LittleEndian.Uint16(chunk[at:]))
		}
	}
	pos := align8(hdrLen)
	take := func(size int) ([]byte, error) {
		if pos+size > len(chunk) {
			return nil, fmt.Errorf("chunk part at %d+%d outside %d bytes: %w", pos, size, len(chunk), ErrCorrupt)
		}
		b := chunk[pos : pos+size]
		pos = align8(pos + size)
		return b, nil
	}
	if hasRep {
		b, err := take(repSize)
		if err != nil {
			return nil, nil, nil, err
		}
		lv, err := decodeBlock(l.GetRepCompression(), b, numLevels)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("rep levels: %w", err)
		}
		if rep, err = levelsOf(lv); err != nil {
			return nil, nil, nil, err
		}
	}
	if hasDef {
		b, err := take(defSize)
		if err != nil {
			return nil, nil, nil, err
		}
		lv, err := decodeBlock(l.GetDefCompression(), b, numLevels)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("def levels: %w", err)
		}
		if def, err = levelsOf(lv); err != nil {
			return nil, nil, nil, err
		}
	}
	bufs := make([][]byte, numBufs)
	for i := range bufs {
		if bufs[i], err = take(sizes[i]); err != nil {
			return nil, nil, nil, err
		}
	}
	if into != nil {
		// the caller decodes the value buffers itself (decodeMiniBlock's
		// page-wide fast paths)
		return rep, def, nil, into(bufs)
	}
	v, err = decodeChunk(enc, bufs, n)
	return rep, def, v, err
}

// dictionaryLookup replaces indices by the dictionary items they name.
func dictionaryLookup(dict, idx *values) (*values, error) {
	if idx.kind != kindFixed || !validUintWidth(uint64(8*idx.width)) {
		return nil, fmt.Errorf("dictionary indices of width %d: %w", idx.width, ErrCorrupt)
	}
	// Fast paths for the shapes dictionaries take in practice.
	if dict.kind == kindVariable || dict.kind == kindFixed {
		return gatherDictionary(dict, idx)
	}
	out := emptyLike(dict)
	for i := 0; i < idx.n; i++ {
		var k uint64
		for b := idx.width - 1; b >= 0; b-- {
			k = k<<8 | uint64(idx.data[i*idx.width+b])
		}
		if k >= uint64(dict.n) {
			// Null items carry an arbitrary index; the def levels mask them.
			if dict.n == 0 {
				return nil, fmt.Errorf("dictionary index %d into an empty dictionary: %w", k, ErrCorrupt)
			}
			k = 0
		}
		if err := out.appendValues(dict.slice(int(k), int(k)+1)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodeConstantPage decodes an all-null page (2.1), or a constant page
// (2.2: an all-null layout with an inline value and compressed levels).
func decodeConstantPage(l *enc21pb.AllNullLayout, bufs [][]byte, rows int, dt arrow.DataType) (*leafPage, error) {
	cl, err := parseConstantLayout(l)
	if err != nil {
		return nil, err
	}
	lp := &leafPage{layers: l.GetLayers()}
	// A 2.2 constant too large to inline (a string, say) comes first, as
	// a value buffer before the level buffers: one or three buffers.
	var scalar []byte
	if cl.inline == nil && (len(bufs) == 1 || len(bufs) == 3) {
		scalar, bufs = bufs[0], bufs[1:]
	}
	if len(bufs) >= 2 && (len(bufs[0]) > 0 || len(bufs[1]) > 0) {
		if len(bufs[0]) > 0 {
			if lp.rep, err = constantLevels(cl.rep, bufs[0], cl.numRep); err != nil {
				return nil, fmt.Errorf("rep levels: %w", err)
			}
		}
		if len(bufs[1]) > 0 {
			if lp.def, err = constantLevels(cl.def, bufs[1], cl.numDef); err != nil {
				return nil, fmt.Errorf("def levels: %w", err)
			}
		}
	} else if cl.inline == nil && scalar == nil {
		// No levels stored: every row is a null item at the innermost layer.
		lp.def = make([]uint16, rows)
		for i := range lp.def {
			lp.def[i] = 1
		}
	}
	n := rows
	if mv, lists := maxVisibleDef(lp.layers); lists && lp.def != nil {
		n = 0
		for _, d := range lp.def {
			if d <= mv {
				n++
			}
		}
	} else if lp.rep != nil {
		n = len(lp.rep)
	}
	switch {
	case scalar != nil:
		if lp.vals, err = scalarValues(dt, scalar, n); err != nil {
			return nil, err
		}
	case cl.inline == nil:
		lp.vals = nullValues(n)
	default:
		if lp.vals, err = constantValues(dt, cl.inline, n); err != nil {
			return nil, err
		}
	}
	return lp, nil
}

func rawLevels(b []byte) ([]uint16, error) {
	if len(b)%2 != 0 || len(b)/2 > maxValues {
		return nil, fmt.Errorf("level buffer of %d bytes: %w", len(b), ErrCorrupt)
	}
	out := make([]uint16, len(b)/2)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return out, nil
}

func gatherDictionary(dict, idx *values) (*values, error) {
	if dict.n == 0 && idx.n > 0 {
		return nil, fmt.Errorf("indices into an empty dictionary: %w", ErrCorrupt)
	}
	key := func(i int) int {
		k := getUint(idx.data, i, 8*idx.width)
		if k >= uint64(dict.n) {
			return 0 // null items carry arbitrary indices
		}
		return int(k)
	}
	if dict.kind == kindFixed {
		out := &values{kind: kindFixed, n: idx.n, width: dict.width, data: make([]byte, 0, idx.n*dict.width)}
		for i := 0; i < idx.n; i++ {
			k := key(i)
			out.data = append(out.data, dict.data[k*dict.width:(k+1)*dict.width]...)
		}
		return out, nil
	}
	out := &values{kind: kindVariable, n: idx.n, offsets: make([]uint64, idx.n+1)}
	for i := 0; i < idx.n; i++ {
		out.data = append(out.data, dict.value(key(i))...)
		out.offsets[i+1] = uint64(len(out.data))
	}
	return out, nil
}
