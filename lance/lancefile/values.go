package lancefile

import (
	"encoding/binary"
	"fmt"
)

// values is the decoded content of a leaf column before it becomes an Arrow
// array: the visible items of one or more pages, concatenated.
type values struct {
	kind valueKind
	n    int
	// kindFixed: n·width bytes. kindBool: n bytes, 0 or 1 (unpacked so that
	// concatenation never has to shift bits). kindVariable: the value bytes.
	data  []byte
	width int
	// kindVariable: n+1 ascending offsets into data. offsets[0] need not
	// be 0: a slice of a page's values is a view of its offsets and keeps
	// its whole data (slice copies nothing; buildArray hands the page's
	// buffer to every window's array).
	offsets []uint64
	// kindFSL: n lists of dim items in child; itemValid (n·dim bytes, 0/1)
	// is nil when every item is valid.
	dim       int
	itemValid []byte
	child     *values
}

type valueKind uint8

const (
	kindFixed valueKind = iota
	kindBool
	kindVariable
	kindFSL
	kindNull // no data: every item is null (all-null pages)
)

func fixedValues(data []byte, width, n int) (*values, error) {
	if width <= 0 || len(data)/width < n {
		return nil, fmt.Errorf("%d values of %d bytes need more than %d bytes: %w", n, width, len(data), ErrCorrupt)
	}
	return &values{kind: kindFixed, n: n, width: width, data: data[:n*width]}, nil
}

func nullValues(n int) *values { return &values{kind: kindNull, n: n} }

// unpackBools expands n LSB-first bits into bytes.
func unpackBools(bits []byte, n int) ([]byte, error) {
	if len(bits)*8 < n {
		return nil, fmt.Errorf("%d booleans in %d bytes: %w", n, len(bits), ErrCorrupt)
	}
	out := make([]byte, n)
	for i := range out {
		out[i] = bits[i>>3] >> (i & 7) & 1
	}
	return out, nil
}

// variableFromOffsets builds variable values from n+1 little-endian offsets
// of width w bytes that index into base.
func variableFromOffsets(offs []byte, w int, base []byte, n int) (*values, error) {
	if len(offs)/w < n+1 {
		return nil, fmt.Errorf("%d offsets in %d bytes: %w", n+1, len(offs), ErrCorrupt)
	}
	get := func(i int) uint64 {
		if w == 4 {
			return uint64(binary.LittleEndian.Uint32(offs[4*i:]))
		}
		return binary.LittleEndian.Uint64(offs[8*i:])
	}
	first, last := get(0), get(n)
	if first > last || last > uint64(len(base)) {
		return nil, fmt.Errorf("variable offsets [%d, %d] outside %d bytes: %w", first, last, len(base), ErrCorrupt)
	}
	out := &values{kind: kindVariable, n: n, offsets: make([]uint64, n+1), data: base[first:last]}
	prev := first
	for i := 0; i <= n; i++ {
		o := get(i)
		if o < prev || o > last {
			return nil, fmt.Errorf("variable offsets not ascending at %d: %w", i, ErrCorrupt)
		}
		out.offsets[i] = o - first
		prev = o
	}
	return out, nil
}

func (v *values) value(i int) []byte { return v.data[v.offsets[i]:v.offsets[i+1]] }

// emptyLike returns zero values with the same shape as v.
func emptyLike(v *values) *values {
	out := &values{kind: v.kind, width: v.width, dim: v.dim}
	switch v.kind {
	case kindVariable:
		out.offsets = []uint64{0}
	case kindFSL:
		out.child = emptyLike(v.child)
	}
	return out
}

// appendValues appends o to v; shapes must agree. A null page joined to
// data pages is materialised as zero slots so the result stays one buffer.
func (v *values) appendValues(o *values) error {
	if o.kind == kindNull && v.kind != kindNull {
		o = zeroValues(v, o.n)
	}
	if v.kind == kindNull && o.kind != kindNull {
		z := zeroValues(o, v.n)
		*v = *z
	}
	if v.kind != o.kind || v.width != o.width || v.dim != o.dim {
		return fmt.Errorf("pages of one column decode to different shapes: %w", ErrCorrupt)
	}
	switch v.kind {
	case kindFixed, kindBool:
		v.data = append(v.data, o.data...)
	case kindVariable:
		// v is built by appends (a fresh emptyLike or zeroValues), never a
		// view of a page: appending to its data writes into no other values.
		lo := o.offsets[0]
		base := uint64(len(v.data))
		v.data = append(v.data, o.data[lo:o.offsets[o.n]]...)
		for _, off := range o.offsets[1:] {
			v.offsets = append(v.offsets, base+off-lo)
		}
	case kindFSL:
		if v.itemValid != nil || o.itemValid != nil {
			v.itemValid = append(ensureValid(v.itemValid, v.n*v.dim), ensureValid(o.itemValid, o.n*o.dim)...)
		}
		if err := v.child.appendValues(o.child); err != nil {
			return err
		}
	}
	v.n += o.n
	return nil
}

func ensureValid(b []byte, n int) []byte {
	if b != nil {
		return b
	}
	out := make([]byte, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// zeroValues makes n zero (later masked as null) values shaped like like.
func zeroValues(like *values, n int) *values {
	out := &values{kind: like.kind, n: n, width: like.width, dim: like.dim}
	switch like.kind {
	case kindFixed:
		out.data = make([]byte, n*like.width)
	case kindBool:
		out.data = make([]byte, n)
	case kindVariable:
		out.offsets = make([]uint64, n+1)
	case kindFSL:
		out.child = zeroValues(like.child, n*like.dim)
		out.itemValid = make([]byte, n*like.dim)
	}
	return out
}

// slice returns items [i, j) (a view; callers do not mutate).
func (v *values) slice(i, j int) *values {
	out := &values{kind: v.kind, n: j - i, width: v.width, dim: v.dim}
	switch v.kind {
	case kindFixed:
		out.data = v.data[i*v.width : j*v.width]
	case kindBool:
		out.data = v.data[i:j]
	case kindVariable:
		out.data, out.offsets = v.data, v.offsets[i:j+1:j+1]
	case kindFSL:
		out.child = v.child.slice(i*v.dim, j*v.dim)
		if v.itemValid != nil {
			out.itemValid = v.itemValid[i*v.dim : j*v.dim]
		}
	}
	return out
}

// concatValues joins parts (pages, or chunks of a page) into one values,
// allocating each output buffer once. All-null parts become zero slots
// shaped like the others.
func concatValues(parts []*values) (*values, error) {
	if len(parts) == 1 {
		return parts[0], nil
	}
	var like *values
	n := 0
	for _, p := range parts {
		n += p.n
		if like == nil && p.kind != kindNull {
			like = p
		}
	}
	if like == nil {
		return nullValues(n), nil
	}
	norm := make([]*values, len(parts))
	for i, p := range parts {
		if p.kind == kindNull {
			p = zeroValues(like, p.n)
		}
		if p.kind != like.kind || p.width != like.width || p.dim != like.dim {
			return nil, fmt.Errorf("pages of one column decode to different shapes: %w", ErrCorrupt)
		}
		norm[i] = p
	}
	out := &values{kind: like.kind, n: n, width: like.width, dim: like.dim}
	switch like.kind {
	case kindFixed, kindBool:
		total := 0
		for _, p := range norm {
			total += len(p.data)
		}
		out.data = make([]byte, 0, total)
		for _, p := range norm {
			out.data = append(out.data, p.data...)
		}
	case kindVariable:
		total := uint64(0)
		for _, p := range norm {
			total += p.offsets[p.n] - p.offsets[0]
		}
		out.data = make([]byte, 0, total)
		out.offsets = make([]uint64, 1, n+1)
		for _, p := range norm {
			lo := p.offsets[0]
			base := uint64(len(out.data))
			out.data = append(out.data, p.data[lo:p.offsets[p.n]]...)
			for _, o := range p.offsets[1:] {
				out.offsets = append(out.offsets, base+o-lo)
			}
		}
	case kindFSL:
		children := make([]*values, len(norm))
		anyValid := false
		for i, p := range norm {
			children[i] = p.child
			anyValid = anyValid || p.itemValid != nil
		}
		var err error
		if out.child, err = concatValues(children); err != nil {
			return nil, err
		}
		if anyValid {
			out.itemValid = make([]byte, 0, n*like.dim)
			for _, p := range norm {
				out.itemValid = append(out.itemValid, ensureValid(p.itemValid, p.n*p.dim)...)
			}
		}
	}
	return out, nil
}
