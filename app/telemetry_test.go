package app

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/internal/telemetry/otlptest"
	"github.com/lancecat/lancecat/internal/testenv"
	"github.com/lancecat/lancecat/registry"
	"github.com/lancecat/lancecat/storage"
)

// served is a `lancecat serve` running for a test.
type served struct {
	api, ops string
	logs     *syncBuffer
	stop     func() error // ends serving and returns what RunAddrs returned
}

// serveForTest runs RunAddrs (the whole process wiring: the OTEL_* environment is read there)
// with a debug-level JSON logger, on free ports, until stop or the test's end.
func serveForTest(t *testing.T, cfg Config) *served {
	t.Helper()
	cfg.Listen, cfg.MetricsAddr = "127.0.0.1:0", "127.0.0.1:0"
	logs := &syncBuffer{}
	logger, err := NewLogger(logs, "debug")
	assert.NilError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	apiAddr, opsAddr := make(chan net.Addr, 1), make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- RunAddrs(ctx, cfg, logger, Addrs{API: apiAddr, Ops: opsAddr}) }()
	s := &served{logs: logs}
	for s.api == "" || s.ops == "" {
		select {
		case a := <-apiAddr:
			s.api = "http://" + a.String()
		case a := <-opsAddr:
			s.ops = "http://" + a.String()
		case err := <-done:
			cancel()
			t.Fatalf("serve: %v", err)
		case <-time.After(30 * time.Second):
			cancel()
			t.Fatal("not listening after 30s")
		}
	}
	var stopped bool
	var result error
	s.stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			result = <-done
		}
		return result
	}
	t.Cleanup(func() { _ = s.stop() })
	return s
}

// call sends a POST to the API and returns the status and body.
func (s *served) call(t *testing.T, route, contentType string, body []byte, header map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.api+route, bytes.NewReader(body))
	assert.NilError(t, err)
	req.Header.Set("Content-Type", contentType)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func (s *served) metrics(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(s.ops + "/metrics")
	assert.NilError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

// describeAndQuery makes a table and describes and queries it, those two continuing the caller's
// trace (traceparent), and returns their request ids.
func describeAndQuery(t *testing.T, s *served, key string) {
	t.Helper()
	h := map[string]string{}
	if key != "" {
		h["x-api-key"] = key
	}
	st, body := s.call(t, "/v1/namespace/ns/create", "application/json", []byte(`{}`), h)
	expect(t, st, body, 200, 0)
	st, body = s.call(t, "/v1/table/ns$t/create", "application/vnd.apache.arrow.stream", lz4Stream(t, 1, 2, 3), h)
	expect(t, st, body, 200, 0)
	h["traceparent"] = "00-" + callerTrace + "-" + callerSpan + "-01"
	h["X-Request-Id"] = "rid-describe"
	st, body = s.call(t, "/v1/table/ns$t/describe", "application/json", []byte(`{}`), h)
	expect(t, st, body, 200, 0)
	h["X-Request-Id"] = "rid-query"
	st, body = s.call(t, "/v1/table/ns$t/query", "application/json", []byte(`{"k":10,"filter":"id > 1"}`), h)
	expect(t, st, body, 200, 0)
}

// requestSpan is the one server span of route in the caller's trace.
func requestSpan(t *testing.T, spans []otlptest.Span, name string) otlptest.Span {
	t.Helper()
	var found []otlptest.Span
	for _, s := range otlptest.Find(spans, name) {
		if s.TraceID == callerTrace {
			found = append(found, s)
		}
	}
	assert.Equal(t, len(found), 1, "%s in the caller's trace, of %d spans", name, len(spans))
	assert.Equal(t, found[0].ParentID, callerSpan, "%s continues the caller's traceparent", name)
	assert.Equal(t, found[0].Kind, tracepb.Span_SPAN_KIND_SERVER)
	return found[0]
}

// childNamed is the child of s named name (the first started).
func childNamed(t *testing.T, spans []otlptest.Span, s otlptest.Span, name string) otlptest.Span {
	t.Helper()
	for _, c := range otlptest.Children(spans, s) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %q under %q:\n%s", name, s.Name, otlptest.Tree(spans, s))
	return otlptest.Span{}
}

// TestTracingOverOTLP: `serve` configured only by the standard variables (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_PROTOCOL) exports to a real OTLP receiver, over HTTP and over gRPC: the
// request span continues the caller's traceparent, the guards and the operation under it, the
// object-store calls under the operation; what is still buffered when serving stops is flushed
// (the batch processor's delay is set far beyond the test).
func TestTracingOverOTLP(t *testing.T) {
	for _, c := range []struct {
		protocol string
		receiver func(testing.TB) *otlptest.Receiver
	}{
		{"http/protobuf", otlptest.NewHTTP},
		{"grpc", otlptest.NewGRPC},
	} {
		t.Run(c.protocol, func(t *testing.T) {
			rcv := c.receiver(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.Endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", c.protocol)
			t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "600000") // ms: only the shutdown flush exports
			t.Setenv("OTEL_SERVICE_NAME", "lancecat-test")
			s := serveForTest(t, specConfig(t))
			describeAndQuery(t, s, "")
			assert.Equal(t, rcv.Requests(), 0, "nothing exported before the flush")
			assert.NilError(t, s.stop())
			spans := rcv.Spans()
			assert.Assert(t, len(spans) > 0, "shutdown flushed the spans")

			describe := requestSpan(t, spans, "POST /v1/table/:id/describe")
			assert.Equal(t, describe.Resource["service.name"], "lancecat-test", "OTEL_SERVICE_NAME")
			assert.Equal(t, describe.Attrs["http.response.status_code"], "200")
			assert.Equal(t, describe.Attrs["lancecat.request_id"], "rid-describe")
			childNamed(t, spans, describe, "guards")
			op := childNamed(t, spans, describe, "DescribeTable")
			assert.Assert(t, len(otlptest.Children(spans, op)) > 0, otlptest.Tree(spans, describe))
			query := requestSpan(t, spans, "POST /v1/table/:id/query")
			childNamed(t, spans, query, "QueryTable")

			// The access line and the object-store debug lines name the trace.
			assert.Equal(t, accessLine(t, s.logs, "rid-describe")["trace_id"], callerTrace)
		})
	}
}

// TestTracingOpenFGAAndS3: with authorization by the real OpenFGA and the catalog on MinIO, the
// authorize guard's span holds the OpenFGA calls (client spans, the trace context sent on them)
// and each object-store call its S3 HTTP requests; /metrics has both latency histograms; the
// debug log a line per call. The span trees of a DescribeTable and a QueryTable are logged.
func TestTracingOpenFGAAndS3(t *testing.T) {
	s3, bucket := testenv.S3Bucket(t)
	cfg := openFGAConfig(t, "lancecat-otel")
	useS3(&cfg, s3, "s3://"+bucket+"/catalog")
	rcv := otlptest.NewHTTP(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.Endpoint)

	// alice (the estate admin) gets an API key on the control root before serving starts.
	ctlURI, err := controlURI(cfg, cfg.Root)
	assert.NilError(t, err)
	ctl, err := storage.Open(context.Background(), ctlURI, cfg.s3Config())
	assert.NilError(t, err)
	key, _, err := authz.NewAPIKeys(registry.NewStore(ctl)).Create(context.Background(), authz.User("alice"), "otel")
	assert.NilError(t, err)

	s := serveForTest(t, cfg)
	describeAndQuery(t, s, key)
	m := s.metrics(t)
	for _, want := range []string{
		`lancecat_openfga_request_duration_seconds_count{code="200",method="Check"}`,
		`lancecat_object_store_request_duration_seconds_count{backend="s3",operation="put_if_absent",outcome="ok"}`,
		`lancecat_object_store_request_duration_seconds_count{backend="s3",operation="list",outcome="ok"}`,
		`lancecat_http_requests_total{code="200",operation="DescribeTable"} 1`,
		`lancecat_http_requests_in_flight 0`,
	} {
		assert.Check(t, strings.Contains(m, want), "%s not in\n%s", want, m)
	}
	assert.NilError(t, s.stop())
	spans := rcv.Spans()

	describe := requestSpan(t, spans, "POST /v1/table/:id/describe")
	t.Logf("DescribeTable:\n%s", otlptest.Tree(spans, describe, "lancecat.storage.outcome", "http.response.status_code"))
	query := requestSpan(t, spans, "POST /v1/table/:id/query")
	t.Logf("QueryTable:\n%s", otlptest.Tree(spans, query, "lancecat.storage.outcome", "http.response.status_code"))

	// OpenFGA: under the authorize guard, client spans, their traceparent the span's own context.
	guards := childNamed(t, spans, describe, "guards")
	var fga []otlptest.Span
	for _, g := range otlptest.Children(spans, guards) {
		if strings.HasPrefix(g.Name, "guard authorize") {
			for _, c := range otlptest.Children(spans, g) {
				if strings.HasPrefix(c.Name, "openfga ") {
					fga = append(fga, c)
				}
			}
		}
	}
	assert.Assert(t, len(fga) > 0, "OpenFGA calls under the authorize guard:\n%s", otlptest.Tree(spans, describe))
	for _, c := range fga {
		assert.Equal(t, c.Kind, tracepb.Span_SPAN_KIND_CLIENT)
		assert.Equal(t, c.Attrs["http.response.status_code"], "200")
	}
	// S3: each object-store call of the operation has its HTTP request(s) under it.
	op := childNamed(t, spans, describe, "DescribeTable")
	calls := otlptest.Children(spans, op)
	assert.Assert(t, len(calls) > 0)
	for _, c := range calls {
		assert.Equal(t, c.Attrs["lancecat.storage.backend"], "s3")
		reqs := otlptest.Children(spans, c)
		assert.Assert(t, len(reqs) > 0, "%s has no S3 request under it:\n%s", c.Name, otlptest.Tree(spans, describe))
		for _, r := range reqs {
			assert.Assert(t, strings.HasPrefix(r.Name, "s3 "), r.Name)
			assert.Equal(t, r.Kind, tracepb.Span_SPAN_KIND_CLIENT)
		}
	}

	// The debug log: a line per request start, per OpenFGA call and per object-store call, each
	// with the request id and a duration.
	seen := map[string]bool{}
	for _, l := range logLines(t, s.logs) {
		if l["request_id"] != "rid-describe" {
			continue
		}
		msg, _ := l["msg"].(string)
		seen[msg] = true
		if msg == "openfga" || msg == "object store" || msg == "request" {
			d, ok := l["duration"].(float64)
			assert.Check(t, ok && d > 0, "%s: duration %v", msg, l["duration"])
			assert.Equal(t, l["trace_id"], callerTrace, msg)
		}
	}
	for _, msg := range []string{"request start", "openfga", "object store", "request"} {
		assert.Check(t, seen[msg], "no %q line for the request at debug level:\n%s", msg, s.logs.String())
	}
}

// TestDebugLogSaysWhatARequestDid: at --log-level debug a request logs its start and its
// object-store calls (operation, outcome, duration, request id); at info only its access line.
func TestDebugLogSaysWhatARequestDid(t *testing.T) {
	for _, level := range []string{"debug", "info"} {
		t.Run(level, func(t *testing.T) {
			cfg := specConfig(t)
			cfg.Listen = "127.0.0.1:0"
			logs := &syncBuffer{}
			logger, err := NewLogger(logs, level)
			assert.NilError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			ready, done := make(chan net.Addr, 1), make(chan error, 1)
			go func() { done <- Run(ctx, cfg, logger, ready) }()
			api := "http://" + (<-ready).String()
			req, err := http.NewRequest(http.MethodPost, api+"/v1/namespace/ns/create", strings.NewReader(`{}`))
			assert.NilError(t, err)
			req.Header.Set("X-Request-Id", "rid-debug")
			resp, err := http.DefaultClient.Do(req)
			assert.NilError(t, err)
			resp.Body.Close()
			cancel()
			assert.NilError(t, <-done)

			var msgs []string
			for _, l := range logLines(t, logs) {
				if l["request_id"] != "rid-debug" {
					continue
				}
				msgs = append(msgs, l["msg"].(string))
				switch l["msg"] {
				case "request start":
					assert.Equal(t, l["operation"], "CreateNamespace")
					assert.Equal(t, l["method"], "POST")
				case "object store":
					assert.Equal(t, l["backend"], "fs")
					assert.Assert(t, l["operation"] != "" && l["outcome"] != "", l)
					_, isNumber := l["duration"].(float64)
					assert.Assert(t, isNumber, l)
				case "request":
					assert.Equal(t, l["status"], float64(200))
					_, isNumber := l["duration"].(float64)
					assert.Assert(t, isNumber, l)
				}
			}
			if level == "info" {
				assert.DeepEqual(t, msgs, []string{"request"})
				return
			}
			assert.Assert(t, len(msgs) > 2, msgs)
			assert.Equal(t, msgs[0], "request start")
			assert.Equal(t, msgs[len(msgs)-1], "request")
			assert.Assert(t, strings.Contains(strings.Join(msgs, ","), "object store"), msgs)
		})
	}
}

// TestTelemetryEnvironmentErrors: an OTEL_* setting lancecat cannot honour fails the start with
// the variable named, instead of silently exporting nothing.
func TestTelemetryEnvironmentErrors(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"OTEL_TRACES_EXPORTER", "zipkin", "OTEL_TRACES_EXPORTER"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", "http/json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
			t.Setenv(c.name, c.value)
			cfg := specConfig(t)
			cfg.Listen = "127.0.0.1:0"
			err := Run(context.Background(), cfg, nil, nil)
			assert.ErrorContains(t, err, c.want)
		})
	}
}
