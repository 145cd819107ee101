package lance

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// JSONSchema is the Lance Namespace spec's JsonArrowSchema, as describe_table
// returns it.
type JSONSchema struct {
	Fields   []JSONField       `json:"fields"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// JSONField is the spec's JsonArrowField.
type JSONField struct {
	Name     string            `json:"name"`
	Type     JSONDataType      `json:"type"`
	Nullable bool              `json:"nullable"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// JSONDataType is the spec's JsonArrowDataType: a type name, child fields
// for nested types and a length for fixed-size ones.
type JSONDataType struct {
	Type   string      `json:"type"`
	Fields []JSONField `json:"fields,omitempty"`
	Length *int64      `json:"length,omitempty"`
}

// ToJSONSchema renders an Arrow schema in the spec's JSON form, with the
// type names of Lance's own converter (lance-namespace schema.rs): utf8,
// float64, fixed_size_list with length, decimal128 with length = p·1000+s,
// a dictionary as its value type. It is lossy where that converter is
// (timestamp and time units and zones are not spelled out).
func ToJSONSchema(s *arrow.Schema) (JSONSchema, error) {
	out := JSONSchema{Fields: []JSONField{}}
	for _, f := range s.Fields() {
		jf, err := jsonField(f)
		if err != nil {
			return JSONSchema{}, err
		}
		out.Fields = append(out.Fields, jf)
	}
	out.Metadata = metadataMap(s.Metadata())
	return out, nil
}

func metadataMap(m arrow.Metadata) map[string]string {
	if m.Len() == 0 {
		return nil
	}
	out := map[string]string{}
	for i, k := range m.Keys() {
		out[k] = m.Values()[i]
	}
	return out
}

func jsonField(f arrow.Field) (JSONField, error) {
	t, err := jsonType(f.Type)
	if err != nil {
		return JSONField{}, fmt.Errorf("field %q: %w", f.Name, err)
	}
	md := metadataMap(f.Metadata)
	delete(md, FieldIDKey)
	if len(md) == 0 {
		md = nil
	}
	return JSONField{Name: f.Name, Type: t, Nullable: f.Nullable, Metadata: md}, nil
}

func length(n int64) *int64 { return &n }

var jsonSimple = map[arrow.Type]string{
	arrow.NULL: "null", arrow.BOOL: "bool",
	arrow.INT8: "int8", arrow.INT16: "int16", arrow.INT32: "int32", arrow.INT64: "int64",
	arrow.UINT8: "uint8", arrow.UINT16: "uint16", arrow.UINT32: "uint32", arrow.UINT64: "uint64",
	arrow.FLOAT16: "float16", arrow.FLOAT32: "float32", arrow.FLOAT64: "float64",
	arrow.DATE32: "date32", arrow.DATE64: "date64",
	arrow.STRING: "utf8", arrow.LARGE_STRING: "large_utf8", arrow.BINARY: "binary", arrow.LARGE_BINARY: "large_binary",
}

func jsonType(dt arrow.DataType) (JSONDataType, error) {
	if name, ok := jsonSimple[dt.ID()]; ok {
		return JSONDataType{Type: name}, nil
	}
	switch t := dt.(type) {
	case *arrow.Decimal128Type:
		return JSONDataType{Type: "decimal128", Length: length(int64(t.Precision)*1000 + int64(t.Scale))}, nil
	case *arrow.Decimal256Type:
		return JSONDataType{Type: "decimal256", Length: length(int64(t.Precision)*1000 + int64(t.Scale))}, nil
	case *arrow.FixedSizeBinaryType:
		return JSONDataType{Type: "fixed_size_binary", Length: length(int64(t.ByteWidth))}, nil
	case *arrow.ListType:
		item, err := jsonField(t.ElemField())
		return JSONDataType{Type: "list", Fields: []JSONField{item}}, err
	case *arrow.LargeListType:
		item, err := jsonField(t.ElemField())
		return JSONDataType{Type: "large_list", Fields: []JSONField{item}}, err
	case *arrow.FixedSizeListType:
		item, err := jsonField(t.ElemField())
		return JSONDataType{Type: "fixed_size_list", Fields: []JSONField{item}, Length: length(int64(t.Len()))}, err
	case *arrow.StructType:
		out := JSONDataType{Type: "struct", Fields: []JSONField{}}
		for _, f := range t.Fields() {
			jf, err := jsonField(f)
			if err != nil {
				return JSONDataType{}, err
			}
			out.Fields = append(out.Fields, jf)
		}
		return out, nil
	case *arrow.DictionaryType:
		return jsonType(t.ValueType)
	case *arrow.TimestampType, *arrow.Time32Type, *arrow.Time64Type, *arrow.DurationType:
		// Lance's logical type string keeps the unit and the zone (timestamp:us:UTC), which a
		// bare "timestamp" loses; Lance's own JSON form (arrow/json.rs) writes these so.
		lt, err := LogicalType(dt)
		return JSONDataType{Type: lt}, err
	}
	return JSONDataType{}, fmt.Errorf("%w: %s", ErrUnsupportedType, dt)
}

// jsonSimpleTypes are the parameterless JSON names; the lossy ones get
// Arrow's usual defaults.
var jsonSimpleTypes = map[string]arrow.DataType{
	"null": arrow.Null, "bool": arrow.FixedWidthTypes.Boolean,
	"int8": arrow.PrimitiveTypes.Int8, "int16": arrow.PrimitiveTypes.Int16, "int32": arrow.PrimitiveTypes.Int32, "int64": arrow.PrimitiveTypes.Int64,
	"uint8": arrow.PrimitiveTypes.Uint8, "uint16": arrow.PrimitiveTypes.Uint16, "uint32": arrow.PrimitiveTypes.Uint32, "uint64": arrow.PrimitiveTypes.Uint64,
	"float16": arrow.FixedWidthTypes.Float16, "float32": arrow.PrimitiveTypes.Float32, "float64": arrow.PrimitiveTypes.Float64,
	"date32": arrow.FixedWidthTypes.Date32, "date64": arrow.FixedWidthTypes.Date64,
	"time32": arrow.FixedWidthTypes.Time32ms, "time64": arrow.FixedWidthTypes.Time64us,
	"timestamp": &arrow.TimestampType{Unit: arrow.Microsecond}, "duration": arrow.FixedWidthTypes.Duration_us,
	"utf8": arrow.BinaryTypes.String, "large_utf8": arrow.BinaryTypes.LargeString,
	"binary": arrow.BinaryTypes.Binary, "large_binary": arrow.BinaryTypes.LargeBinary,
}

// jsonAliases maps the other spellings clients send (Lance logical type
// names, Arrow's long names) to ours.
var jsonAliases = map[string]string{
	"boolean": "bool", "string": "utf8", "large_string": "large_utf8",
	"halffloat": "float16", "float": "float32", "double": "float64",
	"date32:day": "date32", "date64:ms": "date64",
}

// FromJSONSchema parses the spec's JSON form back to Arrow. It accepts
// what ToJSONSchema writes, the Lance logical type names ("string",
// "double", "timestamp:us:UTC", "fixed_size_list:float:8", …), and, for
// the lossy names, picks Arrow's usual defaults (timestamp → microseconds
// without zone, time32 → ms, time64 → us, duration → us).
func FromJSONSchema(js JSONSchema) (*arrow.Schema, error) {
	var fields []arrow.Field
	for _, jf := range js.Fields {
		f, err := fromJSONField(jf, 0)
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	var md *arrow.Metadata
	if len(js.Metadata) > 0 {
		keys := slices.Sorted(maps.Keys(js.Metadata))
		vals := make([]string, len(keys))
		for i, k := range keys {
			vals[i] = js.Metadata[k]
		}
		m := arrow.NewMetadata(keys, vals)
		md = &m
	}
	return arrow.NewSchema(fields, md), nil
}

func fromJSONField(jf JSONField, depth int) (arrow.Field, error) {
	if depth > 64 {
		return arrow.Field{}, fmt.Errorf("%w: nested deeper than 64 levels", ErrUnsupportedType)
	}
	dt, err := fromJSONType(jf.Type, depth)
	if err != nil {
		return arrow.Field{}, fmt.Errorf("field %q: %w", jf.Name, err)
	}
	return arrow.Field{Name: jf.Name, Type: dt, Nullable: jf.Nullable, Metadata: metadataOf(jf.Metadata)}, nil
}

func fromJSONType(jt JSONDataType, depth int) (arrow.DataType, error) {
	name := strings.ToLower(jt.Type)
	if a, ok := jsonAliases[name]; ok {
		name = a
	}
	if dt, ok := jsonSimpleTypes[name]; ok {
		return dt, nil
	}
	need := func() (int64, error) {
		if jt.Length == nil || *jt.Length < 0 {
			return 0, fmt.Errorf("%w: %s needs a length", ErrUnsupportedType, name)
		}
		return *jt.Length, nil
	}
	items := func() (arrow.Field, error) {
		if len(jt.Fields) != 1 {
			return arrow.Field{}, fmt.Errorf("%w: %s needs one item field", ErrUnsupportedType, name)
		}
		return fromJSONField(jt.Fields[0], depth+1)
	}
	switch name {
	case "decimal128", "decimal256", "decimal":
		n, err := need()
		if err != nil {
			return nil, err
		}
		p, s := n/1000, n%1000
		if name == "decimal256" || p > 38 {
			return ParseLogicalType(fmt.Sprintf("decimal:256:%d:%d", p, s))
		}
		return ParseLogicalType(fmt.Sprintf("decimal:128:%d:%d", p, s))
	case "fixed_size_binary":
		n, err := need()
		if err != nil {
			return nil, err
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: int(n)}, nil
	case "list", "large_list":
		item, err := items()
		if err != nil {
			return nil, err
		}
		if name == "list" {
			return arrow.ListOfField(item), nil
		}
		return arrow.LargeListOfField(item), nil
	case "fixed_size_list":
		n, err := need()
		if err != nil {
			return nil, err
		}
		item, err := items()
		if err != nil {
			return nil, err
		}
		return arrow.FixedSizeListOfField(int32(n), item), nil
	case "struct":
		var fs []arrow.Field
		for _, jf := range jt.Fields {
			f, err := fromJSONField(jf, depth+1)
			if err != nil {
				return nil, err
			}
			fs = append(fs, f)
		}
		return arrow.StructOf(fs...), nil
	}
	// Lance logical type strings carry everything (units, zones, sizes).
	return ParseLogicalType(jt.Type)
}

// JSONSchema is the version's schema in the spec's JSON form.
func (v *Version) JSONSchema() (JSONSchema, error) {
	s, err := v.ArrowSchema()
	if err != nil {
		return JSONSchema{}, err
	}
	return ToJSONSchema(s)
}
