package lancefile

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// FSSTSchema and FSSTRecord: string columns Lance FSST-codes (enough bytes
// per page, values of five bytes or more) in every shape the writer
// handles: unicode text with nulls and empty strings, word-and-number
// labels, values long enough for full-zip pages, random binary (bytes
// without a symbol, 0xff among them, are escaped), 64-bit offsets, and
// strings inside lists.
func FSSTSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "uni", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "label", Type: arrow.BinaryTypes.String},
		{Name: "long", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "lstr", Type: arrow.BinaryTypes.LargeString},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	}, nil)
}

var fsstWords = []string{"arrow", "lance", "catalog", "vector", "column", "índice", "Grüße", "日本語", "😀🎉", "€", "query", "chunk", "ß", "table"}

// FSSTRecord builds rows [start, start+n).
func FSSTRecord(mem memory.Allocator, seed uint64, start, n int) arrow.RecordBatch {
	r := rand.New(rand.NewPCG(seed, 11))
	b := array.NewRecordBuilder(mem, FSSTSchema())
	defer b.Release()
	word := func() string { return fsstWords[r.IntN(len(fsstWords))] }
	text := func(lo, hi int) string {
		var sb strings.Builder
		for sb.Len() < lo+r.IntN(hi-lo+1) {
			sb.WriteString(word())
			sb.WriteByte(" -_/"[r.IntN(4)])
			sb.WriteString(strconv.Itoa(r.IntN(1000)))
		}
		return sb.String()
	}
	for i := start; i < start+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		uni := b.Field(1).(*array.StringBuilder)
		switch k := r.IntN(10); {
		case k == 0:
			uni.AppendNull()
		case k == 1:
			uni.Append("")
		default:
			uni.Append(text(1, 40))
		}
		b.Field(2).(*array.StringBuilder).Append(word() + strconv.Itoa(r.IntN(10_000)))
		long := b.Field(3).(*array.StringBuilder)
		if r.IntN(5) == 0 {
			long.AppendNull()
		} else {
			long.Append(text(260, 500))
		}
		bin := b.Field(4).(*array.BinaryBuilder)
		if r.IntN(8) == 0 {
			bin.AppendNull()
		} else {
			v := make([]byte, r.IntN(24))
			for k := range v {
				v[k] = byte(r.Uint32())
				if r.IntN(4) == 0 {
					v[k] = 0xff
				}
			}
			bin.Append(v)
		}
		b.Field(5).(*array.LargeStringBuilder).Append(text(5, 30))
		tags := b.Field(6).(*array.ListBuilder)
		switch r.IntN(6) {
		case 0:
			tags.AppendNull()
		case 1:
			tags.Append(true) // empty
		default:
			tags.Append(true)
			for range 1 + r.IntN(3) {
				tags.ValueBuilder().(*array.StringBuilder).Append(word() + "#" + strconv.Itoa(r.IntN(100_000)))
			}
		}
	}
	return b.NewRecordBatch()
}
