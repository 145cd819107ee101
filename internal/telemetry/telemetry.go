// Package telemetry is lancecat's OpenTelemetry tracing: a tracer provider configured by the
// standard OTEL_* environment variables (OTLP over HTTP or gRPC), off — a no-op tracer, nothing
// exported, nothing propagated — when none of them asks for it, and the W3C trace context
// carried on the HTTP calls the server makes (OpenFGA, S3).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Tracing is where spans go. The zero value is off: a no-op tracer, and no trace context read
// from requests or written onto calls.
type Tracing struct {
	Provider   trace.TracerProvider
	Propagator propagation.TextMapPropagator
}

// On reports whether spans are recorded and exported.
func (t Tracing) On() bool { return t.Provider != nil }

// Tracer is the named tracer, a no-op one when tracing is off.
func (t Tracing) Tracer(name string) trace.Tracer {
	if t.Provider == nil {
		return noop.NewTracerProvider().Tracer(name)
	}
	return t.Provider.Tracer(name)
}

// propagator is the W3C trace context (traceparent, tracestate) and baggage.
func (t Tracing) propagator() propagation.TextMapPropagator {
	if t.Propagator == nil {
		return W3C
	}
	return t.Propagator
}

// Extract is ctx continuing the trace an incoming request's traceparent names (unchanged when
// tracing is off or there is none).
func (t Tracing) Extract(ctx context.Context, h http.Header) context.Context {
	if !t.On() {
		return ctx
	}
	return t.propagator().Extract(ctx, propagation.HeaderCarrier(h))
}

// W3C is the propagator lancecat reads and writes: W3C Trace Context and Baggage (the OTel default
// set of OTEL_PROPAGATORS).
var W3C = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Transport is base making a client span of every call, named by name (nil: "HTTP <method>"), and
// carrying the trace context (traceparent) to the server called. Off: base itself, at no cost.
func (t Tracing) Transport(base http.RoundTripper, name func(*http.Request) string) http.RoundTripper {
	if !t.On() {
		return base
	}
	if base == nil {
		base = http.DefaultTransport
	}
	opts := []otelhttp.Option{
		otelhttp.WithTracerProvider(t.Provider), otelhttp.WithPropagators(t.propagator()),
		// Latency is lancecat's own histograms' (Prometheus); no second, OTel-metric copy.
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
	}
	if name != nil {
		opts = append(opts, otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return name(r) }))
	}
	return otelhttp.NewTransport(base, opts...)
}

// LatencyBuckets are the buckets (seconds) of every lancecat latency histogram: the requests
// served and the calls made (OpenFGA, the object store), so their quantiles compare.
var LatencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// Env is the environment read (os.Getenv in the server; a map in tests).
type Env func(string) string

// enabled says whether the environment asks for traces: OTEL_TRACES_EXPORTER=otlp, or an OTLP
// endpoint set while OTEL_TRACES_EXPORTER is unset. The SDK's own default would be "otlp" to
// localhost:4318 always; a server that nobody configured for tracing exports nothing instead.
func enabled(env Env) (bool, error) {
	if v, _ := strconv.ParseBool(env("OTEL_SDK_DISABLED")); v {
		return false, nil
	}
	switch exp := strings.TrimSpace(env("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false, nil
	case "otlp":
		return true, nil
	case "":
		return env("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", nil
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: want otlp or none", exp)
	}
}

// protocol is OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else the
// specification's default, http/protobuf.
func protocol(env Env) (string, error) {
	p := env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if p == "" {
		p = env("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch p {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", fmt.Errorf("OTLP protocol %q: want grpc or http/protobuf (http/json has no Go exporter)", p)
}

// Setup builds the tracing the environment configures, with service.name lancecat and
// service.version version unless OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES say otherwise. The
// exporters read the rest of OTEL_EXPORTER_OTLP_* (endpoint, headers, timeout, compression,
// certificates) and the SDK OTEL_TRACES_SAMPLER* and OTEL_BSP_*, each as the specification
// says. shutdown flushes what is buffered and stops the exporter; off, it does nothing.
//
// The exporters read the process environment themselves, so env decides only whether tracing is
// on and over which protocol.
func Setup(ctx context.Context, env Env, version string) (t Tracing, shutdown func(context.Context) error, err error) {
	shutdown = func(context.Context) error { return nil }
	on, err := enabled(env)
	if err != nil || !on {
		return Tracing{}, shutdown, err
	}
	proto, err := protocol(env)
	if err != nil {
		return Tracing{}, shutdown, err
	}
	var client otlptrace.Client
	if proto == "grpc" {
		client = otlptracegrpc.NewClient()
	} else {
		client = otlptracehttp.NewClient()
	}
	// New does not dial: an unreachable collector costs dropped spans, never a failed start.
	exp, err := otlptrace.New(ctx, client)
	if err != nil {
		return Tracing{}, shutdown, fmt.Errorf("OTLP trace exporter (%s): %w", proto, err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "lancecat"), attribute.String("service.version", version)),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return Tracing{}, shutdown, fmt.Errorf("OTEL resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return Tracing{Provider: tp, Propagator: W3C}, tp.Shutdown, nil
}
