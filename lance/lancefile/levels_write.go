package lancefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/lancecat/lancecat/lance/pb/enc21pb"
)

// Repetition and definition levels as Lance compresses them in mini-block
// chunks and constant pages: FastLanes bit-packing to the page's widest
// level (OutOfLineBitpacking, the 2.1 choice), or, in 2.2, run-length
// encoding when that is smaller (long runs of nulls or empty lists). Raw
// u16 levels (Flat(16)) remain for NoCompression.

type levelKind uint8

const (
	levelsFlat levelKind = iota
	levelsBitpacked
	levelsRLE
)

// levelCodec is how one level stream of a page is stored.
type levelCodec struct {
	kind  levelKind
	width int // bits per level when bit-packed
}

// maxChunkLevels: a chunk header counts levels in a u16, and each level
// stream's size is a u16 too.
const maxChunkLevels = 0xffff

// chooseLevelCodec picks the page's codec for one level stream.
func chooseLevelCodec(levels []uint16, compress, v22 bool) levelCodec {
	if !compress || len(levels) == 0 {
		return levelCodec{kind: levelsFlat}
	}
	var top uint16
	for _, l := range levels {
		top |= l
	}
	w := max(1, bits.Len16(top))
	bp := levelCodec{kind: levelsBitpacked, width: w}
	if v22 {
		rle := levelCodec{kind: levelsRLE}
		if rle.size(levels) < bp.size(levels) {
			return rle
		}
	}
	return bp
}

func (lc levelCodec) encoding() *enc21pb.CompressiveEncoding {
	switch lc.kind {
	case levelsBitpacked:
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_OutOfLineBitpacking{OutOfLineBitpacking: &enc21pb.OutOfLineBitpacking{
			UncompressedBitsPerValue: 16, Values: flat(lc.width)}}}
	case levelsRLE:
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Rle{Rle: &enc21pb.Rle{Values: flat(16), RunLengths: flat(8)}}}
	}
	return flat(16)
}

// packTail reports whether a bit-packed stream's last partial block of
// rem levels is packed (padded to 1024) rather than stored raw: Lance's
// rule, packing only when the padding costs less than packing saves. A
// packed tail is never the length of a raw one, so readers tell them
// apart by the buffer length.
func (lc levelCodec) packTail(rem int) bool {
	return lc.width*(fastLanesBlock-rem) < (16-lc.width)*rem
}

// size is the encoded size of levels.
func (lc levelCodec) size(levels []uint16) int {
	n := len(levels)
	switch lc.kind {
	case levelsBitpacked:
		s := n / fastLanesBlock * 128 * lc.width
		if rem := n % fastLanesBlock; rem > 0 {
			if lc.packTail(rem) {
				s += 128 * lc.width
			} else {
				s += 2 * rem
			}
		}
		return s
	case levelsRLE:
		runs := 0
		for i := 0; i < n; {
			j := i + 1
			for j < n && levels[j] == levels[i] && j-i < 255 {
				j++
			}
			runs++
			i = j
		}
		return 8 + 3*runs
	}
	return 2 * n
}

// appendLevels appends the encoded levels to dst.
func (lc levelCodec) appendLevels(dst []byte, levels []uint16) []byte {
	switch lc.kind {
	case levelsBitpacked:
		n := len(levels)
		var block [2 * fastLanesBlock]byte
		for at := 0; at < n; at += fastLanesBlock {
			end := min(n, at+fastLanesBlock)
			if end-at < fastLanesBlock && !lc.packTail(end-at) {
				return u16Bytes(dst, levels[at:end])
			}
			clear(block[:])
			for i, l := range levels[at:end] {
				binary.LittleEndian.PutUint16(block[2*i:], l)
			}
			dst = packBlock(dst, block[:], 2, lc.width)
		}
		return dst
	case levelsRLE:
		var vals, lens []byte
		for i := 0; i < len(levels); {
			j := i + 1
			for j < len(levels) && levels[j] == levels[i] && j-i < 255 {
				j++
			}
			vals = binary.LittleEndian.AppendUint16(vals, levels[i])
			lens = append(lens, byte(j-i))
			i = j
		}
		dst = binary.LittleEndian.AppendUint64(dst, uint64(len(vals)))
		return append(append(dst, vals...), lens...)
	}
	return u16Bytes(dst, levels)
}

// pagePart is one encoded page of a column's accumulated rows.
type pagePart struct {
	ep   *encodedPage
	rows int
}

// encodePages encodes the accumulated page, split into several at row
// boundaries when its levels do not fit mini-block chunks.
func (c *column) encodePages(compress bool) ([]pagePart, error) {
	ep, err := c.encodePage(compress)
	if err == nil {
		return []pagePart{{ep, c.page.rows}}, nil
	}
	if !errors.Is(err, errSplitPage) || c.page.rep == nil {
		return nil, err
	}
	whole := c.page
	defer func() { c.page = whole }()
	// Row starts (rep == maxRep) and, per level, the items before it.
	var starts []int
	for i, r := range whole.rep {
		if r == c.maxRep {
			starts = append(starts, i)
		}
	}
	starts = append(starts, len(whole.rep))
	var parts []pagePart
	var split func(r0, r1 int) error
	split = func(r0, r1 int) error {
		c.page = sliceRows(&whole, c, starts, r0, r1)
		ep, err := c.encodePage(compress)
		if err == nil {
			parts = append(parts, pagePart{ep, r1 - r0})
			return nil
		}
		if !errors.Is(err, errSplitPage) || r1-r0 < 2 {
			return fmt.Errorf("%w (one row holds too many levels): %w", err, ErrUnsupported)
		}
		// Halve by levels: the row start nearest the middle level.
		mid := (starts[r0] + starts[r1]) / 2
		m := r0 + 1
		for m < r1-1 && starts[m] < mid {
			m++
		}
		if err := split(r0, m); err != nil {
			return err
		}
		return split(m, r1)
	}
	// First cut into parts of at most maxChunkLevels levels, as Lance
	// does; halve further only where that is not enough.
	r0 := 0
	for r0 < len(starts)-1 {
		r1 := r0 + 1
		for r1 < len(starts)-1 && starts[r1+1]-starts[r0] <= maxChunkLevels {
			r1++
		}
		if err := split(r0, r1); err != nil {
			return nil, err
		}
		r0 = r1
	}
	return parts, nil
}

// sliceRows is rows [r0, r1) of page p as a page of their own (sharing
// p's buffers): levels [starts[r0], starts[r1]) and the items among them.
func sliceRows(p *pageBuf, c *column, starts []int, r0, r1 int) pageBuf {
	l0, l1 := starts[r0], starts[r1]
	item := func(l int) int {
		n := 0
		for _, d := range p.def[:l] {
			if d <= c.maxVisible {
				n++
			}
		}
		return n
	}
	i0, i1 := item(l0), item(l1)
	q := pageBuf{
		rows: r1 - r0, rep: p.rep[l0:l1], def: p.def[l0:l1],
		seenNull: p.seenNull, seenEmpty: p.seenEmpty,
		n: i1 - i0, maxLen: p.maxLen, data: p.data,
	}
	for _, d := range q.def {
		if d != 0 && d <= c.maxVisible {
			q.nullItems++
		}
	}
	switch c.kind {
	case leafVariable:
		q.offs = p.offs[i0 : i1+1]
	case leafFSL:
		q.fixed = p.fixed[i0*c.dim*c.width : i1*c.dim*c.width]
		if p.itemValid != nil {
			q.itemValid = p.itemValid[i0*c.dim : i1*c.dim]
		}
	case leafNull:
	default:
		q.fixed = p.fixed[i0*c.width : i1*c.width]
	}
	return q
}
