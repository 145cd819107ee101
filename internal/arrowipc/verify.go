package arrowipc

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The IPC reader trusts the flatbuffer metadata of each message: a vector length it reads is
// handed to make() before anything checks it against the bytes present, so a forged schema of a
// few bytes could ask for gigabytes. checkIPCStream walks the stream's framing and verifies every
// table, vector and string of every message's metadata lies inside that metadata (and every body
// inside the stream) before the reader sees it.

// maxIPCMetadata bounds one message's metadata (schemas and batch headers are small).
const maxIPCMetadata = 4 << 20

// Verify checks the framing of an Arrow IPC stream and the flatbuffer metadata of every message
// (schema, dictionary and record batches): every table, vector and string lies inside its
// message's metadata, and every body inside the stream; the stream begins with its schema, and
// every batch's nodes and buffers are the ones the schema needs, inside its body and large
// enough for their lengths (checkLayout, checkCompressed, checkStructure). It reads no values.
func Verify(body []byte) error {
	_, err := verify(body)
	return err
}

// verify is Verify, and reports whether any batch has compressed buffers (LZ4_FRAME or ZSTD).
func verify(body []byte) (compressed bool, err error) {
	var shape *schemaShape
	for pos := 0; pos < len(body); {
		if len(body)-pos < 4 {
			return compressed, errors.New("truncated message length")
		}
		n := binary.LittleEndian.Uint32(body[pos:])
		pos += 4
		if n == 0xFFFFFFFF {
			if len(body)-pos < 4 {
				return compressed, errors.New("truncated message length")
			}
			n = binary.LittleEndian.Uint32(body[pos:])
			pos += 4
		}
		if n == 0 {
			return compressed, nil // end of stream
		}
		if n > maxIPCMetadata || int(n) > len(body)-pos {
			return compressed, fmt.Errorf("message metadata of %d bytes does not fit the stream", n)
		}
		meta := fbuf(body[pos : pos+int(n)])
		pos += int(n)
		lay, err := checkLayout(meta, int64(len(body)-pos))
		if err != nil {
			return compressed, err
		}
		compressed = compressed || lay.compressed
		msgBody := body[pos : pos+int(lay.bodyLen)]
		pos += int(lay.bodyLen)
		switch {
		case lay.kind == 1 && shape != nil:
			return compressed, errors.New("a second schema message")
		case lay.kind == 1:
			if shape, err = parseSchemaShape(lay.schema); err != nil {
				return compressed, fmt.Errorf("the schema: %w", err)
			}
			shape.deltaLimit = deltaLimitFor(int64(len(body)))
			continue
		case shape == nil:
			return compressed, ErrNoSchema
		}
		if _, err := lay.checkCompressed(func(off int64) (int64, error) {
			return int64(binary.LittleEndian.Uint64(msgBody[off:])), nil
		}); err != nil {
			return compressed, err
		}
		if err := shape.checkStructure(&lay); err != nil {
			return compressed, err
		}
	}
	return compressed, nil
}

// fbuf is one flatbuffer; fbTable is a table in it.
type fbuf []byte

type fbTable struct {
	b       fbuf
	pos, vt int
	vtLen   int
}

var errFlatbuffer = errors.New("malformed message metadata")

func (b fbuf) u32(p int) (uint32, error) {
	if p < 0 || p+4 > len(b) {
		return 0, errFlatbuffer
	}
	return binary.LittleEndian.Uint32(b[p:]), nil
}

func (b fbuf) table(p int) (fbTable, error) {
	soff, err := b.u32(p)
	if err != nil {
		return fbTable{}, err
	}
	vt := p - int(int32(soff))
	if vt < 0 || vt+4 > len(b) {
		return fbTable{}, errFlatbuffer
	}
	vtLen := int(binary.LittleEndian.Uint16(b[vt:]))
	tblLen := int(binary.LittleEndian.Uint16(b[vt+2:]))
	if vtLen < 4 || vtLen%2 != 0 || vt+vtLen > len(b) || p+tblLen > len(b) {
		return fbTable{}, errFlatbuffer
	}
	t := fbTable{b: b, pos: p, vt: vt, vtLen: vtLen}
	for slot := 0; 4+2*slot < vtLen; slot++ {
		if off := t.offset(slot); off != 0 && off >= tblLen {
			return fbTable{}, errFlatbuffer
		}
	}
	return t, nil
}

// offset is slot's offset inside the table (0: absent).
func (t fbTable) offset(slot int) int {
	o := 4 + 2*slot
	if o+2 > t.vtLen {
		return 0
	}
	return int(binary.LittleEndian.Uint16(t.b[t.vt+o:]))
}

// ref follows slot's uoffset; ok is false when the slot is absent.
func (t fbTable) ref(slot int) (int, bool, error) {
	off := t.offset(slot)
	if off == 0 {
		return 0, false, nil
	}
	p := t.pos + off
	u, err := t.b.u32(p)
	if err != nil {
		return 0, false, err
	}
	target := p + int(u)
	if target < 0 || target >= len(t.b) {
		return 0, false, errFlatbuffer
	}
	return target, true, nil
}

func (t fbTable) sub(slot int) (fbTable, bool, error) {
	p, ok, err := t.ref(slot)
	if !ok || err != nil {
		return fbTable{}, false, err
	}
	s, err := t.b.table(p)
	return s, err == nil, err
}

// vector checks slot's vector of n elements of size each and returns where they start.
func (t fbTable) vector(slot, size int) (start, n int, err error) {
	p, ok, err := t.ref(slot)
	if !ok || err != nil {
		return 0, 0, err
	}
	l, err := t.b.u32(p)
	if err != nil {
		return 0, 0, err
	}
	if int64(l)*int64(size) > int64(len(t.b)-p-4) {
		return 0, 0, errFlatbuffer
	}
	return p + 4, int(l), nil
}

func (t fbTable) scalar(slot, size int) ([]byte, error) {
	off := t.offset(slot)
	if off == 0 {
		return nil, nil
	}
	p := t.pos + off
	if p+size > len(t.b) {
		return nil, errFlatbuffer
	}
	return t.b[p : p+size], nil
}

// tables checks a vector of tables, calling each on every element.
func (t fbTable) tables(slot int, each func(fbTable) error) error {
	start, n, err := t.vector(slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		p := start + 4*i
		u, _ := t.b.u32(p)
		e, err := t.b.table(p + int(u))
		if err != nil {
			return err
		}
		if err := each(e); err != nil {
			return err
		}
	}
	return nil
}

func keyValues(t fbTable, slot int) error {
	return t.tables(slot, func(kv fbTable) error {
		if _, _, err := kv.vector(0, 1); err != nil {
			return err
		}
		_, _, err := kv.vector(1, 1)
		return err
	})
}

// checkIPCMessage verifies a Message (Schema, RecordBatch or DictionaryBatch) and returns its
// body length and whether its buffers are compressed.
func checkIPCMessage(b fbuf) (int64, bool, error) {
	root, err := b.u32(0)
	if err != nil {
		return 0, false, err
	}
	msg, err := b.table(int(root))
	if err != nil {
		return 0, false, err
	}
	var bodyLen int64
	if v, err := msg.scalar(3, 8); err != nil {
		return 0, false, err
	} else if v != nil {
		bodyLen = int64(binary.LittleEndian.Uint64(v))
	}
	if err := keyValues(msg, 4); err != nil {
		return 0, false, err
	}
	typ, err := msg.scalar(1, 1)
	if err != nil || typ == nil {
		return 0, false, errFlatbuffer
	}
	header, ok, err := msg.sub(2)
	if err != nil || !ok {
		return 0, false, errFlatbuffer
	}
	var compressed bool
	switch typ[0] {
	case 1: // Schema
		err = checkSchema(header)
	case 2: // DictionaryBatch
		var data fbTable
		if data, ok, err = header.sub(1); err == nil && ok {
			compressed, err = checkRecordBatch(data)
		}
	case 3: // RecordBatch
		compressed, err = checkRecordBatch(header)
	default:
		err = fmt.Errorf("message type %d is not a schema or a record batch", typ[0])
	}
	return bodyLen, compressed, err
}

func checkSchema(s fbTable) error {
	if _, _, err := s.vector(3, 8); err != nil {
		return err
	}
	if err := keyValues(s, 2); err != nil {
		return err
	}
	return s.tables(1, func(f fbTable) error { return checkField(f, 0) })
}

func checkField(f fbTable, depth int) error {
	if depth > 64 {
		return errors.New("fields nested too deeply")
	}
	if _, _, err := f.vector(0, 1); err != nil { // name
		return err
	}
	typ, ok, err := f.sub(3)
	if err != nil || !ok {
		return errFlatbuffer
	}
	if tt, err := f.scalar(2, 1); err != nil {
		return err
	} else if tt != nil && tt[0] == 14 { // Union: typeIds
		if _, _, err := typ.vector(1, 4); err != nil {
			return err
		}
	}
	if dict, ok, err := f.sub(4); err != nil {
		return err
	} else if ok {
		if _, _, err := dict.sub(1); err != nil {
			return err
		}
	}
	if err := keyValues(f, 6); err != nil {
		return err
	}
	return f.tables(5, func(c fbTable) error { return checkField(c, depth+1) })
}

// checkRecordBatch verifies a RecordBatch and reports whether it has a compression (its buffers
// are LZ4_FRAME or ZSTD compressed).
func checkRecordBatch(r fbTable) (bool, error) {
	for _, v := range [...][2]int{{1, 16}, {2, 16}, {4, 8}} { // nodes, buffers, variadic counts
		if _, _, err := r.vector(v[0], v[1]); err != nil {
			return false, err
		}
	}
	_, compressed, err := r.sub(3) // compression
	return compressed, err
}
