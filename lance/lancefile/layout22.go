package lancefile

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/lancecat/lancecat/lance/pb/enc21pb"
)

// File format 2.2 keeps the 2.1 page layouts and adds fields to two of
// their messages, which our generated 2.1 protos do not know; they arrive
// as unknown fields and are parsed here from the wire bytes.
//
//   - MiniBlockLayout.has_large_chunk (10, bool): chunk metadata words are
//     u32 instead of u16 (same packing: low 4 bits log2 of the item count,
//     the rest size/8-1), and the value buffer sizes in each chunk header
//     are u32 (the level count and the rep/def sizes stay u16).
//   - AllNullLayout becomes ConstantLayout (same tag in PageLayout): an
//     optional inline_value (6, bytes, ≤ 32 bytes of one fixed-width
//     value; absent for an all-null page), rep_compression (7) and
//     def_compression (8) for the level buffers (raw u16 when absent), and
//     num_rep_values (9) / num_def_values (10), the level counts.

// scanUnknown calls fn for every unknown field of m.
func scanUnknown(m proto.Message, fn func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error) error {
	raw := m.ProtoReflect().GetUnknown()
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return fmt.Errorf("unknown field tag: %v: %w", protowire.ParseError(n), ErrCorrupt)
		}
		raw = raw[n:]
		var v uint64
		var b []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(raw)
		case protowire.BytesType:
			b, n = protowire.ConsumeBytes(raw)
		default:
			n = protowire.ConsumeFieldValue(num, typ, raw)
		}
		if n < 0 {
			return fmt.Errorf("unknown field %d: %v: %w", num, protowire.ParseError(n), ErrCorrupt)
		}
		raw = raw[n:]
		if err := fn(num, typ, v, b); err != nil {
			return err
		}
	}
	return nil
}

// hasLargeChunk reports MiniBlockLayout.has_large_chunk.
func hasLargeChunk(l *enc21pb.MiniBlockLayout) (bool, error) {
	large := false
	err := scanUnknown(l, func(num protowire.Number, typ protowire.Type, v uint64, _ []byte) error {
		if num == 10 && typ == protowire.VarintType {
			large = v != 0
		}
		return nil
	})
	return large, err
}

// setHasLargeChunk marks a mini-block layout written in the 2.2 chunk
// grammar (MiniBlockLayout.has_large_chunk = true, field 10), which 2.2
// readers require of every mini-block page.
func setHasLargeChunk(l *enc21pb.MiniBlockLayout) {
	b := protowire.AppendTag(nil, 10, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	l.ProtoReflect().SetUnknown(b)
}

// miniMeta reads the chunk metadata buffer of a mini-block page: per chunk
// its size in bytes and log2 of its item count.
type miniMeta struct {
	buf   []byte
	width int // 2, or 4 with has_large_chunk
}

func newMiniMeta(l *enc21pb.MiniBlockLayout, buf []byte) (miniMeta, error) {
	large, err := hasLargeChunk(l)
	if err != nil {
		return miniMeta{}, err
	}
	m := miniMeta{buf: buf, width: 2}
	if large {
		m.width = 4
	}
	if len(buf)%m.width != 0 {
		return m, fmt.Errorf("mini-block chunk metadata of %d bytes: %w", len(buf), ErrCorrupt)
	}
	return m, nil
}

func (m miniMeta) chunks() int { return len(m.buf) / m.width }

func (m miniMeta) word(c int) uint32 {
	if m.width == 4 {
		return binary.LittleEndian.Uint32(m.buf[4*c:])
	}
	return uint32(binary.LittleEndian.Uint16(m.buf[2*c:]))
}

// chunk returns the size in bytes and the (nominal) item count of chunk c.
func (m miniMeta) chunk(c int) (size int, n uint64) {
	w := m.word(c)
	return (int(w>>4) + 1) * 8, uint64(1) << (w & 0xf)
}

// appendWord appends a metadata word in this metadata's width.
func (m miniMeta) appendWord(dst []byte, w uint32) []byte {
	if m.width == 4 {
		return binary.LittleEndian.AppendUint32(dst, w)
	}
	return binary.LittleEndian.AppendUint16(dst, uint16(w))
}

// constantLayout is the 2.2 reading of an AllNullLayout.
type constantLayout struct {
	inline         []byte // nil: every visible item is null
	rep, def       *enc21pb.CompressiveEncoding
	numRep, numDef uint64
}

func parseConstantLayout(l *enc21pb.AllNullLayout) (constantLayout, error) {
	var c constantLayout
	err := scanUnknown(l, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) error {
		switch {
		case num == 6 && typ == protowire.BytesType:
			if len(b) == 0 || len(b) > 32 {
				return fmt.Errorf("constant layout value of %d bytes: %w", len(b), ErrCorrupt)
			}
			c.inline = b
		case (num == 7 || num == 8) && typ == protowire.BytesType:
			var enc enc21pb.CompressiveEncoding
			if err := proto.Unmarshal(b, &enc); err != nil {
				return fmt.Errorf("constant layout level compression: %v: %w", err, ErrCorrupt)
			}
			if num == 7 {
				c.rep = &enc
			} else {
				c.def = &enc
			}
		case num == 9 && typ == protowire.VarintType:
			c.numRep = v
		case num == 10 && typ == protowire.VarintType:
			c.numDef = v
		}
		return nil
	})
	return c, err
}

// constantLevels decodes one level buffer of a constant layout: raw u16
// levels, or n levels compressed by enc.
func constantLevels(enc *enc21pb.CompressiveEncoding, buf []byte, n uint64) ([]uint16, error) {
	if enc == nil {
		return rawLevels(buf)
	}
	if n > maxValues {
		return nil, fmt.Errorf("%d levels: %w", n, ErrCorrupt)
	}
	v, err := decodeBlock(enc, buf, int(n))
	if err != nil {
		return nil, err
	}
	return levelsOf(v)
}

// constantValues repeats a constant layout's inline value n times as
// values of leaf type dt (nil when unknown: plain fixed-width values).
func constantValues(dt arrow.DataType, inline []byte, n int) (*values, error) {
	if n > maxValues {
		return nil, fmt.Errorf("constant page of %d items: %w", n, ErrCorrupt)
	}
	switch dt.(type) {
	case *arrow.BooleanType:
		if len(inline) != 1 {
			return nil, fmt.Errorf("boolean constant of %d bytes: %w", len(inline), ErrCorrupt)
		}
		data := make([]byte, n)
		if inline[0]&1 != 0 {
			for i := range data {
				data[i] = 1
			}
		}
		return &values{kind: kindBool, n: n, width: 1, data: data}, nil
	case *arrow.FixedSizeListType, *arrow.DictionaryType:
		return nil, fmt.Errorf("constant of %s: %w", dt, ErrUnsupported)
	case arrow.FixedWidthDataType:
	case nil:
	default:
		return nil, fmt.Errorf("inline constant of %s: %w", dt, ErrCorrupt)
	}
	if fw, ok := dt.(arrow.FixedWidthDataType); ok && fw.BitWidth()/8 != len(inline) {
		return nil, fmt.Errorf("constant of %d bytes for %s: %w", len(inline), dt, ErrCorrupt)
	}
	out := make([]byte, 0, n*len(inline))
	for range n {
		out = append(out, inline...)
	}
	return fixedValues(out, len(inline), n)
}

// scalarValues repeats a 2.2 constant stored in a value buffer n times: the
// buffer is one Arrow value (u32 buffer count, u32 lengths, the buffers:
// offsets and bytes for strings and binaries, the bytes for a fixed-width
// value too wide to inline).
func scalarValues(dt arrow.DataType, buf []byte, n int) (*values, error) {
	if n > maxValues {
		return nil, fmt.Errorf("constant page of %d items: %w", n, ErrCorrupt)
	}
	if len(buf) < 4 {
		return nil, fmt.Errorf("constant value buffer of %d bytes: %w", len(buf), ErrCorrupt)
	}
	k := int(binary.LittleEndian.Uint32(buf))
	if k < 1 || k > 4 || len(buf) < 4+4*k {
		return nil, fmt.Errorf("constant value of %d buffers in %d bytes: %w", k, len(buf), ErrCorrupt)
	}
	parts := make([][]byte, k)
	off := 4 + 4*k
	for i := range parts {
		l := int(binary.LittleEndian.Uint32(buf[4+4*i:]))
		if l < 0 || off+l > len(buf) {
			return nil, fmt.Errorf("constant value buffer %d of %d bytes past %d: %w", i, l, len(buf), ErrCorrupt)
		}
		parts[i] = buf[off : off+l]
		off += l
	}
	switch dt.(type) {
	case *arrow.StringType, *arrow.BinaryType, *arrow.LargeStringType, *arrow.LargeBinaryType:
		if k != 2 {
			return nil, fmt.Errorf("%s constant of %d buffers: %w", dt, k, ErrCorrupt)
		}
		value := parts[1]
		if len(value)*n > maxValues*64 {
			return nil, fmt.Errorf("constant page of %d bytes: %w", len(value)*n, ErrCorrupt)
		}
		out := &values{kind: kindVariable, n: n, offsets: make([]uint64, n+1), data: make([]byte, 0, len(value)*n)}
		for i := range n {
			out.data = append(out.data, value...)
			out.offsets[i+1] = uint64((i + 1) * len(value))
		}
		return out, nil
	}
	if k != 1 {
		return nil, fmt.Errorf("%s constant of %d buffers: %w", dt, k, ErrCorrupt)
	}
	return constantValues(dt, parts[0], n)
}
