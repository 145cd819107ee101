package lancefile

import (
	"encoding/binary"
	"fmt"

	"github.com/lancecat/lancecat/lance/pb/enc21pb"
)

// Decoders for 2.1's CompressiveEncoding tree. The same message describes
// three physical forms, so there is one entry point per form:
// decodeChunk (the value buffers of one mini-block chunk), decodeBlock (a
// whole buffer: levels, dictionaries) and the per-value form of full-zip
// pages (fullzip.go).

// maxValues bounds any count read from a file before it sizes an
// allocation; real pages hold far fewer.
const maxValues = 1 << 26

// decodeChunk decodes n values from the value buffers of one chunk.
func decodeChunk(enc *enc21pb.CompressiveEncoding, bufs [][]byte, n int) (*values, error) {
	if n < 0 || n > maxValues {
		return nil, fmt.Errorf("chunk of %d values: %w", n, ErrCorrupt)
	}
	if enc == nil {
		return nil, fmt.Errorf("missing value compression: %w", ErrCorrupt)
	}
	need := func(k int) error {
		if len(bufs) < k {
			return fmt.Errorf("%T needs %d buffers, chunk has %d: %w", enc.GetCompression(), k, len(bufs), ErrCorrupt)
		}
		return nil
	}
	switch c := enc.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		if err := need(1); err != nil {
			return nil, err
		}
		return decodeFlat(c.Flat, bufs[0], n)
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		if err := need(1); err != nil {
			return nil, err
		}
		t := c.InlineBitpacking.GetUncompressedBitsPerValue()
		if !validUintWidth(t) {
			return nil, fmt.Errorf("inline bit-packing of %d-bit values: %w", t, ErrUnsupported)
		}
		buf := bufs[0]
		if bc := c.InlineBitpacking.GetValues(); bc != nil {
			var err error
			if buf, err = decompressBuffer(bc, buf); err != nil {
				return nil, err
			}
		}
		data, err := decodeInlineBitpacked(buf, int(t), n)
		if err != nil {
			return nil, err
		}
		return fixedValues(data, int(t)/8, n)
	case *enc21pb.CompressiveEncoding_Variable:
		if err := need(1); err != nil {
			return nil, err
		}
		w, err := offsetWidth(c.Variable.GetOffsets())
		if err != nil {
			return nil, err
		}
		// Offsets are relative to the start of the chunk buffer, which holds
		// the offsets followed by the bytes.
		return variableFromOffsets(bufs[0], w, bufs[0], n)
	case *enc21pb.CompressiveEncoding_Fsst:
		inner, err := decodeChunk(c.Fsst.GetValues(), bufs, n)
		if err != nil {
			return nil, err
		}
		return fsstDecodeValues(c.Fsst.GetSymbolTable(), inner)
	case *enc21pb.CompressiveEncoding_Rle:
		if err := need(2); err != nil {
			return nil, err
		}
		return decodeRle(c.Rle, bufs[0], bufs[1], n)
	case *enc21pb.CompressiveEncoding_FixedSizeList:
		return decodeFSLChunk(c.FixedSizeList, bufs, n)
	case *enc21pb.CompressiveEncoding_General:
		if err := need(1); err != nil {
			return nil, err
		}
		// Only the first buffer of a chunk is compressed.
		first, err := decompressBuffer(c.General.GetCompression(), bufs[0])
		if err != nil {
			return nil, err
		}
		rest := append([][]byte{first}, bufs[1:]...)
		return decodeChunk(c.General.GetValues(), rest, n)
	case *enc21pb.CompressiveEncoding_ByteStreamSplit:
		if err := need(1); err != nil {
			return nil, err
		}
		return decodeByteStreamSplit(c.ByteStreamSplit, bufs[0], n)
	case *enc21pb.CompressiveEncoding_Constant:
		return decodeConstant(c.Constant, n)
	}
	return nil, fmt.Errorf("mini-block value compression %T: %w", enc.GetCompression(), ErrUnsupported)
}

// decodeBlock decodes n values stored as one whole buffer.
func decodeBlock(enc *enc21pb.CompressiveEncoding, buf []byte, n int) (*values, error) {
	if n < 0 || n > maxValues {
		return nil, fmt.Errorf("block of %d values: %w", n, ErrCorrupt)
	}
	switch c := enc.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		return decodeFlat(c.Flat, buf, n)
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		return decodeChunk(enc, [][]byte{buf}, n)
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		t := c.OutOfLineBitpacking.GetUncompressedBitsPerValue()
		inner := c.OutOfLineBitpacking.GetValues().GetFlat()
		if !validUintWidth(t) || inner == nil {
			return nil, fmt.Errorf("out-of-line bit-packing %d over %T: %w", t, c.OutOfLineBitpacking.GetValues().GetCompression(), ErrUnsupported)
		}
		data, err := decodeOutOfLineBitpacked(buf, int(t), int(inner.GetBitsPerValue()), n)
		if err != nil {
			return nil, err
		}
		return fixedValues(data, int(t)/8, n)
	case *enc21pb.CompressiveEncoding_Variable:
		return decodeVariableBlock(buf, n)
	case *enc21pb.CompressiveEncoding_General:
		raw, err := decompressBuffer(c.General.GetCompression(), buf)
		if err != nil {
			return nil, err
		}
		return decodeBlock(c.General.GetValues(), raw, n)
	case *enc21pb.CompressiveEncoding_Fsst:
		inner, err := decodeBlock(c.Fsst.GetValues(), buf, n)
		if err != nil {
			return nil, err
		}
		return fsstDecodeValues(c.Fsst.GetSymbolTable(), inner)
	case *enc21pb.CompressiveEncoding_Constant:
		return decodeConstant(c.Constant, n)
	case *enc21pb.CompressiveEncoding_Rle:
		// 2.2 (levels): the byte length of the run values as a u64, the
		// run values, then the run lengths.
		if len(buf) < 8 {
			return nil, fmt.Errorf("rle block of %d bytes: %w", len(buf), ErrCorrupt)
		}
		vl := binary.LittleEndian.Uint64(buf)
		if vl > uint64(len(buf)-8) {
			return nil, fmt.Errorf("rle block: %d bytes of run values in %d: %w", vl, len(buf)-8, ErrCorrupt)
		}
		return decodeRle(c.Rle, buf[8:8+vl], buf[8+vl:], n)
	}
	return nil, fmt.Errorf("block compression %T: %w", enc.GetCompression(), ErrUnsupported)
}

func decodeFlat(f *enc21pb.Flat, buf []byte, n int) (*values, error) {
	if bc := f.GetData(); bc != nil {
		var err error
		if buf, err = decompressBuffer(bc, buf); err != nil {
			return nil, err
		}
	}
	bits := f.GetBitsPerValue()
	switch {
	case bits == 1:
		data, err := unpackBools(buf, n)
		if err != nil {
			return nil, err
		}
		return &values{kind: kindBool, n: n, data: data, width: 1}, nil
	case bits > 0 && bits%8 == 0 && bits <= 8*1<<20:
		return fixedValues(buf, int(bits/8), n)
	}
	return nil, fmt.Errorf("flat encoding of %d bits: %w", bits, ErrUnsupported)
}

func offsetWidth(enc *enc21pb.CompressiveEncoding) (int, error) {
	switch enc.GetFlat().GetBitsPerValue() {
	case 32:
		return 4, nil
	case 64:
		return 8, nil
	}
	return 0, fmt.Errorf("variable offsets encoded as %T: %w", enc.GetCompression(), ErrUnsupported)
}

// decodeVariableBlock reads the block form: a header (bits per offset and
// where the bytes start, 4 or 8 bytes each), n+1 offsets, the bytes.
func decodeVariableBlock(buf []byte, n int) (*values, error) {
	if len(buf) < 8 {
		return nil, fmt.Errorf("variable block truncated: %w", ErrCorrupt)
	}
	w, hdr := 4, 8
	switch binary.LittleEndian.Uint32(buf) {
	case 32:
	case 64:
		w, hdr = 8, 16
	default:
		return nil, fmt.Errorf("variable block with %d-bit offsets: %w", binary.LittleEndian.Uint32(buf), ErrUnsupported)
	}
	if len(buf) < hdr {
		return nil, fmt.Errorf("variable block truncated: %w", ErrCorrupt)
	}
	var dataStart uint64
	if w == 4 {
		dataStart = uint64(binary.LittleEndian.Uint32(buf[4:]))
	} else {
		dataStart = binary.LittleEndian.Uint64(buf[8:])
	}
	if dataStart < uint64(hdr) || dataStart > uint64(len(buf)) {
		return nil, fmt.Errorf("variable block data start %d outside %d bytes: %w", dataStart, len(buf), ErrCorrupt)
	}
	offs := buf[hdr:dataStart]
	data := buf[dataStart:]
	if len(offs)/w < n+1 {
		return nil, fmt.Errorf("variable block: %d offsets in %d bytes: %w", n+1, len(offs), ErrCorrupt)
	}
	// Offsets are relative to data_start after subtracting the first one.
	return variableFromOffsets(offs, w, data, n)
}

func decodeRle(r *enc21pb.Rle, vals, lens []byte, n int) (*values, error) {
	vf := r.GetValues().GetFlat()
	if vf == nil || vf.GetBitsPerValue()%8 != 0 || vf.GetBitsPerValue() == 0 || vf.GetBitsPerValue() > 128 {
		return nil, fmt.Errorf("rle values as %T: %w", r.GetValues().GetCompression(), ErrUnsupported)
	}
	if lf := r.GetRunLengths().GetFlat(); lf == nil || lf.GetBitsPerValue() != 8 || lf.GetData() != nil {
		return nil, fmt.Errorf("rle run lengths as %v: %w", r.GetRunLengths(), ErrUnsupported)
	}
	w := int(vf.GetBitsPerValue() / 8)
	runs := len(lens)
	if len(vals)/w < runs {
		runs = len(vals) / w
	}
	total := 0
	for _, l := range lens[:runs] {
		total += int(l)
	}
	if total < n {
		return nil, fmt.Errorf("rle runs cover %d of %d values: %w", total, n, ErrCorrupt)
	}
	out := make([]byte, 0, n*w)
	for i := 0; i < runs && len(out) < n*w; i++ {
		v := vals[i*w : (i+1)*w]
		for k := 0; k < int(lens[i]) && len(out) < n*w; k++ {
			out = append(out, v...)
		}
	}
	if len(out) != n*w {
		return nil, fmt.Errorf("rle runs cover %d of %d values: %w", len(out)/w, n, ErrCorrupt)
	}
	return fixedValues(out, w, n)
}

func decodeFSLChunk(f *enc21pb.FixedSizeList, bufs [][]byte, n int) (*values, error) {
	dim := f.GetItemsPerValue()
	if dim == 0 || dim > maxValues || uint64(n)*dim > maxValues {
		return nil, fmt.Errorf("fixed-size list of %d × %d: %w", n, dim, ErrCorrupt)
	}
	items := n * int(dim)
	var valid []byte
	if f.GetHasValidity() {
		if len(bufs) < 1 {
			return nil, fmt.Errorf("fixed-size list validity missing: %w", ErrCorrupt)
		}
		var err error
		if valid, err = unpackBools(bufs[0], items); err != nil {
			return nil, err
		}
		bufs = bufs[1:]
	}
	child, err := decodeChunk(f.GetValues(), bufs, items)
	if err != nil {
		return nil, err
	}
	return &values{kind: kindFSL, n: n, dim: int(dim), itemValid: valid, child: child}, nil
}

func decodeByteStreamSplit(b *enc21pb.ByteStreamSplit, buf []byte, n int) (*values, error) {
	bits := b.GetValues().GetFlat().GetBitsPerValue()
	if bits == 0 || bits%8 != 0 || bits > 64 {
		return nil, fmt.Errorf("byte stream split of %d bits: %w", bits, ErrUnsupported)
	}
	w := int(bits / 8)
	if len(buf)/w < n {
		return nil, fmt.Errorf("byte stream split buffer too short: %w", ErrCorrupt)
	}
	out := make([]byte, n*w)
	for k := 0; k < w; k++ {
		for i := 0; i < n; i++ {
			out[i*w+k] = buf[k*n+i]
		}
	}
	return fixedValues(out, w, n)
}

func decodeConstant(c *enc21pb.Constant, n int) (*values, error) {
	v := c.GetValue()
	if len(v) == 0 {
		return nil, fmt.Errorf("constant encoding without a value: %w", ErrUnsupported)
	}
	// Constants are scalars (Lance inlines at most 32 bytes); anything
	// larger would let a tiny page expand without bound.
	if len(v) > 32 || n > maxChunkValues*1024 {
		return nil, fmt.Errorf("constant of %d bytes × %d: %w", len(v), n, ErrCorrupt)
	}
	out := make([]byte, 0, n*len(v))
	for range n {
		out = append(out, v...)
	}
	return fixedValues(out, len(v), n)
}
