package index

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// The value types a scalar index accepts: those whose order Lance's
// OrderableScalarValue defines and that lancecat can compare.
func supportedValueType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.LARGE_STRING,
		arrow.BINARY, arrow.LARGE_BINARY, arrow.DATE32, arrow.DATE64,
		arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64:
		return true
	}
	return false
}

// valueAt is element i of a as a comparable Go value (nil for null):
// int64, uint64, float64, string or bool.
func valueAt(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Uint8:
		return uint64(a.Value(i))
	case *array.Uint16:
		return uint64(a.Value(i))
	case *array.Uint32:
		return uint64(a.Value(i))
	case *array.Uint64:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return string(a.Value(i))
	case *array.LargeBinary:
		return string(a.Value(i))
	case *array.Date32:
		return int64(a.Value(i))
	case *array.Date64:
		return int64(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	case *array.Time32:
		return int64(a.Value(i))
	case *array.Time64:
		return int64(a.Value(i))
	}
	return nil
}

// normalize maps a predicate value to the form valueAt returns.
func normalize(v any) (any, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case bool, int64, uint64, float64, string:
		return v, nil
	case int:
		return int64(v), nil
	case int8:
		return int64(v), nil
	case int16:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case uint:
		return uint64(v), nil
	case uint8:
		return uint64(v), nil
	case uint16:
		return uint64(v), nil
	case uint32:
		return uint64(v), nil
	case float32:
		return float64(v), nil
	case []byte:
		return string(v), nil
	}
	return nil, fmt.Errorf("%w: predicate value of type %T", ErrUnsupported, v)
}

// compareValues orders two non-null normalized values; numbers of
// different kinds compare by value. ok is false for incomparable kinds.
func compareValues(a, b any) (c int, ok bool) {
	switch a := a.(type) {
	case int64:
		switch b := b.(type) {
		case int64:
			return cmp.Compare(a, b), true
		case uint64:
			if a < 0 || b > math.MaxInt64 {
				return -1, true
			}
			return cmp.Compare(a, int64(b)), true
		case float64:
			return cmpFloat(float64(a), b), true
		}
	case uint64:
		switch b := b.(type) {
		case uint64:
			return cmp.Compare(a, b), true
		case int64:
			c, ok := compareValues(b, a)
			return -c, ok
		case float64:
			return cmpFloat(float64(a), b), true
		}
	case float64:
		switch b := b.(type) {
		case float64:
			return cmpFloat(a, b), true
		case int64:
			return cmpFloat(a, float64(b)), true
		case uint64:
			return cmpFloat(a, float64(b)), true
		}
	case string:
		if b, isStr := b.(string); isStr {
			return strings.Compare(a, b), true
		}
	case bool:
		if b, isBool := b.(bool); isBool {
			switch {
			case a == b:
				return 0, true
			case !a:
				return -1, true
			}
			return 1, true
		}
	}
	return 0, false
}

// cmpFloat orders floats as Lance's index files do (Rust's total order for
// positive NaN): NaN above every number, NaNs equal.
func cmpFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

// matcher tests single values against a predicate (not IsNull).
type matcher struct {
	p      Predicate
	values []any
	lo, hi *Bound
}

func newMatcher(p Predicate) (*matcher, error) {
	m := &matcher{p: p}
	for _, v := range p.Values {
		n, err := normalize(v)
		if err != nil {
			return nil, err
		}
		m.values = append(m.values, n)
	}
	for _, b := range []**Bound{&p.Lower, &p.Upper} {
		if *b == nil {
			continue
		}
		n, err := normalize((*b).Value)
		if err != nil {
			return nil, err
		}
		nb := &Bound{Value: n, Inclusive: (*b).Inclusive}
		if b == &p.Lower {
			m.lo = nb
		} else {
			m.hi = nb
		}
	}
	switch p.Op {
	case Equals:
		if len(m.values) != 1 {
			return nil, fmt.Errorf("%w: equality with %d values", ErrUnsupported, len(m.values))
		}
	case Range, IsIn, IsNull, HasAny, HasAll:
	default:
		return nil, fmt.Errorf("%w: predicate op %d", ErrUnsupported, p.Op)
	}
	return m, nil
}

// match: does the non-null value v satisfy the predicate?
func (m *matcher) match(v any) bool {
	if v == nil {
		return false
	}
	switch m.p.Op {
	case Equals, IsIn, HasAny, HasAll:
		for _, w := range m.values {
			if c, ok := compareValues(v, w); ok && c == 0 {
				return true
			}
		}
		return false
	case Range:
		return m.inRange(v)
	}
	return false
}

func (m *matcher) inRange(v any) bool {
	if m.lo != nil {
		if m.lo.Value == nil {
			return false
		}
		c, ok := compareValues(v, m.lo.Value)
		if !ok || c < 0 || (c == 0 && !m.lo.Inclusive) {
			return false
		}
	}
	if m.hi != nil {
		if m.hi.Value == nil {
			return false
		}
		c, ok := compareValues(v, m.hi.Value)
		if !ok || c > 0 || (c == 0 && !m.hi.Inclusive) {
			return false
		}
	}
	return true
}

// overlaps: may a page whose non-null values lie in [lo, hi] hold a
// match? (lo, hi non-null.)
func (m *matcher) overlaps(lo, hi any) bool {
	within := func(v any) bool {
		c1, ok1 := compareValues(v, lo)
		c2, ok2 := compareValues(v, hi)
		return !ok1 || !ok2 || (c1 >= 0 && c2 <= 0)
	}
	switch m.p.Op {
	case Equals, IsIn, HasAny, HasAll:
		for _, w := range m.values {
			if w != nil && within(w) {
				return true
			}
		}
		return false
	case Range:
		if m.lo != nil && m.lo.Value != nil {
			if c, ok := compareValues(hi, m.lo.Value); ok && (c < 0 || (c == 0 && !m.lo.Inclusive)) {
				return false
			}
		}
		if m.hi != nil && m.hi.Value != nil {
			if c, ok := compareValues(lo, m.hi.Value); ok && (c > 0 || (c == 0 && !m.hi.Inclusive)) {
				return false
			}
		}
		return true
	}
	return false
}

// binaryAt is element i of a binary or large binary array; ok is false
// for an array of any other type.
func binaryAt(a arrow.Array, i int) (b []byte, ok bool) {
	switch a := a.(type) {
	case *array.Binary:
		return a.Value(i), true
	case *array.LargeBinary:
		return a.Value(i), true
	}
	return nil, false
}
