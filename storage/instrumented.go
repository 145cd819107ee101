package storage

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/lancecat/lancecat/internal/telemetry"
)

// Telemetry is what the buckets Open returns report to when S3Config.Telemetry is set: a latency
// histogram of every call, lancecat_object_store_request_duration_seconds{backend,operation,outcome},
// a span per call (tracing on), a debug line per call (logger at debug), and, for S3, the trace
// context on its HTTP requests. Labels are bounded: the backend (fs, s3, memory), the operation
// (get, get_range, stat, list, put, put_if_absent, put_if_match, delete, open_local) and the
// outcome (ok, not_found, exists, precondition_failed, invalid, canceled, error); never a key.
type Telemetry struct {
	duration *prometheus.HistogramVec
	tracing  telemetry.Tracing
	tracer   trace.Tracer // nil: tracing off
	logger   *slog.Logger // nil: no debug lines
}

// NewTelemetry makes the instruments; logger receives the debug lines (it should add the request
// id, server.LogRequestIDs), nil: none.
func NewTelemetry(tracing telemetry.Tracing, logger *slog.Logger) *Telemetry {
	t := &Telemetry{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lancecat_object_store_request_duration_seconds",
			Help:    "Latency of object-store calls (for get and get_range: until the body starts), by backend, operation and outcome.",
			Buckets: telemetry.LatencyBuckets,
		}, []string{"backend", "operation", "outcome"}),
		tracing: tracing,
		logger:  logger,
	}
	if tracing.On() {
		t.tracer = tracing.Tracer("github.com/lancecat/lancecat/storage")
	}
	return t
}

// Collector is the histogram, for a Prometheus registry.
func (t *Telemetry) Collector() prometheus.Collector { return t.duration }

// transport is the S3 client's HTTP transport: base carrying the trace context, each request a
// client span ("s3 GET").
func (t *Telemetry) transport(base http.RoundTripper) http.RoundTripper {
	if t == nil {
		return base
	}
	return t.tracing.Transport(base, func(r *http.Request) string { return "s3 " + r.Method })
}

// Instrument is b with every call measured and traced by t (nil: b itself). backend is the label
// of b's kind ("fs", "s3", "memory"). A local bucket's OpenLocal still reaches its files.
func Instrument(b Bucket, backend string, t *Telemetry) Bucket {
	if t == nil || b == nil {
		return b
	}
	return &instrumented{inner: b, backend: backend, t: t}
}

type instrumented struct {
	inner   Bucket
	backend string
	t       *Telemetry
}

// Unwrap is the bucket measured.
func (b *instrumented) Unwrap() Bucket { return b.inner }

// call is one measured call in progress.
type call struct {
	b     *instrumented
	op    string
	key   string
	ctx   context.Context
	span  trace.Span
	start time.Time
}

// maxTracedKey bounds the key a span or a debug line carries.
const maxTracedKey = 1024

func (b *instrumented) start(ctx context.Context, op, key string, attrs ...attribute.KeyValue) call {
	c := call{b: b, op: op, key: key, ctx: ctx, start: time.Now()}
	if b.t.tracer != nil {
		attrs = append(attrs, attribute.String("lancecat.storage.backend", b.backend),
			attribute.String("lancecat.storage.operation", op), attribute.String("lancecat.storage.key", clipKey(key)))
		c.ctx, c.span = b.t.tracer.Start(ctx, "storage "+op, trace.WithAttributes(attrs...))
	}
	return c
}

// end records the call's outcome and returns err unchanged.
func (c call) end(err error, attrs ...attribute.KeyValue) error {
	took := time.Since(c.start)
	outcome := Outcome(err)
	c.b.t.duration.WithLabelValues(c.b.backend, c.op, outcome).Observe(took.Seconds())
	if c.span != nil {
		c.span.SetAttributes(append(attrs, attribute.String("lancecat.storage.outcome", outcome))...)
		// Not found, exists and a lost precondition are answers a caller expects, not failures.
		if outcome == "error" || outcome == "canceled" {
			c.span.SetStatus(codes.Error, err.Error())
		}
		c.span.End()
	}
	if l := c.b.t.logger; l != nil && l.Enabled(c.ctx, slog.LevelDebug) {
		la := []slog.Attr{slog.String("backend", c.b.backend), slog.String("operation", c.op),
			slog.String("key", clipKey(c.key)), slog.String("outcome", outcome), slog.Duration("duration", took)}
		if err != nil {
			la = append(la, slog.String("error", err.Error()))
		}
		l.LogAttrs(c.ctx, slog.LevelDebug, "object store", la...)
	}
	return err
}

func clipKey(k string) string {
	if len(k) > maxTracedKey {
		return k[:maxTracedKey] + "…"
	}
	return k
}

// Outcome is the bounded label of a storage call's result.
func Outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrNotFound):
		return "not_found"
	case errors.Is(err, ErrExists):
		return "exists"
	case errors.Is(err, ErrPreconditionFailed):
		return "precondition_failed"
	case errors.Is(err, ErrInvalidKey), errors.Is(err, ErrInvalidRange):
		return "invalid"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	return "error"
}

func (b *instrumented) Get(ctx context.Context, key string) (io.ReadCloser, ObjectInfo, error) {
	c := b.start(ctx, "get", key)
	rc, info, err := b.inner.Get(c.ctx, key)
	return rc, info, c.end(err, attribute.Int64("lancecat.storage.size", info.Size))
}

func (b *instrumented) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	c := b.start(ctx, "get_range", key, attribute.Int64("lancecat.storage.offset", offset), attribute.Int64("lancecat.storage.length", length))
	rc, err := b.inner.GetRange(c.ctx, key, offset, length)
	return rc, c.end(err)
}

func (b *instrumented) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	c := b.start(ctx, "stat", key)
	info, err := b.inner.Stat(c.ctx, key)
	return info, c.end(err)
}

func (b *instrumented) List(ctx context.Context, prefix string, opts ListOptions) (ListPage, error) {
	c := b.start(ctx, "list", prefix)
	page, err := b.inner.List(c.ctx, prefix, opts)
	return page, c.end(err, attribute.Int("lancecat.storage.entries", len(page.Objects)+len(page.CommonPrefixes)))
}

func (b *instrumented) Put(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error) {
	c := b.start(ctx, "put", key, attribute.Int64("lancecat.storage.size", size))
	info, err := b.inner.Put(c.ctx, key, r, size)
	return info, c.end(err)
}

func (b *instrumented) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error) {
	c := b.start(ctx, "put_if_absent", key, attribute.Int64("lancecat.storage.size", size))
	info, err := b.inner.PutIfAbsent(c.ctx, key, r, size)
	return info, c.end(err)
}

func (b *instrumented) PutIfMatch(ctx context.Context, key string, r io.Reader, size int64, etag string) (ObjectInfo, error) {
	c := b.start(ctx, "put_if_match", key, attribute.Int64("lancecat.storage.size", size))
	info, err := b.inner.PutIfMatch(c.ctx, key, r, size, etag)
	return info, c.end(err)
}

func (b *instrumented) Delete(ctx context.Context, key string) error {
	c := b.start(ctx, "delete", key)
	return c.end(b.inner.Delete(c.ctx, key))
}

// OpenLocal is the bucket's (FS.OpenLocal through a Sub or directly), so a scan of a local
// table still preads its files; ErrNotLocal for any other bucket.
func (b *instrumented) OpenLocal(key string) (*os.File, error) {
	l, ok := b.inner.(interface {
		OpenLocal(string) (*os.File, error)
	})
	if !ok {
		return nil, ErrNotLocal
	}
	// No context reaches here, so no span (it would start a trace of its own): the histogram and
	// the debug line only.
	c := call{b: b, op: "open_local", key: key, ctx: context.Background(), start: time.Now()}
	f, err := l.OpenLocal(key)
	return f, c.end(err)
}
