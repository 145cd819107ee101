package query_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/lance/pb/tablepb"
	"github.com/lancecat/lancecat/query"
	"github.com/lancecat/lancecat/storage"
)

const dim = 8

var tSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "vec", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true},
	{Name: "bv", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Uint8), Nullable: true},
}, nil)

// vecOf is row i's vector: a deterministic hash spread in [-1, 1).
func vecOf(i, k int) float32 {
	x := uint32(i*2654435761) ^ uint32(k*40503+17)
	x ^= x >> 13
	x *= 0x5bd1e995
	x ^= x >> 15
	return float32(x%20000)/10000 - 1
}

// tRecord is rows [start, start+n): nulls in name (every 7th), score
// (every 5th; NaN every 13th) and vec (every 97th).
func tRecord(mem memory.Allocator, start, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, tSchema)
	defer b.Release()
	for i := start; i < start+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%7 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("n%03d", i%500))
		}
		switch {
		case i%5 == 0:
			b.Field(2).AppendNull()
		case i%13 == 0:
			b.Field(2).(*array.Float64Builder).Append(math.NaN())
		default:
			b.Field(2).(*array.Float64Builder).Append(float64((i*37)%101) / 4)
		}
		vb := b.Field(3).(*array.FixedSizeListBuilder)
		if i%97 == 0 {
			vb.AppendNull()
		} else {
			vb.Append(true)
			for k := range dim {
				vb.ValueBuilder().(*array.Float32Builder).Append(vecOf(i, k))
			}
		}
		bb := b.Field(4).(*array.FixedSizeListBuilder)
		bb.Append(true)
		for k := range 4 {
			bb.ValueBuilder().(*array.Uint8Builder).Append(uint8(vecOf(i, k+100)*127 + 128))
		}
	}
	return b.NewRecordBatch()
}

// newTable writes rows [0, n) in fragments of fragRows with lance's own
// writer, then deletes every 10th row of fragment 0 (so scans cross a
// deletion vector).
func newTable(t testing.TB, n, fragRows int) *lance.Dataset {
	t.Helper()
	ctx := context.Background()
	fs, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	ds := lance.NewDataset(fs)
	var recs []arrow.RecordBatch
	for off := 0; off < n; off += 1000 {
		recs = append(recs, tRecord(memory.DefaultAllocator, off, min(1000, n-off)))
	}
	rr, err := array.NewRecordReader(tSchema, recs)
	assert.NilError(t, err)
	defer rr.Release()
	_, err = ds.Write(ctx, rr, lance.WriteOptions{MaxRowsPerFile: fragRows})
	assert.NilError(t, err)
	head, err := ds.OpenLatest(ctx)
	assert.NilError(t, err)
	f0 := head.Manifest().GetFragments()[0]
	var rows []uint32
	for r := uint32(0); r < uint32(min(n, fragRows)); r += 10 {
		rows = append(rows, r)
	}
	nf, _, err := lance.MergeDeletions(ctx, ds.Store(), f0, head.Number(), rows)
	assert.NilError(t, err)
	_, err = ds.Commit(ctx, lance.NewDelete([]*tablepb.DataFragment{nf}, nil, "id % 10 = 0 AND id < frag"), lance.CommitOptions{})
	assert.NilError(t, err)
	return ds
}

// collect reads every batch of the answer into one record.
func collect(t testing.TB, rr array.RecordReader) arrow.RecordBatch {
	t.Helper()
	defer rr.Release()
	var recs []arrow.RecordBatch
	for rr.Next() {
		r := rr.RecordBatch()
		r.Retain()
		recs = append(recs, r)
	}
	assert.NilError(t, rr.Err())
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	schema := rr.Schema()
	cols := make([]arrow.Array, schema.NumFields())
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	for c := range cols {
		var parts []arrow.Array
		for _, r := range recs {
			parts = append(parts, r.Column(c))
		}
		if len(parts) == 0 {
			cols[c] = array.MakeArrayOfNull(memory.DefaultAllocator, schema.Field(c).Type, 0)
			continue
		}
		var err error
		cols[c], err = array.Concatenate(parts, memory.DefaultAllocator)
		assert.NilError(t, err)
	}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	return array.NewRecordBatch(schema, cols, n)
}

func run(t testing.TB, ds *lance.Dataset, req query.Request) arrow.RecordBatch {
	t.Helper()
	rr, err := query.Run(context.Background(), ds, req)
	assert.NilError(t, err)
	return collect(t, rr)
}

func int64s(rec arrow.RecordBatch, name string) []int64 {
	c := rec.Column(rec.Schema().FieldIndices(name)[0]).(*array.Int64)
	out := make([]int64, c.Len())
	for i := range out {
		out[i] = c.Value(i)
	}
	return out
}

func float32s(rec arrow.RecordBatch, name string) []float32 {
	c := rec.Column(rec.Schema().FieldIndices(name)[0]).(*array.Float32)
	return append([]float32{}, c.Float32Values()...)
}

func fieldNames(rec arrow.RecordBatch) []string {
	var out []string
	for _, f := range rec.Schema().Fields() {
		out = append(out, f.Name)
	}
	return out
}
