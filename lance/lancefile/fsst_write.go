package lancefile

import (
	"cmp"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/lancecat/lancecat/lance/pb/enc21pb"
)

// FSST compression of string pages (Fast Static Symbol Table: Boncz,
// Neumann and Leis, VLDB 2020), the writer's side of fsst.go. A table of
// up to 255 symbols of 1–8 bytes is trained on a sample of the page's
// values, then each value is rewritten as one-byte codes, code 255
// escaping one literal byte. Lance keeps one table per page in the Fsst
// compressive encoding, serialized as its fsst crate does: a fixed
// 2,312-byte buffer (a u64 header, 8-byte symbol slots, one length byte
// per symbol, zero padding); its decoder requires that size and reads the
// header's symbol count and encoder switch, the symbols and their lengths.
//
// Matching is FSST's greedy longest match with its lookup structure:
// symbols of three or more bytes sit in a hash table keyed by their first
// three bytes (one per slot, so a symbol whose slot is taken is dropped
// when the table is made), shorter ones in a table indexed by the next
// two bytes.

const (
	fsstTableBytes = 8 + 256*8 + 256
	// Lance compresses a page with FSST only when its values hold at
	// least this many bytes (FSST_LEAST_INPUT_SIZE) and some value is at
	// least fsstMinMaxLen long (FSST_LEAST_INPUT_MAX_LENGTH).
	fsstMinInputBytes = 32 << 10
	fsstMinMaxLen     = 5
	// Training samples about this many bytes, in pieces of at most
	// fsstSampleChunk from values picked at random.
	fsstSampleTarget = 16 << 10
	fsstSampleChunk  = 512
	fsstMaxSymbols   = 255
	fsstHashBits     = 12
	// Codes during training: symbols 0..254, then 256+b for a literal b.
	fsstTrainCodes = 512
)

type fsstSym struct {
	val uint64 // the bytes, little-endian, zero above n
	n   uint8
}

// fsstEncoder is a trained table with its lookup structures.
type fsstEncoder struct {
	syms  []fsstSym
	long  [1 << fsstHashBits]uint16 // 1+code of a symbol of ≥ 3 bytes, by its first three
	short [1 << 16]uint16           // 1+code of the longest ≤ 2-byte symbol prefixing two bytes
	one   [256]uint16               // 1+code of a 1-byte symbol
}

var fsstMasks = [9]uint64{0, 0xff, 0xffff, 0xffffff, 0xffffffff, 0xffffffffff, 0xffffffffffff, 0xffffffffffffff, ^uint64(0)}

func fsstHash(v uint64) int {
	return int((v & 0xffffff) * 0x9E3779B97F4A7C15 >> (64 - fsstHashBits))
}

// load8 reads up to 8 bytes at i (zero beyond the buffer).
func load8(b []byte, i int) uint64 {
	if i+8 <= len(b) {
		return binary.LittleEndian.Uint64(b[i:])
	}
	var w uint64
	for k := 0; i+k < len(b) && k < 8; k++ {
		w |= uint64(b[i+k]) << (8 * k)
	}
	return w
}

// newFSSTEncoder builds the lookups for syms, dropping long symbols whose
// hash slot is taken (earlier symbols win: callers order by gain).
func newFSSTEncoder(cands []fsstSym) *fsstEncoder {
	e := fsstPool.Get().(*fsstEncoder)
	clear(e.long[:])
	clear(e.one[:])
	e.syms = e.syms[:0]
	var twos []int
	for _, s := range cands {
		if len(e.syms) == fsstMaxSymbols {
			break
		}
		code := uint16(len(e.syms) + 1)
		switch {
		case s.n >= 3:
			h := fsstHash(s.val)
			if e.long[h] != 0 {
				continue
			}
			e.long[h] = code
		case s.n == 1:
			e.one[s.val] = code
		default:
			twos = append(twos, len(e.syms))
		}
		e.syms = append(e.syms, s)
	}
	for k := range e.short {
		e.short[k] = e.one[k&0xff]
	}
	for _, c := range twos {
		e.short[e.syms[c].val] = uint16(c + 1)
	}
	return e
}

var fsstPool = sync.Pool{New: func() any { return new(fsstEncoder) }}

// fsstPairPool holds the (1 MiB) pair counters of training, zeroed.
var fsstPairPool = sync.Pool{New: func() any { return new([fsstTrainCodes * fsstTrainCodes]uint32) }}

func (e *fsstEncoder) release() { fsstPool.Put(e) }

// match finds the code for the bytes w (r of them left in the value):
// the code, or -1 for an escape, and how many bytes it covers.
func (e *fsstEncoder) match(w uint64, r int) (int, int) {
	if r >= 3 {
		if c := e.long[fsstHash(w)]; c != 0 {
			s := e.syms[c-1]
			if int(s.n) <= r && w&fsstMasks[s.n] == s.val {
				return int(c - 1), int(s.n)
			}
		}
	}
	var c uint16
	if r >= 2 {
		c = e.short[w&0xffff]
	} else {
		c = e.one[w&0xff]
	}
	if c == 0 {
		return -1, 1
	}
	return int(c - 1), int(e.syms[c-1].n)
}

// compress appends the codes of data[lo:hi].
func (e *fsstEncoder) compress(dst, data []byte, lo, hi int) []byte {
	for i := lo; i < hi; {
		w := load8(data, i)
		code, n := e.match(w, hi-i)
		if code < 0 {
			dst = append(dst, fsstEscape, byte(w))
		} else {
			dst = append(dst, byte(code))
		}
		i += n
	}
	return dst
}

// table serializes the symbols as Lance's fsst crate does.
func (e *fsstEncoder) table() []byte {
	n := len(e.syms)
	b := make([]byte, fsstTableBytes)
	// Header: magic, encoder switch on, suffix limit and terminator (both
	// used only by the C++ encoder's fast path; 0 here), symbol count.
	binary.LittleEndian.PutUint64(b, fsstMagic<<32|1<<24|uint64(n))
	for i, s := range e.syms {
		binary.LittleEndian.PutUint64(b[8+8*i:], s.val)
		b[8+8*n+i] = s.n
	}
	return b
}

// fsstSample picks the value ranges training looks at: all of them when
// the values are small, else pieces of random values up to
// fsstSampleTarget bytes (a fixed seed, so a page always gets the same
// table).
func fsstSample(data []byte, offs []uint64, n int) [][2]int {
	total := int(offs[n] - offs[0])
	var out [][2]int
	if total <= 2*fsstSampleTarget {
		for i := 0; i < n; i++ {
			if offs[i+1] > offs[i] {
				out = append(out, [2]int{int(offs[i]), int(offs[i+1])})
			}
		}
		return out
	}
	r := rand.New(rand.NewPCG(0x46535354, uint64(n)))
	got := 0
	for tries := 0; got < fsstSampleTarget && tries < 4*n+1024; tries++ {
		i := r.IntN(n)
		lo, hi := int(offs[i]), int(offs[i+1])
		if hi == lo {
			continue
		}
		if hi-lo > fsstSampleChunk {
			lo += fsstSampleChunk * r.IntN((hi-lo+fsstSampleChunk-1)/fsstSampleChunk)
			hi = min(hi, lo+fsstSampleChunk)
		}
		out = append(out, [2]int{lo, hi})
		got += hi - lo
	}
	return out
}

// trainFSST builds a table for the n values: five rounds, each encoding
// a growing part of the sample with the previous table, counting how
// often each code and each pair of adjacent codes occurs, and keeping the
// 255 symbols (codes, or two adjacent codes joined) that save the most.
func trainFSST(data []byte, offs []uint64, n int) *fsstEncoder {
	sample := fsstSample(data, offs, n)
	e := newFSSTEncoder(nil)
	var c1 [fsstTrainCodes]uint32
	c2 := fsstPairPool.Get().(*[fsstTrainCodes * fsstTrainCodes]uint32)
	var touched []int32
	defer func() {
		// Back to the pool all zero.
		for _, t := range touched {
			c2[t] = 0
		}
		fsstPairPool.Put(c2)
	}()
	sym := func(e *fsstEncoder, code int) fsstSym {
		if code >= 256 {
			return fsstSym{val: uint64(code - 256), n: 1}
		}
		return e.syms[code]
	}
	for _, frac := range []int{8, 38, 68, 98, 128} {
		clear(c1[:])
		for _, t := range touched {
			c2[t] = 0
		}
		touched = touched[:0]
		for k, rg := range sample {
			// Early rounds look at a fixed pseudo-random part of the sample.
			if frac < 128 && int(uint32(k)*2654435761>>25) >= frac {
				continue
			}
			prev := -1
			for i := rg[0]; i < rg[1]; {
				w := load8(data, i)
				code, l := e.match(w, rg[1]-i)
				if code < 0 {
					code = 256 + int(byte(w))
				} else if l > 1 {
					// Keep the single byte a candidate too.
					c1[256+int(byte(w))]++
				}
				c1[code]++
				if prev >= 0 {
					p := int32(prev*fsstTrainCodes + code)
					if c2[p] == 0 {
						touched = append(touched, p)
					}
					c2[p]++
				}
				prev = code
				i += l
			}
		}
		gains := make(map[fsstSym]uint64, 1024)
		floor := uint32(5 * frac / 128)
		for code, cnt := range c1 {
			if cnt == 0 || cnt < floor {
				continue
			}
			s := sym(e, code)
			g := uint64(cnt) * uint64(s.n)
			if s.n == 1 {
				// An escaped byte costs two; single bytes are worth more
				// than their length says.
				g *= 8
			}
			gains[s] += g
		}
		for _, t := range touched {
			cnt := c2[t]
			if cnt < floor {
				continue
			}
			a, b := sym(e, int(t)/fsstTrainCodes), sym(e, int(t)%fsstTrainCodes)
			if a.n >= 8 {
				continue
			}
			l := min(8, a.n+b.n)
			s := fsstSym{val: (a.val | b.val<<(8*a.n)) & fsstMasks[l], n: l}
			gains[s] += uint64(cnt) * uint64(l)
		}
		type cand struct {
			s    fsstSym
			gain uint64
		}
		ranked := make([]cand, 0, len(gains))
		for s, g := range gains {
			ranked = append(ranked, cand{s, g})
		}
		slices.SortFunc(ranked, func(a, b cand) int {
			if c := cmp.Compare(b.gain, a.gain); c != 0 {
				return c
			}
			if c := cmp.Compare(a.s.n, b.s.n); c != 0 {
				return c
			}
			return cmp.Compare(a.s.val, b.s.val)
		})
		cands := make([]fsstSym, len(ranked))
		for i, c := range ranked {
			cands[i] = c.s
		}
		e.release()
		e = newFSSTEncoder(cands)
	}
	return e
}

// fsstCompressValues trains a table for the n values and encodes them:
// the serialized table, the encoded bytes and their offsets.
func fsstCompressValues(data []byte, offs []uint64, n int) (table, out []byte, outOffs []uint64) {
	e := trainFSST(data, offs, n)
	defer e.release()
	out = make([]byte, 0, int(offs[n]-offs[0])/2+64)
	outOffs = make([]uint64, n+1)
	for i := 0; i < n; i++ {
		out = e.compress(out, data, int(offs[i]), int(offs[i+1]))
		outOffs[i+1] = uint64(len(out))
	}
	return e.table(), out, outOffs
}

// fsstApplies is Lance's rule for FSST-coding a page of variable-width
// values (strings and binary alike): enough bytes, some value at least
// fsstMinMaxLen long, and none so large that values are zstd-compressed
// one by one instead.
func (c *column) fsstApplies(compress bool) bool {
	p := &c.page
	return compress && c.kind == leafVariable && p.n > 0 && p.maxLen >= fsstMinMaxLen && p.maxLen <= zstdThreshold &&
		p.offs[p.n]-p.offs[0] >= fsstMinInputBytes
}

// withFSST runs encode over the page's values FSST-coded and wraps the
// value compression it chose in the Fsst encoding with the page's table.
func (c *column) withFSST(encode func() (*encodedPage, error)) (*encodedPage, error) {
	p := &c.page
	table, data, offs := fsstCompressValues(p.data, p.offs, p.n)
	savedData, savedOffs := p.data, p.offs
	p.data, p.offs = data, offs
	ep, err := encode()
	p.data, p.offs = savedData, savedOffs
	if err != nil {
		return nil, err
	}
	wrap := func(inner *enc21pb.CompressiveEncoding) *enc21pb.CompressiveEncoding {
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Fsst{Fsst: &enc21pb.Fsst{Values: inner, SymbolTable: table}}}
	}
	switch l := ep.layout.GetLayout().(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		l.MiniBlockLayout.ValueCompression = wrap(l.MiniBlockLayout.ValueCompression)
	case *enc21pb.PageLayout_FullZipLayout:
		l.FullZipLayout.ValueCompression = wrap(l.FullZipLayout.ValueCompression)
	}
	return ep, nil
}
