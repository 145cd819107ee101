package server

import (
	"net/http"
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
