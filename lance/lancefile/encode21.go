package lancefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancecat/lancecat/lance/pb/enc21pb"
)

// Page encoders for 2.1. A page is mini-block (values < 256 bytes, chunked
// with their levels), full-zip (levels and values zipped per entry) or
// all-null. Levels are stored uncompressed (Flat(16) per chunk); values
// Flat, Variable or FixedSizeList, integers bit-packed (FastLanes) when it
// pays, and values over 32 KiB per-value zstd.

const (
	// miniBlockMaxValueBytes: values this long or longer go full-zip.
	miniBlockMaxValueBytes = 256
	maxChunkBytes          = 32 << 10
	// Lance's target for fixed-width chunks and for variable-width chunks.
	fixedChunkAim    = 8*1024 - 6
	variableChunkAim = 4 * 1024
	// zstdThreshold: variable pages holding a value this large compress
	// every value with zstd, as Lance does.
	zstdThreshold = 32 << 10
)

// errBitpackFit: a bit-packed chunk (always 1024 values) would not fit with
// its levels; the page is written without bit-packing instead.
var errBitpackFit = errors.New("bit-packed chunk does not fit")

// errSplitPage: the levels between two values are too many for one
// mini-block chunk (a long run of null or empty lists); the page is
// written as several pages instead, split at row boundaries, as Lance
// does.
var errSplitPage = errors.New("levels do not fit a mini-block chunk")

type encodedPage struct {
	bufs   [][]byte
	layout *enc21pb.PageLayout
}

func flat(bits int) *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: uint64(bits)}}}
}

func variableEnc(offsetBits int) *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{Variable: &enc21pb.Variable{Offsets: flat(offsetBits)}}}
}

func fslEnc(dim int, hasValidity bool, values *enc21pb.CompressiveEncoding) *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_FixedSizeList{FixedSizeList: &enc21pb.FixedSizeList{
		ItemsPerValue: uint64(dim), HasValidity: hasValidity, Values: values}}}
}

func marshalAny(typeURL string, m proto.Message) ([]byte, error) {
	v, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(&anypb.Any{TypeUrl: typeURL, Value: v})
}

func u16Bytes(dst []byte, levels []uint16) []byte {
	for _, l := range levels {
		dst = binary.LittleEndian.AppendUint16(dst, l)
	}
	return dst
}

// encodePage encodes what the column has accumulated.
func (c *column) encodePage(compress bool) (*encodedPage, error) {
	p := &c.page
	layers, remap, anyDef := c.pageLayers()
	var def []uint16
	if anyDef {
		def = make([]uint16, len(p.def))
		for i, d := range p.def {
			def[i] = remap[d]
		}
	}
	var rep []uint16
	if c.maxRep > 0 {
		rep = p.rep
	}
	// The highest stored def level that still has an item slot.
	mv := ^uint16(0)
	var cum uint16
	for _, l := range layers {
		if isListLayer(l) {
			mv = cum
			break
		}
		cum += numDefLevels(l)
	}
	if p.nullItems == p.n {
		return c.encodeAllNull(layers, rep, def, compress), nil
	}
	if dt, ok := c.leaf.(*arrow.DictionaryType); ok {
		return c.encodeDictionary(dt, layers, rep, def, mv, compress)
	}
	if _, isStr := c.leaf.(arrow.BinaryDataType); compress && isStr && c.leaf.ID() != arrow.BINARY && c.leaf.ID() != arrow.LARGE_BINARY &&
		p.maxLen < miniBlockMaxValueBytes && c.dictionaryPays() {
		// Low-cardinality strings as Lance writes them: a dictionary page
		// whose indices are 32-bit keys.
		vt := arrow.DataType(arrow.BinaryTypes.String)
		if c.large {
			vt = arrow.BinaryTypes.LargeString
		}
		return c.encodeDictionary(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: vt}, layers, rep, def, mv, compress)
	}
	if c.fsstApplies(compress) {
		// Strings as Lance compresses them: one FSST table for the page,
		// the coded values in mini-block chunks or full-zip entries.
		return c.withFSST(func() (*encodedPage, error) {
			if p.maxLen < miniBlockMaxValueBytes {
				return c.encodeMiniBlock(layers, rep, def, mv, compress)
			}
			return c.encodeFullZip(layers, rep, def, mv, compress)
		})
	}
	if compress && c.v22 && c.fixedDictionaryPays() {
		// 2.2 dictionary-encodes wide fixed-width values of low
		// cardinality too, with 32-bit indices.
		return c.encodeDictionary(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: c.leaf}, layers, rep, def, mv, compress)
	}
	if p.maxLen < miniBlockMaxValueBytes {
		ep, err := c.encodeMiniBlock(layers, rep, def, mv, compress)
		if err == errBitpackFit {
			return c.encodeMiniBlock(layers, rep, def, mv, false)
		}
		return ep, err
	}
	return c.encodeFullZip(layers, rep, def, mv, compress)
}

func (c *column) encodeAllNull(layers []enc21pb.RepDefLayer, rep, def []uint16, compress bool) *encodedPage {
	l := &enc21pb.AllNullLayout{Layers: layers}
	ep := &encodedPage{layout: &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_AllNullLayout{AllNullLayout: l}}}
	if rep == nil && len(layers) == 1 {
		return ep
	}
	if !c.v22 || !compress {
		ep.bufs = [][]byte{u16Bytes(nil, rep), u16Bytes(nil, def)}
		return ep
	}
	// 2.2's constant layout compresses its levels (rep_compression 7,
	// def_compression 8) and counts them (num_rep_values 9,
	// num_def_values 10), as the SDK writes all-null and all-empty pages.
	var unknown []byte
	ep.bufs = [][]byte{nil, nil}
	for i, lv := range [][]uint16{rep, def} {
		if lv == nil {
			continue
		}
		lc := chooseLevelCodec(lv, true, true)
		ep.bufs[i] = lc.appendLevels(nil, lv)
		enc, err := proto.MarshalOptions{Deterministic: true}.Marshal(lc.encoding())
		if err != nil {
			panic(err) // a message built here always marshals
		}
		unknown = protowire.AppendTag(unknown, protowire.Number(7+i), protowire.BytesType)
		unknown = protowire.AppendBytes(unknown, enc)
	}
	for i, lv := range [][]uint16{rep, def} {
		if lv != nil {
			unknown = protowire.AppendTag(unknown, protowire.Number(9+i), protowire.VarintType)
			unknown = protowire.AppendVarint(unknown, uint64(len(lv)))
		}
	}
	l.ProtoReflect().SetUnknown(unknown)
	return ep
}

// miniChunk is one planned chunk: values [v0, v0+nv), levels [l0, l0+nl).
type miniChunk struct {
	v0, nv, l0, nl int
	last           bool
}

func pad8(n int) int { return (n + 7) &^ 7 }

func (c *column) encodeMiniBlock(layers []enc21pb.RepDefLayer, rep, def []uint16, mv uint16, compress bool) (*encodedPage, error) {
	p := &c.page
	n := p.n
	hasValidity := c.kind == leafFSL && p.itemValid != nil
	offBytes := 4
	if c.large {
		offBytes = 8
	}
	// Lance prefers run-length encoding to bit-packing when the page has
	// fewer runs than half its values.
	rle := compress && c.rlePays()
	bitpack := !rle && compress && c.kind == leafFixed && isPackableInt(c.leaf) && c.bitpackPays()
	numBufs := 1
	if hasValidity || rle {
		numBufs = 2
	}
	valueBytes := func(v0, nv int) int {
		switch {
		case rle:
			r := runsIn(p.fixed[v0*c.width:(v0+nv)*c.width], c.width, true)
			return pad8(r*c.width) + pad8(r)
		case bitpack:
			return c.width + 128*c.width*8 // an upper bound: full width
		case c.kind == leafBool:
			return (nv + 7) / 8
		case c.kind == leafVariable:
			raw := offBytes*(nv+1) + int(p.offs[v0+nv]-p.offs[v0])
			return (raw + offBytes - 1) / offBytes * offBytes
		case c.kind == leafFSL:
			s := pad8(nv * c.dim * c.width)
			if hasValidity {
				s += pad8((nv*c.dim + 7) / 8)
			}
			return s
		}
		return nv * c.width
	}
	levelStreams := 0
	if rep != nil {
		levelStreams++
	}
	if def != nil {
		levelStreams++
	}
	numLevels := max(len(rep), len(def))
	bufWidth := 2 // bytes of a value buffer size in a chunk header
	if c.v22 {
		bufWidth = 4
	}
	var repCodec, defCodec levelCodec
	if rep != nil {
		repCodec = chooseLevelCodec(rep, compress, c.v22)
	}
	if def != nil {
		defCodec = chooseLevelCodec(def, compress, c.v22)
	}
	// chunkSize is the encoded size of a chunk, or -1 when its levels
	// cannot be a chunk's (more than a u16 counts).
	chunkSize := func(v0, nv, l0, nl int) int {
		hdr := 2*(1+levelStreams) + bufWidth*numBufs
		if nl > maxChunkLevels {
			return -1
		}
		s := pad8(hdr) + pad8(valueBytes(v0, nv))
		if rep != nil {
			rs := repCodec.size(rep[l0 : l0+nl])
			if rs > 0xffff {
				return -1
			}
			s += pad8(rs)
		}
		if def != nil {
			ds := defCodec.size(def[l0 : l0+nl])
			if ds > 0xffff {
				return -1
			}
			s += pad8(ds)
		}
		return s
	}
	fits := func(v0, nv, l0, nl int) bool {
		s := chunkSize(v0, nv, l0, nl)
		return s >= 0 && s <= maxChunkBytes
	}
	// levelsFor counts the level entries of the next nv values from l0.
	levelsFor := func(l0, nv int, last bool) int {
		if levelStreams == 0 {
			return 0
		}
		if last {
			return numLevels - l0
		}
		if rep == nil || def == nil {
			return nv
		}
		taken, i := 0, l0
		for taken < nv {
			if def[i] <= mv {
				taken++
			}
			i++
		}
		return i - l0
	}
	preferred := func(v0 int) int {
		switch {
		case bitpack:
			return fastLanesBlock
		case rle:
			return maxChunkValues
		case c.kind == leafBool:
			return maxChunkValues
		case c.kind == leafVariable:
			k := 2
			for 2*k <= maxChunkValues && v0+2*k <= n && valueBytes(v0, 2*k) <= variableChunkAim {
				k *= 2
			}
			return k
		}
		w := c.width
		if c.kind == leafFSL {
			w = c.dim * c.width
			if hasValidity {
				w += (c.dim + 7) / 8
			}
		}
		k, size := 2, 2*w
		for 2*size < fixedChunkAim && 2*k <= maxChunkValues {
			k, size = 2*k, 2*size
		}
		return k
	}
	var chunks []miniChunk
	v0, l0 := 0, 0
	for v0 < n {
		rest := n - v0
		var ch miniChunk
		if c.kind == leafVariable && rest <= maxChunkValues && valueBytes(v0, rest) <= variableChunkAim && fits(v0, rest, l0, levelsFor(l0, rest, true)) {
			ch = miniChunk{v0: v0, nv: rest, l0: l0, nl: levelsFor(l0, rest, true), last: true}
		} else {
			k := preferred(v0)
			for {
				last := rest <= k
				nv := k
				if last {
					nv = rest
				}
				nl := levelsFor(l0, nv, last)
				if fits(v0, nv, l0, nl) {
					ch = miniChunk{v0: v0, nv: nv, l0: l0, nl: nl, last: last}
					break
				}
				if bitpack {
					return nil, errBitpackFit
				}
				// A chunk other than the last holds at least two values
				// (log2 0 marks the last chunk).
				if k <= 2 && (!last || nv == 1) {
					return nil, fmt.Errorf("column %d: %d levels for %d values do not fit a mini-block chunk: %w", c.index, nl, nv, errSplitPage)
				}
				k /= 2
			}
		}
		chunks = append(chunks, ch)
		v0 += ch.nv
		l0 += ch.nl
	}
	if levelStreams > 0 && l0 != numLevels {
		return nil, fmt.Errorf("column %d: chunks cover %d of %d levels", c.index, l0, numLevels)
	}

	// Serialize.
	meta := make([]byte, 0, 2*len(chunks))
	data := make([]byte, 0, p.bytes()+len(chunks)*64)
	var repIndex []uint64
	var scratch []byte
	var enc *enc21pb.CompressiveEncoding
	switch {
	case rle:
		enc = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Rle{Rle: &enc21pb.Rle{Values: flat(8 * c.width), RunLengths: flat(8)}}}
	case bitpack:
		enc = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_InlineBitpacking{InlineBitpacking: &enc21pb.InlineBitpacking{UncompressedBitsPerValue: uint64(8 * c.width)}}}
	case c.kind == leafBool:
		enc = flat(1)
	case c.kind == leafVariable:
		enc = variableEnc(8 * offBytes)
	case c.kind == leafFSL:
		enc = fslEnc(c.dim, hasValidity, flat(8*c.width))
	default:
		enc = flat(8 * c.width)
	}
	for ci, ch := range chunks {
		start := len(data)
		// Value buffers first into scratch, so their sizes go in the header.
		var vbufs [][]byte
		scratch = scratch[:0]
		switch {
		case rle:
			var lens []byte
			scratch, lens = appendRuns(scratch, p.fixed[ch.v0*c.width:(ch.v0+ch.nv)*c.width], c.width)
			vbufs = [][]byte{scratch, lens}
		case bitpack:
			scratch = packChunk(scratch, p.fixed[ch.v0*c.width:(ch.v0+ch.nv)*c.width], c.width)
			vbufs = [][]byte{scratch}
		case c.kind == leafBool:
			scratch = packBools(scratch, p.fixed[ch.v0:ch.v0+ch.nv])
			vbufs = [][]byte{scratch}
		case c.kind == leafVariable:
			base := p.offs[ch.v0]
			first := uint64(offBytes * (ch.nv + 1))
			for i := 0; i <= ch.nv; i++ {
				o := p.offs[ch.v0+i] - base + first
				if offBytes == 4 {
					scratch = binary.LittleEndian.AppendUint32(scratch, uint32(o))
				} else {
					scratch = binary.LittleEndian.AppendUint64(scratch, o)
				}
			}
			scratch = append(scratch, p.data[base:p.offs[ch.v0+ch.nv]]...)
			for len(scratch)%offBytes != 0 {
				scratch = append(scratch, 0)
			}
			vbufs = [][]byte{scratch}
		case c.kind == leafFSL:
			items := p.fixed[ch.v0*c.dim*c.width : (ch.v0+ch.nv)*c.dim*c.width]
			if hasValidity {
				scratch = packBools(scratch, p.itemValid[ch.v0*c.dim:(ch.v0+ch.nv)*c.dim])
				vbufs = [][]byte{scratch, items}
			} else {
				vbufs = [][]byte{items}
			}
		default:
			vbufs = [][]byte{p.fixed[ch.v0*c.width : (ch.v0+ch.nv)*c.width]}
		}
		data = binary.LittleEndian.AppendUint16(data, uint16(ch.nl))
		if rep != nil {
			data = binary.LittleEndian.AppendUint16(data, uint16(repCodec.size(rep[ch.l0:ch.l0+ch.nl])))
		}
		if def != nil {
			data = binary.LittleEndian.AppendUint16(data, uint16(defCodec.size(def[ch.l0:ch.l0+ch.nl])))
		}
		for _, b := range vbufs {
			if c.v22 {
				data = binary.LittleEndian.AppendUint32(data, uint32(len(b)))
				continue
			}
			if len(b) > 0xffff {
				return nil, fmt.Errorf("column %d: chunk buffer of %d bytes", c.index, len(b))
			}
			data = binary.LittleEndian.AppendUint16(data, uint16(len(b)))
		}
		data = padTo8(data)
		if rep != nil {
			data = padTo8(repCodec.appendLevels(data, rep[ch.l0:ch.l0+ch.nl]))
		}
		if def != nil {
			data = padTo8(defCodec.appendLevels(data, def[ch.l0:ch.l0+ch.nl]))
		}
		for _, b := range vbufs {
			data = padTo8(append(data, b...))
		}
		size := len(data) - start
		if size > maxChunkBytes {
			return nil, fmt.Errorf("column %d: mini-block chunk of %d bytes", c.index, size)
		}
		logN := 0
		if !ch.last {
			logN = bits.TrailingZeros(uint(ch.nv))
		}
		if word := uint32((size/8-1)<<4 | logN); c.v22 {
			meta = binary.LittleEndian.AppendUint32(meta, word)
		} else {
			meta = binary.LittleEndian.AppendUint16(meta, uint16(word))
		}
		if rep != nil {
			repIndex = appendRepIndex(repIndex, rep[ch.l0:ch.l0+ch.nl], c.maxRep, ci, ch.last)
		}
	}
	l := &enc21pb.MiniBlockLayout{
		ValueCompression: enc,
		Layers:           layers,
		NumBuffers:       uint64(numBufs),
		NumItems:         uint64(n),
	}
	if rep != nil {
		l.RepCompression = repCodec.encoding()
		l.RepetitionIndexDepth = 1
	}
	if def != nil {
		l.DefCompression = defCodec.encoding()
	}
	if c.v22 {
		setHasLargeChunk(l)
	}
	bufs := [][]byte{meta, data}
	if rep != nil {
		ri := make([]byte, 0, 8*len(repIndex))
		for _, x := range repIndex {
			ri = binary.LittleEndian.AppendUint64(ri, x)
		}
		bufs = append(bufs, ri)
	}
	return &encodedPage{bufs: bufs, layout: &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_MiniBlockLayout{MiniBlockLayout: l}}}, nil
}

func padTo8(b []byte) []byte {
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// appendRepIndex adds a chunk's (rows finished, leftover levels) pair.
// A row finishes in a chunk when the next row starts in the same chunk;
// the levels after the last row start are leftovers, unless the next chunk
// starts a new row, in which case they were a whole row after all.
func appendRepIndex(idx []uint64, rep []uint16, maxRep uint16, chunk int, last bool) []uint64 {
	rows := 0
	lastStart := -1
	for i, r := range rep {
		if r == maxRep {
			if i > 0 {
				rows++
			}
			lastStart = i
		}
	}
	leftovers := 0
	if !last {
		if lastStart >= 0 {
			leftovers = len(rep) - lastStart
		} else {
			leftovers = len(rep)
		}
	}
	if chunk > 0 && len(rep) > 0 && rep[0] == maxRep && idx[len(idx)-1] != 0 {
		idx[len(idx)-2]++
		idx[len(idx)-1] = 0
	}
	if last {
		rows++
	}
	return append(idx, uint64(rows), uint64(leftovers))
}

func packBools(dst, vals []byte) []byte {
	n := (len(vals) + 7) / 8
	start := len(dst)
	dst = append(dst, make([]byte, n)...)
	out := dst[start:]
	for i, v := range vals {
		if v != 0 {
			out[i>>3] |= 1 << (i & 7)
		}
	}
	return dst
}

func (c *column) encodeFullZip(layers []enc21pb.RepDefLayer, rep, def []uint16, mv uint16, compress bool) (*encodedPage, error) {
	p := &c.page
	var maxR, maxD uint16
	for _, r := range rep {
		maxR = max(maxR, r)
	}
	for _, d := range def {
		maxD = max(maxD, d)
	}
	bitsRep, bitsDef := uint32(bits.Len16(maxR)), uint32(bits.Len16(maxD))
	cw := controlWordBytes(bitsRep, bitsDef)
	entries := p.n
	if rep != nil {
		entries = len(rep)
	}
	l := &enc21pb.FullZipLayout{BitsRep: bitsRep, BitsDef: bitsDef, NumItems: uint32(entries), NumVisibleItems: uint32(p.n), Layers: layers}
	variable := c.kind == leafVariable
	hasValidity := c.kind == leafFSL && p.itemValid != nil
	offBytes := 4
	if c.large {
		offBytes = 8
	}
	useZstd := false
	var valueBytes int
	switch c.kind {
	case leafVariable:
		l.Details = &enc21pb.FullZipLayout_BitsPerOffset{BitsPerOffset: uint32(8 * offBytes)}
		useZstd = compress && p.maxLen > zstdThreshold
		if useZstd {
			l.ValueCompression = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_General{General: &enc21pb.General{
				Compression: &enc21pb.BufferCompression{Scheme: enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD},
				Values:      variableEnc(8 * offBytes)}}}
		} else {
			l.ValueCompression = variableEnc(8 * offBytes)
		}
	case leafFSL:
		valueBytes = c.dim * c.width
		vb := 0
		if hasValidity {
			vb = (c.dim + 7) / 8
		}
		l.Details = &enc21pb.FullZipLayout_BitsPerValue{BitsPerValue: uint32(8 * (vb + valueBytes))}
		l.ValueCompression = fslEnc(c.dim, hasValidity, flat(8*c.width))
	case leafFixed:
		valueBytes = c.width
		l.Details = &enc21pb.FullZipLayout_BitsPerValue{BitsPerValue: uint32(8 * c.width)}
		l.ValueCompression = flat(8 * c.width)
	default:
		return nil, fmt.Errorf("column %d: full-zip of %s: %w", c.index, c.leaf, ErrUnsupported)
	}
	size := entries*cw + len(p.fixed) + len(p.data) + offBytes*p.n
	if hasValidity {
		size += p.n * (c.dim + 7) / 8
	}
	data := make([]byte, 0, size)
	withIndex := variable || rep != nil
	var starts []uint64
	if withIndex {
		starts = make([]uint64, 0, p.rows+1)
	}
	var zbuf []byte
	vi := 0
	for e := 0; e < entries; e++ {
		var r, d uint16
		if rep != nil {
			r = rep[e]
		}
		if def != nil {
			d = def[e]
		}
		if withIndex && (rep == nil || r == c.maxRep) {
			starts = append(starts, uint64(len(data)))
		}
		word := uint32(r)<<bitsDef | uint32(d)
		switch cw {
		case 1:
			data = append(data, byte(word))
		case 2:
			data = binary.LittleEndian.AppendUint16(data, uint16(word))
		case 4:
			data = binary.LittleEndian.AppendUint32(data, word)
		}
		if rep != nil && d > mv {
			continue // an empty or null list: no item
		}
		if !variable {
			if hasValidity {
				data = packBools(data, p.itemValid[vi*c.dim:(vi+1)*c.dim])
			}
			data = append(data, p.fixed[vi*valueBytes:(vi+1)*valueBytes]...)
		} else if d == 0 {
			v := p.data[p.offs[vi]:p.offs[vi+1]]
			if useZstd {
				zbuf = zstdCompress(zbuf[:0], v)
				v = zbuf
			}
			if offBytes == 4 {
				data = binary.LittleEndian.AppendUint32(data, uint32(len(v)))
			} else {
				data = binary.LittleEndian.AppendUint64(data, uint64(len(v)))
			}
			data = append(data, v...)
		}
		vi++
	}
	bufs := [][]byte{data}
	if withIndex {
		starts = append(starts, uint64(len(data)))
		w := 1
		switch end := uint64(len(data)); {
		case end > 0xffffffff:
			w = 8
		case end > 0xffff:
			w = 4
		case end > 0xff:
			w = 2
		}
		ri := make([]byte, 0, w*len(starts))
		for _, s := range starts {
			switch w {
			case 1:
				ri = append(ri, byte(s))
			case 2:
				ri = binary.LittleEndian.AppendUint16(ri, uint16(s))
			case 4:
				ri = binary.LittleEndian.AppendUint32(ri, uint32(s))
			default:
				ri = binary.LittleEndian.AppendUint64(ri, s)
			}
		}
		bufs = append(bufs, ri)
	}
	return &encodedPage{bufs: bufs, layout: &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_FullZipLayout{FullZipLayout: l}}}, nil
}
