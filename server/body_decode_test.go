package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gotest.tools/v3/assert"

	nserr "github.com/lancecat/lancecat/errors"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// zeroIDs is an LZ4_FRAME-compressed Arrow IPC stream of batches of rows ids each, all zero: a few
// KB that decode to 8 bytes a row (LZ4 shrinks zeros about 250 times).
func zeroIDs(t *testing.T, batches, rows int) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	bld := array.NewInt64Builder(memory.NewGoAllocator())
	defer bld.Release()
	bld.AppendValues(make([]int64, rows), nil)
	col := bld.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(rows))
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithLZ4())
	for range batches {
		assert.NilError(t, w.Write(rec))
	}
	assert.NilError(t, w.Close())
	return buf.Bytes()
}

// TestDecodedBodyBudget (issue 29: --max-buffered-body-bytes counted raw bytes only, so the
// default admitted about 7 GB of decoding): what decoding an Arrow body allocates is charged to
// the same budget as its bytes. With a 4 MiB budget, an insert, a create and a merge whose body of
// a few KB decodes to 8 MiB at once are refused with 413 code 13 and write nothing, as is a merge
// of 3 MiB (it holds its batches and the record dml makes of them); an insert of 8 MiB in 16
// batches passes, since it holds one batch at a time.
func TestDecodedBodyBudget(t *testing.T) {
	dir := t.TempDir()
	b, err := storage.NewFS(dir)
	assert.NilError(t, err)
	srv, err := New(Options{
		Handlers:     handlers.New(handlers.Options{Catalog: namespace.New(b, namespace.Options{RootURI: dir})}),
		MaxBodyBytes: 4 << 20, MaxBufferedBodyBytes: 4 << 20,
	})
	assert.NilError(t, err)
	h := srv.Handler()
	const arrowType = "application/vnd.apache.arrow.stream"
	st, body := send(t, h, "POST", "/v1/table/items/create", arrowType, zeroIDs(t, 1, 3))
	assert.Equal(t, st, http.StatusOK, string(body))

	whole := zeroIDs(t, 1, 1<<20) // one batch of 8 MiB
	assert.Assert(t, len(whole) < 64<<10, "%d bytes", len(whole))
	for _, target := range []string{
		"/v1/table/items/insert",
		"/v1/table/other/create",
		"/v1/table/items/merge_insert?on=id&when_matched_update_all=true&when_not_matched_insert_all=true",
	} {
		st, body := send(t, h, "POST", target, arrowType, whole)
		assert.Equal(t, st, http.StatusRequestEntityTooLarge, "%s: %s", target, body)
		var p nserr.Problem
		assert.NilError(t, json.Unmarshal(body, &p))
		assert.Equal(t, p.Code, int(nserr.InvalidInput))
		assert.Assert(t, strings.Contains(p.Detail, "decodes to more memory"), "%s: %s", target, p.Detail)
	}
	// A merge keeps its batches (3 MiB here: within the budget) and dml makes one record of them
	// (as much again): charged too.
	st, body = send(t, h, "POST", "/v1/table/items/merge_insert?on=id&when_not_matched_insert_all=true", arrowType, zeroIDs(t, 6, 1<<16))
	assert.Equal(t, st, http.StatusRequestEntityTooLarge, "merge of 6 × 512 KiB: %s", body)
	count := func() string {
		st, body := send(t, h, "POST", "/v1/table/items/count_rows", "application/json", []byte(`{}`))
		assert.Equal(t, st, http.StatusOK, string(body))
		return strings.TrimSpace(string(body))
	}
	assert.Equal(t, count(), "3", "nothing was written")
	st, _ = send(t, h, "POST", "/v1/table/other/describe", "application/json", []byte(`{}`))
	assert.Equal(t, st, http.StatusNotFound, "the refused create made no table")

	st, body = send(t, h, "POST", "/v1/table/items/insert", arrowType, zeroIDs(t, 16, 1<<16)) // 16 × 512 KiB
	assert.Equal(t, st, http.StatusOK, string(body))
	assert.Equal(t, count(), "1048579")
}

// TestArrowBodyBadLastBatch: a body whose last batch is malformed in its values (a string offset
// past the column's bytes: the framing is sound, so only decoding the batch finds it) fails the
// write with 400 code 13 after the first batch went to the writer, and nothing is visible: the
// insert commits nothing, the create makes no table.
func TestArrowBodyBadLastBatch(t *testing.T) {
	dir := t.TempDir()
	b, err := storage.NewFS(dir)
	assert.NilError(t, err)
	srv, err := New(Options{Handlers: handlers.New(handlers.Options{Catalog: namespace.New(b, namespace.Options{RootURI: dir})})})
	assert.NilError(t, err)
	h := srv.Handler()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	for _, rows := range []int{10000, 1} {
		bld := array.NewStringBuilder(memory.NewGoAllocator())
		for range rows {
			bld.Append("abc")
		}
		col := bld.NewArray()
		bld.Release()
		rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(rows))
		col.Release()
		assert.NilError(t, w.Write(rec))
		rec.Release()
	}
	assert.NilError(t, w.Close())
	body := buf.Bytes()
	// The last batch's body: offsets [0, 3] (8 bytes), then "abc" padded to 8, then the
	// end-of-stream marker (8 bytes). Its second offset now points far past the data.
	end := len(body) - 8 - 16
	assert.Equal(t, string(body[end+8:end+11]), "abc")
	body[end+4], body[end+5], body[end+6], body[end+7] = 0xff, 0xff, 0xff, 0x00

	const arrowType = "application/vnd.apache.arrow.stream"
	var empty bytes.Buffer
	assert.NilError(t, ipc.NewWriter(&empty, ipc.WithSchema(schema)).Close())
	st, out := send(t, h, "POST", "/v1/table/items/create", arrowType, empty.Bytes())
	assert.Equal(t, st, http.StatusOK, string(out))
	for _, target := range []string{"/v1/table/items/insert", "/v1/table/other/create"} {
		st, out = send(t, h, "POST", target, arrowType, body)
		assert.Equal(t, st, http.StatusBadRequest, "%s: %s", target, out)
		var p nserr.Problem
		assert.NilError(t, json.Unmarshal(out, &p))
		assert.Equal(t, p.Code, int(nserr.InvalidInput))
		assert.Assert(t, strings.Contains(p.Detail, "not a valid Arrow IPC stream"), "%s: %s", target, p.Detail)
		t.Logf("%s: %s", target, p.Detail)
	}
	st, out = send(t, h, "POST", "/v1/table/items/count_rows", "application/json", []byte(`{}`))
	assert.Equal(t, st, http.StatusOK, string(out))
	assert.Equal(t, strings.TrimSpace(string(out)), "0", "the failed insert committed nothing")
	st, _ = send(t, h, "POST", "/v1/table/other/describe", "application/json", []byte(`{}`))
	assert.Equal(t, st, http.StatusNotFound, "the failed create made no table")
}
