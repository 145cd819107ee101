package e2e

// Issue 15's memory bound, end to end: "a query returning 1 GiB stays under 300 MiB RSS". The
// real `lancecat serve` binary on a local root answers a full scan of a table whose answer is
// over 1 GiB of Arrow, streamed through the HTTP client, and the server's peak RSS (VmHWM in
// /proc/<pid>/status: the kernel's high-water mark, so no sampling can miss a spike) must stay
// under 300 MiB.
//
// It is opt-in (LANCECAT_TEST_RSS=1): see TestQueryAnswerRSS for what it costs.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/catalog"
	"github.com/lancecat/lancecat/ident"
	"github.com/lancecat/lancecat/internal/arrowipc"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

const (
	rssBatchRows = 8192
	rssBatches   = 130 // 1,064,960 rows of 1 KiB vectors + an id: 1.02 GiB of Arrow
	rssDim       = 256
	rssLimit     = 300 << 20
)

// rssBatch is batch i: ids i*rssBatchRows…, and the same vectors in every batch (made once: the
// test's own cost stays small; the server reads every byte from disk regardless).
func rssBatch(schema *arrow.Schema, i int, vecs arrow.ArrayData) arrow.RecordBatch {
	ids := make([]byte, 8*rssBatchRows)
	for j := range rssBatchRows {
		binary.LittleEndian.PutUint64(ids[8*j:], uint64(i*rssBatchRows+j))
	}
	idData := array.NewData(arrow.PrimitiveTypes.Int64, rssBatchRows, []*memory.Buffer{nil, memory.NewBufferBytes(ids)}, nil, 0, 0)
	defer idData.Release()
	idCol := array.MakeFromData(idData)
	defer idCol.Release()
	vecCol := array.MakeFromData(vecs)
	defer vecCol.Release()
	return array.NewRecordBatch(schema, []arrow.Array{idCol, vecCol}, rssBatchRows)
}

// status is a field of /proc/<pid>/status in bytes.
func status(t *testing.T, pid int, field string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	assert.NilError(t, err)
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			assert.NilError(t, err)
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestQueryAnswerRSS: the table is written by `lancecat dataset import` (the built binary, fed an
// Arrow stream on stdin: fast, and not slowed by -race in this process) into a table created in the
// root beforehand; then `lancecat serve` answers POST /v1/table/big/query with no limit (every row,
// both columns), read batch by batch here, and its VmHWM is checked after the answer ended.
//
// Cost (measured once on the shared 2-core dev box with 6 sessions at work, -race): 4 min 7 s in
// all, import 56 s, query 3 min (1.02 GiB), 54 s user + 36 s system CPU, 1.1 GiB of temp disk;
// server VmHWM 53 MiB before the query, 135 MiB after. That is far over the ~60 s a default test
// may take (CI's budget is 90 min and already ~40), so it runs only with LANCECAT_TEST_RSS=1:
//
//	LANCECAT_TEST_RSS=1 go test -run TestQueryAnswerRSS -v ./e2e/
func TestQueryAnswerRSS(t *testing.T) {
	if os.Getenv("LANCECAT_TEST_RSS") == "" {
		t.Skip("the 1 GiB answer test takes minutes: LANCECAT_TEST_RSS=1 runs it")
	}
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "root")
	fs, err := storage.NewFS(root)
	assert.NilError(t, err)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "vec", Type: arrow.FixedSizeListOf(rssDim, arrow.PrimitiveTypes.Float32)},
	}, nil)
	vals := make([]byte, 4*rssDim*rssBatchRows)
	for j := range rssDim * rssBatchRows {
		binary.LittleEndian.PutUint32(vals[4*j:], math.Float32bits(float32(j%9973)/7))
	}
	child := array.NewData(arrow.PrimitiveTypes.Float32, rssDim*rssBatchRows, []*memory.Buffer{nil, memory.NewBufferBytes(vals)}, nil, 0, 0)
	vecs := array.NewData(schema.Field(1).Type, rssBatchRows, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0)
	child.Release()
	defer vecs.Release()

	first := rssBatch(schema, 0, vecs)
	n := namespace.New(fs, namespace.Options{})
	_, _, err = n.CreateTable(ctx, ident.ID{"big"}, catalog.NewTable{Schema: schema, Rows: catalog.Records(schema, first)})
	first.Release()
	assert.NilError(t, err)
	tbl, err := n.DescribeTable(ctx, ident.ID{"big"})
	assert.NilError(t, err)

	start := time.Now()
	cmd := exec.Command(lancecatBinary(t), "dataset", "import", "--from", "-", filepath.Join(root, tbl.Location))
	cmd.Env = childEnv()
	stdin, err := cmd.StdinPipe()
	assert.NilError(t, err)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	assert.NilError(t, cmd.Start())
	bw := bufio.NewWriterSize(stdin, 1<<20)
	w := ipc.NewWriter(bw, ipc.WithSchema(schema))
	for i := 1; i < rssBatches; i++ {
		rec := rssBatch(schema, i, vecs)
		err := w.Write(rec)
		rec.Release()
		assert.NilError(t, err)
	}
	assert.NilError(t, w.Close())
	assert.NilError(t, bw.Flush())
	assert.NilError(t, stdin.Close())
	assert.NilError(t, cmd.Wait(), out.String())
	t.Logf("import: %s (%s)", time.Since(start).Round(time.Millisecond), strings.TrimSpace(out.String()))

	p := startServe(t, root)
	pid := p.cmd.Process.Pid
	before := status(t, pid, "VmHWM")
	start = time.Now()
	resp, err := http.Post(p.url+tablePath("big", "query"), "application/json", strings.NewReader(`{"columns":["id","vec"]}`))
	assert.NilError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusOK)
	cr := &countingReader{r: resp.Body}
	br := bufio.NewReaderSize(cr, 1<<20)
	isFile, err := arrowipc.SkipFileMagic(br)
	assert.NilError(t, err)
	assert.Assert(t, isFile, "the answer is an Arrow IPC file")
	r, err := arrowipc.NewStreamReader(br, arrowipc.StreamOptions{})
	assert.NilError(t, err)
	var rows int64
	for r.Next() {
		rows += r.RecordBatch().NumRows()
	}
	assert.NilError(t, r.Err())
	r.Release()
	_, err = io.Copy(io.Discard, br) // the footer
	assert.NilError(t, err)
	elapsed := time.Since(start)
	peak := status(t, pid, "VmHWM")
	t.Logf("query: %d rows, %.2f GiB of Arrow in %s; server VmHWM %d MiB before the query, %d MiB after (limit %d MiB)",
		rows, float64(cr.n)/(1<<30), elapsed.Round(time.Millisecond), before>>20, peak>>20, rssLimit>>20)
	assert.Equal(t, rows, int64(rssBatches*rssBatchRows))
	assert.Assert(t, cr.n >= 1<<30, "the answer is %d bytes, not 1 GiB", cr.n)
	assert.Assert(t, peak < rssLimit, "the server's peak RSS is %d MiB", peak>>20)
}

// manyBatchesBody is an Arrow IPC stream of one-row batches (an int64 id and a short string
// name), at least size bytes: the schema message, then copies of one batch message (the
// pathological shape for decoding: every batch costs its schema, record and buffer objects).
func manyBatchesBody(t testing.TB, size int) (body []byte, batches int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	encode := func(rows int) []byte {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for i := range rows {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append("row")
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
		if rows > 0 {
			assert.NilError(t, w.Write(rec))
		}
		assert.NilError(t, w.Close())
		return buf.Bytes()
	}
	const eos = 8 // the end-of-stream marker: continuation and a zero length
	head := encode(0)
	head = head[:len(head)-eos]
	one := encode(1)
	msg := one[len(head) : len(one)-eos]
	batches = (size - len(head) + len(msg) - 1) / len(msg)
	body = make([]byte, 0, len(head)+batches*len(msg)+eos)
	body = append(body, head...)
	for range batches {
		body = append(body, msg...)
	}
	return append(body, one[len(one)-eos:]...), batches
}

// insertRSS starts `lancecat serve` on a fresh root with a table of manyBatchesBody's schema, sends
// n insert bodies of size bytes at once, and returns the server's resident memory before (VmRSS)
// and its peak (VmHWM) after.
func insertRSS(t *testing.T, n, size int) (before, peak int64, batches int) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	assert.NilError(t, os.MkdirAll(root, 0o755))
	p := startServe(t, root)
	body, batches := manyBatchesBody(t, size)
	head, _ := manyBatchesBody(t, 0)
	a, err := call(context.Background(), p.url, "POST", tablePath("t", "create"), "application/vnd.apache.arrow.stream", head)
	assert.NilError(t, err)
	assert.Equal(t, a.status, http.StatusOK, string(a.body))
	pid := p.cmd.Process.Pid
	before = status(t, pid, "VmRSS")
	client := &http.Client{Timeout: 10 * time.Minute}
	errs := make(chan error, n)
	for range n {
		go func() {
			resp, err := client.Post(p.url+tablePath("t", "insert"), "application/vnd.apache.arrow.stream", bytes.NewReader(body))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			out, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("insert: %d %s", resp.StatusCode, out)
			}
			errs <- err
		}()
	}
	for range n {
		assert.NilError(t, <-errs)
	}
	peak = status(t, pid, "VmHWM")
	a, err = call(context.Background(), p.url, "POST", tablePath("t", "count_rows"), "application/json", []byte(`{}`))
	assert.NilError(t, err)
	assert.Equal(t, strings.TrimSpace(string(a.body)), strconv.Itoa(n*batches), "every row of every body is in the table")
	return before, peak, batches
}

// TestInsertManyBatchesRSS (issue 29: decoded memory was not budgeted): a 32 MB insert body of
// 138,000 one-row batches raises the server's peak RSS (VmHWM: the kernel's high-water mark, so no
// sampling misses a spike) by at most twice the body plus a fixed 48 MiB (the writer's pages and
// buffers, the collector's slack over the server's own heap). The process's RSS, not the Go heap:
// what the issue measured, and what an operator sizes a machine by; it is stable enough (the
// kernel's counter, one request at a time) to assert on. When every batch was decoded into a
// slice before the write, this body took 254 MiB more (8x); streamed, 1.9x to 2.8x. The larger sizes
// of the issue are TestInsertManyBatchesRSSSweep's.
func TestInsertManyBatchesRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("sends a 32 MB body to a lancecat serve")
	}
	const size = 32e6
	before, peak, batches := insertRSS(t, 1, size)
	grew := peak - before
	t.Logf("%d one-row batches, %d MB: VmRSS before %d MiB, VmHWM after %d MiB (grew %.2fx the body)",
		batches, int(size/1e6), before>>20, peak>>20, float64(grew)/size)
	assert.Assert(t, grew <= 2*size+48<<20, "the server's RSS grew by %d MiB for a body of %d MB", grew>>20, int(size/1e6))
}

// TestInsertManyBatchesRSSSweep measures insertRSS at the sizes of issue 29 (opt-in: minutes).
// Measured on the shared 2-core box (VmHWM, one-row batches of (id, name), 232 bytes each; idle
// server 50-68 MiB):
//
//	bodies     batches each  decoded into a slice  streamed      streamed + gcPacer
//	1 × 30 MB       129,310         289 MiB         114-140 MiB     101-110 MiB
//	1 × 120 MB      517,241         938 MiB         311-410 MiB     264-317 MiB
//	1 × 250 MB    1,077,586        2269 MiB         576-581 MiB     450-456 MiB (1.89-1.92×)
//	4 × 118 MB      508,620        4494 MiB        1059-1092 MiB    836-838 MiB (1.86×)
//
// What streaming left above twice the bodies was the collector's pacing: the bodies are live
// heap, and with GOGC=100 garbage (decoding allocates about 2 KB of headers per batch, all
// short-lived) may reach the live heap's size before a collection. server's gcPacer runs the
// collector at GOGC=50 while a body of 16 MiB or more is in flight.
//
//	LANCECAT_TEST_RSS=1 go test -run TestInsertManyBatchesRSSSweep -v ./e2e/
func TestInsertManyBatchesRSSSweep(t *testing.T) {
	if os.Getenv("LANCECAT_TEST_RSS") == "" {
		t.Skip("the insert memory sweep takes minutes: LANCECAT_TEST_RSS=1 runs it")
	}
	for _, c := range []struct{ n, size int }{{1, 30e6}, {1, 120e6}, {1, 250e6}, {4, 118e6}} {
		start := time.Now()
		before, peak, batches := insertRSS(t, c.n, c.size)
		t.Logf("%d × %d MB (%d one-row batches each): VmRSS before %d MiB, VmHWM %d MiB (%.2f× the bodies) in %s",
			c.n, c.size/1e6, batches, before>>20, peak>>20, float64(peak)/float64(c.n*c.size), time.Since(start).Round(time.Second))
	}
}
