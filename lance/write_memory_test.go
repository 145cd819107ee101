package lance_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/lance"
	"github.com/lancecat/lancecat/storage"
)

// discardData is a memory store that drops the bodies of data files (it
// only counts them), so a large write measures the writer, not the store.
type discardData struct {
	*storage.Memory
	bytes atomic.Int64
}

func (d *discardData) Put(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error) {
	if len(key) > 5 && key[:5] == "data/" {
		n, err := io.Copy(io.Discard, r)
		d.bytes.Add(n)
		return storage.ObjectInfo{Key: key, Size: n}, err
	}
	return d.Memory.Put(ctx, key, r, size)
}

// TestAppendGiBStreamMemory appends a 1 GiB Arrow IPC stream (generated on
// the fly through a pipe, the way `lancecat dataset import` reads one) and
// checks the heap never holds more than 300 MiB: the write is streamed.
func TestAppendGiBStreamMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1 GiB")
	}
	ctx := context.Background()
	const dim = 128
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "vector", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
	const batchRows = 8192
	const target = 1 << 30
	pr, pw := io.Pipe()
	var produced atomic.Int64
	go func() {
		mem := memory.NewGoAllocator()
		w := ipc.NewWriter(pw, ipc.WithSchema(schema), ipc.WithAllocator(mem))
		var err error
		for id := 0; produced.Load() < target && err == nil; id += batchRows {
			b := array.NewRecordBuilder(mem, schema)
			ib := b.Field(0).(*array.Int64Builder)
			nb := b.Field(1).(*array.StringBuilder)
			vb := b.Field(2).(*array.FixedSizeListBuilder)
			fb := vb.ValueBuilder().(*array.Float32Builder)
			var size int64
			for i := id; i < id+batchRows; i++ {
				ib.Append(int64(i))
				name := fmt.Sprintf("row-%012d-some-padding", i)
				nb.Append(name)
				vb.Append(true)
				for k := range dim {
					fb.Append(float32(i%1000) + float32(k)/dim)
				}
				size += 8 + int64(len(name)) + 4 + 4*dim
			}
			rec := b.NewRecordBatch()
			b.Release()
			err = w.Write(rec)
			rec.Release()
			produced.Add(size)
		}
		if err == nil {
			err = w.Close()
		}
		pw.CloseWithError(err)
	}()
	rd, err := ipc.NewReader(pr)
	assert.NilError(t, err)
	defer rd.Release()

	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	store := &discardData{Memory: storage.NewMemory()}
	ds := lance.NewDataset(store)
	start := time.Now()
	v, err := ds.Append(ctx, rd, lance.WriteOptions{})
	close(stop)
	<-done
	assert.NilError(t, err)
	rows, err := v.CountRows()
	assert.NilError(t, err)
	t.Logf("appended %d rows (%.0f MiB of Arrow input, %.0f MiB of Lance files, %d fragments) in %v; peak heap in use %.0f MiB",
		rows, float64(produced.Load())/(1<<20), float64(store.bytes.Load())/(1<<20), len(v.Manifest().GetFragments()),
		time.Since(start).Round(time.Millisecond), float64(peak.Load())/(1<<20))
	assert.Assert(t, produced.Load() >= target)
	assert.Assert(t, peak.Load() < 300<<20, "peak heap %d MiB", peak.Load()>>20)
}
