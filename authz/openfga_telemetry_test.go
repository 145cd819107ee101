package authz

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/telemetry"
)

// TestOpenFGAMethodLabel: the `method` label names the API method of every route the SDK and the
// raw calls use, under any URL prefix, and "other" for anything else: never a store or model id.
func TestOpenFGAMethodLabel(t *testing.T) {
	for _, c := range []struct{ method, path, want string }{
		{"GET", "/stores", "ListStores"},
		{"POST", "/stores", "CreateStore"},
		{"GET", "/stores/01HX", "GetStore"},
		{"DELETE", "/stores/01HX", "DeleteStore"},
		{"POST", "/stores/01HX/check", "Check"},
		{"POST", "/stores/01HX/batch-check", "BatchCheck"},
		{"POST", "/stores/01HX/list-objects", "ListObjects"},
		{"POST", "/stores/01HX/streamed-list-objects", "StreamedListObjects"},
		{"POST", "/stores/01HX/list-users", "ListUsers"},
		{"POST", "/stores/01HX/expand", "Expand"},
		{"POST", "/stores/01HX/read", "Read"},
		{"POST", "/stores/01HX/write", "Write"},
		{"GET", "/stores/01HX/changes", "ReadChanges"},
		{"GET", "/stores/01HX/authorization-models", "ReadAuthorizationModels"},
		{"POST", "/stores/01HX/authorization-models", "WriteAuthorizationModel"},
		{"GET", "/stores/01HX/authorization-models/01HY", "ReadAuthorizationModel"},
		{"GET", "/stores/01HX/assertions/01HY", "ReadAssertions"},
		{"PUT", "/stores/01HX/assertions/01HY", "WriteAssertions"},
		{"POST", "/fga/prefix/stores/01HX/check", "Check"},
		{"POST", "/stores/01HX/something-new", "other"},
		{"GET", "/healthz", "other"},
		{"GET", "/storesX", "other"},
		{"PATCH", "/stores/01HX", "other"},
	} {
		assert.Check(t, openFGAMethod(c.method, c.path) == c.want, "%s %s: %s", c.method, c.path, openFGAMethod(c.method, c.path))
	}
}

// TestOpenFGATelemetry: every call through the instrumented client is observed by method and HTTP
// status (a call that got no answer in time: timeout), is a client span whose W3C traceparent
// reaches the server, and is a debug line with its duration.
func TestOpenFGATelemetry(t *testing.T) {
	var mu sync.Mutex
	var traceparents []string
	fga := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		traceparents = append(traceparents, r.Header.Get("traceparent"))
		mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/read") {
			time.Sleep(100 * time.Millisecond)
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer fga.Close()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	var logs bytes.Buffer
	tel := NewTelemetry(telemetry.Tracing{Provider: tp}, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	o := buildOptions([]Option{WithTelemetry(tel)})

	ctx, parent := tp.Tracer("test").Start(context.Background(), "guard authorize")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fga.URL+"/stores/01HX/check", strings.NewReader(`{}`))
	assert.NilError(t, err)
	resp, err := o.httpClient.Do(req)
	assert.NilError(t, err)
	resp.Body.Close()
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	req, err = http.NewRequestWithContext(short, http.MethodPost, fga.URL+"/stores/01HX/read", strings.NewReader(`{}`))
	assert.NilError(t, err)
	_, err = o.httpClient.Do(req)
	assert.Assert(t, err != nil)
	parent.End()

	reg := prometheus.NewRegistry()
	assert.NilError(t, reg.Register(tel.Collector()))
	n, err := testutil.GatherAndCount(reg, "lancecat_openfga_request_duration_seconds")
	assert.NilError(t, err)
	assert.Equal(t, n, 2)
	problems, err := testutil.CollectAndLint(tel.Collector())
	assert.NilError(t, err)
	assert.Equal(t, len(problems), 0, "%v", problems)
	m := gatherText(t, reg)
	assert.Check(t, strings.Contains(m, `lancecat_openfga_request_duration_seconds_count{code="200",method="Check"} 1`), m)
	assert.Check(t, strings.Contains(m, `lancecat_openfga_request_duration_seconds_count{code="timeout",method="Read"} 1`), m)

	mu.Lock()
	first := traceparents[0]
	mu.Unlock()
	assert.Assert(t, strings.HasPrefix(first, "00-"+parent.SpanContext().TraceID().String()+"-"), first)
	var names []string
	for _, s := range exp.GetSpans() {
		names = append(names, s.Name)
	}
	assert.DeepEqual(t, names, []string{"openfga Check", "openfga Read", "guard authorize"})

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	assert.Equal(t, len(lines), 2, logs.String())
	assert.Assert(t, strings.Contains(lines[0], `"msg":"openfga"`) && strings.Contains(lines[0], `"method":"Check"`) &&
		strings.Contains(lines[0], `"code":"200"`) && strings.Contains(lines[0], `"duration":`), lines[0])
	assert.Assert(t, strings.Contains(lines[1], `"code":"timeout"`), lines[1])

	// Without telemetry the client is the one given, untouched.
	given := &http.Client{}
	assert.Equal(t, buildOptions([]Option{WithHTTPClient(given)}).httpClient, given)
	assert.Assert(t, buildOptions([]Option{WithHTTPClient(given), WithTelemetry(tel)}).httpClient != given, "a copy, not the caller's client changed")
	assert.Assert(t, given.Transport == nil)
}

func gatherText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	assert.NilError(t, err)
	var b strings.Builder
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := make([]string, 0, len(m.GetLabel()))
			for _, lp := range m.GetLabel() {
				labels = append(labels, lp.GetName()+`="`+lp.GetValue()+`"`)
			}
			fmt.Fprintf(&b, "%s_count{%s} %d\n", mf.GetName(), strings.Join(labels, ","), m.GetHistogram().GetSampleCount())
		}
	}
	return b.String()
}
