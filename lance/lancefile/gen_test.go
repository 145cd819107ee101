package lancefile

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Random Arrow data of every type the writer handles, for round trips
// through our reader and through the SDK.

func nf(name string, dt arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: dt, Nullable: true}
}

// AllTypesSchema is a schema with one column per supported type and shape.
func AllTypesSchema() *arrow.Schema {
	f32 := arrow.PrimitiveTypes.Float32
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		nf("i8", arrow.PrimitiveTypes.Int8),
		nf("i16", arrow.PrimitiveTypes.Int16),
		nf("i32", arrow.PrimitiveTypes.Int32),
		nf("i64", arrow.PrimitiveTypes.Int64),
		nf("u8", arrow.PrimitiveTypes.Uint8),
		nf("u16", arrow.PrimitiveTypes.Uint16),
		nf("u32", arrow.PrimitiveTypes.Uint32),
		nf("u64", arrow.PrimitiveTypes.Uint64),
		nf("f16", arrow.FixedWidthTypes.Float16),
		nf("f32", f32),
		nf("f64", arrow.PrimitiveTypes.Float64),
		nf("b", arrow.FixedWidthTypes.Boolean),
		nf("s", arrow.BinaryTypes.String),
		nf("ls", arrow.BinaryTypes.LargeString),
		nf("bin", arrow.BinaryTypes.Binary),
		nf("lbin", arrow.BinaryTypes.LargeBinary),
		nf("long_s", arrow.BinaryTypes.String),
		nf("v8", arrow.FixedSizeListOf(8, f32)),
		nf("v128", arrow.FixedSizeListOf(128, f32)),
		nf("li", arrow.ListOf(arrow.PrimitiveTypes.Int32)),
		nf("lls", arrow.LargeListOf(arrow.BinaryTypes.String)),
		nf("st", arrow.StructOf(nf("a", arrow.PrimitiveTypes.Int32), nf("c", arrow.BinaryTypes.String))),
		nf("lst", arrow.ListOf(arrow.StructOf(nf("x", arrow.PrimitiveTypes.Int32), nf("y", arrow.BinaryTypes.String)))),
		nf("stl", arrow.StructOf(nf("l", arrow.ListOf(arrow.PrimitiveTypes.Float64)))),
		nf("ll", arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int32))),
		nf("lv", arrow.ListOf(arrow.FixedSizeListOf(4, f32))),
		nf("d32", arrow.FixedWidthTypes.Date32),
		nf("ts", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}),
		nf("ts_naive", &arrow.TimestampType{Unit: arrow.Microsecond}),
		nf("dec", &arrow.Decimal128Type{Precision: 30, Scale: 4}),
		nf("dict", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}),
		nf("allnull", arrow.PrimitiveTypes.Int32),
		{Name: "const", Type: arrow.PrimitiveTypes.Int32},
		{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
}

// RandomRecord builds rows [start, start+n) of schema; nullP is the null
// probability of every nullable value (column "allnull" is always null).
func RandomRecord(mem memory.Allocator, schema *arrow.Schema, seed uint64, start, n int, nullP float64) arrow.RecordBatch {
	r := rand.New(rand.NewPCG(seed, 7))
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i, f := range schema.Fields() {
		fb := b.Field(i)
		for row := start; row < start+n; row++ {
			switch f.Name {
			case "id", "seq":
				fb.(*array.Int64Builder).Append(int64(row))
				continue
			case "const":
				fb.(*array.Int32Builder).Append(42)
				continue
			case "allnull":
				fb.AppendNull()
				continue
			}
			g := gen{r: r, nullP: nullP, name: f.Name, row: row}
			g.value(fb, f.Type, f.Nullable)
		}
	}
	return b.NewRecordBatch()
}

type gen struct {
	r     *rand.Rand
	nullP float64
	name  string
	row   int
}

func (g gen) str(lo, hi int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_äöüß€😀"
	rs := []rune(alphabet)
	n := lo + g.r.IntN(hi-lo+1)
	out := make([]rune, n)
	for i := range out {
		out[i] = rs[g.r.IntN(len(rs))]
	}
	return string(out)
}

func (g gen) bytes(lo, hi int) []byte {
	n := lo + g.r.IntN(hi-lo+1)
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(g.r.Uint32())
	}
	return out
}

var f32Edges = []float32{0, float32(math.Copysign(0, -1)), 1, -1, math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}

func (g gen) value(b array.Builder, dt arrow.DataType, nullable bool) {
	if nullable && g.r.Float64() < g.nullP {
		b.AppendNull()
		return
	}
	r := g.r
	switch t := dt.(type) {
	case *arrow.Int8Type:
		b.(*array.Int8Builder).Append(int8(r.Uint32()))
	case *arrow.Int16Type:
		b.(*array.Int16Builder).Append(int16(r.Uint32()))
	case *arrow.Int32Type:
		b.(*array.Int32Builder).Append(int32(r.IntN(2_000_001)) - 1_000_000)
	case *arrow.Int64Type:
		switch g.row % 97 {
		case 0:
			b.(*array.Int64Builder).Append(math.MinInt64)
		case 1:
			b.(*array.Int64Builder).Append(math.MaxInt64)
		default:
			b.(*array.Int64Builder).Append(r.Int64N(2e12) - 1e12)
		}
	case *arrow.Uint8Type:
		b.(*array.Uint8Builder).Append(uint8(r.Uint32()))
	case *arrow.Uint16Type:
		b.(*array.Uint16Builder).Append(uint16(r.Uint32()))
	case *arrow.Uint32Type:
		b.(*array.Uint32Builder).Append(r.Uint32())
	case *arrow.Uint64Type:
		if g.row%50 == 1 {
			b.(*array.Uint64Builder).Append(math.MaxUint64)
		} else {
			b.(*array.Uint64Builder).Append(r.Uint64N(1e15))
		}
	case *arrow.Float16Type:
		b.(*array.Float16Builder).Append(float16.New((r.Float32() - 0.5) * 100))
	case *arrow.Float32Type:
		if g.name == "f32" && g.row < len(f32Edges) {
			b.(*array.Float32Builder).Append(f32Edges[g.row])
		} else {
			b.(*array.Float32Builder).Append((r.Float32() - 0.5) * 2000)
		}
	case *arrow.Float64Type:
		b.(*array.Float64Builder).Append((r.Float64() - 0.5) * 1e9)
	case *arrow.BooleanType:
		b.(*array.BooleanBuilder).Append(r.IntN(2) == 1)
	case *arrow.StringType:
		switch g.name {
		case "long_s":
			b.(*array.StringBuilder).Append(g.str(250, 600))
		default:
			b.(*array.StringBuilder).Append(g.str(0, 30))
		}
	case *arrow.LargeStringType:
		b.(*array.LargeStringBuilder).Append(g.str(0, 60))
	case *arrow.BinaryType:
		b.(*array.BinaryBuilder).Append(g.bytes(0, 12))
	case *arrow.LargeBinaryType:
		if g.name == "huge" {
			if g.row%3 == 1 {
				b.(*array.BinaryBuilder).Append(g.bytes(0, 10))
			} else {
				// Compressible large values.
				v := make([]byte, 33*1024+r.IntN(20*1024))
				for i := range v {
					v[i] = "lance catalog "[(i+g.row)%14]
				}
				b.(*array.BinaryBuilder).Append(v)
			}
			return
		}
		b.(*array.BinaryBuilder).Append(g.bytes(0, 30))
	case *arrow.Date32Type:
		b.(*array.Date32Builder).Append(arrow.Date32(r.IntN(60001) - 30000))
	case *arrow.TimestampType:
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(r.Int64N(1e16)))
	case *arrow.Decimal128Type:
		b.(*array.Decimal128Builder).Append(decimal128.New(r.Int64N(1e6)-5e5, r.Uint64()))
	case *arrow.DictionaryType:
		cats := []string{"alpha", "beta", "gamma", "delta"}
		if err := b.(*array.BinaryDictionaryBuilder).AppendString(cats[r.IntN(len(cats))]); err != nil {
			panic(err)
		}
	case *arrow.FixedSizeListType:
		lb := b.(*array.FixedSizeListBuilder)
		lb.Append(true)
		vb := lb.ValueBuilder().(*array.Float32Builder)
		for k := 0; k < int(t.Len()); k++ {
			if r.Float64() < g.nullP/3 {
				vb.AppendNull()
			} else {
				vb.Append((r.Float32() - 0.5) * 2)
			}
		}
	case *arrow.ListType:
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		for k := r.IntN(5); k > 0; k-- {
			g.value(lb.ValueBuilder(), t.Elem(), t.ElemField().Nullable)
		}
	case *arrow.LargeListType:
		lb := b.(*array.LargeListBuilder)
		lb.Append(true)
		for k := r.IntN(4); k > 0; k-- {
			g.value(lb.ValueBuilder(), t.Elem(), t.ElemField().Nullable)
		}
	case *arrow.StructType:
		sb := b.(*array.StructBuilder)
		sb.Append(true)
		for k, f := range t.Fields() {
			g.value(sb.FieldBuilder(k), f.Type, f.Nullable)
		}
	default:
		panic(fmt.Sprintf("no generator for %s", dt))
	}
}
