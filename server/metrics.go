package server

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are per server (not the global registry) so tests and several servers in one process
// never collide.
type metrics struct {
	registry *prometheus.Registry
	duration *prometheus.HistogramVec
	errors   *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lancecat_http_request_duration_seconds",
			Help:    "Latency of HTTP requests by spec operation and HTTP status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"operation", "status"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lancecat_http_errors_total",
			Help: "Error answers by spec operation and Lance Namespace error code.",
		}, []string{"operation", "code"}),
	}
	m.registry.MustRegister(m.duration, m.errors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(operation string, status int, code *int, took time.Duration) {
	m.duration.WithLabelValues(operation, strconv.Itoa(status)).Observe(took.Seconds())
	if code != nil {
		m.errors.WithLabelValues(operation, strconv.Itoa(*code)).Inc()
	}
}
