package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
)

var (
	tBool    = arrow.FixedWidthTypes.Boolean
	tInt32   = arrow.PrimitiveTypes.Int32
	tFloat64 = arrow.PrimitiveTypes.Float64
	tUtf8    = arrow.BinaryTypes.String
	tNull    = arrow.Null
	tDate32  = arrow.FixedWidthTypes.Date32
)

func isInt(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

func isSigned(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return true
	}
	return false
}

func isFloat(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

func isDecimal(t arrow.DataType) bool {
	return t.ID() == arrow.DECIMAL128 || t.ID() == arrow.DECIMAL256
}

func isNumeric(t arrow.DataType) bool { return isInt(t) || isFloat(t) || isDecimal(t) }

func isString(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return true
	}
	return false
}

func isTemporal(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		return true
	}
	return false
}

func isList(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST:
		return true
	}
	return false
}

func bitWidth(t arrow.DataType) int {
	if fw, ok := t.(arrow.FixedWidthDataType); ok {
		return fw.BitWidth()
	}
	return 0
}

func intType(bits int, signed bool) arrow.DataType {
	switch {
	case signed && bits <= 8:
		return arrow.PrimitiveTypes.Int8
	case signed && bits <= 16:
		return arrow.PrimitiveTypes.Int16
	case signed && bits <= 32:
		return arrow.PrimitiveTypes.Int32
	case signed:
		return arrow.PrimitiveTypes.Int64
	case bits <= 8:
		return arrow.PrimitiveTypes.Uint8
	case bits <= 16:
		return arrow.PrimitiveTypes.Uint16
	case bits <= 32:
		return arrow.PrimitiveTypes.Uint32
	}
	return arrow.PrimitiveTypes.Uint64
}

// numericCommon is the type two numeric operands are brought to, after DataFusion's numeric coercion:
// any float64 (or decimal, evaluated here in float64) gives float64, else any float32 gives float32,
// else the narrowest integer holding both (a signed and an unsigned mix widens to signed).
func numericCommon(a, b arrow.DataType) arrow.DataType {
	switch {
	case arrow.TypeEqual(a, b):
		if isDecimal(a) {
			return tFloat64
		}
		return a
	case a.ID() == arrow.FLOAT64 || b.ID() == arrow.FLOAT64 || isDecimal(a) || isDecimal(b):
		return tFloat64
	case isFloat(a) || isFloat(b):
		return arrow.PrimitiveTypes.Float32
	}
	wa, wb := bitWidth(a), bitWidth(b)
	sa, sb := isSigned(a), isSigned(b)
	if sa == sb {
		return intType(max(wa, wb), sa)
	}
	if !sa {
		wa *= 2
	}
	if !sb {
		wb *= 2
	}
	return intType(max(wa, wb), true)
}

// commonType is the type both sides of a comparison (or the arms of CASE, the arguments of coalesce)
// are cast to; ok is false when the two cannot be compared.
func commonType(a, b arrow.DataType) (arrow.DataType, bool) {
	switch {
	case a.ID() == arrow.NULL:
		return b, true
	case b.ID() == arrow.NULL:
		return a, true
	case arrow.TypeEqual(a, b):
		return a, true
	case isNumeric(a) && isNumeric(b):
		return numericCommon(a, b), true
	case isString(a) && isString(b):
		return tUtf8, true
	case isTemporal(a) && isTemporal(b):
		if a.ID() == arrow.TIMESTAMP {
			return a, true
		}
		if b.ID() == arrow.TIMESTAMP {
			return b, true
		}
		return tDate32, true
	case a.ID() == arrow.BOOL && b.ID() == arrow.BOOL:
		return tBool, true
	}
	return nil, false
}
