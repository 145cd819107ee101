package storage_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/internal/telemetry"
	"github.com/lancecat/lancecat/storage"
	"github.com/lancecat/lancecat/storage/storagetest"
)

// An instrumented bucket behaves as the bucket it measures: the conformance suite, traced.
func TestInstrumentedConformance(t *testing.T) {
	tel := storage.NewTelemetry(telemetry.Tracing{Provider: sdktrace.NewTracerProvider()}, nil)
	storagetest.Run(t, func(t *testing.T) storage.Bucket { return storage.Instrument(storage.NewMemory(), "memory", tel) })
}

// sampleCount is how many observations the histogram of t holds for the labels.
func sampleCount(t *testing.T, c prometheus.Collector, labels map[string]string) uint64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	assert.NilError(t, reg.Register(c))
	mfs, err := reg.Gather()
	assert.NilError(t, err)
	var n uint64
	for _, mf := range mfs {
	metrics:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue metrics
				}
			}
			n += m.GetHistogram().GetSampleCount()
		}
	}
	return n
}

// TestInstrumentedOutcomes: every call is observed under its operation and a bounded outcome
// (never the key), answers a caller expects (not found, exists, a lost precondition) apart from
// failures; a span per call carries the key and outcome; a debug line per call.
func TestInstrumentedOutcomes(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	var logs bytes.Buffer
	tel := storage.NewTelemetry(telemetry.Tracing{Provider: tp}, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	b := storage.Instrument(storage.NewMemory(), "memory", tel)
	ctx := context.Background()
	put := func(key string) error {
		_, err := b.PutIfAbsent(ctx, key, strings.NewReader("x"), 1)
		return err
	}
	assert.NilError(t, put("a/1"))
	assert.Assert(t, errors.Is(put("a/1"), storage.ErrExists))
	_, err := b.PutIfMatch(ctx, "a/1", strings.NewReader("y"), 1, "not-the-etag")
	assert.Assert(t, errors.Is(err, storage.ErrPreconditionFailed))
	_, _, err = b.Get(ctx, "a/missing")
	assert.Assert(t, errors.Is(err, storage.ErrNotFound))
	_, err = b.Stat(ctx, "../escape")
	assert.Assert(t, errors.Is(err, storage.ErrInvalidKey))
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = b.Stat(canceled, "a/1")
	assert.Assert(t, err != nil)
	_, err = b.List(ctx, "a/", storage.ListOptions{})
	assert.NilError(t, err)
	assert.NilError(t, b.Delete(ctx, "a/1"))

	for _, c := range []struct{ op, outcome string }{
		{"put_if_absent", "ok"}, {"put_if_absent", "exists"}, {"put_if_match", "precondition_failed"},
		{"get", "not_found"}, {"stat", "invalid"}, {"stat", "canceled"}, {"list", "ok"}, {"delete", "ok"},
	} {
		n := sampleCount(t, tel.Collector(), map[string]string{"backend": "memory", "operation": c.op, "outcome": c.outcome})
		assert.Check(t, n == 1, "%s %s: %d", c.op, c.outcome, n)
	}

	spans := exp.GetSpans()
	assert.Equal(t, len(spans), 8)
	assert.Equal(t, spans[1].Name, "storage put_if_absent")
	attrs := map[string]string{}
	for _, kv := range spans[1].Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	assert.Equal(t, attrs["lancecat.storage.key"], "a/1")
	assert.Equal(t, attrs["lancecat.storage.outcome"], "exists")
	assert.Equal(t, spans[1].Status.Code.String(), "Unset", "an expected answer is no error")
	assert.Equal(t, spans[5].Status.Code.String(), "Error", "a canceled call is")

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	assert.Equal(t, len(lines), 8)
	assert.Assert(t, strings.Contains(lines[3], `"msg":"object store"`) && strings.Contains(lines[3], `"operation":"get"`) &&
		strings.Contains(lines[3], `"outcome":"not_found"`) && strings.Contains(lines[3], `"duration":`), lines[3])
}

// TestInstrumentedKeepsLocalReads: a local bucket, instrumented and viewed through Sub, still
// opens its files for pread (OpenLocal), which lance's scans rely on; any other is ErrNotLocal.
func TestInstrumentedKeepsLocalReads(t *testing.T) {
	dir := t.TempDir()
	fs, err := storage.NewFS(dir)
	assert.NilError(t, err)
	tel := storage.NewTelemetry(telemetry.Tracing{}, nil)
	b := storage.Sub(storage.Instrument(fs, "fs", tel), "t")
	_, err = b.Put(context.Background(), "data/f.lance", strings.NewReader("bytes"), 5)
	assert.NilError(t, err)
	local, ok := b.(interface {
		OpenLocal(string) (*os.File, error)
	})
	assert.Assert(t, ok)
	f, err := local.OpenLocal("data/f.lance")
	assert.NilError(t, err)
	assert.Equal(t, f.Name() != "", true)
	f.Close()
	assert.Equal(t, filepath.Base(f.Name()), "f.lance")
	assert.Equal(t, sampleCount(t, tel.Collector(), map[string]string{"backend": "fs", "operation": "open_local", "outcome": "ok"}), uint64(1))

	mem := storage.Sub(storage.Instrument(storage.NewMemory(), "memory", tel), "t")
	_, err = mem.(interface {
		OpenLocal(string) (*os.File, error)
	}).OpenLocal("x")
	assert.Assert(t, errors.Is(err, storage.ErrNotLocal))
	assert.Equal(t, storage.Instrument(fs, "fs", nil), storage.Bucket(fs), "no telemetry: the bucket itself")
}

// TestS3RequestsCarryTraceparent: with tracing on, each HTTP request the S3 backend makes carries
// the W3C traceparent of its client span, in the trace of the caller's span.
func TestS3RequestsCarryTraceparent(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.Header.Get("traceparent"))
		mu.Unlock()
		if r.Method == http.MethodHead && r.URL.Path != "/bkt" && r.URL.Path != "/bkt/" {
			w.Header().Set("ETag", `"abc"`)
			w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
			w.Header().Set("Content-Length", "3")
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer fake.Close()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tel := storage.NewTelemetry(telemetry.Tracing{Provider: tp}, nil)
	cfg := storage.S3Config{Endpoint: fake.URL, Region: "us-east-1", AccessKey: "k", SecretKey: "s", PathStyle: true, Telemetry: tel}
	b, err := storage.Open(context.Background(), "s3://bkt/pre", cfg)
	assert.NilError(t, err)

	ctx, parent := tp.Tracer("test").Start(context.Background(), "caller")
	info, err := b.Stat(ctx, "k1")
	parent.End()
	assert.NilError(t, err)
	assert.Equal(t, info.Size, int64(3))

	mu.Lock()
	defer mu.Unlock()
	last := seen[len(seen)-1]
	trace := parent.SpanContext().TraceID().String()
	assert.Assert(t, strings.HasPrefix(last, "HEAD 00-"+trace+"-"), "%v", seen)
	var names []string
	for _, s := range exp.GetSpans() {
		names = append(names, s.Name)
	}
	assert.Assert(t, strings.Contains(strings.Join(names, ","), "s3 HEAD,storage stat,caller"), names)
	assert.Equal(t, sampleCount(t, tel.Collector(), map[string]string{"backend": "s3", "operation": "stat", "outcome": "ok"}), uint64(1))
}
