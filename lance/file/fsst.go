package lancefile

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// fsstTable is a decoded FSST symbol table in Lance's own serialization: a
// u64 header (magic, encoder switch, suffix limit, terminator, symbol
// count), 8-byte symbol slots, then one length byte per symbol.
type fsstTable struct {
	symbols [255][8]byte
	lens    [255]byte
	n       int
	raw     bool // encoder switch off: values are stored uncompressed
}

const fsstMagic = 0x46535354
const fsstEscape = 255

func parseFSSTTable(b []byte) (*fsstTable, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("fsst symbol table truncated: %w", ErrCorrupt)
	}
	hdr := binary.LittleEndian.Uint64(b)
	if hdr>>32 != fsstMagic {
		return nil, fmt.Errorf("fsst symbol table magic %#x: %w", hdr>>32, ErrCorrupt)
	}
	t := &fsstTable{n: int(hdr & 0xff), raw: (hdr>>24)&0xff == 0}
	if t.n > 255 || len(b) < 8+9*t.n {
		return nil, fmt.Errorf("fsst symbol table of %d symbols in %d bytes: %w", t.n, len(b), ErrCorrupt)
	}
	for i := 0; i < t.n; i++ {
		copy(t.symbols[i][:], b[8+8*i:])
		l := b[8+8*t.n+i]
		if l == 0 || l > 8 {
			return nil, fmt.Errorf("fsst symbol %d has length %d: %w", i, l, ErrCorrupt)
		}
		t.lens[i] = l
	}
	return t, nil
}

func (t *fsstTable) decode(dst, src []byte) ([]byte, error) {
	// Every code expands to at most 8 bytes: with that much room left the
	// symbol's whole 8-byte slot is stored at once and the length advanced
	// by its true size (the slot's tail is overwritten by what follows).
	n := len(dst)
	for i := 0; i < len(src); i++ {
		if cap(dst)-n < 8 {
			dst = slices.Grow(dst[:n], 8+2*(len(src)-i))
		}
		dst = dst[:cap(dst)]
		c := src[i]
		if c == fsstEscape {
			i++
			if i == len(src) {
				return nil, fmt.Errorf("fsst escape at end of value: %w", ErrCorrupt)
			}
			dst[n] = src[i]
			n++
			continue
		}
		if int(c) >= t.n {
			return nil, fmt.Errorf("fsst code %d with %d symbols: %w", c, t.n, ErrCorrupt)
		}
		*(*[8]byte)(dst[n:]) = t.symbols[c]
		n += int(t.lens[c])
	}
	return dst[:n], nil
}

// fsstDecodeValues expands every value of in with the table.
func fsstDecodeValues(table []byte, in *values) (*values, error) {
	if in.kind != kindVariable {
		return nil, fmt.Errorf("fsst over non-variable values: %w", ErrCorrupt)
	}
	t, err := parseFSSTTable(table)
	if err != nil {
		return nil, err
	}
	if t.raw {
		return in, nil
	}
	out := &values{kind: kindVariable, n: in.n, offsets: make([]uint64, in.n+1)}
	// Each code expands to at most 8 bytes, which bounds the output.
	out.data = make([]byte, 0, 2*len(in.data))
	for i := 0; i < in.n; i++ {
		if out.data, err = t.decode(out.data, in.value(i)); err != nil {
			return nil, err
		}
		out.offsets[i+1] = uint64(len(out.data))
	}
	out.data = out.data[:len(out.data):len(out.data)]
	return out, nil
}
