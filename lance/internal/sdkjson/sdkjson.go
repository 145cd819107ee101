// Package sdkjson encodes Arrow values as the scripts under
// scripts/lancedb encode what the LanceDB SDK returns, for tests that
// compare Go reads with SDK reads value for value.
package sdkjson

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Canonical re-encodes a JSON value read from the SDK the way Go encodes
// Value (numbers kept as written, keys sorted).
func Canonical(raw json.RawMessage) (string, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// Value encodes row i of arr the way scripts/lancedb/encode.mjs encodes
// the SDK's values (int64 as decimal strings, floats as their bits in
// hex, binary as base64), so Go and SDK reads compare exactly.
func Value(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Int8:
		return json.Number(strconv.FormatInt(int64(a.Value(i)), 10))
	case *array.Int16:
		return json.Number(strconv.FormatInt(int64(a.Value(i)), 10))
	case *array.Int32:
		return json.Number(strconv.FormatInt(int64(a.Value(i)), 10))
	case *array.Date32:
		return json.Number(strconv.FormatInt(int64(a.Value(i)), 10))
	case *array.Uint8:
		return json.Number(strconv.FormatUint(uint64(a.Value(i)), 10))
	case *array.Uint16:
		return json.Number(strconv.FormatUint(uint64(a.Value(i)), 10))
	case *array.Uint32:
		return json.Number(strconv.FormatUint(uint64(a.Value(i)), 10))
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10)
	case *array.Uint64:
		return strconv.FormatUint(a.Value(i), 10)
	case *array.Timestamp:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Time32:
		return json.Number(strconv.FormatInt(int64(a.Value(i)), 10))
	case *array.Time64:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Duration:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Date64:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Float16:
		return fmt.Sprintf("%04x", a.Value(i).Uint16())
	case *array.Float32:
		return fmt.Sprintf("%08x", math.Float32bits(a.Value(i)))
	case *array.Float64:
		return fmt.Sprintf("%016x", math.Float64bits(a.Value(i)))
	case *array.Boolean:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return base64.StdEncoding.EncodeToString(a.Value(i))
	case *array.LargeBinary:
		return base64.StdEncoding.EncodeToString(a.Value(i))
	case *array.FixedSizeBinary:
		return base64.StdEncoding.EncodeToString(a.Value(i))
	case *array.Decimal128:
		v := a.Value(i)
		x := new(big.Int).SetInt64(v.HighBits())
		x.Lsh(x, 64)
		x.Add(x, new(big.Int).SetUint64(v.LowBits()))
		return x.String()
	case *array.FixedSizeList:
		n := int(a.DataType().(*arrow.FixedSizeListType).Len())
		out := make([]any, n)
		for k := range out {
			out[k] = Value(a.ListValues(), (a.Offset()+i)*n+k)
		}
		return out
	case array.ListLike:
		s, e := a.ValueOffsets(i)
		out := make([]any, 0, e-s)
		for k := s; k < e; k++ {
			out = append(out, Value(a.ListValues(), int(k)))
		}
		return out
	case *array.Struct:
		out := map[string]any{}
		st := a.DataType().(*arrow.StructType)
		for k, f := range st.Fields() {
			out[f.Name] = Value(a.Field(k), i)
		}
		return out
	case *array.Dictionary:
		return Value(a.Dictionary(), a.GetValueIndex(i))
	}
	return fmt.Sprintf("<no JSON encoding for %s>", arr.DataType())
}
