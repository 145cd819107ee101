package lance

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancecat/lancecat/lance/pb/filepb"
)

// ErrUnsupportedType: a type Lance cannot store (or we cannot map).
var ErrUnsupportedType = errors.New("lance: unsupported type")

// FieldIDKey is the Arrow field metadata key under which ToArrowSchema
// (with field ids requested) records Lance field ids, and from which
// FromArrowSchema takes them back.
const FieldIDKey = "lance:field_id"

// ArrowExtensionKey is Arrow's extension-type metadata key.
const ArrowExtensionKey = "ARROW:extension:name"

// ToArrowSchema converts a flattened Lance schema (pre-order, parent ids)
// and its metadata to an Arrow schema. With withIDs, every field's Lance id
// is kept in its metadata under FieldIDKey.
func ToArrowSchema(fields []*filepb.Field, metadata map[string][]byte, withIDs bool) (*arrow.Schema, error) {
	children := map[int32][]*filepb.Field{}
	for _, f := range fields {
		children[f.GetParentId()] = append(children[f.GetParentId()], f)
	}
	c := toArrow{children: children, withIDs: withIDs}
	var out []arrow.Field
	for _, f := range children[-1] {
		af, err := c.field(f, 0)
		if err != nil {
			return nil, err
		}
		out = append(out, af)
	}
	var md *arrow.Metadata
	if len(metadata) > 0 {
		keys := slices.Sorted(maps.Keys(metadata))
		vals := make([]string, len(keys))
		for i, k := range keys {
			vals[i] = string(metadata[k])
		}
		m := arrow.NewMetadata(keys, vals)
		md = &m
	}
	return arrow.NewSchema(out, md), nil
}

type toArrow struct {
	children map[int32][]*filepb.Field
	withIDs  bool
}

func (c toArrow) field(f *filepb.Field, depth int) (arrow.Field, error) {
	if depth > 64 {
		return arrow.Field{}, fmt.Errorf("%w: schema nested deeper than 64 levels", ErrCorruptManifest)
	}
	kids := c.children[f.GetId()]
	if slices.Contains(kids, f) {
		return arrow.Field{}, fmt.Errorf("%w: field %d is its own parent", ErrCorruptManifest, f.GetId())
	}
	lt := f.GetLogicalType()
	var dt arrow.DataType
	var err error
	switch base, _, _ := strings.Cut(lt, "."); base {
	case "struct":
		var fs []arrow.Field
		for _, k := range kids {
			af, err := c.field(k, depth+1)
			if err != nil {
				return arrow.Field{}, err
			}
			fs = append(fs, af)
		}
		dt = arrow.StructOf(fs...)
	case "list", "large_list":
		if len(kids) != 1 {
			return arrow.Field{}, fmt.Errorf("%w: list field %q has %d children", ErrCorruptManifest, f.GetName(), len(kids))
		}
		item, err := c.field(kids[0], depth+1)
		if err != nil {
			return arrow.Field{}, err
		}
		if base == "list" {
			dt = arrow.ListOfField(item)
		} else {
			dt = arrow.LargeListOfField(item)
		}
	default:
		dt, err = ParseLogicalType(lt)
		if err != nil {
			return arrow.Field{}, fmt.Errorf("field %q: %w", f.GetName(), err)
		}
	}
	md := map[string]string{}
	for k, v := range f.GetMetadata() {
		md[k] = string(v)
	}
	if lt == "json" {
		md[ArrowExtensionKey] = "lance.json"
	}
	if c.withIDs {
		md[FieldIDKey] = strconv.Itoa(int(f.GetId()))
	}
	return arrow.Field{Name: f.GetName(), Type: dt, Nullable: f.GetNullable(), Metadata: metadataOf(md)}, nil
}

func metadataOf(m map[string]string) arrow.Metadata {
	if len(m) == 0 {
		return arrow.Metadata{}
	}
	keys := slices.Sorted(maps.Keys(m))
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = m[k]
	}
	return arrow.NewMetadata(keys, vals)
}

var timeUnits = map[string]arrow.TimeUnit{"s": arrow.Second, "ms": arrow.Millisecond, "us": arrow.Microsecond, "ns": arrow.Nanosecond}

func unitName(u arrow.TimeUnit) string {
	return [...]string{"s", "ms", "us", "ns"}[u]
}

var simpleTypes = map[string]arrow.DataType{
	"null": arrow.Null, "bool": arrow.FixedWidthTypes.Boolean,
	"int8": arrow.PrimitiveTypes.Int8, "int16": arrow.PrimitiveTypes.Int16, "int32": arrow.PrimitiveTypes.Int32, "int64": arrow.PrimitiveTypes.Int64,
	"uint8": arrow.PrimitiveTypes.Uint8, "uint16": arrow.PrimitiveTypes.Uint16, "uint32": arrow.PrimitiveTypes.Uint32, "uint64": arrow.PrimitiveTypes.Uint64,
	"halffloat": arrow.FixedWidthTypes.Float16, "float": arrow.PrimitiveTypes.Float32, "double": arrow.PrimitiveTypes.Float64,
	"string": arrow.BinaryTypes.String, "large_string": arrow.BinaryTypes.LargeString,
	"binary": arrow.BinaryTypes.Binary, "large_binary": arrow.BinaryTypes.LargeBinary,
	"json":       arrow.BinaryTypes.LargeBinary,
	"date32:day": arrow.FixedWidthTypes.Date32, "date64:ms": arrow.FixedWidthTypes.Date64,
}

// ParseLogicalType maps a Lance logical type string of a leaf (anything
// but struct and list, whose children are separate fields) to Arrow.
func ParseLogicalType(lt string) (arrow.DataType, error) {
	if dt, ok := simpleTypes[lt]; ok {
		return dt, nil
	}
	parts := strings.Split(lt, ":")
	bad := fmt.Errorf("%w: logical type %q", ErrUnsupportedType, lt)
	switch parts[0] {
	case "time32", "time64", "duration":
		if len(parts) != 2 {
			return nil, bad
		}
		u, ok := timeUnits[parts[1]]
		if !ok {
			return nil, bad
		}
		switch {
		case parts[0] == "duration":
			return &arrow.DurationType{Unit: u}, nil
		case parts[0] == "time32" && (u == arrow.Second || u == arrow.Millisecond):
			return &arrow.Time32Type{Unit: u}, nil
		case parts[0] == "time64" && (u == arrow.Microsecond || u == arrow.Nanosecond):
			return &arrow.Time64Type{Unit: u}, nil
		}
	case "timestamp":
		if len(parts) < 2 {
			return nil, bad
		}
		u, ok := timeUnits[parts[1]]
		if !ok {
			return nil, bad
		}
		tz := strings.Join(parts[2:], ":") // zones like "+05:30" contain ':'
		if tz == "-" {
			tz = ""
		}
		return &arrow.TimestampType{Unit: u, TimeZone: tz}, nil
	case "decimal":
		if len(parts) != 4 {
			return nil, bad
		}
		p, err1 := strconv.ParseInt(parts[2], 10, 32)
		s, err2 := strconv.ParseInt(parts[3], 10, 32)
		if err1 != nil || err2 != nil || p < 1 {
			return nil, bad
		}
		switch parts[1] {
		case "128":
			if p <= 38 {
				return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}, nil
			}
		case "256":
			if p <= 76 {
				return &arrow.Decimal256Type{Precision: int32(p), Scale: int32(s)}, nil
			}
		}
	case "fixed_size_binary":
		n, err := strconv.ParseInt(strings.TrimPrefix(lt, "fixed_size_binary:"), 10, 32)
		if err != nil || n < 0 {
			return nil, bad
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: int(n)}, nil
	case "fixed_size_list":
		i := strings.LastIndexByte(lt, ':')
		n, err := strconv.ParseInt(lt[i+1:], 10, 32)
		inner := strings.TrimPrefix(lt[:i], "fixed_size_list:")
		if err != nil || n < 0 || inner == lt[:i] {
			return nil, bad
		}
		item := arrow.Field{Name: "item", Nullable: true}
		if inner == "lance.bfloat16" {
			item.Type = &arrow.FixedSizeBinaryType{ByteWidth: 2}
			item.Metadata = arrow.NewMetadata([]string{ArrowExtensionKey}, []string{"lance.bfloat16"})
		} else if item.Type, err = ParseLogicalType(inner); err != nil {
			return nil, err
		}
		return arrow.FixedSizeListOfField(int32(n), item), nil
	case "dict":
		// dict:<value>:<key>:<ordered>; the value type may contain ':'.
		if len(parts) < 4 {
			return nil, bad
		}
		ordered := parts[len(parts)-1] == "true"
		key, err := ParseLogicalType(parts[len(parts)-2])
		if err != nil {
			return nil, err
		}
		val, err := ParseLogicalType(strings.Join(parts[1:len(parts)-2], ":"))
		if err != nil {
			return nil, err
		}
		if !arrow.IsInteger(key.ID()) {
			return nil, bad
		}
		return &arrow.DictionaryType{IndexType: key, ValueType: val, Ordered: ordered}, nil
	}
	return nil, bad
}

// LogicalType is the Lance logical type string of an Arrow type (for
// struct and list types, the parent's string; children are fields).
func LogicalType(dt arrow.DataType) (string, error) {
	for name, t := range simpleTypes {
		if name != "json" && arrow.TypeEqual(dt, t) {
			return name, nil
		}
	}
	switch t := dt.(type) {
	case *arrow.Time32Type:
		return "time32:" + unitName(t.Unit), nil
	case *arrow.Time64Type:
		return "time64:" + unitName(t.Unit), nil
	case *arrow.DurationType:
		return "duration:" + unitName(t.Unit), nil
	case *arrow.TimestampType:
		tz := t.TimeZone
		if tz == "" {
			tz = "-"
		}
		return "timestamp:" + unitName(t.Unit) + ":" + tz, nil
	case *arrow.Decimal128Type:
		return fmt.Sprintf("decimal:128:%d:%d", t.Precision, t.Scale), nil
	case *arrow.Decimal256Type:
		return fmt.Sprintf("decimal:256:%d:%d", t.Precision, t.Scale), nil
	case *arrow.FixedSizeBinaryType:
		return fmt.Sprintf("fixed_size_binary:%d", t.ByteWidth), nil
	case *arrow.FixedSizeListType:
		item := t.ElemField()
		inner := ""
		if ext, _ := item.Metadata.GetValue(ArrowExtensionKey); ext == "lance.bfloat16" {
			inner = "lance.bfloat16"
		} else {
			var err error
			if inner, err = LogicalType(item.Type); err != nil {
				return "", err
			}
			if _, nested := item.Type.(arrow.NestedType); nested {
				return "", fmt.Errorf("%w: fixed_size_list of %s", ErrUnsupportedType, item.Type)
			}
		}
		return fmt.Sprintf("fixed_size_list:%s:%d", inner, t.Len()), nil
	case *arrow.StructType:
		return "struct", nil
	case *arrow.ListType:
		if _, ok := t.Elem().(*arrow.StructType); ok {
			return "list.struct", nil
		}
		return "list", nil
	case *arrow.LargeListType:
		if _, ok := t.Elem().(*arrow.StructType); ok {
			return "large_list.struct", nil
		}
		return "large_list", nil
	case *arrow.DictionaryType:
		val, err := LogicalType(t.ValueType)
		if err != nil {
			return "", err
		}
		key, err := LogicalType(t.IndexType)
		if err != nil {
			return "", err
		}
		// Lance records dictionaries as unordered.
		return fmt.Sprintf("dict:%s:%s:false", val, key), nil
	}
	return "", fmt.Errorf("%w: %s", ErrUnsupportedType, dt)
}

// encodingOf is the legacy encoding hint Lance still writes per field.
func encodingOf(dt arrow.DataType) filepb.Encoding {
	switch dt.ID() {
	case arrow.STRUCT:
		return filepb.Encoding_NONE
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return filepb.Encoding_VAR_BINARY
	case arrow.DICTIONARY:
		return filepb.Encoding_DICTIONARY
	}
	return filepb.Encoding_PLAIN
}

// FromArrowSchema converts an Arrow schema to a flattened Lance schema,
// assigning ids in pre-order from nextID to fields without a FieldIDKey
// entry in their metadata (that entry is consumed, not stored).
func FromArrowSchema(s *arrow.Schema, nextID int32) ([]*filepb.Field, map[string][]byte, error) {
	c := &fromArrow{next: nextID, used: map[int32]bool{}}
	for _, f := range s.Fields() {
		if err := c.field(f, -1, 0); err != nil {
			return nil, nil, err
		}
	}
	var md map[string][]byte
	if m := s.Metadata(); m.Len() > 0 {
		md = map[string][]byte{}
		for i, k := range m.Keys() {
			md[k] = []byte(m.Values()[i])
		}
	}
	return c.out, md, nil
}

type fromArrow struct {
	out  []*filepb.Field
	next int32
	used map[int32]bool
}

func (c *fromArrow) field(f arrow.Field, parent int32, depth int) error {
	if depth > 64 {
		return fmt.Errorf("%w: nested deeper than 64 levels", ErrUnsupportedType)
	}
	lt, err := LogicalType(f.Type)
	if err != nil {
		return fmt.Errorf("field %q: %w", f.Name, err)
	}
	id := c.next
	md := map[string][]byte{}
	for i, k := range f.Metadata.Keys() {
		v := f.Metadata.Values()[i]
		switch {
		case k == FieldIDKey:
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < 0 {
				return fmt.Errorf("field %q: bad %s %q", f.Name, FieldIDKey, v)
			}
			id = int32(n)
		case k == ArrowExtensionKey && v == "lance.json" && f.Type.ID() == arrow.LARGE_BINARY:
			lt = "json"
		default:
			md[k] = []byte(v)
		}
	}
	if c.used[id] {
		return fmt.Errorf("field %q: duplicate field id %d", f.Name, id)
	}
	c.used[id] = true
	c.next = max(c.next, id+1)
	lf := &filepb.Field{Name: f.Name, Id: id, ParentId: parent, LogicalType: lt, Nullable: f.Nullable}
	// Lance still writes the V1 per-field encoding in every manifest, and readers of older
	// datasets consult it, so we keep writing it.
	//lint:ignore SA1019 deprecated for V2 files only; Lance writes it regardless
	lf.Encoding = encodingOf(f.Type)
	if len(md) > 0 {
		lf.Metadata = md
	}
	c.out = append(c.out, lf)
	switch t := f.Type.(type) {
	case *arrow.StructType:
		for _, k := range t.Fields() {
			if err := c.field(k, id, depth+1); err != nil {
				return err
			}
		}
	case *arrow.ListType:
		return c.field(t.ElemField(), id, depth+1)
	case *arrow.LargeListType:
		return c.field(t.ElemField(), id, depth+1)
	}
	return nil
}

// ArrowSchema is the version's schema as Arrow (without field ids).
func (v *Version) ArrowSchema() (*arrow.Schema, error) {
	return ToArrowSchema(v.Fields(), v.Manifest().GetSchemaMetadata(), false)
}
