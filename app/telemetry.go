package app

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/internal/buildinfo"
	"github.com/lancecat/lancecat/internal/telemetry"
	"github.com/lancecat/lancecat/server"
	"github.com/lancecat/lancecat/storage"
)

// Telemetry is what a serving process reports besides its request metrics: OpenTelemetry
// tracing configured by the standard OTEL_* variables (off when none asks for it), and the
// latency histograms and debug lines of the calls it makes to OpenFGA and the object store.
type Telemetry struct {
	tracing  telemetry.Tracing
	storage  *storage.Telemetry
	openFGA  *authz.Telemetry
	shutdown func(context.Context) error
}

// NewTelemetry is the telemetry env configures (os.Getenv in the server); logger receives the
// calls' debug lines.
func NewTelemetry(ctx context.Context, env telemetry.Env, logger *slog.Logger) (*Telemetry, error) {
	tracing, shutdown, err := telemetry.Setup(ctx, env, buildinfo.Get().Version)
	if err != nil {
		return nil, err
	}
	calls := slog.New(server.LogRequestIDs(logger.Handler()))
	return &Telemetry{
		tracing:  tracing,
		storage:  storage.NewTelemetry(tracing, calls),
		openFGA:  authz.NewTelemetry(tracing, calls),
		shutdown: shutdown,
	}, nil
}

// startTelemetry sets c.Telemetry from the process environment unless the caller set one; stop
// flushes the spans still buffered (within five seconds) and stops the exporter.
func (c *Config) startTelemetry(ctx context.Context, logger *slog.Logger) (stop func(), err error) {
	if c.Telemetry != nil {
		return func() {}, nil
	}
	if c.Telemetry, err = NewTelemetry(ctx, os.Getenv, logger); err != nil {
		return nil, err
	}
	if c.Telemetry.tracing.On() {
		logger.Info("tracing on: OTLP export as the OTEL_* environment says")
	}
	t := c.Telemetry
	return func() { t.Shutdown(logger) }, nil
}

// Shutdown flushes the spans still buffered and stops the exporter, within five seconds.
func (t *Telemetry) Shutdown(logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.shutdown(ctx); err != nil {
		logger.Warn("tracing: flushing spans at shutdown", slog.String("error", err.Error()))
	}
}

// server is what the HTTP server takes of it: the tracing and the calls' histograms.
func (t *Telemetry) server() server.Telemetry {
	if t == nil {
		return server.Telemetry{}
	}
	return server.Telemetry{Tracing: t.tracing, Collectors: []prometheus.Collector{t.storage.Collector(), t.openFGA.Collector()}}
}

// storageTelemetry instruments the buckets storage.Open returns (nil: none, as for the admin
// commands).
func (t *Telemetry) storageTelemetry() *storage.Telemetry {
	if t == nil {
		return nil
	}
	return t.storage
}

// openFGAOptions instrument the OpenFGA client.
func (t *Telemetry) openFGAOptions() []authz.Option {
	if t == nil {
		return nil
	}
	return []authz.Option{authz.WithTelemetry(t.openFGA)}
}
