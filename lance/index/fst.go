package index

// A reader of the Rust `fst` crate's serialized Map (format versions 1-3),
// in which Lance's INVERTED index (index_version 1 and 2) stores a
// partition's token → token id map (part_N_tokens.lance, column
// _token_fst_bytes). No Go library reads this format (blevesearch/vellum
// is inspired by it but writes its own), so this is our reader, written
// from the format as the crate's raw/node.rs lays it out:
//
//   - header: version (u64 LE), type (u64 LE); footer: key count (u64 LE),
//     root address (u64 LE) and, from version 3, a CRC32C (u32 LE).
//   - nodes are written leaves first and addressed by their LAST byte; a
//     node is read backwards from its address. The state byte's top two
//     bits say the node kind: 11 one transition to the node just below it
//     (no output), 10 one transition with a packed address delta and
//     output, 0x any number of transitions (bit 6: final).
//   - an input byte among the 63 most common is folded into the state
//     byte's low 6 bits (index+1 into commonInputs), else it precedes it.
//   - transition targets are node address minus a packed delta (delta 0 is
//     the empty final node at address 0); outputs are little-endian packed
//     unsigned integers, summed along the path plus the final output.
//   - a node of more than 32 transitions carries a 256-byte input index
//     (versions 2 and up).

import (
	"encoding/binary"
	"fmt"
)

// commonInputs are the fst crate's most common input bytes, by rank; a
// state byte's low six bits k>0 stand for commonInputs[k-1].
var commonInputs = [63]byte{
	't', 'e', '/', 'o', 'a', 's', 'r', 'i', 'p', 'c', 'n', 'w',
	'.', 'h', 'l', 'm', '-', 'd', 'u', '0', '1', '2', 'g', '=',
	':', 'b', 'f', '3', 'y', '5', '&', '_', '4', 'v', '9', '6',
	'7', '8', 'k', '%', '?', 'x', 'C', 'D', 'A', 'S', 'F', 'I',
	'B', 'E', 'j', 'P', 'T', 'z', 'R', 'N', 'M', '+', 'L', 'O',
	'q', 'H', 'G',
}

// fst is one parsed FST: its node bytes (header included, so addresses
// index it directly) and its root.
type fst struct {
	data    []byte
	version uint64
	root    uint64
	keys    uint64
}

type fstTrans struct {
	in   byte
	out  uint64
	addr uint64
}

// fstNode is one decoded node.
type fstNode struct {
	final    bool
	finalOut uint64
	trans    []fstTrans
}

func parseFST(b []byte) (*fst, error) {
	if len(b) < 32 {
		return nil, fmt.Errorf("%w: FST of %d bytes", ErrCorrupt, len(b))
	}
	v := binary.LittleEndian.Uint64(b)
	if v == 0 || v > 3 {
		return nil, fmt.Errorf("%w: FST version %d", ErrUnsupported, v)
	}
	end := len(b)
	if v >= 3 {
		if len(b) < 36 {
			return nil, fmt.Errorf("%w: FST of %d bytes", ErrCorrupt, len(b))
		}
		end -= 4
	}
	f := &fst{data: b[:end-16], version: v}
	f.root = binary.LittleEndian.Uint64(b[end-8:])
	f.keys = binary.LittleEndian.Uint64(b[end-16:])
	if f.root != 0 && (f.root < 16 || f.root >= uint64(len(f.data))) {
		return nil, fmt.Errorf("%w: FST root address %d of %d bytes", ErrCorrupt, f.root, len(f.data))
	}
	return f, nil
}

func unpackUint(b []byte, n int) uint64 {
	var v uint64
	for i := 0; i < n; i++ {
		v |= uint64(b[i]) << (8 * i)
	}
	return v
}

// node decodes the node whose last byte is at addr (0: the empty final
// node). Every read is bounds-checked: a corrupt FST is an ErrCorrupt.
func (f *fst) node(addr uint64, buf []fstTrans) (fstNode, error) {
	if addr == 0 {
		return fstNode{final: true}, nil
	}
	bad := func(what string) (fstNode, error) {
		return fstNode{}, fmt.Errorf("%w: FST node at %d: %s", ErrCorrupt, addr, what)
	}
	// Nodes live after the 16-byte header.
	if addr < 16 || addr >= uint64(len(f.data)) {
		return bad("address out of range")
	}
	d := f.data
	i := int(addr) // read position, moving down
	lo := 16
	take := func(n int) ([]byte, bool) {
		if n < 0 || i-n+1 < lo {
			return nil, false
		}
		s := d[i-n+1 : i+1]
		i -= n
		return s, true
	}
	target := func(start uint64, delta uint64) (uint64, bool) {
		if delta == 0 {
			return 0, true
		}
		if delta > start {
			return 0, false
		}
		return start - delta, true
	}
	state := d[i]
	i--
	switch state >> 6 {
	case 0b11: // one transition to the node just below, no output
		in := byte(0)
		if k := state & 0x3f; k != 0 {
			in = commonInputs[k-1]
		} else {
			s, ok := take(1)
			if !ok {
				return bad("truncated input")
			}
			in = s[0]
		}
		// The target is the last byte of the node written just before.
		if i < lo-1 {
			return bad("no node below")
		}
		var to uint64
		if i >= lo {
			to = uint64(i)
		}
		return fstNode{trans: append(buf[:0], fstTrans{in: in, addr: to})}, nil
	case 0b10: // one transition with its own address and output
		in := byte(0)
		k := state & 0x3f
		if k != 0 {
			in = commonInputs[k-1]
		} else {
			s, ok := take(1)
			if !ok {
				return bad("truncated input")
			}
			in = s[0]
		}
		s, ok := take(1)
		if !ok {
			return bad("truncated sizes")
		}
		tsize, osize := int(s[0]>>4), int(s[0]&0x0f)
		if tsize == 0 || tsize > 8 || osize > 8 {
			return bad("bad pack sizes")
		}
		ta, ok := take(tsize)
		if !ok {
			return bad("truncated address")
		}
		var out uint64
		if osize > 0 {
			ob, ok := take(osize)
			if !ok {
				return bad("truncated output")
			}
			out = unpackUint(ob, osize)
		}
		end := uint64(i + 1) // the node's first byte
		to, ok := target(end, unpackUint(ta, tsize))
		if !ok {
			return bad("address delta beyond the data")
		}
		return fstNode{trans: append(buf[:0], fstTrans{in: in, out: out, addr: to})}, nil
	}
	// Any number of transitions.
	n := int(state & 0x3f)
	if n == 0 {
		s, ok := take(1)
		if !ok {
			return bad("truncated count")
		}
		n = int(s[0])
		if n == 1 {
			n = 256
		}
	}
	s, ok := take(1)
	if !ok {
		return bad("truncated sizes")
	}
	tsize, osize := int(s[0]>>4), int(s[0]&0x0f)
	if tsize > 8 || osize > 8 || (tsize == 0 && n > 0) {
		return bad("bad pack sizes")
	}
	if f.version >= 2 && n > 32 {
		if _, ok := take(256); !ok {
			return bad("truncated input index")
		}
	}
	ins, ok := take(n)
	if !ok {
		return bad("truncated inputs")
	}
	addrs, ok := take(n * tsize)
	if !ok {
		return bad("truncated addresses")
	}
	var outs []byte
	final := state&0x40 != 0
	var finalOut uint64
	if osize > 0 {
		if outs, ok = take(n * osize); !ok {
			return bad("truncated outputs")
		}
		if final {
			fb, ok := take(osize)
			if !ok {
				return bad("truncated final output")
			}
			finalOut = unpackUint(fb, osize)
		}
	}
	end := uint64(i + 1)
	nd := fstNode{final: final, finalOut: finalOut, trans: buf[:0]}
	// Transition j's input, address and output are stored in reverse
	// order: the last entry of each array is transition 0.
	for j := 0; j < n; j++ {
		t := fstTrans{in: ins[n-1-j]}
		a := addrs[(n-1-j)*tsize : (n-j)*tsize]
		to, ok := target(end, unpackUint(a, tsize))
		if !ok {
			return bad("address delta beyond the data")
		}
		t.addr = to
		if osize > 0 {
			t.out = unpackUint(outs[(n-1-j)*osize:(n-j)*osize], osize)
		}
		nd.trans = append(nd.trans, t)
	}
	return nd, nil
}

// decodeFSTMap reads every key and value of a serialized fst Map whose
// values are token ids below maxKeys (the number of posting lists): a map
// of more keys, a duplicate or out-of-range value, or an over-long key is
// ErrCorrupt, which also bounds the work a corrupt FST can cause.
func decodeFSTMap(b []byte, maxKeys int) (map[string]uint32, error) {
	f, err := parseFST(b)
	if err != nil {
		return nil, err
	}
	if f.keys > uint64(maxKeys) {
		return nil, fmt.Errorf("%w: FST of %d keys for %d posting lists", ErrCorrupt, f.keys, maxKeys)
	}
	m := make(map[string]uint32, f.keys)
	seen := make([]bool, maxKeys)
	const maxKey = 1 << 12
	budget := 256*maxKeys + len(b) // node visits: far more than a token map (keys of < 256 bytes on average) needs
	var key []byte
	// Depth-first over the DAG; a transition's target precedes its node,
	// so addresses strictly decrease along every path and the walk ends.
	var walk func(addr, acc uint64) error
	walk = func(addr, acc uint64) error {
		if budget--; budget < 0 {
			return fmt.Errorf("%w: FST walk beyond its keys", ErrCorrupt)
		}
		if len(key) > maxKey {
			return fmt.Errorf("%w: FST key longer than %d bytes", ErrCorrupt, maxKey)
		}
		nd, err := f.node(addr, nil)
		if err != nil {
			return err
		}
		if nd.final {
			v := acc + nd.finalOut
			if v >= uint64(maxKeys) || seen[v] {
				return fmt.Errorf("%w: FST value %d (of %d posting lists, or repeated)", ErrCorrupt, v, maxKeys)
			}
			seen[v] = true
			m[string(key)] = uint32(v)
		}
		for _, t := range nd.trans {
			if t.addr >= addr && addr != 0 {
				return fmt.Errorf("%w: FST transition up from %d to %d", ErrCorrupt, addr, t.addr)
			}
			key = append(key, t.in)
			if err := walk(t.addr, acc+t.out); err != nil {
				return err
			}
			key = key[:len(key)-1]
		}
		return nil
	}
	if err := walk(f.root, 0); err != nil {
		return nil, err
	}
	if uint64(len(m)) != f.keys {
		return nil, fmt.Errorf("%w: FST holds %d keys, its footer says %d", ErrCorrupt, len(m), f.keys)
	}
	return m, nil
}
