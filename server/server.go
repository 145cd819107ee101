// Package server assembles the HTTP server: Echo with the middleware every request goes through
// (raw-path routing, request id, problem translation, access log, metrics, identity, body limit),
// the generated routes for every spec operation, and the operational endpoints. It serves the
// handlers it is given; what they are built from (settings, catalog, governance) is the
// composition root's, package app.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/semaphore"

	"github.com/lancecat/lancecat/authz"
	"github.com/lancecat/lancecat/console"
	"github.com/lancecat/lancecat/control"
	"github.com/lancecat/lancecat/guards"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/internal/telemetry"
)

// ReadyCheck is one dependency /readyz asks about.
type ReadyCheck struct {
	Name  string
	Check func(context.Context) error
}

// Options build a Server.
type Options struct {
	Handlers     *handlers.Server
	Control      *control.Control
	MaxBodyBytes int64
	Logger       *slog.Logger
	Ready        []ReadyCheck
	// Authn resolves principals (authn.go); nil: authorization off, every caller anonymous.
	Authn *authz.Authenticator
	// ReadOnly refuses every write with 503 code 17 and Retry-After (readonly.go).
	ReadOnly bool
	// MaxConcurrentWrites sheds writes beyond it with 429 code 21 (shedding.go); <= 0: no limit.
	MaxConcurrentWrites int

	// Request bodies (body.go); zero values take the defaults. MaxBodyBytes bounds Arrow IPC
	// uploads, MaxJSONBodyBytes every other body (never above MaxBodyBytes), MaxBufferedBodyBytes
	// the bodies all requests hold at once. A body must arrive within ReadBodyTimeout plus one
	// second per MinBodyRate bytes received.
	MaxJSONBodyBytes     int64
	MaxBufferedBodyBytes int64
	ReadBodyTimeout      time.Duration
	MinBodyRate          int64
	// IdleTimeout closes keep-alive connections idle that long (default 2m).
	IdleTimeout time.Duration
	// TrustedProxies are the peers whose X-Forwarded-For / X-Real-IP name the client (access log
	// `remote`); from anyone else the headers are ignored. None by default.
	TrustedProxies []*net.IPNet

	// Collectors are more metrics served on /metrics of the operations listener (the maintenance
	// service's).
	Collectors []prometheus.Collector
	// Telemetry is the tracing (off by default) and the metrics of the calls lancecat makes
	// (tracing.go).
	Telemetry Telemetry

	// Console mounts the web console at /console (console/), with Delimiter joining id parts.
	Console   bool
	Delimiter string
	// ConsoleOIDC, when set, offers OIDC sign-in in the console.
	ConsoleOIDC *console.OIDCOptions
	// ConsoleSecureCookies marks the console's cookies Secure always (console.Options).
	ConsoleSecureCookies bool

	// bodyBudgetWait overrides how long a body waits for buffer budget (tests).
	bodyBudgetWait time.Duration
}

// Server is the assembled HTTP server.
type Server struct {
	echo    *echo.Echo
	logger  *slog.Logger
	metrics *metrics
	ops     operationIndex
	ready   []ReadyCheck
	idle    time.Duration
	// routes are the route templates registered, which bound the metric labels (metrics.go).
	routes map[string]bool
	// handler is what the listener serves: the router, and the console beside it when on.
	handler http.Handler
	// opsH is what the operations listener serves: /metrics and /debug/pprof/ (OpsHandler).
	opsH http.Handler
	// tracing is where spans go; tracer is nil when it is off, and then no span is started.
	tracing telemetry.Tracing
	tracer  trace.Tracer
}

// New assembles the server.
func New(opts Options) (*Server, error) {
	if opts.Handlers == nil {
		return nil, errors.New("server: no handlers")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxJSONBodyBytes <= 0 {
		opts.MaxJSONBodyBytes = DefaultMaxJSONBodyBytes
	}
	if opts.MaxBufferedBodyBytes <= 0 {
		opts.MaxBufferedBodyBytes = DefaultMaxBufferedBodyBytes
	}
	if opts.ReadBodyTimeout <= 0 {
		opts.ReadBodyTimeout = DefaultReadBodyTimeout
	}
	if opts.MinBodyRate <= 0 {
		opts.MinBodyRate = DefaultMinBodyRate
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.bodyBudgetWait <= 0 {
		opts.bodyBudgetWait = bodyBudgetWait
	}
	// One body never needs more than the whole budget (it could never be admitted).
	opts.MaxBodyBytes = min(opts.MaxBodyBytes, opts.MaxBufferedBodyBytes)
	ops, err := SpecOperations()
	if err != nil {
		return nil, err
	}
	control, err := ControlOperations()
	if err != nil {
		return nil, err
	}
	s := &Server{
		echo:    echo.New(),
		logger:  opts.Logger,
		metrics: newMetrics(),
		ops:     newOperationIndex(append(ops, control...)),
		ready:   opts.Ready,
		idle:    opts.IdleTimeout,
		tracing: opts.Telemetry.Tracing,
	}
	if s.tracing.On() {
		s.tracer = s.tracing.Tracer(tracerName)
	}
	body := &bodyRules{
		maxArrow: opts.MaxBodyBytes, maxJSON: min(opts.MaxJSONBodyBytes, opts.MaxBodyBytes),
		arrowRoutes: arrowRoutes(ops),
		budget:      semaphore.NewWeighted(opts.MaxBufferedBodyBytes), budgetBytes: opts.MaxBufferedBodyBytes,
		budgetWait: opts.bodyBudgetWait, timeout: opts.ReadBodyTimeout, minRate: opts.MinBodyRate,
	}
	e := s.echo
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = ipExtractor(opts.TrustedProxies)
	// Errors raised before routing (none today) still leave as problems.
	e.HTTPErrorHandler = func(err error, c echo.Context) { s.writeProblem(c, err) }
	e.Pre(routeOnRawPath)
	// The body is read in full (bounded in size, time and shared memory) after authentication, and
	// before the door's guards (authz_gate.go: read-only mode, shape, authorization, then write
	// shedding), so a slow body holds no write slot.
	e.Use(body.bound, requestID, s.observe, identity, authenticate(opts.Authn, opts.Logger), body.middleware)
	// One set of write slots and one mode for the replica, whichever plane a door is on.
	shed := guards.NewShedder(opts.MaxConcurrentWrites)
	specDeps := opts.Handlers.GuardDeps()
	specDeps.ReadOnly, specDeps.Shed = opts.ReadOnly, shed
	var controlDeps *guards.Deps
	if opts.Control != nil {
		if controlDeps = opts.Control.GuardDeps(); controlDeps != nil {
			controlDeps.ReadOnly, controlDeps.Shed = opts.ReadOnly, shed
		}
	}
	e.Use(doorGuards(ops, control, specDeps, controlDeps, guards.UnroutedChain(guards.Deps{ReadOnly: opts.ReadOnly, Shed: shed}), s.tracer))

	opts.Handlers.Register(e)
	if opts.Control != nil {
		opts.Control.Register(e)
	}
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	s.metrics.registry.MustRegister(opts.Collectors...)
	s.metrics.registry.MustRegister(opts.Telemetry.Collectors...)
	s.opsH = s.opsHandler()
	s.routes = map[string]bool{}
	for _, r := range e.Routes() {
		s.routes[r.Path] = true
	}
	s.handler = e
	if opts.Console {
		// The console sits beside the router, not on it: its pages are no door (no guards, no
		// write slot of their own), and each call it makes on the caller's behalf enters the router
		// like any client's request, through every middleware and guard.
		copts := console.Options{API: e, Delimiter: opts.Delimiter, Logger: opts.Logger, OIDC: opts.ConsoleOIDC,
			SecureCookies: opts.ConsoleSecureCookies, TrustedProxies: opts.TrustedProxies}
		// The console explains a caller's own access (authz.Explainer: a read-only query, asked
		// for the principal the router authenticated) where the authorizer can.
		if opts.Control != nil {
			if deps := opts.Control.GuardDeps(); deps != nil {
				copts.Explainer, _ = deps.Authorizer.(authz.Explainer)
			}
		}
		s.handler = console.Mount(e, copts)
	}
	return s, nil
}

// Handler is the server as an http.Handler: the API (spec and control doors, the console,
// /healthz and /readyz). It serves no metrics and no profiles: those are OpsHandler's.
func (s *Server) Handler() http.Handler { return s.handler }

// OpsHandler is what the operations listener (--metrics-addr) serves: Prometheus metrics at
// /metrics, Go's profiles at /debug/pprof/, and /healthz and /readyz as on the API port. They are kept off the API port: there they
// answered anonymous callers while authorization was on (metrics name every operation and error
// code served; a profile shows what the process holds and costs the CPU it samples), and a
// scraper carries no credential. The operations listener has no authentication of its own: it is
// meant for loopback or a private network, which the operator chooses by its address.
func (s *Server) OpsHandler() http.Handler { return s.opsH }

func (s *Server) opsHandler() http.Handler {
	mux := http.NewServeMux()
	// promhttp_metric_handler_requests_total / _in_flight count the scrapes themselves.
	mux.Handle("GET /metrics", promhttp.InstrumentMetricHandler(s.metrics.registry,
		promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{Registry: s.metrics.registry})))
	// net/http/pprof's handlers, on this mux only (its import also registers them on
	// http.DefaultServeMux, which nothing here serves). /debug/pprof/cmdline is left out: it
	// would answer the process's arguments, and a secret may have been passed as a flag.
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/cmdline", http.NotFound)
	// The probes again, for an orchestrator that cannot reach the API port's: with
	// --tls-client-auth require the kubelet has no client certificate to present there.
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		opsJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		status, body := s.readiness(r.Context())
		opsJSON(w, status, body)
	})
	return mux
}

// RegisterCollectors adds metrics to the operations listener's /metrics after New: those of parts
// made once the server exists (the TLS certificate watch, made as serving starts).
func (s *Server) RegisterCollectors(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := s.metrics.registry.Register(c); err != nil {
			return fmt.Errorf("server: metrics: %w", err)
		}
	}
	return nil
}

// Routes lists what the server routes (method and Echo path), for the route test.
func (s *Server) Routes() []*echo.Route { return s.echo.Routes() }

// healthz says the process serves requests; it checks nothing else.
func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz says whether the dependencies answer, so a load balancer can take a replica out.
func (s *Server) readyz(c echo.Context) error {
	status, body := s.readiness(c.Request().Context())
	return c.JSON(status, body)
}

// readiness asks every ReadyCheck, within five seconds in all.
func (s *Server) readiness(ctx context.Context) (int, map[string]any) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	status, checks := http.StatusOK, map[string]string{}
	for _, rc := range s.ready {
		if err := rc.Check(ctx); err != nil {
			status = http.StatusServiceUnavailable
			checks[rc.Name] = "unavailable"
			s.logger.Warn("readiness check failed", slog.String("check", rc.Name), slog.String("error", err.Error()))
			continue
		}
		checks[rc.Name] = "ok"
	}
	return status, map[string]any{"ready": status == http.StatusOK, "checks": checks}
}

// opsJSON writes v as the answer of an operations-listener route.
func opsJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
