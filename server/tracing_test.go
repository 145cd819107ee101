package server

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/internal/telemetry"
	"github.com/lancecat/lancecat/internal/telemetry/otlptest"
	"github.com/lancecat/lancecat/namespace"
	"github.com/lancecat/lancecat/storage"
)

// tracedServer serves a local catalog whose bucket is instrumented, with tracing exporting over
// OTLP/HTTP to a receiver of the test's (the exporter reads OTEL_EXPORTER_OTLP_ENDPOINT).
func tracedServer(t *testing.T) (*Server, *otlptest.Receiver, func(), *syncBuffer) {
	t.Helper()
	rcv := otlptest.NewHTTP(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.Endpoint)
	tracing, shutdown, err := telemetry.Setup(context.Background(), os.Getenv, "0.0.0-test")
	assert.NilError(t, err)
	assert.Assert(t, tracing.On())
	dir := t.TempDir()
	fs, err := storage.NewFS(dir)
	assert.NilError(t, err)
	st := storage.NewTelemetry(tracing, nil)
	logs := &syncBuffer{}
	srv, err := New(Options{
		Handlers:  handlers.New(handlers.Options{Catalog: namespace.New(storage.Instrument(fs, "fs", st), namespace.Options{RootURI: dir})}),
		Logger:    slog.New(slog.NewJSONHandler(logs, nil)),
		Telemetry: Telemetry{Tracing: tracing, Collectors: []prometheus.Collector{st.Collector()}},
	})
	assert.NilError(t, err)
	flush := func() { assert.NilError(t, shutdown(context.Background())) }
	return srv, rcv, flush, logs
}

// TestTracingSpanTree: with tracing on, a request is a server span continuing the caller's W3C
// traceparent, with the guard chain (a span per guard) and the catalog operation under it, and
// the operation's object-store calls under that; what arrives at a real OTLP receiver, decoded.
func TestTracingSpanTree(t *testing.T) {
	srv, rcv, flush, logs := tracedServer(t)
	h := srv.Handler()
	st, body := send(t, h, "POST", "/v1/namespace/ns/create", "application/json", []byte(`{}`))
	assert.Equal(t, st, 200, string(body))
	st, body = send(t, h, "POST", "/v1/table/ns$t/create", "application/vnd.apache.arrow.stream", lz4Stream(t, 1, 2, 3))
	assert.Equal(t, st, 200, string(body))

	const traceID, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	traceparent := map[string]string{"traceparent": "00-" + traceID + "-" + callerSpan + "-01", "X-Request-Id": "rid-traced"}
	a := do(t, h, "POST", "/v1/table/ns$t/describe", `{}`, traceparent)
	assert.Equal(t, a.status, 200, a.body)
	st, qbody := sendWith(t, h, "/v1/table/ns$t/query", "application/json", []byte(`{"k":10,"filter":"id > 1"}`), traceparent)
	assert.Equal(t, st, 200, qbody)
	a = do(t, h, "POST", "/v1/table/ns$missing/describe", `{}`, nil)
	assert.Equal(t, a.status, 404, a.body)
	flush()

	spans := rcv.Spans()
	describe := only(t, spans, "POST /v1/table/:id/describe", traceID)
	assert.Equal(t, describe.ParentID, callerSpan, "continues the caller's trace")
	assert.Equal(t, describe.Kind, tracepb.Span_SPAN_KIND_SERVER)
	assert.Equal(t, describe.Attrs["lancecat.operation"], "DescribeTable")
	assert.Equal(t, describe.Attrs["http.route"], "/v1/table/:id/describe")
	assert.Equal(t, describe.Attrs["http.request.method"], "POST")
	assert.Equal(t, describe.Attrs["http.response.status_code"], "200")
	assert.Equal(t, describe.Attrs["lancecat.request_id"], "rid-traced")
	assert.Equal(t, describe.Resource["service.name"], "lancecat")
	assert.Equal(t, describe.Resource["service.version"], "0.0.0-test")
	kids := otlptest.Children(spans, describe)
	assert.Equal(t, len(kids), 2, otlptest.Tree(spans, describe))
	// The guards run first, then the operation.
	assert.Equal(t, kids[0].Name, "guards")
	assert.Equal(t, kids[1].Name, "DescribeTable")
	assert.Assert(t, len(otlptest.Children(spans, kids[0])) > 0, "a span per guard:\n%s", otlptest.Tree(spans, describe))
	for _, g := range otlptest.Children(spans, kids[0]) {
		assert.Assert(t, strings.HasPrefix(g.Name, "guard "), g.Name)
		assert.Assert(t, g.Attrs["lancecat.guard.stage"] != "", g.Name)
	}
	reads := otlptest.Children(spans, kids[1])
	assert.Assert(t, len(reads) > 0, "the operation's object-store calls:\n%s", otlptest.Tree(spans, describe))
	for _, s := range reads {
		assert.Assert(t, strings.HasPrefix(s.Name, "storage "), s.Name)
		assert.Equal(t, s.Attrs["lancecat.storage.backend"], "fs")
		assert.Assert(t, s.Attrs["lancecat.storage.outcome"] != "", s.Name)
	}
	t.Logf("DescribeTable:\n%s", otlptest.Tree(spans, describe, "lancecat.storage.outcome"))

	query := only(t, spans, "POST /v1/table/:id/query", traceID)
	assert.Equal(t, query.ParentID, callerSpan)
	qkids := otlptest.Children(spans, query)
	assert.Equal(t, len(qkids), 2, otlptest.Tree(spans, query))
	assert.Equal(t, qkids[1].Name, "QueryTable")
	assert.Assert(t, len(otlptest.Children(spans, qkids[1])) > 0, otlptest.Tree(spans, query))
	t.Logf("QueryTable:\n%s", otlptest.Tree(spans, query, "lancecat.storage.outcome"))

	// No traceparent: a trace of its own. A 404 is the caller's error, not the server's (OTel's
	// server-span rule): no error status; the error code is an attribute.
	missing := otlptest.Find(spans, "POST /v1/table/:id/describe")
	var root otlptest.Span
	for _, s := range missing {
		if s.TraceID != traceID {
			root = s
		}
	}
	assert.Equal(t, root.ParentID, "", "a new trace")
	assert.Equal(t, root.Attrs["http.response.status_code"], "404")
	assert.Equal(t, root.Attrs["lancecat.error_code"], "4") // TableNotFound
	assert.Assert(t, root.Status != tracepb.Status_STATUS_CODE_ERROR)

	// The access line names the trace.
	line := accessLine(t, logs, "rid-traced")
	assert.Equal(t, line["trace_id"], traceID)
}

// only is the one span named name in trace traceID.
func only(t *testing.T, spans []otlptest.Span, name, traceID string) otlptest.Span {
	t.Helper()
	var found []otlptest.Span
	for _, s := range otlptest.Find(spans, name) {
		if s.TraceID == traceID {
			found = append(found, s)
		}
	}
	assert.Equal(t, len(found), 1, "%s in trace %s: %d of %d spans", name, traceID, len(found), len(spans))
	return found[0]
}

// TestTracingOffByDefault: with no OTEL_* variable the server starts no span, reads no
// traceparent and its access line names no trace.
func TestTracingOffByDefault(t *testing.T) {
	tracing, _, err := telemetry.Setup(context.Background(), func(string) string { return "" }, "x")
	assert.NilError(t, err)
	assert.Assert(t, !tracing.On())
	s, logs := newTestServerWithLog(t, 0)
	assert.Assert(t, s.tracer == nil)
	do(t, s.Handler(), "GET", "/healthz", ``, map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "X-Request-Id": "rid-off"})
	_, ok := accessLine(t, logs, "rid-off")["trace_id"]
	assert.Assert(t, !ok)
}
