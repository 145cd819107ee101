package index

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// benchValues are 200,000 rows of the benchmark shapes: distinct
// int64s (BTREE), 5 colours (BITMAP), label lists (LABEL_LIST).
func benchValues(typ Type) arrow.Array {
	mem := memory.DefaultAllocator
	const n = 200_000
	switch typ {
	case BTree:
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := range n {
			b.Append(int64((i * 7919) % n))
		}
		return b.NewArray()
	case Bitmap:
		b := array.NewStringBuilder(mem)
		defer b.Release()
		cats := []string{"red", "green", "blue", "cyan", "magenta"}
		for i := range n {
			b.Append(cats[i%5])
		}
		return b.NewArray()
	}
	b := array.NewListBuilder(mem, arrow.BinaryTypes.String)
	defer b.Release()
	vb := b.ValueBuilder().(*array.StringBuilder)
	for i := range n {
		b.Append(true)
		for k := range i % 3 {
			vb.Append(fmt.Sprint("l", k))
		}
	}
	return b.NewArray()
}

func BenchmarkBuild(b *testing.B) {
	for _, typ := range []Type{BTree, Bitmap, LabelList} {
		vals := benchValues(typ)
		ids := make([]uint64, vals.Len())
		for i := range ids {
			ids[i] = uint64(i/100_000)<<32 | uint64(i%100_000)
		}
		b.Run(string(typ), func(b *testing.B) {
			for b.Loop() {
				bld, err := NewBuilder(typ, vals.DataType(), BuildOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if err := bld.Add(vals, ids); err != nil {
					b.Fatal(err)
				}
				if _, err := bld.Finish(context.Background(), memStore{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
