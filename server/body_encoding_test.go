package server

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/zstd"
	"gotest.tools/v3/assert"
)

// encoded compresses b with an HTTP Content-Encoding.
func encoded(t *testing.T, enc string, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch enc {
	case "gzip":
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(b)
		assert.NilError(t, w.Close())
	case "deflate":
		w := zlib.NewWriter(&buf)
		_, _ = w.Write(b)
		assert.NilError(t, w.Close())
	case "zstd":
		w, err := zstd.NewWriter(&buf)
		assert.NilError(t, err)
		_, _ = w.Write(b)
		assert.NilError(t, w.Close())
	default:
		return b
	}
	return buf.Bytes()
}

// sendWith is send with extra headers.
func sendWith(t *testing.T, h http.Handler, target, contentType string, body []byte, headers map[string]string) (int, string) {
	t.Helper()
	req := httptest.NewRequest("POST", target, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// zstdStream is an Arrow IPC stream of ids with ZSTD buffer compression (the other codec of
// the IPC format; Lance itself writes it).
func zstdStream(t *testing.T, ids ...int64) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	bld := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer bld.Release()
	bld.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	rec := bld.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithZstd())
	assert.NilError(t, w.Write(rec))
	assert.NilError(t, w.Close())
	return buf.Bytes()
}

// TestCompressedBodies: request bodies compressed with an HTTP Content-Encoding (gzip, deflate,
// zstd) decode before any door sees them, Arrow IPC bodies with LZ4 or ZSTD buffer compression
// decode, and x-lancedb-database (which the remote client sends with hostOverride) changes
// nothing: one server is one catalog. Bad encodings are refused and write nothing.
func TestCompressedBodies(t *testing.T) {
	h := remoteServer(t)
	const arrowType = "application/vnd.apache.arrow.stream"
	db := map[string]string{"x-lancedb-database": "lancecat"}

	st, body := sendWith(t, h, "/v1/table/items/create/", arrowType, encoded(t, "gzip", lz4Stream(t, 1, 2, 3)), map[string]string{"Content-Encoding": "gzip", "x-lancedb-database": "lancecat"})
	assert.Equal(t, st, http.StatusOK, body)
	for enc, stream := range map[string][]byte{
		"deflate":  lz4Stream(t, 4),
		"zstd":     zstdStream(t, 5, 6),
		"identity": zstdStream(t, 7),
	} {
		st, body := sendWith(t, h, "/v1/table/items/insert/", arrowType, encoded(t, enc, stream), map[string]string{"Content-Encoding": enc})
		assert.Equal(t, st, http.StatusOK, "%s: %s", enc, body)
	}
	count := func(enc, pred string) (int, string) {
		return sendWith(t, h, "/v1/table/items/count_rows/", "application/json", encoded(t, enc, []byte(`{"predicate":"`+pred+`"}`)), map[string]string{"Content-Encoding": enc, "x-lancedb-database": "other"})
	}
	for _, enc := range []string{"gzip", "deflate", "zstd", ""} {
		st, body := count(enc, "id > 0")
		assert.Equal(t, st, http.StatusOK, "%s: %s", enc, body)
		assert.Equal(t, strings.TrimSpace(body), "7", enc)
	}
	st, body = sendWith(t, h, "/v1/table/items/count_rows/", "application/json", []byte(`{}`), db)
	assert.Equal(t, st, http.StatusOK, body)
	assert.Equal(t, strings.TrimSpace(body), "7")

	t.Run("bad encodings", func(t *testing.T) {
		st, body := sendWith(t, h, "/v1/table/items/insert/", arrowType, encoded(t, "gzip", lz4Stream(t, 8)), map[string]string{"Content-Encoding": "br"})
		assert.Equal(t, st, http.StatusUnsupportedMediaType, body)
		st, body = sendWith(t, h, "/v1/table/items/insert/", arrowType, lz4Stream(t, 8), map[string]string{"Content-Encoding": "gzip"})
		assert.Equal(t, st, http.StatusBadRequest, body)
		st, body = sendWith(t, h, "/v1/table/items/insert/", arrowType, encoded(t, "gzip", lz4Stream(t, 8))[:40], map[string]string{"Content-Encoding": "gzip"})
		assert.Equal(t, st, http.StatusBadRequest, body)
		// A small body that expands past the JSON limit (8 MiB) is 413, not held.
		bomb := encoded(t, "gzip", append([]byte(`{"predicate":"`), bytes.Repeat([]byte(" "), 9<<20)...))
		assert.Assert(t, len(bomb) < 64<<10)
		st, body = sendWith(t, h, "/v1/table/items/count_rows/", "application/json", bomb, map[string]string{"Content-Encoding": "gzip"})
		assert.Equal(t, st, http.StatusRequestEntityTooLarge, body)
		st, body = count("", "id > 0")
		assert.Equal(t, st, http.StatusOK, body)
		assert.Equal(t, strings.TrimSpace(body), "7", "nothing written by the refused bodies")
	})
}
