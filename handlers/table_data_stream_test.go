package handlers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/labstack/echo/v4"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// vectorSchema is (id, float32[128] vector): 520 bytes a row, the shape of an embedding upload.
var vectorSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "vector", Type: arrow.FixedSizeListOf(128, arrow.PrimitiveTypes.Float32)},
}, nil)

// writeVectors writes an Arrow IPC stream of at least size bytes of vectorSchema rows (batches of
// 8192 rows, about 4 MiB each, ids from 0) to w, one batch built at a time.
func writeVectors(w io.Writer, size int64, opts ...ipc.Option) (rows int64, err error) {
	iw := ipc.NewWriter(w, append(opts, ipc.WithSchema(vectorSchema))...)
	const per = 8192
	for written := int64(0); written < size; written += per * 520 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, vectorSchema)
		ids := b.Field(0).(*array.Int64Builder)
		vb := b.Field(1).(*array.FixedSizeListBuilder)
		fb := vb.ValueBuilder().(*array.Float32Builder)
		for i := range per {
			ids.Append(rows + int64(i))
			vb.Append(true)
			for k := range 128 {
				fb.Append(float32(k))
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		err = iw.Write(rec)
		rec.Release()
		if err != nil {
			return rows, err
		}
		rows += per
	}
	return rows, iw.Close()
}

// heapPeak runs f and answers how far the Go heap's live bytes rose above where they were
// (HeapAlloc sampled every 2 ms, GOGC at 5 so that it measures what is live).
func heapPeak(f func()) int64 {
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := int64(ms.HeapAlloc)
	var peak atomic.Int64
	stop, sampled := make(chan struct{}), make(chan struct{})
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
	f()
	close(stop)
	<-sampled
	return peak.Load() - base
}

// TestWriteBodyStreamsHeap: a 64 MB Arrow IPC body sent as it is produced (chunked, as a
// client's upload arrives: no server middleware in front holding it) is written as its batches
// arrive, by insert and by create: the Go heap grows by a few batches and the writer's pages, not
// by the body. A body the middleware already holds in full (production today: server/body.go
// reads every body before the handler) is decoded from its own bytes, one group at a time: the
// heap grows by less than the body on top of it.
func TestWriteBodyStreamsHeap(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("writes 64 MB per door (slow under -race)")
	}
	const size = 64 << 20
	dir := t.TempDir()
	fs, err := storage.NewFS(dir)
	assert.NilError(t, err)
	e := echo.New()
	New(Options{Catalog: namespace.New(fs, namespace.Options{RootURI: dir})}).Register(e)
	var whole bytes.Buffer
	rows, err := writeVectors(&whole, size)
	assert.NilError(t, err)
	var lz4 bytes.Buffer
	_, err = writeVectors(&lz4, size, ipc.WithLZ4())
	assert.NilError(t, err)
	do := func(target string, body io.Reader) {
		t.Helper()
		req := httptest.NewRequest("POST", target, body)
		if h, ok := body.(*held); ok {
			req.Body = h
		} else {
			req.ContentLength = -1
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		assert.Equal(t, rec.Code, http.StatusOK, "%s: %s", target, rec.Body.String())
	}
	streamed := func() io.Reader {
		pr, pw := io.Pipe()
		go func() {
			_, err := writeVectors(pw, size)
			pw.CloseWithError(err)
		}()
		return pr
	}
	do("/v1/table/t/create", bytes.NewReader(whole.Bytes()))
	for _, tc := range []struct {
		name, target string
		body         func() io.Reader
		limit        int64
	}{
		{"insert, streamed", "/v1/table/t/insert", streamed, 48 << 20},
		{"create, streamed", "/v1/table/c1/create", streamed, 48 << 20},
		{"insert, held", "/v1/table/t/insert", func() io.Reader { return &held{Reader: bytes.NewReader(whole.Bytes()), b: whole.Bytes()} }, size},
		{"create, held", "/v1/table/c2/create", func() io.Reader { return &held{Reader: bytes.NewReader(whole.Bytes()), b: whole.Bytes()} }, size},
		{"create, held, LZ4", "/v1/table/c3/create", func() io.Reader { return &held{Reader: bytes.NewReader(lz4.Bytes()), b: lz4.Bytes()} }, 48 << 20},
	} {
		body := tc.body()
		grew := heapPeak(func() { do(tc.target, body) })
		t.Logf("%s: %d MiB of rows, heap grew by at most %d MiB", tc.name, size>>20, grew>>20)
		assert.Check(t, grew <= tc.limit, "%s: the heap grew by %d MiB for a body of %d MiB", tc.name, grew>>20, size>>20)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/table/t/count_rows", strings.NewReader(`{}`)))
	assert.Equal(t, strings.TrimSpace(rec.Body.String()), fmt.Sprint(3*rows), "the create's and both inserts' rows are in t")
}

// idStream is an Arrow IPC stream of rows (id int64) rows in batches of 65,536, ids from 0.
func idStream(t *testing.T, rows int) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for first := 0; first < rows; first += 1 << 16 {
		for i := first; i < min(rows, first+1<<16); i++ {
			b.Append(int64(i))
		}
		col := b.NewArray()
		rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
		assert.NilError(t, w.Write(rec))
		rec.Release()
		col.Release()
	}
	assert.NilError(t, w.Close())
	return buf.Bytes()
}

// TestFailedStreamCommitsNothing: a streamed write body that turns out malformed (cut inside a
// message) or over its limit after rows were already written commits no version: the writer
// commits only once the whole stream was read. The data file being written is abandoned (its
// upload aborted: nothing of it is left); data files finished before the failure (a write of
// more than a file's 1 Mi rows) are left unreferenced, for the orphan scan (maintenance) and
// Lance's cleanup to remove once older than their grace. A create that fails so leaves no table
// and no bytes.
func TestFailedStreamCommitsNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fs, err := storage.NewFS(dir)
	assert.NilError(t, err)
	ns := namespace.New(fs, namespace.Options{RootURI: dir})
	e := echo.New()
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		p := nserr.ProblemFor(err, "", "")
		_ = c.JSON(p.Status, p)
	}
	New(Options{Catalog: ns}).Register(e)
	post := func(target string, body io.Reader) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest("POST", target, body)
		req.ContentLength = -1 // streamed: no middleware holds it
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	rec := post("/v1/table/t/create", bytes.NewReader(idStream(t, 10)))
	assert.Equal(t, rec.Code, http.StatusOK, rec.Body.String())
	version := func() uint64 {
		tbl, err := ns.LoadTable(ctx, ident.ID{"t"})
		assert.NilError(t, err)
		st, err := tbl.State(ctx, catalog.DescribeOptions{})
		assert.NilError(t, err)
		return st.Version
	}
	files := func() []string {
		objs, err := storage.ListAll(ctx, fs, "")
		assert.NilError(t, err)
		var keys []string
		for _, o := range objs {
			keys = append(keys, o.Key)
		}
		return keys
	}
	dataFiles := func(keys []string) (n int) {
		for _, k := range keys {
			if strings.Contains(k, "/data/") {
				n++
			}
		}
		return n
	}
	small, large := idStream(t, 200_000), idStream(t, 1_200_000)
	cut := func(b []byte) io.Reader { return bytes.NewReader(b[:len(b)-1000]) }
	limited := func(b []byte) io.Reader {
		return http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(bytes.NewReader(b)), int64(len(b)/2))
	}
	for _, tc := range []struct {
		name     string
		target   string
		body     io.Reader
		code     int
		orphaned int // finished data files left unreferenced
	}{
		{"insert cut short", "/v1/table/t/insert", cut(small), http.StatusBadRequest, 0},
		{"insert over its limit", "/v1/table/t/insert", limited(small), http.StatusRequestEntityTooLarge, 0},
		{"overwrite cut short", "/v1/table/t/insert?mode=overwrite", cut(small), http.StatusBadRequest, 0},
		{"insert cut after a whole data file", "/v1/table/t/insert", cut(large), http.StatusBadRequest, 1},
		{"create cut short", "/v1/table/c/create", cut(small), http.StatusBadRequest, 0},
		{"create over its limit", "/v1/table/c/create", limited(small), http.StatusRequestEntityTooLarge, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, before := version(), files()
			rec := post(tc.target, tc.body)
			assert.Equal(t, rec.Code, tc.code, rec.Body.String())
			assert.Equal(t, version(), v, "no version was committed")
			after := files()
			assert.Equal(t, len(after), len(before)+tc.orphaned, "%v", after)
			assert.Equal(t, dataFiles(after), dataFiles(before)+tc.orphaned)
			_, err := ns.LoadTable(ctx, ident.ID{"c"})
			assert.Check(t, nserr.Is(err, nserr.ErrTableNotFound), "%v", err)
		})
	}
	rec = post("/v1/table/t/count_rows", strings.NewReader(`{}`))
	assert.Equal(t, strings.TrimSpace(rec.Body.String()), "10", "only the create's rows are in t")
}
