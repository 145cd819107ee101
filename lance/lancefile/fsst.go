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
	symbols [256][8]byte
	// lens is each code's length; 0 for the escape code (255) and the
	// codes past the table (corrupt): one test per code finds both.
	lens [256]byte
	n    int
	raw  bool // encoder switch off: values are stored uncompressed
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
	// Every code expands to at most 8 bytes: with room for 8 per code
	// reserved once per value, each symbol's whole 8-byte slot is stored
	// at once and the length advanced by its true size (the slot's tail is
	// overwritten by what follows), with no capacity check per code.
	n := len(dst)
	if cap(dst)-n < 8*len(src) {
		dst = slices.Grow(dst, 8*len(src))
	}
	buf := dst[:cap(dst)]
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == fsstEscape {
			i++
			if i == len(src) {
				return nil, fmt.Errorf("fsst escape at end of value: %w", ErrCorrupt)
			}
			buf[n] = src[i]
			n++
			continue
		}
		if int(c) >= t.n {
			return nil, fmt.Errorf("fsst code %d with %d symbols: %w", c, t.n, ErrCorrupt)
		}
		*(*[8]byte)(buf[n : n+8]) = t.symbols[c]
		n += int(t.lens[c])
	}
	return buf[:n], nil
}

// decodeChunk expands the n values of a mini-block chunk's buffer (n+1
// little-endian offsets of w bytes relative to the buffer, then the
// codes) onto out, checking the offsets as variableFromOffsets does.
func (t *fsstTable) decodeChunk(out *values, buf []byte, w, n int) error {
	if n < 0 || len(buf)/w < n+1 {
		return fmt.Errorf("%d offsets in %d bytes: %w", n+1, len(buf), ErrCorrupt)
	}
	get := func(i int) uint64 {
		if w == 4 {
			return uint64(binary.LittleEndian.Uint32(buf[4*i:]))
		}
		return binary.LittleEndian.Uint64(buf[8*i:])
	}
	prev, last := get(0), get(n)
	if prev > last || last > uint64(len(buf)) {
		return fmt.Errorf("variable offsets [%d, %d] outside %d bytes: %w", prev, last, len(buf), ErrCorrupt)
	}
	// One grow for the whole chunk (every code expands to at most 8 bytes)
	// and one pass over its codes, recording each value's end: a call to
	// decode per value (a capacity check, a possible regrow of the whole
	// page output) was most of the expansion's cost for short strings.
	need := 8 * int(last-prev)
	dst := out.data
	if cap(dst)-len(dst) < need {
		dst = slices.Grow(dst, need)
	}
	d := len(dst)
	full := dst[:cap(dst)]
	codes := buf[:last]
	out.offsets = slices.Grow(out.offsets, n)
	for i := 1; i <= n; i++ {
		o := get(i)
		if o < prev || o > last {
			return fmt.Errorf("variable offsets not ascending at %d: %w", i, ErrCorrupt)
		}
		cs := codes[prev:o]
		for j := 0; j < len(cs); j++ {
			c := cs[j]
			l := t.lens[c]
			if l == 0 {
				if c != fsstEscape {
					return fmt.Errorf("fsst code %d with %d symbols: %w", c, t.n, ErrCorrupt)
				}
				j++
				if j == len(cs) {
					return fmt.Errorf("fsst escape at end of value: %w", ErrCorrupt)
				}
				full[d] = cs[j]
				d++
				continue
			}
			*(*[8]byte)(full[d : d+8]) = t.symbols[c]
			d += int(l)
		}
		out.offsets = append(out.offsets, uint64(d))
		prev = o
	}
	out.data = full[:d]
	out.n += n
	return nil
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
