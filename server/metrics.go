package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/lancecat/lancecat/internal/telemetry"
)

// metrics are per server (not the global registry) so tests and several servers in one process
// never collide.
//
// The labels follow promhttp's: `code` is the HTTP status; the Lance Namespace error code of an
// error answer is `error_code`. `operation` is bounded by the route table (operationLabel).
type metrics struct {
	registry *prometheus.Registry
	duration *prometheus.HistogramVec
	requests *prometheus.CounterVec
	errors   *prometheus.CounterVec
	inFlight prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lancecat_http_request_duration_seconds",
			Help:    "Latency of HTTP requests by spec operation and HTTP status code.",
			Buckets: telemetry.LatencyBuckets,
		}, []string{"operation", "code"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lancecat_http_requests_total",
			Help: "HTTP requests answered, by spec operation and HTTP status code.",
		}, []string{"operation", "code"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lancecat_http_errors_total",
			Help: "Error answers by spec operation, HTTP status code and Lance Namespace error code (error_code).",
		}, []string{"operation", "code", "error_code"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "lancecat_http_requests_in_flight",
			Help: "HTTP requests being served (routed requests, from routing to the answer).",
		}),
	}
	m.registry.MustRegister(m.duration, m.requests, m.errors, m.inFlight,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(operation string, status int, code *int, took time.Duration) {
	sc := statusLabel(status)
	m.duration.WithLabelValues(operation, sc).Observe(took.Seconds())
	m.requests.WithLabelValues(operation, sc).Inc()
	if code != nil {
		m.errors.WithLabelValues(operation, sc, strconv.Itoa(*code)).Inc()
	}
}

// statusLabel is the `code` label of an HTTP status: its three digits (a handler can only write
// 100-999; anything else, which net/http would refuse, is one value).
func statusLabel(status int) string {
	if status < 100 || status > 999 {
		return "other"
	}
	return strconv.Itoa(status)
}

// standardMethods are the methods a label may name; any other method is "OTHER".
var standardMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true, http.MethodPatch: true,
	http.MethodDelete: true, http.MethodOptions: true, http.MethodConnect: true, http.MethodTrace: true,
}

// operationLabel is the `operation` of a request in logs and metrics: the operation id of a
// routed spec or control request, else a label built only from the route table and the standard
// methods ("unrouted", "/healthz", "DELETE /healthz", "OTHER /healthz"), so no request, whatever
// its method or path, adds a label value the route table does not already bound.
func (s *Server) operationLabel(method, route string) string {
	if id, ok := s.ops[method+" "+route]; ok {
		return id
	}
	if !s.routes[route] {
		return "unrouted"
	}
	switch {
	case method == http.MethodGet || method == http.MethodHead:
		return route
	case standardMethods[method]:
		return method + " " + route
	}
	return "OTHER " + route
}
