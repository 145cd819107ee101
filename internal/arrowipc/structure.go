package arrowipc

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// arrow-go's loader (arrow/ipc/file_reader.go, arrayLoaderContext, v18.8.0) walks the schema depth
// first and takes the batch's field nodes, buffers and variadic buffer counts by index, without
// checking any index against its vector's length (the flatbuffer accessors read past the vector)
// or any buffer's size against the node's length. A batch listing fewer buffers than its schema
// needs had it read a "decompressed size" from the bytes after the vector: 212 TB, a fatal out of
// memory. So before arrow-go loads a batch, checkStructure walks the same tree the same way, over
// the metadata checkLayout already bounded, and requires:
//
//   - exactly the field nodes, buffers and variadic counts the tree takes (more is as wrong as
//     fewer: counts that do not add up mean the writer and the reader disagree on the layout);
//   - every buffer the loader reads 8-byte aligned in the body (Arrow C++ refuses the same);
//   - every buffer the loader reads large enough for its node's length: a validity bitmap a bit
//     per value (unless the loader skips it, null count 0), values their width per value,
//     offsets one more than the values, views 16 bytes each; compressed buffers by the size they
//     declare they decode to (checkCompressed bounded it);
//   - top-level columns as long as the batch, and children as long as their parent needs
//     (struct, sparse union: as many; fixed-size list: size times as many);
//   - a union with nulls only where the loader can read it (it panics on a pre-V5 union's
//     validity bitmap).
//
// What the loader reads is taken from its source, not from the specification where the two differ:
// a dictionary batch is loaded with the zero metadata version (readDictionary leaves it unset), so
// a union or run-end encoded dictionary has a validity buffer to arrow-go whatever its message says.

// shapeKind is how the loader takes a field's node and buffers.
type shapeKind uint8

const (
	kindNull        shapeKind = iota // a node, no buffers (loadNull)
	kindFixed                        // validity, values of width bytes; values not read for an empty node (loadPrimitive)
	kindBool                         // kindFixed with a bit per value
	kindBinary                       // validity, offsets of width bytes, data (loadBinary)
	kindView                         // a variadic count, validity, views, that many data buffers (loadBinaryView)
	kindFixedBinary                  // validity, values of width bytes (loadFixedSizeBinary)
	kindList                         // validity, offsets of width bytes, a child (loadList, loadMap)
	kindListView                     // validity, offsets and sizes of width bytes, a child (loadListView)
	kindFixedList                    // validity, a child of size values per value (loadFixedSizeList)
	kindStruct                       // validity, children (loadStruct)
	kindUnion                        // validity before V5, type ids, dense: offsets, children (loadUnion)
	kindREE                          // validity before V5, run ends and values children
)

// A shape is a field of a schema as the loader reads it (a dictionary-encoded field: its indices).
type shape struct {
	path     string // the field's name, with its parents': "a.b"
	typ      string // its type, for errors: "int64", "utf8", "dictionary<int8>"
	kind     shapeKind
	width    int64 // bytes per value (kindFixed, kindFixedBinary) or per offset (binary, lists)
	size     int64 // a fixed-size list's values per value
	dense    bool  // a dense union
	dict     bool  // dictionary indices
	children []*shape
}

// A schemaShape is a schema's fields as the loader reads a record batch of them, and the value
// type of each dictionary id as it reads a dictionary batch.
type schemaShape struct {
	fields []*shape
	dicts  map[int64]*shape

	// Dictionary deltas: arrow-go keeps a dictionary's deltas apart and concatenates them with
	// the dictionary when the next record batch is loaded (dictutils.Memo.reify), copying the
	// whole dictionary each time, so a stream alternating one-value deltas and one-row batches
	// costs the square of its length (8,000 of them, a 3.2 MB body, took a second to decode).
	// What those copies add up to is bounded by deltaLimit (0: unbounded).
	dictBytes  map[int64]int64 // each dictionary's buffers, as arrow-go holds them
	pending    map[int64]bool  // a delta arrived since the last record batch
	deltaWork  int64
	deltaLimit int64
}

// deltaLimitFor is what the dictionary copies of a stream of size bytes may add up to: 1 GiB
// (under a second of copying) and 64 times its size, at most 16 GiB.
func deltaLimitFor(size int64) int64 {
	return min(min(size, 1<<40)*64+1<<30, 16<<30)
}

// maxShapeDepth is the loader's nesting limit (kMaxNestingDepth).
const maxShapeDepth = 64

// parseSchemaShape reads a Schema table that checkSchema verified.
func parseSchemaShape(s fbTable) (*schemaShape, error) {
	sch := &schemaShape{dicts: map[int64]*shape{}, dictBytes: map[int64]int64{}, pending: map[int64]bool{}}
	err := s.tables(1, func(f fbTable) error {
		sh, err := parseField(f, "", 0, sch.dicts)
		if err != nil {
			return err
		}
		sch.fields = append(sch.fields, sh)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sch, nil
}

// fbString is slot's string (a vector of bytes), "" when absent.
func (t fbTable) str(slot int) (string, error) {
	start, n, err := t.vector(slot, 1)
	if err != nil || n == 0 {
		return "", err
	}
	return string(t.b[start : start+n]), nil
}

// i16, i32 and i64 are slot's scalar, def when absent.
func (t fbTable) i16(slot int, def int16) (int16, error) {
	v, err := t.scalar(slot, 2)
	if err != nil || v == nil {
		return def, err
	}
	return int16(binary.LittleEndian.Uint16(v)), nil
}

func (t fbTable) i32(slot int, def int32) (int32, error) {
	v, err := t.scalar(slot, 4)
	if err != nil || v == nil {
		return def, err
	}
	return int32(binary.LittleEndian.Uint32(v)), nil
}

func (t fbTable) i64(slot int, def int64) (int64, error) {
	v, err := t.scalar(slot, 8)
	if err != nil || v == nil {
		return def, err
	}
	return int64(binary.LittleEndian.Uint64(v)), nil
}

func (t fbTable) boolean(slot int) (bool, error) {
	v, err := t.scalar(slot, 1)
	return v != nil && v[0] != 0, err
}

// parseField reads a Field table (name 0, type_type 2, type 3, dictionary 4, children 5) into the
// shape the loader reads, registering its dictionary's value shape in dicts.
func parseField(f fbTable, parent string, depth int, dicts map[int64]*shape) (*shape, error) {
	if depth > maxShapeDepth {
		return nil, fmt.Errorf("fields nested more than %d deep", maxShapeDepth)
	}
	name, err := f.str(0)
	if err != nil {
		return nil, err
	}
	path := name
	if parent != "" {
		path = parent + "." + name
	}
	var children []*shape
	if err := f.tables(5, func(c fbTable) error {
		sh, err := parseField(c, path, depth+1, dicts)
		if err != nil {
			return err
		}
		children = append(children, sh)
		return nil
	}); err != nil {
		return nil, err
	}
	tt, err := f.scalar(2, 1)
	if err != nil {
		return nil, err
	}
	typ, ok, err := f.sub(3)
	if err != nil {
		return nil, err
	}
	if tt == nil || !ok {
		return nil, fmt.Errorf("field %q has no type", path)
	}
	sh, err := typeShape(tt[0], typ, children)
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", path, err)
	}
	sh.path = path
	dict, ok, err := f.sub(4)
	if err != nil || !ok {
		return sh, err
	}
	// Dictionary-encoded: a batch holds the indices; the values (sh) come in dictionary batches.
	id, err := dict.i64(0, 0)
	if err != nil {
		return nil, err
	}
	bits, signed := int32(32), true // the specification's default index type
	if it, ok, err := dict.sub(1); err != nil {
		return nil, err
	} else if ok {
		if bits, err = it.i32(0, 0); err != nil {
			return nil, err
		}
		if signed, err = it.boolean(1); err != nil {
			return nil, err
		}
	}
	switch bits {
	case 8, 16, 32, 64:
	default:
		return nil, fmt.Errorf("field %q: dictionary indices of %d bits", path, bits)
	}
	if prev, ok := dicts[id]; ok && !sameShape(prev, sh) {
		return nil, fmt.Errorf("field %q: dictionary %d has another value type (%s) in field %q", path, id, prev.typ, prev.path)
	} else if !ok {
		dicts[id] = sh
	}
	sign := "int"
	if !signed {
		sign = "uint"
	}
	return &shape{path: path, typ: fmt.Sprintf("dictionary<%s%d>", sign, bits), kind: kindFixed, width: int64(bits / 8), dict: true}, nil
}

// typeShape is the shape of a Type union member (Schema.fbs's Type enum), arrow-go's reading of it
// (concreteTypeFromFB): what it refuses is refused, defaults are the flatbuffer schema's.
func typeShape(tt byte, t fbTable, children []*shape) (*shape, error) {
	fixed := func(name string, width int64) (*shape, error) {
		return &shape{typ: name, kind: kindFixed, width: width}, nil
	}
	nested := func(name string, k shapeKind, width int64, want int) (*shape, error) {
		if want >= 0 && len(children) != want {
			return nil, fmt.Errorf("%s with %d children", name, len(children))
		}
		return &shape{typ: name, kind: k, width: width, children: children}, nil
	}
	switch tt {
	case 1:
		return &shape{typ: "null", kind: kindNull}, nil
	case 2: // Int: bitWidth, is_signed
		bits, err := t.i32(0, 0)
		if err != nil {
			return nil, err
		}
		signed, err := t.boolean(1)
		if err != nil {
			return nil, err
		}
		switch bits {
		case 8, 16, 32, 64:
		default:
			return nil, fmt.Errorf("integers of %d bits", bits)
		}
		if signed {
			return fixed(fmt.Sprintf("int%d", bits), int64(bits/8))
		}
		return fixed(fmt.Sprintf("uint%d", bits), int64(bits/8))
	case 3: // FloatingPoint: precision
		p, err := t.i16(0, 0)
		if err != nil {
			return nil, err
		}
		switch p {
		case 0:
			return fixed("float16", 2)
		case 1:
			return fixed("float32", 4)
		case 2:
			return fixed("float64", 8)
		}
		return nil, fmt.Errorf("floating point precision %d", p)
	case 4:
		return nested("binary", kindBinary, 4, 0)
	case 5:
		return nested("utf8", kindBinary, 4, 0)
	case 6:
		return &shape{typ: "bool", kind: kindBool}, nil
	case 7: // Decimal: precision, scale, bitWidth
		bits, err := t.i32(2, 128)
		if err != nil {
			return nil, err
		}
		switch bits {
		case 32, 64, 128, 256:
			return fixed(fmt.Sprintf("decimal%d", bits), int64(bits/8))
		}
		return nil, fmt.Errorf("decimals of %d bits", bits)
	case 8: // Date: unit
		u, err := t.i16(0, 1)
		if err != nil {
			return nil, err
		}
		switch u {
		case 0:
			return fixed("date32", 4)
		case 1:
			return fixed("date64", 8)
		}
		return nil, fmt.Errorf("date unit %d", u)
	case 9: // Time: unit, bitWidth
		u, err := t.i16(0, 1)
		if err != nil {
			return nil, err
		}
		bits, err := t.i32(1, 32)
		if err != nil {
			return nil, err
		}
		switch {
		case bits == 32 && (u == 0 || u == 1):
			return fixed("time32", 4)
		case bits == 64 && (u == 2 || u == 3):
			return fixed("time64", 8)
		}
		return nil, fmt.Errorf("time of %d bits in unit %d", bits, u)
	case 10:
		return fixed("timestamp", 8)
	case 11: // Interval: unit
		u, err := t.i16(0, 0)
		if err != nil {
			return nil, err
		}
		switch u {
		case 0:
			return fixed("interval_months", 4)
		case 1:
			return fixed("interval_day_time", 8)
		case 2:
			return fixed("interval_month_day_nano", 16)
		}
		return nil, fmt.Errorf("interval unit %d", u)
	case 12:
		return nested("list", kindList, 4, 1)
	case 13:
		return nested("struct", kindStruct, 0, -1)
	case 14: // Union: mode, typeIds
		mode, err := t.i16(0, 0)
		if err != nil {
			return nil, err
		}
		if mode != 0 && mode != 1 {
			return nil, fmt.Errorf("union mode %d", mode)
		}
		s, _ := nested("sparse_union", kindUnion, 0, -1)
		if mode == 1 {
			s.typ, s.dense = "dense_union", true
		}
		return s, nil
	case 15: // FixedSizeBinary: byteWidth
		w, err := t.i32(0, 0)
		if err != nil {
			return nil, err
		}
		if w < 0 {
			return nil, fmt.Errorf("fixed-size binary of %d bytes", w)
		}
		return &shape{typ: fmt.Sprintf("fixed_size_binary[%d]", w), kind: kindFixedBinary, width: int64(w)}, nil
	case 16: // FixedSizeList: listSize
		n, err := t.i32(0, 0)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, fmt.Errorf("fixed-size list of %d values", n)
		}
		s, err := nested(fmt.Sprintf("fixed_size_list[%d]", n), kindFixedList, 0, 1)
		if s != nil {
			s.size = int64(n)
		}
		return s, err
	case 17:
		return nested("map", kindList, 4, 1)
	case 18:
		return fixed("duration", 8)
	case 19:
		return nested("large_binary", kindBinary, 8, 0)
	case 20:
		return nested("large_utf8", kindBinary, 8, 0)
	case 21:
		return nested("large_list", kindList, 8, 1)
	case 22:
		return nested("run_end_encoded", kindREE, 0, 2)
	case 23:
		return nested("binary_view", kindView, 0, 0)
	case 24:
		return nested("utf8_view", kindView, 0, 0)
	case 25:
		return nested("list_view", kindListView, 4, 1)
	case 26:
		return nested("large_list_view", kindListView, 8, 1)
	}
	return nil, fmt.Errorf("type %d is not one arrow-go reads", tt)
}

func sameShape(a, b *shape) bool {
	if a.kind != b.kind || a.width != b.width || a.size != b.size || a.dense != b.dense || a.dict != b.dict || a.typ != b.typ || len(a.children) != len(b.children) {
		return false
	}
	for i := range a.children {
		if !sameShape(a.children[i], b.children[i]) {
			return false
		}
	}
	return true
}

// errStructure is wrapped by every error of checkStructure.
var errStructure = errors.New("the batch does not match its schema")

// checkStructure checks a batch message's layout (checkLayout's, sizes by checkCompressed)
// against the schema, as the loader will read it. Other messages pass.
func (s *schemaShape) checkStructure(l *layout) error {
	w := walker{l: l, v5: l.version >= 4}
	var fields []*shape
	what := "record batch"
	switch l.kind {
	case 3:
		fields = s.fields
	case 2:
		d, ok := s.dicts[l.dictID]
		if !ok {
			return fmt.Errorf("%w: a dictionary batch for id %d, which no field of the schema has", errStructure, l.dictID)
		}
		fields = []*shape{d}
		what = fmt.Sprintf("dictionary batch %d (field %q)", l.dictID, d.path)
		w.v5 = false // readDictionary loads with the zero metadata version
	default:
		return nil
	}
	// The counts first: a batch whose counts do not add up says so, not what the loader would
	// misread once its indices slipped.
	c := counter{v5: w.v5, variadic: l.variadic, haveNodes: len(l.nodes), haveBufs: len(l.buffers)}
	for _, f := range fields {
		c.add(f)
	}
	switch {
	case c.views < len(l.variadic):
		return fmt.Errorf("%w: %s lists %d variadic buffer counts; its schema has %d view fields", errStructure, what, len(l.variadic), c.views)
	case c.views > len(l.variadic):
		return fmt.Errorf("%w: %s lists %d variadic buffer counts, too few for field %q (%s): its schema has %d view fields",
			errStructure, what, len(l.variadic), c.viewShort.path, c.viewShort.typ, c.views)
	case c.nodes < len(l.nodes):
		return fmt.Errorf("%w: %s lists %d field nodes; its schema's fields take %d", errStructure, what, len(l.nodes), c.nodes)
	case c.nodes > len(l.nodes):
		return fmt.Errorf("%w: %s lists %d field nodes, too few for field %q (%s): its schema's fields take %d",
			errStructure, what, len(l.nodes), c.nodeShort.path, c.nodeShort.typ, c.nodes)
	case c.buffers < int64(len(l.buffers)):
		return fmt.Errorf("%w: %s lists %d buffers; its schema's fields take %d", errStructure, what, len(l.buffers), c.buffers)
	case c.buffers > int64(len(l.buffers)):
		return fmt.Errorf("%w: %s lists %d buffers, too few for field %q (%s): its schema's fields take %d",
			errStructure, what, len(l.buffers), c.bufShort.path, c.bufShort.typ, c.buffers)
	}
	for _, f := range fields {
		at := w.ni
		length, err := w.walk(f, 0)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", errStructure, what, err)
		}
		if l.kind == 3 && length != l.rows {
			return fmt.Errorf("%w: %s of %d rows: column %q (%s, field node %d) has %d values", errStructure, what, l.rows, f.path, f.typ, at, length)
		}
	}
	return s.countDeltas(l)
}

// countDeltas follows what arrow-go will copy to concatenate dictionary deltas (schemaShape).
func (s *schemaShape) countDeltas(l *layout) error {
	if l.kind == 2 {
		var n int64
		for i := range l.buffers {
			n += l.size(i)
		}
		if !l.delta {
			s.dictBytes[l.dictID] = n // new or replaced: held alone, nothing to concatenate
			return nil
		}
		s.dictBytes[l.dictID] += n
		s.pending[l.dictID] = true
		return nil
	}
	for id := range s.pending {
		s.deltaWork += s.dictBytes[id]
		delete(s.pending, id)
	}
	if s.deltaLimit > 0 && s.deltaWork > s.deltaLimit {
		return fmt.Errorf("the stream's dictionary deltas make arrow-go copy more than %d bytes of dictionaries to decode it (it concatenates a dictionary with its deltas at every batch)", s.deltaLimit)
	}
	return nil
}

// A counter adds up the field nodes, buffers and variadic counts a tree takes (a view field's
// data buffers by its listed count), and the first field that takes more than the batch lists.
type counter struct {
	v5                             bool
	variadic                       []int64
	haveNodes, haveBufs            int
	nodes, views                   int
	buffers                        int64
	nodeShort, bufShort, viewShort *shape
}

func (c *counter) add(f *shape) {
	if c.nodes++; c.nodes > c.haveNodes && c.nodeShort == nil {
		c.nodeShort = f
	}
	n := int64(ownBuffers(f, c.v5))
	if f.kind == kindView {
		if c.views < len(c.variadic) {
			n += c.variadic[c.views] // checkLayout bounded each, and their sum, by the buffers
		} else if c.viewShort == nil {
			c.viewShort = f
		}
		c.views++
	}
	if c.buffers += n; n > 0 && c.buffers > int64(c.haveBufs) && c.bufShort == nil {
		c.bufShort = f
	}
	for _, ch := range f.children {
		c.add(ch)
	}
}

// ownBuffers is the buffers the loader takes for f itself (not its children; a view's variadic
// data buffers aside).
func ownBuffers(f *shape, v5 bool) int {
	switch f.kind {
	case kindNull:
		return 0
	case kindFixedList, kindStruct:
		return 1
	case kindBinary, kindListView:
		return 3
	case kindUnion:
		n := 1
		if f.dense {
			n++
		}
		if !v5 {
			n++
		}
		return n
	case kindREE:
		if v5 {
			return 0
		}
		return 1
	}
	return 2 // fixed, bool, fixed-size binary, view, list
}

// A walker takes a batch's nodes, buffers and variadic counts in the loader's order.
type walker struct {
	l          *layout
	v5         bool // the batch's metadata version is V5 or later (unions and REE have no validity)
	ni, bi, vi int
}

// node takes f's field node: its length and null count (checkLayout checked 0 <= nulls <= length).
func (w *walker) node(f *shape) (length, nulls int64, err error) {
	if w.ni >= len(w.l.nodes) {
		return 0, 0, fmt.Errorf("it lists %d field nodes, too few for field %q (%s), which needs node %d", len(w.l.nodes), f.path, f.typ, w.ni)
	}
	n := w.l.nodes[w.ni]
	w.ni++
	return n[0], n[1], nil
}

// buffer takes f's next buffer (role names it) and returns its size as the loader sees it; read
// says whether the loader reads it (else it only skips its index).
func (w *walker) buffer(f *shape, role string, read bool) (int64, error) {
	if w.bi >= len(w.l.buffers) {
		return 0, fmt.Errorf("it lists %d buffers, too few for field %q (%s), which needs buffer %d (its %s)", len(w.l.buffers), f.path, f.typ, w.bi, role)
	}
	i := w.bi
	w.bi++
	b := w.l.buffers[i]
	if read && b[1] > 0 && b[0]%8 != 0 {
		return 0, fmt.Errorf("buffer %d (field %q's %s) starts at offset %d of the body, not 8-byte aligned", i, f.path, role, b[0])
	}
	return w.l.size(i), nil
}

// need checks a buffer of have bytes holds count values of width bytes (count >= 0, width > 0).
func need(f *shape, role string, have, count, width int64) error {
	if count > have/width {
		return fmt.Errorf("field %q (%s): its %s (%d bytes) are too short for %d values of %d bytes", f.path, f.typ, role, have, count, width)
	}
	return nil
}

// validity takes f's validity bitmap, when its kind has one in this batch: the loader skips it
// when the node has no nulls, and reads it otherwise.
func (w *walker) validity(f *shape, length, nulls int64) error {
	switch f.kind {
	case kindNull:
		return nil
	case kindUnion, kindREE:
		if w.v5 {
			return nil
		}
	}
	have, err := w.buffer(f, "validity bitmap", nulls > 0)
	if err != nil || nulls == 0 {
		return err
	}
	if have < (length+7)/8 {
		return fmt.Errorf("field %q (%s): a validity bitmap of %d bytes for %d values with %d nulls; it needs %d", f.path, f.typ, have, length, nulls, (length+7)/8)
	}
	return nil
}

// walk takes f's node, buffers and children's, checking their sizes; it returns f's length.
func (w *walker) walk(f *shape, depth int) (int64, error) {
	if depth > maxShapeDepth {
		return 0, fmt.Errorf("field %q: nested more than %d deep", f.path, maxShapeDepth)
	}
	if f.kind == kindView {
		if w.vi >= len(w.l.variadic) {
			return 0, fmt.Errorf("it lists %d variadic buffer counts, too few for field %q (%s), which needs count %d", len(w.l.variadic), f.path, f.typ, w.vi)
		}
	}
	length, nulls, err := w.node(f)
	if err != nil {
		return 0, err
	}
	if f.kind == kindUnion && !w.v5 && nulls > 0 {
		return 0, fmt.Errorf("field %q (%s): %d nulls in a union before metadata V5 (a validity bitmap arrow-go cannot read)", f.path, f.typ, nulls)
	}
	if err := w.validity(f, length, nulls); err != nil {
		return 0, err
	}
	switch f.kind {
	case kindNull:
	case kindFixed, kindBool:
		role := "values"
		if f.dict {
			role = "indices"
		}
		have, err := w.buffer(f, role, length > 0)
		if err != nil || length == 0 {
			return length, err
		}
		if f.kind == kindBool {
			if have < (length+7)/8 {
				return 0, fmt.Errorf("field %q (%s): its values (%d bytes) are too short for %d values of a bit", f.path, f.typ, have, length)
			}
			return length, nil
		}
		return length, need(f, role, have, length, f.width)
	case kindFixedBinary:
		have, err := w.buffer(f, "values", true)
		if err != nil || f.width == 0 {
			return length, err
		}
		return length, need(f, "values", have, length, f.width)
	case kindBinary, kindList:
		have, err := w.buffer(f, "offsets", true)
		if err != nil {
			return 0, err
		}
		if length > 0 { // an empty array may have no offsets at all
			if err := need(f, "offsets", have, length+1, f.width); err != nil {
				return 0, err
			}
		}
		if f.kind == kindBinary {
			_, err := w.buffer(f, "data", true)
			return length, err
		}
		_, err = w.walk(f.children[0], depth+1)
		return length, err
	case kindListView:
		for _, role := range []string{"offsets", "sizes"} {
			have, err := w.buffer(f, role, true)
			if err != nil {
				return 0, err
			}
			if err := need(f, role, have, length, f.width); err != nil {
				return 0, err
			}
		}
		_, err := w.walk(f.children[0], depth+1)
		return length, err
	case kindView:
		count := w.l.variadic[w.vi]
		w.vi++
		have, err := w.buffer(f, "views", true)
		if err != nil {
			return 0, err
		}
		if err := need(f, "views", have, length, 16); err != nil {
			return 0, err
		}
		if count > int64(len(w.l.buffers)-w.bi) {
			return 0, fmt.Errorf("field %q (%s): a variadic buffer count of %d, more than the %d buffers left", f.path, f.typ, count, len(w.l.buffers)-w.bi)
		}
		for range count {
			if _, err := w.buffer(f, "data", true); err != nil {
				return 0, err
			}
		}
	case kindFixedList:
		child, err := w.walk(f.children[0], depth+1)
		if err != nil {
			return 0, err
		}
		if f.size > 0 && length > child/f.size {
			return 0, fmt.Errorf("field %q (%s): %d values of %d need %d child values; the child has %d", f.path, f.typ, length, f.size, length*f.size, child)
		}
	case kindStruct:
		for _, c := range f.children {
			n, err := w.walk(c, depth+1)
			if err != nil {
				return 0, err
			}
			if n < length {
				return 0, fmt.Errorf("field %q (%s) of %d values: child %q has %d", f.path, f.typ, length, c.path, n)
			}
		}
	case kindUnion:
		have, err := w.buffer(f, "type ids", length > 0)
		if err != nil {
			return 0, err
		}
		if err := need(f, "type ids", have, length, 1); err != nil && length > 0 {
			return 0, err
		}
		if f.dense {
			have, err := w.buffer(f, "offsets", length > 0)
			if err != nil {
				return 0, err
			}
			if err := need(f, "offsets", have, length, 4); err != nil && length > 0 {
				return 0, err
			}
		}
		for _, c := range f.children {
			n, err := w.walk(c, depth+1)
			if err != nil {
				return 0, err
			}
			if !f.dense && n < length {
				return 0, fmt.Errorf("field %q (%s) of %d values: child %q has %d", f.path, f.typ, length, c.path, n)
			}
		}
	case kindREE:
		for _, c := range f.children {
			if _, err := w.walk(c, depth+1); err != nil {
				return 0, err
			}
		}
	}
	return length, nil
}
