package query

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"
)

// eachKept and passing agree with the per-row reading of the mask (true and valid) on masks with
// and without nulls, at offsets that do and do not fall on a byte, and with lengths that end
// inside a byte.
func TestEachKept(t *testing.T) {
	b := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer b.Release()
	for i := 0; i < 300; i++ {
		switch {
		case i%37 == 0:
			b.AppendNull()
		default:
			b.Append(i%5 == 0 || (i > 100 && i < 140))
		}
	}
	withNulls := b.NewBooleanArray()
	defer withNulls.Release()
	for i := 0; i < 300; i++ {
		b.Append(i%7 == 0 || (i > 200 && i < 260))
	}
	noNulls := b.NewBooleanArray()
	defer noNulls.Release()
	for _, c := range []struct {
		name   string
		mask   *array.Boolean
		lo, hi int64
	}{
		{"no nulls", noNulls, 0, 300},
		{"no nulls, byte offset", noNulls, 16, 299},
		{"no nulls, bit offset", noNulls, 3, 211},
		{"nulls", withNulls, 0, 300},
		{"nulls, bit offset", withNulls, 5, 123},
		{"empty", noNulls, 8, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := array.NewSlice(c.mask, c.lo, c.hi).(*array.Boolean)
			defer m.Release()
			var want, got []int
			for i := 0; i < m.Len(); i++ {
				if m.IsValid(i) && m.Value(i) {
					want = append(want, i)
				}
			}
			eachKept(m, func(i int) { got = append(got, i) })
			assert.DeepEqual(t, got, want)
			assert.Equal(t, passing(m), len(want), fmt.Sprint(c.lo, c.hi))
		})
	}
}
