package server

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/lancecat/lancecat/internal/telemetry"
	"github.com/lancecat/lancecat/storage"
)

// BenchmarkRequestTelemetry: with the object-store decorator (metrics) and tracing off, as `serve`
// runs without OTEL_*; and with tracing on, every span recorded (sampled) and then dropped
// (no exporter), the cost of tracing itself.
func BenchmarkRequestTelemetry(b *testing.B) {
	for _, c := range []struct {
		name    string
		tracing func() telemetry.Tracing
	}{
		{"off", func() telemetry.Tracing { return telemetry.Tracing{} }},
		{"on", func() telemetry.Tracing { return telemetry.Tracing{Provider: sdktrace.NewTracerProvider()} }},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchRequests(b, func(b *testing.B) *Server {
				tr := c.tracing()
				st := storage.NewTelemetry(tr, nil)
				srv, err := New(Options{
					Handlers:  benchCatalog(b, func(x storage.Bucket) storage.Bucket { return storage.Instrument(x, "memory", st) }),
					Telemetry: Telemetry{Tracing: tr, Collectors: []prometheus.Collector{st.Collector()}},
				})
				if err != nil {
					b.Fatal(err)
				}
				return srv
			})
		})
	}
}
