package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// benchCatalog is the handlers of an in-memory catalog holding table ns$t (three rows).
func benchCatalog(b *testing.B, wrap func(storage.Bucket) storage.Bucket) *handlers.Server {
	b.Helper()
	return handlers.New(handlers.Options{Catalog: namespace.New(wrap(storage.NewMemory()), namespace.Options{RootURI: "memory://"})})
}

func benchSetup(b *testing.B, h http.Handler) {
	b.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	bld := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer bld.Release()
	bld.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	rec := bld.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		b.Fatal(err)
	}
	_ = w.Close()
	for _, r := range []struct{ target, ct, body string }{
		{"/v1/namespace/ns/create", "application/json", `{}`},
		{"/v1/table/ns$t/create", "application/vnd.apache.arrow.stream", buf.String()},
	} {
		req := httptest.NewRequest("POST", r.target, strings.NewReader(r.body))
		req.Header.Set("Content-Type", r.ct)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("%s: %d %s", r.target, rec.Code, rec.Body)
		}
	}
}

// benchRequests serves GET /healthz (the middleware alone) and DescribeTable (a catalog read)
// b.N times each: the cost a request pays for the server's observation (logs, metrics, and, in
// this branch, tracing).
func benchRequests(b *testing.B, newServer func(b *testing.B) *Server) {
	for _, c := range []struct{ name, method, target, body string }{
		{"healthz", "GET", "/healthz", ""},
		{"DescribeTable", "POST", "/v1/table/ns$t/describe", "{}"},
	} {
		b.Run(c.name, func(b *testing.B) {
			srv := newServer(b)
			h := srv.Handler()
			benchSetup(b, h)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				var body *strings.Reader
				if c.body != "" {
					body = strings.NewReader(c.body)
				}
				var req *http.Request
				if body != nil {
					req = httptest.NewRequest(c.method, c.target, body)
					req.Header.Set("Content-Type", "application/json")
				} else {
					req = httptest.NewRequest(c.method, c.target, nil)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// BenchmarkRequest: tracing off (the default), as every deployment without OTEL_* runs.
func BenchmarkRequest(b *testing.B) {
	benchRequests(b, func(b *testing.B) *Server {
		srv, err := New(Options{Handlers: benchCatalog(b, func(x storage.Bucket) storage.Bucket { return x })})
		if err != nil {
			b.Fatal(err)
		}
		return srv
	})
}
