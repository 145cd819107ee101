package lance

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// A reader for exactly the Arrow IPC files Lance uses as deletion vectors:
// one non-nullable uint32 column "row_id", one record batch, optional
// LZ4/ZSTD buffer compression. arrow-go's reader trusts the lengths in the
// flatbuffers (a 300-byte file can make it allocate gigabytes), so the few
// tables involved are walked here with every offset and length checked.

// fb is a flatbuffer with bounds-checked accessors; any violation sets err
// and yields zero values, so callers check err once at the end.
type fb struct {
	buf []byte
	err error
}

func (b *fb) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf(format, args...)
	}
}

func (b *fb) u32(off int) uint32 {
	if off < 0 || off+4 > len(b.buf) {
		b.fail("offset %d out of range", off)
		return 0
	}
	return binary.LittleEndian.Uint32(b.buf[off:])
}

func (b *fb) u16(off int) uint16 {
	if off < 0 || off+2 > len(b.buf) {
		b.fail("offset %d out of range", off)
		return 0
	}
	return binary.LittleEndian.Uint16(b.buf[off:])
}

func (b *fb) u64(off int) uint64 {
	if off < 0 || off+8 > len(b.buf) {
		b.fail("offset %d out of range", off)
		return 0
	}
	return binary.LittleEndian.Uint64(b.buf[off:])
}

func (b *fb) u8(off int) uint8 {
	if off < 0 || off >= len(b.buf) {
		b.fail("offset %d out of range", off)
		return 0
	}
	return b.buf[off]
}

// table is the position of a flatbuffer table; 0 means absent.
type table int

// root is the table the buffer's first word points to.
func (b *fb) root() table { return b.deref(0) }

// deref follows the uoffset at off.
func (b *fb) deref(off int) table {
	t := off + int(b.u32(off))
	if t <= off || t >= len(b.buf) {
		b.fail("bad table offset at %d", off)
		return 0
	}
	return table(t)
}

// field is the absolute position of field i of t, or 0 if absent.
func (b *fb) field(t table, i int) int {
	if t == 0 || b.err != nil {
		return 0
	}
	vt := int(t) - int(int32(b.u32(int(t))))
	vtLen := int(b.u16(vt))
	if vtLen < 4 || vtLen%2 != 0 {
		b.fail("bad vtable at %d", vt)
		return 0
	}
	if 4+2*i+2 > vtLen {
		return 0
	}
	if o := int(b.u16(vt + 4 + 2*i)); o != 0 {
		return int(t) + o
	}
	return 0
}

func (b *fb) child(t table, i int) table {
	if p := b.field(t, i); p != 0 {
		return b.deref(p)
	}
	return 0
}

// vector returns the start and length of vector field i of t, checking
// that n elements of size elem fit in the buffer.
func (b *fb) vector(t table, i, elem int) (start, n int) {
	p := b.field(t, i)
	if p == 0 {
		return 0, 0
	}
	v := int(b.deref(p))
	n = int(b.u32(v))
	if b.err != nil || n < 0 || n > (len(b.buf)-v-4)/elem {
		b.fail("vector of %d elements at %d overruns the buffer", n, v)
		return 0, 0
	}
	return v + 4, n
}

func (b *fb) str(t table, i int) string {
	start, n := b.vector(t, i, 1)
	return string(b.buf[start : start+n])
}

const arrowMagic = "ARROW1"

// Arrow type union tag for Int, and message header tag for RecordBatch.
const (
	arrowTypeInt         = 2
	arrowHeaderRecordBat = 3
)

func decodeArrowDeletionsRaw(data []byte) ([]uint32, error) {
	n := len(data)
	if n < 2*8+4 || string(data[:6]) != arrowMagic || string(data[n-6:]) != arrowMagic {
		return nil, fmt.Errorf("not an Arrow IPC file")
	}
	footerLen := int(int32(binary.LittleEndian.Uint32(data[n-10:])))
	if footerLen <= 0 || footerLen > n-18 {
		return nil, fmt.Errorf("footer length %d out of range", footerLen)
	}
	footer := &fb{buf: data[n-10-footerLen : n-10]}
	ft := footer.root()
	if err := checkDeletionSchema(footer, footer.child(ft, 1)); err != nil {
		return nil, err
	}
	if _, nd := footer.vector(ft, 2, 24); nd != 0 {
		return nil, fmt.Errorf("unexpected dictionaries")
	}
	blocks, nb := footer.vector(ft, 3, 24)
	if footer.err != nil {
		return nil, footer.err
	}
	if nb != 1 {
		return nil, fmt.Errorf("%d record batches, want 1", nb)
	}
	off := int64(footer.u64(blocks))
	metaLen := int64(int32(footer.u32(blocks + 8)))
	bodyLen := int64(footer.u64(blocks + 16))
	limit := int64(n - 10 - footerLen)
	if off < 8 || metaLen < 8 || bodyLen < 0 || off > limit || metaLen > limit-off || bodyLen > limit-off-metaLen {
		return nil, fmt.Errorf("record batch block out of range")
	}
	meta := data[off : off+metaLen]
	body := data[off+metaLen : off+metaLen+bodyLen]
	// Encapsulated message: [0xFFFFFFFF] int32 length, flatbuffer, padding.
	if binary.LittleEndian.Uint32(meta) == 0xFFFFFFFF {
		meta = meta[4:]
	}
	ml := int(int32(binary.LittleEndian.Uint32(meta)))
	if ml <= 0 || ml > len(meta)-4 {
		return nil, fmt.Errorf("message length %d out of range", ml)
	}
	msg := &fb{buf: meta[4 : 4+ml]}
	mt := msg.root()
	if p := msg.field(mt, 1); p == 0 || msg.u8(p) != arrowHeaderRecordBat {
		return nil, fmt.Errorf("message is not a record batch")
	}
	rb := msg.child(mt, 2)
	rows := int64(0)
	if p := msg.field(rb, 0); p != 0 {
		rows = int64(msg.u64(p))
	}
	nodes, nn := msg.vector(rb, 1, 16)
	bufs, nbuf := msg.vector(rb, 2, 16)
	codec := -1
	if comp := msg.child(rb, 3); comp != 0 {
		codec = 0
		if p := msg.field(comp, 0); p != 0 {
			codec = int(msg.u8(p))
		}
	}
	if msg.err != nil {
		return nil, msg.err
	}
	if nn != 1 || nbuf != 2 {
		return nil, fmt.Errorf("%d nodes and %d buffers, want 1 and 2", nn, nbuf)
	}
	length, nulls := int64(msg.u64(nodes)), int64(msg.u64(nodes+8))
	if length != rows || length < 0 || length > 1<<32 {
		return nil, fmt.Errorf("column length %d, batch length %d", length, rows)
	}
	if budget := max(1<<20, 1024*int64(n)); length*4 > budget {
		return nil, fmt.Errorf("%d rows is implausible for a %d-byte file", length, n)
	}
	if nulls != 0 {
		return nil, fmt.Errorf("null row ids")
	}
	bOff, bLen := int64(msg.u64(bufs+16)), int64(msg.u64(bufs+24))
	if bOff < 0 || bLen < 0 || bOff > int64(len(body)) || bLen > int64(len(body))-bOff {
		return nil, fmt.Errorf("values buffer out of range")
	}
	values, err := decompressBuffer(body[bOff:bOff+bLen], codec, length*4)
	if err != nil {
		return nil, err
	}
	if int64(len(values)) < length*4 {
		return nil, fmt.Errorf("values buffer holds %d bytes, want %d", len(values), length*4)
	}
	out := make([]uint32, length)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(values[4*i:])
	}
	return out, nil
}

// checkDeletionSchema accepts exactly one field: row_id, uint32, not null.
func checkDeletionSchema(b *fb, schema table) error {
	if schema == 0 {
		return fmt.Errorf("no schema")
	}
	if _, n := b.vector(schema, 2, 4); n != 0 {
		return fmt.Errorf("schema has metadata")
	}
	fields, n := b.vector(schema, 1, 4)
	if b.err != nil {
		return b.err
	}
	if n != 1 {
		return fmt.Errorf("schema has %d fields, want 1", n)
	}
	f := b.deref(fields)
	name := b.str(f, 0)
	nullable := false
	if p := b.field(f, 1); p != 0 {
		nullable = b.u8(p) != 0
	}
	typeTag := uint8(0)
	if p := b.field(f, 2); p != 0 {
		typeTag = b.u8(p)
	}
	typ := b.child(f, 3)
	bits, signed := int32(0), false
	if p := b.field(typ, 0); p != 0 {
		bits = int32(b.u32(p))
	}
	if p := b.field(typ, 1); p != 0 {
		signed = b.u8(p) != 0
	}
	_, nkids := b.vector(f, 5, 4)
	if b.err != nil {
		return b.err
	}
	if name != "row_id" || nullable || typeTag != arrowTypeInt || bits != 32 || signed || nkids != 0 || b.field(f, 4) != 0 {
		return fmt.Errorf("schema is not row_id: uint32 not null")
	}
	return nil
}

// decompressBuffer undoes Arrow IPC buffer compression: an int64
// uncompressed length (-1: stored raw) and the LZ4 frame or ZSTD data.
// want bounds the output.
func decompressBuffer(buf []byte, codec int, want int64) ([]byte, error) {
	if codec < 0 {
		return buf, nil
	}
	if len(buf) < 8 {
		if len(buf) == 0 && want == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("compressed buffer too short")
	}
	size := int64(binary.LittleEndian.Uint64(buf))
	if size == -1 {
		return buf[8:], nil
	}
	if size != want {
		return nil, fmt.Errorf("buffer claims %d bytes uncompressed, want %d", size, want)
	}
	var r io.Reader
	switch codec {
	case 0:
		r = lz4.NewReader(bytes.NewReader(buf[8:]))
	case 1:
		d, err := zstd.NewReader(bytes.NewReader(buf[8:]), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(want)+1<<20))
		if err != nil {
			return nil, err
		}
		defer d.Close()
		r = d
	default:
		return nil, fmt.Errorf("unknown compression codec %d", codec)
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	return out, nil
}
