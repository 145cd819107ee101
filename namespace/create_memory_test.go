package namespace

import (
	"context"
	"io"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/storage"
)

// discardingData stores everything but the bodies of data files, which it only counts: the
// memory measured is the writer's, not the store's.
type discardingData struct {
	storage.Bucket
	dataBytes atomic.Int64
}

func (d *discardingData) Put(ctx context.Context, key string, r io.Reader, size int64) (storage.ObjectInfo, error) {
	if strings.Contains(key, "/data/") && !strings.HasPrefix(key, "__manifest/") {
		n, err := io.Copy(io.Discard, r)
		d.dataBytes.Add(n)
		return storage.ObjectInfo{Key: key, Size: n}, err
	}
	return d.Bucket.Put(ctx, key, r, size)
}

// TestCreateTableStreamsData: creating a table with 48 MiB of rows (random int64s, which no
// encoding shrinks) adds less than the rows' size to the heap while the data file is written
// and uploaded: the file streams to the store instead of being built whole in memory (it was
// held in a bytes.Buffer, growing by doubling, before the upload).
func TestCreateTableStreamsData(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 48 MiB")
	}
	ctx := context.Background()
	fs, err := storage.NewFS(t.TempDir())
	assert.NilError(t, err)
	store := &discardingData{Bucket: fs}
	n := New(store, Options{RootURI: "/root"})
	_, err = n.CreateNamespace(ctx, ident.ID{"ns"}, nil, "")
	assert.NilError(t, err)

	const rows, perBatch = 6 << 20, 64 << 10 // 6 Mi int64 = 48 MiB
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	var recs []arrow.RecordBatch
	mem := testenv.CheckedAllocator(t)
	for i := 0; i < rows; i += perBatch {
		b := array.NewInt64Builder(mem)
		for range perBatch {
			b.Append(int64(rng.Uint64()))
		}
		col := b.NewArray()
		b.Release()
		recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{col}, perBatch))
		col.Release()
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	recordBytes := int64(rows * 8)

	// HeapAlloc counts garbage until a collection: with the default GOGC the heap may double
	// the live 48 MiB in garbage before one runs. A low GOGC makes the peak measure what is live.
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := int64(ms.HeapAlloc)
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak.Store(max(peak.Load(), int64(m.HeapAlloc)))
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	_, _, err = n.CreateTable(ctx, ident.ID{"ns", "big"}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, recs...)})
	close(stop)
	<-sampled
	assert.NilError(t, err)
	assert.Assert(t, store.dataBytes.Load() >= recordBytes, "data file of %d bytes", store.dataBytes.Load())
	grew := peak.Load() - base
	t.Logf("rows %d MiB, heap grew by at most %d MiB while writing", recordBytes>>20, grew>>20)
	// Measured: 35 MiB streaming (an 8 MiB page of the column, its encodings, the pipe's
	// buffer), 104 MiB with the whole file built in a bytes.Buffer first. Less than the rows'
	// own size is a bound the buffered file (≥ the rows' size, plus its doubling) cannot meet.
	assert.Assert(t, grew < recordBytes, "heap grew by %d bytes writing %d bytes of rows", grew, recordBytes)
}
