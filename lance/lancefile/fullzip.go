package lancefile

import (
	"encoding/binary"
	"fmt"

	"github.com/lancecat/lancecat/lance/pb/enc21pb"
)

// Full-zip pages store, per level entry, a control word (rep and def packed
// together) followed by the value itself, so one row can be fetched with a
// single contiguous read. Used for large values (≥ 256 bytes) and wide
// vectors.

func controlWordBytes(bitsRep, bitsDef uint32) int {
	switch b := bitsRep + bitsDef; {
	case b == 0:
		return 0
	case b <= 8:
		return 1
	case b <= 16:
		return 2
	default:
		return 4
	}
}

func decodeFullZip(l *enc21pb.FullZipLayout, bufs [][]byte, rows int) (*leafPage, error) {
	if len(bufs) < 1 {
		return nil, fmt.Errorf("full-zip page without data: %w", ErrCorrupt)
	}
	if l.GetBitsRep() > 16 || l.GetBitsDef() > 16 {
		return nil, fmt.Errorf("full-zip control word of %d+%d bits: %w", l.GetBitsRep(), l.GetBitsDef(), ErrCorrupt)
	}
	data := bufs[0]
	cw := controlWordBytes(l.GetBitsRep(), l.GetBitsDef())
	layers := l.GetLayers()
	if err := checkLayers(layers); err != nil {
		return nil, err
	}
	mv, lists := maxVisibleDef(layers)
	numEntries := int(l.GetNumItems())
	if cw == 0 || numEntries == 0 {
		numEntries = rows
	}
	if numEntries > maxValues || (cw > 0 && numEntries > len(data)/cw) {
		return nil, fmt.Errorf("full-zip page claims %d entries in %d bytes: %w", numEntries, len(data), ErrCorrupt)
	}
	lp := &leafPage{layers: layers}
	if l.GetBitsRep() > 0 {
		lp.rep = make([]uint16, 0, numEntries)
	}
	if l.GetBitsDef() > 0 {
		lp.def = make([]uint16, 0, numEntries)
	}
	defMask := uint32(1)<<l.GetBitsDef() - 1

	dec, err := newZipValueDecoder(l)
	if err != nil {
		return nil, err
	}
	// Size the outputs once: every entry is at most one item. Fixed-width
	// items are compacted in place over the control words: an entry is
	// written at or before where it was read (memmove), and never over a
	// byte still to be read, so a page of wide vectors is not copied into
	// a second buffer of its size. data is the caller's page buffer, which
	// it hands over (see decodePage21).
	if dec.fixedBytes > 0 {
		dec.fixed = data[:0]
		if dec.validBytes > 0 {
			dec.valid = make([]byte, 0, numEntries*dec.dim)
		}
	} else {
		dec.offs = make([]uint64, 1, numEntries+1)
		dec.varBuf = make([]byte, 0, len(data))
	}
	pos := 0
	for e := 0; e < numEntries; e++ {
		var word uint32
		if pos+cw > len(data) {
			return nil, fmt.Errorf("full-zip entry %d truncated: %w", e, ErrCorrupt)
		}
		switch cw {
		case 1:
			word = uint32(data[pos])
		case 2:
			word = uint32(binary.LittleEndian.Uint16(data[pos:]))
		case 4:
			word = binary.LittleEndian.Uint32(data[pos:])
		}
		pos += cw
		def := uint16(word & defMask)
		if lp.rep != nil {
			lp.rep = append(lp.rep, uint16(word>>l.GetBitsDef()))
		}
		if lp.def != nil {
			lp.def = append(lp.def, def)
		}
		visible := !lists || def <= mv
		if !visible {
			continue
		}
		if pos, err = dec.next(data, pos, def == 0); err != nil {
			return nil, fmt.Errorf("full-zip entry %d: %w", e, err)
		}
	}
	if lp.vals, err = dec.finish(); err != nil {
		return nil, err
	}
	return lp, nil
}

// zipValueDecoder consumes the value part of full-zip entries.
type zipValueDecoder struct {
	fixedBytes int // fixed width: bytes per visible item (incl. FSL validity)
	offBytes   int // variable width: bytes of the length prefix
	dim        int // FSL items per value, 0 if not an FSL
	validBytes int // FSL validity bytes zipped in front of the items
	itemBytes  int
	fsst       []byte // symbol table when values are FSST-coded
	zstd       bool   // values are zstd frames with a u64 length prefix

	fixed  []byte
	valid  []byte
	offs   []uint64
	varBuf []byte
	n      int
}

func newZipValueDecoder(l *enc21pb.FullZipLayout) (*zipValueDecoder, error) {
	d := &zipValueDecoder{}
	enc := l.GetValueCompression()
	switch det := l.GetDetails().(type) {
	case *enc21pb.FullZipLayout_BitsPerValue:
		bits := det.BitsPerValue
		if bits == 0 || bits%8 != 0 || bits > 8<<24 {
			return nil, fmt.Errorf("full-zip values of %d bits: %w", bits, ErrUnsupported)
		}
		d.fixedBytes = int(bits / 8)
		switch c := enc.GetCompression().(type) {
		case *enc21pb.CompressiveEncoding_Flat:
			d.itemBytes = d.fixedBytes
		case *enc21pb.CompressiveEncoding_FixedSizeList:
			inner := c.FixedSizeList.GetValues().GetFlat()
			dim := c.FixedSizeList.GetItemsPerValue()
			if inner == nil || inner.GetBitsPerValue()%8 != 0 || inner.GetBitsPerValue() == 0 || dim == 0 || dim > maxValues {
				return nil, fmt.Errorf("full-zip fixed-size list over %T: %w", c.FixedSizeList.GetValues().GetCompression(), ErrUnsupported)
			}
			d.dim = int(dim)
			d.itemBytes = int(inner.GetBitsPerValue() / 8)
			if c.FixedSizeList.GetHasValidity() {
				d.validBytes = (d.dim + 7) / 8
			}
			if d.validBytes+d.dim*d.itemBytes != d.fixedBytes {
				return nil, fmt.Errorf("full-zip fixed-size list of %d × %d bytes in %d-byte values: %w", d.dim, d.itemBytes, d.fixedBytes, ErrCorrupt)
			}
		default:
			return nil, fmt.Errorf("full-zip fixed-width compression %T: %w", enc.GetCompression(), ErrUnsupported)
		}
	case *enc21pb.FullZipLayout_BitsPerOffset:
		switch det.BitsPerOffset {
		case 32:
			d.offBytes = 4
		case 64:
			d.offBytes = 8
		default:
			return nil, fmt.Errorf("full-zip %d-bit lengths: %w", det.BitsPerOffset, ErrUnsupported)
		}
		d.offs = []uint64{0}
		switch c := enc.GetCompression().(type) {
		case *enc21pb.CompressiveEncoding_Variable:
		case *enc21pb.CompressiveEncoding_Fsst:
			d.fsst = c.Fsst.GetSymbolTable()
		case *enc21pb.CompressiveEncoding_General:
			if c.General.GetCompression().GetScheme() != enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD {
				return nil, fmt.Errorf("full-zip general compression %s: %w", c.General.GetCompression().GetScheme(), ErrUnsupported)
			}
			d.zstd = true
		default:
			return nil, fmt.Errorf("full-zip variable compression %T: %w", enc.GetCompression(), ErrUnsupported)
		}
	default:
		return nil, fmt.Errorf("full-zip layout without value width: %w", ErrCorrupt)
	}
	return d, nil
}

// next consumes one visible item at pos. Fixed-width items always occupy
// their slot (zeros when null); variable-width ones only when valid.
func (d *zipValueDecoder) next(data []byte, pos int, valid bool) (int, error) {
	d.n++
	if d.fixedBytes > 0 {
		if pos+d.fixedBytes > len(data) {
			return 0, fmt.Errorf("value truncated: %w", ErrCorrupt)
		}
		v := data[pos : pos+d.fixedBytes]
		if d.validBytes > 0 {
			bits, _ := unpackBools(v[:d.validBytes], d.dim)
			d.valid = append(d.valid, bits...)
			v = v[d.validBytes:]
		}
		d.fixed = append(d.fixed, v...)
		return pos + d.fixedBytes, nil
	}
	if !valid {
		d.offs = append(d.offs, uint64(len(d.varBuf)))
		return pos, nil
	}
	if pos+d.offBytes > len(data) {
		return 0, fmt.Errorf("value length truncated: %w", ErrCorrupt)
	}
	var size uint64
	if d.offBytes == 4 {
		size = uint64(binary.LittleEndian.Uint32(data[pos:]))
	} else {
		size = binary.LittleEndian.Uint64(data[pos:])
	}
	pos += d.offBytes
	if size > uint64(len(data)-pos) {
		return 0, fmt.Errorf("value of %d bytes at %d outside %d: %w", size, pos, len(data), ErrCorrupt)
	}
	v := data[pos : pos+int(size)]
	pos += int(size)
	if d.zstd {
		raw, err := zstdDecompress(v)
		if err != nil {
			return 0, err
		}
		v = raw
	}
	d.varBuf = append(d.varBuf, v...)
	d.offs = append(d.offs, uint64(len(d.varBuf)))
	return pos, nil
}

func (d *zipValueDecoder) finish() (*values, error) {
	switch {
	case d.dim > 0:
		child, err := fixedValues(d.fixed, d.itemBytes, d.n*d.dim)
		if err != nil {
			return nil, err
		}
		return &values{kind: kindFSL, n: d.n, dim: d.dim, itemValid: d.valid, child: child}, nil
	case d.fixedBytes > 0:
		return fixedValues(d.fixed, d.fixedBytes, d.n)
	}
	v := &values{kind: kindVariable, n: d.n, data: d.varBuf, offsets: d.offs}
	if d.fsst != nil {
		return fsstDecodeValues(d.fsst, v)
	}
	return v, nil
}
