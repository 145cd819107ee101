package telemetry

import (
	"context"
	"net/http"
	"testing"

	"gotest.tools/v3/assert"
)

func envOf(m map[string]string) Env { return func(k string) string { return m[k] } }

// TestEnabledByTheStandardVariables: tracing is on only when the environment asks for it (an
// OTLP endpoint, or OTEL_TRACES_EXPORTER=otlp); OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none
// turn it off; anything lancecat cannot export to is an error naming the variable.
func TestEnabledByTheStandardVariables(t *testing.T) {
	for _, c := range []struct {
		env     map[string]string
		on      bool
		wantErr string
	}{
		{env: nil},
		{env: map[string]string{"OTEL_SERVICE_NAME": "x"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, on: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, on: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}},
		{env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "jaeger"}, wantErr: "OTEL_TRACES_EXPORTER"},
	} {
		on, err := enabled(envOf(c.env))
		if c.wantErr != "" {
			assert.ErrorContains(t, err, c.wantErr)
			continue
		}
		assert.NilError(t, err)
		assert.Equal(t, on, c.on, "%v", c.env)
	}
	for _, c := range []struct {
		env           map[string]string
		want, wantErr string
	}{
		{env: nil, want: "http/protobuf"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, want: "grpc"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, want: "http/protobuf"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, wantErr: "http/json"},
	} {
		p, err := protocol(envOf(c.env))
		if c.wantErr != "" {
			assert.ErrorContains(t, err, c.wantErr)
			continue
		}
		assert.NilError(t, err)
		assert.Equal(t, p, c.want)
	}
}

// TestOffCostsNothing: off, Setup builds nothing, the tracer is a no-op, no trace context is read,
// and a transport is returned as it was.
func TestOffCostsNothing(t *testing.T) {
	tr, shutdown, err := Setup(context.Background(), envOf(nil), "v")
	assert.NilError(t, err)
	assert.Assert(t, !tr.On())
	assert.NilError(t, shutdown(context.Background()))
	_, span := tr.Tracer("x").Start(context.Background(), "s")
	assert.Assert(t, !span.IsRecording())
	h := http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	ctx := context.Background()
	assert.Equal(t, tr.Extract(ctx, h), ctx)
	base := &http.Transport{}
	assert.Equal(t, tr.Transport(base, nil), http.RoundTripper(base))
}
