package lancefile

import (
	"encoding/binary"
	"hash/maphash"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancecat/lancecat/lance/pb/enc21pb"
)

// Dictionary pages: a mini-block page whose chunks hold indices into a
// page-level dictionary (buffer 2). Lance requires this layout for Arrow
// dictionary columns, and hands the indices back as the dictionary keys,
// so their width is the key type's.

// dictionaryPays applies Lance's test for dictionary-encoding a page of
// variable-width values: fewer distinct values than half the items (and at
// most 100,000), and dictionary plus 32-bit indices under 80% of the
// plain size.
func (c *column) dictionaryPays() bool {
	p := &c.page
	if p.n < 2 {
		return false
	}
	limit := min(p.n/2, 100_000)
	// Distinct values counted by a 64-bit hash: no copy of each value as
	// a map key (a collision only undercounts by one, as Lance's own
	// cardinality estimate may).
	seen := make(map[uint64]struct{}, 64)
	seed := maphash.MakeSeed()
	dictBytes := 0
	for i := 0; i < p.n; i++ {
		v := p.data[p.offs[i]:p.offs[i+1]]
		h := maphash.Bytes(seed, v)
		if _, ok := seen[h]; !ok {
			if len(seen) >= limit {
				return false
			}
			seen[h] = struct{}{}
			dictBytes += len(v) + 4
		}
	}
	plain := int(p.offs[p.n]-p.offs[0]) + 4*p.n
	return (dictBytes+4*p.n)*10 < plain*8
}

// encodeDictionary writes the page of a dictionary column.
func (c *column) encodeDictionary(dt *arrow.DictionaryType, layers []enc21pb.RepDefLayer, rep, def []uint16, mv uint16, compress bool) (*encodedPage, error) {
	p := &c.page
	kw := dt.IndexType.(arrow.FixedWidthDataType).BitWidth() / 8
	indices := make([]byte, p.n*kw)
	seen := map[string]uint64{}
	var dictFixed, dictData []byte
	dictOffs := []uint64{0}
	numDict := 0
	for i := 0; i < p.n; i++ {
		var v []byte
		if c.kind == leafVariable {
			v = p.data[p.offs[i]:p.offs[i+1]]
		} else {
			v = p.fixed[i*c.width : (i+1)*c.width]
		}
		k, ok := seen[string(v)]
		if !ok {
			k = uint64(numDict)
			seen[string(v)] = k
			numDict++
			if c.kind == leafVariable {
				dictData = append(dictData, v...)
				dictOffs = append(dictOffs, uint64(len(dictData)))
			} else {
				dictFixed = append(dictFixed, v...)
			}
		}
		putUint(indices, i, 8*kw, k)
	}
	var dictBuf []byte
	var dictEnc *enc21pb.CompressiveEncoding
	if c.kind == leafVariable {
		if c.large {
			dictBuf = binary.LittleEndian.AppendUint64(nil, 64)
			dictBuf = binary.LittleEndian.AppendUint64(dictBuf, uint64(16+8*len(dictOffs)))
			for _, o := range dictOffs {
				dictBuf = binary.LittleEndian.AppendUint64(dictBuf, o)
			}
			dictEnc = variableEnc(64)
		} else {
			dictBuf = binary.LittleEndian.AppendUint32(nil, 32)
			dictBuf = binary.LittleEndian.AppendUint32(dictBuf, uint32(8+4*len(dictOffs)))
			for _, o := range dictOffs {
				dictBuf = binary.LittleEndian.AppendUint32(dictBuf, uint32(o))
			}
			dictEnc = variableEnc(32)
		}
		dictBuf = append(dictBuf, dictData...)
	} else if compress && c.v22 {
		dictBuf, dictEnc = packDictionary(dictFixed, c.width, numDict)
	} else {
		dictBuf = dictFixed
		dictEnc = flat(8 * c.width)
	}

	// Encode the indices as a fixed-width mini-block page.
	saved := *c
	savedFixed := p.fixed
	p.fixed = indices
	c.kind, c.width, c.leaf = leafFixed, kw, dt.IndexType
	ep, err := c.encodeMiniBlock(layers, rep, def, mv, compress)
	if err == errBitpackFit {
		ep, err = c.encodeMiniBlock(layers, rep, def, mv, false)
	}
	c.kind, c.width, c.leaf = saved.kind, saved.width, saved.leaf
	p.fixed = savedFixed
	if err != nil {
		return nil, err
	}
	l := ep.layout.GetMiniBlockLayout()
	l.Dictionary = dictEnc
	l.NumDictionaryItems = uint64(numDict)
	bufs := append([][]byte{ep.bufs[0], ep.bufs[1], dictBuf}, ep.bufs[2:]...)
	ep.bufs = bufs
	return ep, nil
}

// fixedDictionaryPays is Lance 2.2's test for dictionary-encoding a page
// of fixed-width values: at least 100 of them, and the estimated
// dictionary (128 bits an entry) plus 32-bit indices under 80% of the
// plain size. Only values of 8 bytes or more can pass.
func (c *column) fixedDictionaryPays() bool {
	p := &c.page
	if c.kind != leafFixed || c.width < 8 || p.n < 100 {
		return false
	}
	if _, isDict := c.leaf.(*arrow.DictionaryType); isDict {
		return false
	}
	plain := p.n * c.width
	// 16·card + 4·n < 0.8·plain, so card stays under limit.
	limit := (plain*8/10 - 4*p.n + 15) / 16
	if limit <= 0 {
		return false
	}
	seen := make(map[uint64]struct{}, 64)
	seed := maphash.MakeSeed()
	for i := 0; i < p.n; i++ {
		h := maphash.Bytes(seed, p.fixed[i*c.width:(i+1)*c.width])
		if _, ok := seen[h]; !ok {
			if len(seen)+1 >= limit {
				return false
			}
			seen[h] = struct{}{}
		}
	}
	return true
}

// packDictionary stores a 64-bit dictionary bit-packed as Lance 2.2
// stores it: one inline chunk for up to 1,024 entries, out-of-line blocks
// beyond; plain when packing cannot save (full width, or a block larger
// than the values).
func packDictionary(vals []byte, w, n int) ([]byte, *enc21pb.CompressiveEncoding) {
	if w != 8 || n == 0 {
		return vals, flat(8 * w)
	}
	width := chunkBitWidth(vals, w)
	if width == 0 || width >= 64 || w+128*width >= len(vals) {
		return vals, flat(8 * w)
	}
	if n <= fastLanesBlock {
		return packChunk(nil, vals, w), &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_InlineBitpacking{InlineBitpacking: &enc21pb.InlineBitpacking{UncompressedBitsPerValue: 64}}}
	}
	var out []byte
	for at := 0; at < len(vals); at += fastLanesBlock * w {
		end := min(len(vals), at+fastLanesBlock*w)
		rem := (end - at) / w
		// A short tail is packed only when that is smaller (Lance's rule,
		// as for levels); readers tell by its length.
		if rem < fastLanesBlock && width*(fastLanesBlock-rem) >= (64-width)*rem {
			out = append(out, vals[at:end]...)
			break
		}
		out = packBlock(out, vals[at:end], w, width)
	}
	return out, &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_OutOfLineBitpacking{OutOfLineBitpacking: &enc21pb.OutOfLineBitpacking{
		UncompressedBitsPerValue: 64, Values: flat(width)}}}
}
