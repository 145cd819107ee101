package authz

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lancecat/lancecat/internal/telemetry"
)

// Telemetry measures the calls the OpenFGA client makes (WithTelemetry): a latency histogram,
// lancecat_openfga_request_duration_seconds{method,code}, a client span per call carrying the
// trace context to OpenFGA (tracing on), and a debug line per call. `method` is the OpenFGA API
// method the path names (Check, BatchCheck, ListObjects, Write, …; "other" for any other path),
// `code` the HTTP status, or timeout, canceled or error when no answer came: both bounded, never a
// store or model id.
type Telemetry struct {
	duration *prometheus.HistogramVec
	tracing  telemetry.Tracing
	logger   *slog.Logger
}

// NewTelemetry makes the instruments; logger receives the debug lines (nil: none).
func NewTelemetry(tracing telemetry.Tracing, logger *slog.Logger) *Telemetry {
	return &Telemetry{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lancecat_openfga_request_duration_seconds",
			Help:    "Latency of OpenFGA API calls (until the response headers), by API method and HTTP status code.",
			Buckets: telemetry.LatencyBuckets,
		}, []string{"method", "code"}),
		tracing: tracing,
		logger:  logger,
	}
}

// Collector is the histogram, for a Prometheus registry.
func (t *Telemetry) Collector() prometheus.Collector { return t.duration }

// WithTelemetry measures and traces every OpenFGA call through t (nil: none). It wraps the
// transport of the client in use, WithHTTPClient's too.
func WithTelemetry(t *Telemetry) Option { return func(o *options) { o.telemetry = t } }

// instrument is c with its transport measured by t (a copy: a caller's client is not changed).
func (t *Telemetry) instrument(c *http.Client) *http.Client {
	if t == nil {
		return c
	}
	cc := *c
	base := cc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc.Transport = &measured{t: t, next: t.tracing.Transport(base, func(r *http.Request) string {
		return "openfga " + openFGAMethod(r.Method, r.URL.Path)
	})}
	return &cc
}

// measured is a transport observing each round trip into the histogram and the debug log.
type measured struct {
	t    *Telemetry
	next http.RoundTripper
}

func (m *measured) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := m.next.RoundTrip(r)
	took := time.Since(start)
	method, code := openFGAMethod(r.Method, r.URL.Path), callCode(r.Context(), resp, err)
	m.t.duration.WithLabelValues(method, code).Observe(took.Seconds())
	if l := m.t.logger; l != nil && l.Enabled(r.Context(), slog.LevelDebug) {
		attrs := []slog.Attr{slog.String("method", method), slog.String("code", code), slog.Duration("duration", took)}
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
		}
		l.LogAttrs(r.Context(), slog.LevelDebug, "openfga", attrs...)
	}
	return resp, err
}

// callCode is the `code` label of one round trip.
func callCode(ctx context.Context, resp *http.Response, err error) string {
	var ne net.Error
	switch {
	case err == nil:
		if resp.StatusCode < 100 || resp.StatusCode > 999 {
			return "other"
		}
		return strconv.Itoa(resp.StatusCode)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}

// openFGAMethod names the OpenFGA API method of a request by its HTTP method and path (OpenFGA's
// REST routes, under whatever prefix the URL has): one of a fixed set, "other" otherwise.
func openFGAMethod(httpMethod, path string) string {
	i := strings.LastIndex(path, "/stores")
	if i < 0 || (len(path) > i+len("/stores") && path[i+len("/stores")] != '/') {
		return "other"
	}
	// After /stores: "", "/{store}", "/{store}/{route}[/{id}]".
	parts := strings.Split(strings.Trim(path[i+len("/stores"):], "/"), "/")
	get := httpMethod == http.MethodGet
	switch {
	case parts[0] == "":
		if get {
			return "ListStores"
		}
		return "CreateStore"
	case len(parts) == 1:
		switch httpMethod {
		case http.MethodGet:
			return "GetStore"
		case http.MethodDelete:
			return "DeleteStore"
		}
		return "other"
	}
	route, withID := parts[1], len(parts) > 2
	switch route {
	case "check":
		return "Check"
	case "batch-check":
		return "BatchCheck"
	case "expand":
		return "Expand"
	case "list-objects":
		return "ListObjects"
	case "streamed-list-objects":
		return "StreamedListObjects"
	case "list-users":
		return "ListUsers"
	case "read":
		return "Read"
	case "write":
		return "Write"
	case "changes":
		return "ReadChanges"
	case "authorization-models":
		switch {
		case withID:
			return "ReadAuthorizationModel"
		case get:
			return "ReadAuthorizationModels"
		}
		return "WriteAuthorizationModel"
	case "assertions":
		if get {
			return "ReadAssertions"
		}
		return "WriteAssertions"
	}
	return "other"
}
