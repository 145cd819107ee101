package lancefile

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/lancecat/lancecat/lance/pb/enc21pb"
	"github.com/lancecat/lancecat/lance/pb/file2pb"
)

// Shredding: turning Arrow arrays into the per-leaf streams a 2.1 page
// stores — repetition levels, definition levels and the visible items.
//
// While a page accumulates, definition levels are kept in a "full" form in
// which every layer owns its levels whether or not it has nulls (an item
// layer one, a list layer two: null, then empty). When the page is flushed
// the layers that turned out to have no nulls (or no empty lists) are
// dropped and the levels renumbered, which is how Lance picks ALL_VALID vs
// NULLABLE layers per page.

type nodeKind uint8

const (
	nodeItem   nodeKind = iota // the leaf itself
	nodeStruct                 // a struct; descend into field child
	nodeList                   // a list or large list
)

type pathNode struct {
	kind  nodeKind
	child int
	// layer is this node's position among the rep/def layers, innermost
	// first (the leaf is layer 0).
	layer int
	// full definition levels that mark this node null / an empty list.
	nullLevel, emptyLevel uint16
	// contRep is the repetition level of list items after the first.
	contRep uint16
}

type leafKind uint8

const (
	leafFixed leafKind = iota
	leafBool
	leafVariable
	leafFSL
	leafNull
)

// column accumulates one leaf column of a file being written.
type column struct {
	index   int
	fieldID int32
	path    []pathNode // root first; the last node is the leaf
	leaf    arrow.DataType
	kind    leafKind
	width   int  // fixed: bytes per value; FSL: bytes per item
	dim     int  // FSL items per value
	large   bool // variable: 64-bit offsets
	maxRep  uint16
	// maxVisible is the highest full def level that still has an item slot
	// (levels above belong to null or empty lists); max when no lists.
	maxVisible uint16
	hasDef     bool // some layer can be null or empty
	// v22: the file is format 2.2 (large-chunk mini-block grammar, RLE
	// levels).
	v22 bool

	page      pageBuf
	pages     []*file2pb.ColumnMetadata_Page
	rowsDone  uint64
	slots     []slot
	nextSlots []slot
}

type slot struct {
	rep, def uint16
	idx      int
}

// pageBuf is what a page has accumulated so far.
type pageBuf struct {
	rows      int
	rep, def  []uint16 // def in the full numbering
	seenNull  []bool   // per layer
	seenEmpty []bool
	n         int // visible items
	nullItems int // visible items that are null at some layer
	fixed     []byte
	offs      []uint64 // variable: n+1 offsets into data
	data      []byte
	itemValid []byte // FSL: one 0/1 byte per item; nil while all valid
	maxLen    int
}

func (p *pageBuf) bytes() int {
	return len(p.fixed) + len(p.data) + 8*len(p.offs) + 2*len(p.rep) + 2*len(p.def) + len(p.itemValid)
}

func newColumn(index int, fieldID int32, dt arrow.DataType, path []pathNode) (*column, error) {
	c := &column{index: index, fieldID: fieldID, path: path, leaf: dt}
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	switch t := dt.(type) {
	case *arrow.NullType:
		c.kind = leafNull
	case *arrow.BooleanType:
		c.kind = leafBool
	case *arrow.StringType, *arrow.BinaryType:
		c.kind = leafVariable
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		c.kind, c.large = leafVariable, true
	case *arrow.FixedSizeListType:
		et, ok := t.Elem().(arrow.FixedWidthDataType)
		if !ok || et.BitWidth()%8 != 0 || et.ID() == arrow.BOOL || t.Len() <= 0 {
			return nil, fmt.Errorf("fixed-size list of %s: %w", t.Elem(), ErrUnsupported)
		}
		c.kind, c.width, c.dim = leafFSL, et.BitWidth()/8, int(t.Len())
	case arrow.FixedWidthDataType:
		if t.BitWidth()%8 != 0 || t.BitWidth() == 0 {
			return nil, fmt.Errorf("%s: %w", dt, ErrUnsupported)
		}
		c.kind, c.width = leafFixed, t.BitWidth()/8
	default:
		return nil, fmt.Errorf("%s: %w", dt, ErrUnsupported)
	}
	// Layers innermost first: walk the path backwards.
	var full uint16
	c.maxVisible = ^uint16(0)
	seenList := false
	for i := len(path) - 1; i >= 0; i-- {
		n := &path[i]
		n.layer = len(path) - 1 - i
		if n.kind == nodeList {
			if !seenList {
				c.maxVisible = full
				seenList = true
			}
			n.nullLevel, n.emptyLevel = full+1, full+2
			full += 2
			c.maxRep++
		} else {
			n.nullLevel = full + 1
			full++
		}
	}
	c.hasDef = true
	// Continuation levels: the j-th list from the top (1-based) continues
	// with maxRep - j.
	j := uint16(0)
	for i := range path {
		if path[i].kind == nodeList {
			j++
			path[i].contRep = c.maxRep - j
		}
	}
	c.resetPage()
	return c, nil
}

func (c *column) resetPage() {
	p := &c.page
	p.rows, p.n, p.nullItems, p.maxLen = 0, 0, 0, 0
	p.rep, p.def = p.rep[:0], p.def[:0]
	if p.seenNull == nil {
		p.seenNull = make([]bool, len(c.path))
		p.seenEmpty = make([]bool, len(c.path))
	}
	clear(p.seenNull)
	clear(p.seenEmpty)
	p.fixed, p.data = p.fixed[:0], p.data[:0]
	p.offs = append(p.offs[:0], 0)
	p.itemValid = nil
}

// appendRows shreds rows [a, b) of arr (the column's top-level array).
func (c *column) appendRows(arr arrow.Array, a, b int) error {
	if a >= b {
		return nil
	}
	p := &c.page
	p.rows += b - a
	if len(c.path) == 1 {
		// A top-level leaf: levels come straight from the validity bitmap.
		if arr.NullN() > 0 {
			for i := a; i < b; i++ {
				if arr.IsNull(i) {
					p.def = append(p.def, 1)
					p.seenNull[0] = true
					p.nullItems++
				} else {
					p.def = append(p.def, 0)
				}
			}
		} else {
			p.def = appendZeros(p.def, b-a)
		}
		return c.appendValues(arr, a, b)
	}
	slots := c.slots[:0]
	for i := a; i < b; i++ {
		slots = append(slots, slot{rep: c.maxRep, idx: i})
	}
	cur := arr
	for _, node := range c.path {
		switch node.kind {
		case nodeStruct:
			if cur.NullN() > 0 {
				for k := range slots {
					s := &slots[k]
					if s.def == 0 && cur.IsNull(s.idx) {
						s.def = node.nullLevel
						p.seenNull[node.layer] = true
					}
				}
			}
			st, ok := cur.(*array.Struct)
			if !ok {
				return fmt.Errorf("expected a struct array, got %s: %w", cur.DataType(), ErrUnsupported)
			}
			cur = st.Field(node.child)
		case nodeList:
			ll, ok := cur.(array.ListLike)
			if !ok {
				return fmt.Errorf("expected a list array, got %s: %w", cur.DataType(), ErrUnsupported)
			}
			next := c.nextSlots[:0]
			for _, s := range slots {
				if s.def != 0 {
					next = append(next, s)
					continue
				}
				if cur.IsNull(s.idx) {
					s.def = node.nullLevel
					p.seenNull[node.layer] = true
					next = append(next, s)
					continue
				}
				st, en := ll.ValueOffsets(s.idx)
				if st == en {
					s.def = node.emptyLevel
					p.seenEmpty[node.layer] = true
					next = append(next, s)
					continue
				}
				for j := st; j < en; j++ {
					r := node.contRep
					if j == st {
						r = s.rep
					}
					next = append(next, slot{rep: r, idx: int(j)})
				}
			}
			c.nextSlots = slots
			slots = next
			cur = ll.ListValues()
		case nodeItem:
			for k := range slots {
				s := &slots[k]
				if s.def == 0 && leafIsNull(cur, s.idx) {
					s.def = node.nullLevel
					p.seenNull[0] = true
				}
				if c.maxRep > 0 {
					p.rep = append(p.rep, s.rep)
				}
				p.def = append(p.def, s.def)
				if s.def <= c.maxVisible {
					if s.def != 0 {
						p.nullItems++
					}
					if err := c.appendOne(cur, s.idx, s.def == 0); err != nil {
						return err
					}
				}
			}
		}
	}
	c.slots = slots
	return nil
}

func appendZeros(b []uint16, n int) []uint16 {
	if cap(b)-len(b) < n {
		nb := make([]uint16, len(b), 2*cap(b)+n)
		copy(nb, b)
		b = nb
	}
	b = b[:len(b)+n]
	clear(b[len(b)-n:])
	return b
}

// leafIsNull also looks through a dictionary at a null value.
func leafIsNull(arr arrow.Array, i int) bool {
	if arr.IsNull(i) {
		return true
	}
	if d, ok := arr.(*array.Dictionary); ok {
		return d.Dictionary().IsNull(d.GetValueIndex(i))
	}
	return false
}

// appendValues appends the items of a top-level leaf for rows [a, b);
// validity has already been recorded.
func (c *column) appendValues(arr arrow.Array, a, b int) error {
	p := &c.page
	if d, ok := arr.(*array.Dictionary); ok {
		for i := a; i < b; i++ {
			if leafIsNull(d, i) && !d.IsNull(i) {
				p.def[len(p.def)-(b-i)] = 1
				p.seenNull[0] = true
				p.nullItems++
			}
			if err := c.appendOne(d, i, !leafIsNull(d, i)); err != nil {
				return err
			}
		}
		return nil
	}
	data := arr.Data()
	off := data.Offset()
	switch c.kind {
	case leafNull:
		p.n += b - a
		p.nullItems = p.n
		return nil
	case leafFixed:
		buf := data.Buffers()[1].Bytes()
		p.fixed = append(p.fixed, buf[(off+a)*c.width:(off+b)*c.width]...)
		p.n += b - a
		p.maxLen = max(p.maxLen, c.width)
		return nil
	case leafBool:
		buf := data.Buffers()[1].Bytes()
		for i := a; i < b; i++ {
			p.fixed = append(p.fixed, boolByte(bitutil.BitIsSet(buf, off+i)))
		}
		p.n += b - a
		p.maxLen = max(p.maxLen, 1)
		return nil
	case leafVariable:
		if arr.NullN() == 0 {
			lo, hi := varBounds(data, c.large, a, b)
			base := uint64(len(p.data)) - lo
			p.data = append(p.data, data.Buffers()[2].Bytes()[lo:hi]...)
			prev := lo
			for i := a; i < b; i++ {
				_, e := varBounds(data, c.large, i, i+1)
				p.offs = append(p.offs, e+base)
				p.maxLen = max(p.maxLen, int(e-prev))
				prev = e
			}
			p.n += b - a
			return nil
		}
	}
	for i := a; i < b; i++ {
		if err := c.appendOne(arr, i, arr.IsValid(i)); err != nil {
			return err
		}
	}
	return nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// varBounds returns the byte range of values [a, b) of a string/binary
// array.
func varBounds(data arrow.ArrayData, large bool, a, b int) (uint64, uint64) {
	ob := data.Buffers()[1].Bytes()
	off := data.Offset()
	if large {
		o := arrow.Int64Traits.CastFromBytes(ob)
		return uint64(o[off+a]), uint64(o[off+b])
	}
	o := arrow.Int32Traits.CastFromBytes(ob)
	return uint64(uint32(o[off+a])), uint64(uint32(o[off+b]))
}

// appendOne appends one visible item: the value at arr[i] when valid, a
// zero (or empty) slot when not.
func (c *column) appendOne(arr arrow.Array, i int, valid bool) error {
	p := &c.page
	p.n++
	if d, ok := arr.(*array.Dictionary); ok {
		if valid {
			arr, i = d.Dictionary(), d.GetValueIndex(i)
		}
	}
	switch c.kind {
	case leafNull:
		return nil
	case leafFixed:
		if !valid {
			p.fixed = append(p.fixed, make([]byte, c.width)...)
			return nil
		}
		data := arr.Data()
		buf := data.Buffers()[1].Bytes()
		at := (data.Offset() + i) * c.width
		p.fixed = append(p.fixed, buf[at:at+c.width]...)
		p.maxLen = max(p.maxLen, c.width)
	case leafBool:
		if !valid {
			p.fixed = append(p.fixed, 0)
			return nil
		}
		data := arr.Data()
		p.fixed = append(p.fixed, boolByte(bitutil.BitIsSet(data.Buffers()[1].Bytes(), data.Offset()+i)))
		p.maxLen = max(p.maxLen, 1)
	case leafVariable:
		if valid {
			data := arr.Data()
			lo, hi := varBounds(data, c.large, i, i+1)
			p.data = append(p.data, data.Buffers()[2].Bytes()[lo:hi]...)
			p.maxLen = max(p.maxLen, int(hi-lo))
		}
		p.offs = append(p.offs, uint64(len(p.data)))
	case leafFSL:
		n := c.dim * c.width
		p.maxLen = max(p.maxLen, n+(c.dim+7)/8)
		if !valid {
			p.fixed = append(p.fixed, make([]byte, n)...)
			if p.itemValid != nil {
				p.itemValid = append(p.itemValid, make([]byte, c.dim)...)
			}
			return nil
		}
		fsl, ok := arr.(*array.FixedSizeList)
		if !ok {
			return fmt.Errorf("expected a fixed-size list, got %s: %w", arr.DataType(), ErrUnsupported)
		}
		child := fsl.ListValues()
		cd := child.Data()
		start := (fsl.Data().Offset() + i) * c.dim
		at := (cd.Offset() + start) * c.width
		p.fixed = append(p.fixed, cd.Buffers()[1].Bytes()[at:at+n]...)
		if child.NullN() > 0 || p.itemValid != nil {
			if p.itemValid == nil {
				// First null item: backfill the items so far as valid.
				p.itemValid = make([]byte, (p.n-1)*c.dim, (p.n-1)*c.dim+c.dim)
				for k := range p.itemValid {
					p.itemValid[k] = 1
				}
			}
			for k := 0; k < c.dim; k++ {
				p.itemValid = append(p.itemValid, boolByte(child.IsValid(start+k)))
			}
		}
	}
	return nil
}

// estimateRowBytes is the average unencoded size of one row of arr, used
// to cut large records into page-sized steps.
func estimateRowBytes(arr arrow.Array) int {
	if arr.Len() == 0 {
		return 1
	}
	return max(1, estimateBytes(arr)/arr.Len())
}

func estimateBytes(arr arrow.Array) int {
	n := arr.Len()
	switch a := arr.(type) {
	case *array.Struct:
		s := n / 8
		for i := 0; i < a.NumField(); i++ {
			s += estimateBytes(a.Field(i))
		}
		return s
	case array.ListLike:
		if n == 0 {
			return 0
		}
		if fsl, ok := a.(*array.FixedSizeList); ok {
			child := fsl.ListValues()
			dim := int(fsl.DataType().(*arrow.FixedSizeListType).Len())
			if child.Len() == 0 {
				return n * dim
			}
			return int(float64(estimateBytes(child)) / float64(child.Len()) * float64(n*dim))
		}
		st, _ := a.ValueOffsets(0)
		_, en := a.ValueOffsets(n - 1)
		child := a.ListValues()
		per := 0
		if child.Len() > 0 {
			per = estimateBytes(child) / child.Len()
		}
		return 8*n + int(en-st)*max(per, 1)
	case *array.String, *array.Binary, *array.LargeString, *array.LargeBinary:
		lo, hi := varBounds(a.Data(), a.DataType().ID() == arrow.LARGE_STRING || a.DataType().ID() == arrow.LARGE_BINARY, 0, n)
		return int(hi-lo) + 8*n
	case *array.Dictionary:
		return estimateBytes(a.Dictionary())/max(1, a.Dictionary().Len())*n + n
	}
	if fw, ok := arr.DataType().(arrow.FixedWidthDataType); ok {
		return max(1, fw.BitWidth()/8) * n
	}
	return n
}

// pageLayers turns the page's seen flags into its rep/def layers and the
// map from full to stored definition levels.
func (c *column) pageLayers() ([]enc21pb.RepDefLayer, []uint16, bool) {
	p := &c.page
	layers := make([]enc21pb.RepDefLayer, len(c.path))
	var fullMax uint16
	for _, n := range c.path {
		fullMax = max(fullMax, n.nullLevel, n.emptyLevel)
	}
	remap := make([]uint16, int(fullMax)+1)
	var cum uint16
	any := false
	for i := len(c.path) - 1; i >= 0; i-- {
		n := c.path[i]
		null, empty := p.seenNull[n.layer], p.seenEmpty[n.layer]
		if n.kind != nodeList {
			if null {
				layers[n.layer] = enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM
				cum++
				remap[n.nullLevel] = cum
				any = true
			} else {
				layers[n.layer] = enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM
			}
			continue
		}
		switch {
		case null && empty:
			layers[n.layer] = enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST
			remap[n.nullLevel], remap[n.emptyLevel] = cum+1, cum+2
			cum += 2
		case null:
			layers[n.layer] = enc21pb.RepDefLayer_REPDEF_NULLABLE_LIST
			remap[n.nullLevel] = cum + 1
			cum++
		case empty:
			layers[n.layer] = enc21pb.RepDefLayer_REPDEF_EMPTYABLE_LIST
			remap[n.emptyLevel] = cum + 1
			cum++
		default:
			layers[n.layer] = enc21pb.RepDefLayer_REPDEF_ALL_VALID_LIST
		}
		any = any || null || empty
	}
	return layers, remap, any
}
