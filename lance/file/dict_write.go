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
