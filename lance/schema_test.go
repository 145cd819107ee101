package lance

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/proto"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/lance/pb/filepb"
)

func TestLogicalTypes(t *testing.T) {
	tests := []struct {
		lt string
		dt arrow.DataType
	}{
		{"null", arrow.Null},
		{"bool", arrow.FixedWidthTypes.Boolean},
		{"int8", arrow.PrimitiveTypes.Int8},
		{"uint64", arrow.PrimitiveTypes.Uint64},
		{"halffloat", arrow.FixedWidthTypes.Float16},
		{"float", arrow.PrimitiveTypes.Float32},
		{"double", arrow.PrimitiveTypes.Float64},
		{"string", arrow.BinaryTypes.String},
		{"large_string", arrow.BinaryTypes.LargeString},
		{"binary", arrow.BinaryTypes.Binary},
		{"large_binary", arrow.BinaryTypes.LargeBinary},
		{"date32:day", arrow.FixedWidthTypes.Date32},
		{"date64:ms", arrow.FixedWidthTypes.Date64},
		{"time32:ms", arrow.FixedWidthTypes.Time32ms},
		{"time64:ns", arrow.FixedWidthTypes.Time64ns},
		{"duration:s", arrow.FixedWidthTypes.Duration_s},
		{"timestamp:us:UTC", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{"timestamp:ns:-", &arrow.TimestampType{Unit: arrow.Nanosecond}},
		{"timestamp:s:+05:30", &arrow.TimestampType{Unit: arrow.Second, TimeZone: "+05:30"}},
		{"decimal:128:10:2", &arrow.Decimal128Type{Precision: 10, Scale: 2}},
		{"decimal:256:50:5", &arrow.Decimal256Type{Precision: 50, Scale: 5}},
		{"fixed_size_binary:16", &arrow.FixedSizeBinaryType{ByteWidth: 16}},
		{"fixed_size_list:float:8", arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32)},
		{"fixed_size_list:timestamp:us:UTC:2", arrow.FixedSizeListOf(2, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})},
		{"dict:string:int32:false", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}},
	}
	for _, tt := range tests {
		t.Run(tt.lt, func(t *testing.T) {
			dt, err := ParseLogicalType(tt.lt)
			assert.NilError(t, err)
			assert.Check(t, arrow.TypeEqual(dt, tt.dt), "got %s", dt)
			back, err := LogicalType(tt.dt)
			assert.NilError(t, err)
			assert.Equal(t, back, tt.lt)
		})
	}
	for _, bad := range []string{"", "int128", "time32:us", "timestamp:xs:UTC", "decimal:128:x:1", "decimal:128:40:1", "fixed_size_list:float", "dict:string:float:false", "list"} {
		_, err := ParseLogicalType(bad)
		assert.Check(t, errors.Is(err, ErrUnsupportedType), bad)
	}
}

// sdkFields is the schema the SDK fixtures use, as Lance 8.0 stored it.
func sdkFields() []*filepb.Field {
	return []*filepb.Field{
		{Name: "id", Id: 0, ParentId: -1, LogicalType: "int64", Encoding: filepb.Encoding_PLAIN},
		{Name: "name", Id: 1, ParentId: -1, LogicalType: "string", Nullable: true, Encoding: filepb.Encoding_VAR_BINARY,
			Metadata: map[string][]byte{"lance-encoding:compression": []byte("zstd")}},
		{Name: "vec", Id: 2, ParentId: -1, LogicalType: "fixed_size_list:float:4", Nullable: true, Encoding: filepb.Encoding_PLAIN},
		{Name: "tags", Id: 3, ParentId: -1, LogicalType: "list", Nullable: true, Encoding: filepb.Encoding_PLAIN},
		{Name: "item", Id: 4, ParentId: 3, LogicalType: "string", Nullable: true, Encoding: filepb.Encoding_VAR_BINARY},
		{Name: "st", Id: 5, ParentId: -1, LogicalType: "struct", Nullable: true},
		{Name: "a", Id: 6, ParentId: 5, LogicalType: "int32", Nullable: true, Encoding: filepb.Encoding_PLAIN},
		{Name: "pts", Id: 7, ParentId: 5, LogicalType: "large_list.struct", Nullable: true, Encoding: filepb.Encoding_PLAIN},
		{Name: "item", Id: 8, ParentId: 7, LogicalType: "struct", Nullable: true},
		{Name: "x", Id: 9, ParentId: 8, LogicalType: "double", Nullable: false, Encoding: filepb.Encoding_PLAIN},
		{Name: "ts", Id: 10, ParentId: -1, LogicalType: "timestamp:us:UTC", Nullable: true, Encoding: filepb.Encoding_PLAIN},
		{Name: "cat", Id: 11, ParentId: -1, LogicalType: "dict:string:int32:false", Nullable: true, Encoding: filepb.Encoding_DICTIONARY},
		{Name: "amount", Id: 12, ParentId: -1, LogicalType: "decimal:128:12:3", Nullable: true, Encoding: filepb.Encoding_PLAIN},
	}
}

func TestSchemaRoundTrip(t *testing.T) {
	fields := sdkFields()
	md := map[string][]byte{"owner": []byte("me")}
	s, err := ToArrowSchema(fields, md, true)
	assert.NilError(t, err)
	assert.Equal(t, len(s.Fields()), 8)
	st := s.Field(4).Type.(*arrow.StructType)
	pts := st.Field(1).Type.(*arrow.LargeListType)
	assert.Equal(t, pts.Elem().(*arrow.StructType).Field(0).Nullable, false)
	v, _ := s.Field(1).Metadata.GetValue("lance-encoding:compression")
	assert.Equal(t, v, "zstd")

	back, backMD, err := FromArrowSchema(s, 0)
	assert.NilError(t, err)
	assert.DeepEqual(t, backMD, md)
	assert.Equal(t, len(back), len(fields))
	for i := range fields {
		assert.Check(t, proto.Equal(back[i], fields[i]), "field %d: got %v want %v", i, back[i], fields[i])
	}

	// Without ids, new ids are assigned in pre-order from the given start.
	plain, err := ToArrowSchema(fields, nil, false)
	assert.NilError(t, err)
	fresh, _, err := FromArrowSchema(plain, 20)
	assert.NilError(t, err)
	for i, f := range fresh {
		assert.Equal(t, f.GetId(), int32(20+i))
		assert.Equal(t, f.GetParentId() < 0, fields[i].GetParentId() < 0)
	}
}

func TestJSONSchema(t *testing.T) {
	s, err := ToArrowSchema(sdkFields(), map[string][]byte{"k": []byte("v")}, false)
	assert.NilError(t, err)
	js, err := ToJSONSchema(s)
	assert.NilError(t, err)
	raw, err := json.Marshal(js)
	assert.NilError(t, err)
	want := `{"fields":[` +
		`{"name":"id","type":{"type":"int64"},"nullable":false},` +
		`{"name":"name","type":{"type":"utf8"},"nullable":true,"metadata":{"lance-encoding:compression":"zstd"}},` +
		`{"name":"vec","type":{"type":"fixed_size_list","fields":[{"name":"item","type":{"type":"float32"},"nullable":true}],"length":4},"nullable":true},` +
		`{"name":"tags","type":{"type":"list","fields":[{"name":"item","type":{"type":"utf8"},"nullable":true}]},"nullable":true},` +
		`{"name":"st","type":{"type":"struct","fields":[{"name":"a","type":{"type":"int32"},"nullable":true},` +
		`{"name":"pts","type":{"type":"large_list","fields":[{"name":"item","type":{"type":"struct","fields":[{"name":"x","type":{"type":"float64"},"nullable":false}]},"nullable":true}]},"nullable":true}]},"nullable":true},` +
		// Lance's logical type string: the unit and zone survive (a bare "timestamp" lost them).
		`{"name":"ts","type":{"type":"timestamp:us:UTC"},"nullable":true},` +
		`{"name":"cat","type":{"type":"utf8"},"nullable":true},` +
		`{"name":"amount","type":{"type":"decimal128","length":12003},"nullable":true}` +
		`],"metadata":{"k":"v"}}`
	assert.Equal(t, string(raw), want)

	back, err := FromJSONSchema(js)
	assert.NilError(t, err)
	assert.Equal(t, len(back.Fields()), 8)
	assert.Check(t, arrow.TypeEqual(back.Field(2).Type, arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32)))
	assert.Check(t, arrow.TypeEqual(back.Field(7).Type, &arrow.Decimal128Type{Precision: 12, Scale: 3}))
	assert.Check(t, arrow.TypeEqual(back.Field(5).Type, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}))

	// Lance logical names are accepted too, losslessly.
	var alt JSONSchema
	assert.NilError(t, json.Unmarshal([]byte(`{"fields":[
		{"name":"s","type":{"type":"string"},"nullable":true},
		{"name":"d","type":{"type":"double"},"nullable":false},
		{"name":"t","type":{"type":"timestamp:ns:UTC"},"nullable":true},
		{"name":"v","type":{"type":"fixed_size_list:float:16"},"nullable":true}]}`), &alt))
	as, err := FromJSONSchema(alt)
	assert.NilError(t, err)
	assert.Check(t, arrow.TypeEqual(as.Field(0).Type, arrow.BinaryTypes.String))
	assert.Check(t, arrow.TypeEqual(as.Field(1).Type, arrow.PrimitiveTypes.Float64))
	assert.Check(t, arrow.TypeEqual(as.Field(2).Type, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}))
	assert.Check(t, arrow.TypeEqual(as.Field(3).Type, arrow.FixedSizeListOf(16, arrow.PrimitiveTypes.Float32)))

	_, err = FromJSONSchema(JSONSchema{Fields: []JSONField{{Name: "x", Type: JSONDataType{Type: "map"}}}})
	assert.Check(t, errors.Is(err, ErrUnsupportedType))
}
