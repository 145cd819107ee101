package lancefile

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancecat/lancecat/lance/pb/filepb"
)

// The Lance logical type strings (lance-core's datatypes) of leaf fields, both ways. The file
// reader and writer and the table layer's schemas share them, so a type one can store the other
// can read.

// ArrowExtensionKey is Arrow's extension-type metadata key.
const ArrowExtensionKey = "ARROW:extension:name"

// ErrUnsupportedType is a type Lance cannot store (or we cannot map); it is also ErrUnsupported.
var ErrUnsupportedType error = unsupportedType{}

type unsupportedType struct{}

func (unsupportedType) Error() string        { return "lance: unsupported type" }
func (unsupportedType) Is(target error) bool { return target == ErrUnsupported }

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

// LegacyEncoding is the per-field encoding hint Lance still records.
func LegacyEncoding(dt arrow.DataType) filepb.Encoding {
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
