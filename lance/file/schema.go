package lancefile

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancecat/lancecat/lance/pb/filepb"
)

// field is one node of the file's schema tree. Lance stores the schema as a
// flat pre-order list linked by parent ids; decoding walks the tree.
type field struct {
	pb       *filepb.Field
	arrow    arrow.Field
	children []*field
	// column is the first column of this node. In 2.0 every node has a
	// column of its own; in 2.1 only leaves do (structs and lists are folded
	// into the leaves' repetition and definition levels).
	column int
}

// buildSchema links the flat field list into trees (one per top-level
// field) and derives the Arrow types.
func buildSchema(fields []*filepb.Field, meta map[string][]byte) ([]*field, *arrow.Schema, error) {
	byID := make(map[int32]*field, len(fields))
	var roots []*field
	for _, pf := range fields {
		n := &field{pb: pf}
		if _, dup := byID[pf.GetId()]; dup {
			return nil, nil, fmt.Errorf("schema: duplicate field id %d: %w", pf.GetId(), ErrCorrupt)
		}
		byID[pf.GetId()] = n
		if pf.GetParentId() < 0 {
			roots = append(roots, n)
			continue
		}
		// Pre-order means a parent always precedes its children, which also
		// rules out cycles.
		parent, ok := byID[pf.GetParentId()]
		if !ok {
			return nil, nil, fmt.Errorf("schema: field %q has unknown parent %d: %w", pf.GetName(), pf.GetParentId(), ErrCorrupt)
		}
		parent.children = append(parent.children, n)
	}
	arrowFields := make([]arrow.Field, len(roots))
	for i, r := range roots {
		if err := r.resolve(0); err != nil {
			return nil, nil, err
		}
		arrowFields[i] = r.arrow
	}
	var md *arrow.Metadata
	if len(meta) > 0 {
		keys := make([]string, 0, len(meta))
		vals := make([]string, 0, len(meta))
		for k, v := range meta {
			keys = append(keys, k)
			vals = append(vals, string(v))
		}
		m := arrow.NewMetadata(keys, vals)
		md = &m
	}
	return roots, arrow.NewSchema(arrowFields, md), nil
}

// maxDepth bounds nesting so a hostile schema cannot exhaust the stack.
const maxDepth = 64

func (n *field) resolve(depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("schema nested deeper than %d: %w", maxDepth, ErrCorrupt)
	}
	for _, c := range n.children {
		if err := c.resolve(depth + 1); err != nil {
			return err
		}
	}
	lt := n.pb.GetLogicalType()
	var dt arrow.DataType
	switch {
	case lt == "struct":
		fs := make([]arrow.Field, len(n.children))
		for i, c := range n.children {
			fs[i] = c.arrow
		}
		dt = arrow.StructOf(fs...)
	case lt == "list" || lt == "list.struct" || lt == "large_list" || lt == "large_list.struct":
		if len(n.children) != 1 {
			return fmt.Errorf("schema: list %q has %d children: %w", n.pb.GetName(), len(n.children), ErrCorrupt)
		}
		if strings.HasPrefix(lt, "large_") {
			dt = arrow.LargeListOfField(n.children[0].arrow)
		} else {
			dt = arrow.ListOfField(n.children[0].arrow)
		}
	default:
		if len(n.children) != 0 {
			return fmt.Errorf("schema: %s field %q has children: %w", lt, n.pb.GetName(), ErrCorrupt)
		}
		var err error
		if dt, err = parseLogicalType(lt); err != nil {
			return fmt.Errorf("schema: field %q: %w", n.pb.GetName(), err)
		}
	}
	n.arrow = arrow.Field{Name: n.pb.GetName(), Type: dt, Nullable: n.pb.GetNullable()}
	if len(n.pb.GetMetadata()) > 0 {
		keys := make([]string, 0, len(n.pb.GetMetadata()))
		vals := make([]string, 0, len(n.pb.GetMetadata()))
		for k, v := range n.pb.GetMetadata() {
			keys = append(keys, k)
			vals = append(vals, string(v))
		}
		n.arrow.Metadata = arrow.NewMetadata(keys, vals)
	}
	return nil
}

var simpleTypes = map[string]arrow.DataType{
	"null":         arrow.Null,
	"bool":         arrow.FixedWidthTypes.Boolean,
	"int8":         arrow.PrimitiveTypes.Int8,
	"uint8":        arrow.PrimitiveTypes.Uint8,
	"int16":        arrow.PrimitiveTypes.Int16,
	"uint16":       arrow.PrimitiveTypes.Uint16,
	"int32":        arrow.PrimitiveTypes.Int32,
	"uint32":       arrow.PrimitiveTypes.Uint32,
	"int64":        arrow.PrimitiveTypes.Int64,
	"uint64":       arrow.PrimitiveTypes.Uint64,
	"halffloat":    arrow.FixedWidthTypes.Float16,
	"float":        arrow.PrimitiveTypes.Float32,
	"double":       arrow.PrimitiveTypes.Float64,
	"string":       arrow.BinaryTypes.String,
	"binary":       arrow.BinaryTypes.Binary,
	"large_string": arrow.BinaryTypes.LargeString,
	"large_binary": arrow.BinaryTypes.LargeBinary,
	"json":         arrow.BinaryTypes.LargeBinary,
	"date32:day":   arrow.FixedWidthTypes.Date32,
	"date64:ms":    arrow.FixedWidthTypes.Date64,
	"time32:s":     arrow.FixedWidthTypes.Time32s,
	"time32:ms":    arrow.FixedWidthTypes.Time32ms,
	"time64:us":    arrow.FixedWidthTypes.Time64us,
	"time64:ns":    arrow.FixedWidthTypes.Time64ns,
	"duration:s":   arrow.FixedWidthTypes.Duration_s,
	"duration:ms":  arrow.FixedWidthTypes.Duration_ms,
	"duration:us":  arrow.FixedWidthTypes.Duration_us,
	"duration:ns":  arrow.FixedWidthTypes.Duration_ns,
}

var timeUnits = map[string]arrow.TimeUnit{"s": arrow.Second, "ms": arrow.Millisecond, "us": arrow.Microsecond, "ns": arrow.Nanosecond}

// parseLogicalType maps Lance's logical type strings (lance-core
// datatypes) to Arrow types.
func parseLogicalType(lt string) (arrow.DataType, error) {
	if t, ok := simpleTypes[lt]; ok {
		return t, nil
	}
	parts := strings.Split(lt, ":")
	bad := fmt.Errorf("logical type %q: %w", lt, ErrUnsupported)
	switch parts[0] {
	case "fixed_size_list":
		if len(parts) < 3 {
			return nil, bad
		}
		size, err := strconv.ParseInt(parts[len(parts)-1], 10, 32)
		if err != nil || size <= 0 {
			return nil, bad
		}
		item, err := parseLogicalType(strings.Join(parts[1:len(parts)-1], ":"))
		if err != nil {
			return nil, err
		}
		// Lance does not store the item field; it always reads it back as a
		// nullable "item".
		return arrow.FixedSizeListOfField(int32(size), arrow.Field{Name: "item", Type: item, Nullable: true}), nil
	case "fixed_size_binary":
		if len(parts) != 2 {
			return nil, bad
		}
		size, err := strconv.ParseInt(parts[1], 10, 32)
		if err != nil || size <= 0 {
			return nil, bad
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: int(size)}, nil
	case "timestamp":
		if len(parts) != 3 {
			return nil, bad
		}
		unit, ok := timeUnits[parts[1]]
		if !ok {
			return nil, bad
		}
		tz := parts[2]
		if tz == "-" {
			tz = ""
		}
		return &arrow.TimestampType{Unit: unit, TimeZone: tz}, nil
	case "decimal":
		if len(parts) != 4 {
			return nil, bad
		}
		p, err1 := strconv.ParseInt(parts[2], 10, 32)
		s, err2 := strconv.ParseInt(parts[3], 10, 32)
		if err1 != nil || err2 != nil {
			return nil, bad
		}
		switch parts[1] {
		case "128":
			return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}, nil
		case "256":
			return &arrow.Decimal256Type{Precision: int32(p), Scale: int32(s)}, nil
		}
		return nil, bad
	case "dict":
		if len(parts) != 4 {
			return nil, bad
		}
		value, err := parseLogicalType(parts[1])
		if err != nil {
			return nil, err
		}
		index, err := parseLogicalType(parts[2])
		if err != nil {
			return nil, err
		}
		if !arrow.IsInteger(index.ID()) {
			return nil, bad
		}
		return &arrow.DictionaryType{IndexType: index, ValueType: value, Ordered: parts[3] == "true"}, nil
	}
	return nil, bad
}
