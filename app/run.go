package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/lancecat/lancecat/control"
	"github.com/lancecat/lancecat/handlers"
	"github.com/lancecat/lancecat/internal/buildinfo"
	"github.com/lancecat/lancecat/maintenance"
	"github.com/lancecat/lancecat/server"
)

// Run serves the catalog described by cfg until ctx ends. ready, if not nil, receives the API
// address once listening.
func Run(ctx context.Context, cfg Config, logger *slog.Logger, ready chan<- net.Addr) error {
	return RunAddrs(ctx, cfg, logger, Addrs{API: ready})
}

// Addrs receive the addresses Run listens on, once it listens on all of them (a test serving on
// port 0 learns them so); nil channels are skipped.
type Addrs struct {
	API chan<- net.Addr
	// Ops is the operations listener's (--metrics-addr); nothing is sent when it is off.
	Ops chan<- net.Addr
}

// RunAddrs is Run, telling addrs where it listens.
func RunAddrs(ctx context.Context, cfg Config, logger *slog.Logger, addrs Addrs) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	stopTelemetry, err := cfg.startTelemetry(ctx, logger) // OTEL_* tracing, call metrics (telemetry.go)
	if err != nil {
		return err
	}
	defer stopTelemetry()
	roots, err := openRoots(ctx, cfg)
	if err != nil {
		return err
	}
	catalog, err := newCatalog(cfg, roots)
	if err != nil {
		return err
	}
	gov, err := setupGovernance(ctx, cfg, roots, catalog, logger)
	if err != nil {
		return err
	}
	defer gov.close()
	if iv := cfg.Governance.TrashPurgeInterval; iv > 0 {
		if cfg.Governance.ReadOnly {
			logger.Info("trash purge off: read-only mode deletes nothing")
		} else {
			go maintenance.PurgeTrashEvery(ctx, gov.trash, iv, logger)
		}
	}
	hooks, err := cfg.Governance.Webhooks.webhooks(roots, gov, logger)
	if err != nil {
		return err
	}
	if hooks != nil {
		if err := hooks.Init(ctx); err != nil {
			return fmt.Errorf("webhooks: %w", err)
		}
		go hooks.Run(ctx)
	}
	maint := newMaintenance(cfg, roots, catalog, gov, logger)
	if iv := cfg.Maintenance.Interval; iv > 0 {
		go maint.Every(ctx, iv)
	}
	vendor, err := newCredentialVendor(cfg, gov.authorizer, roots.rootURI)
	if err != nil {
		return err
	}
	logVending(logger, cfg, roots.rootURI)
	proxies, err := cfg.Transport.trustedProxies()
	if err != nil {
		return err
	}
	consoleOIDC, err := cfg.ConsoleOIDC.options(cfg.Governance.OIDCIssuer)
	if err != nil {
		return err
	}
	srv, err := server.New(server.Options{
		Handlers: specHandlers(handlers.Options{Delimiter: cfg.Delimiter, Catalog: catalog,
			Authorizer: gov.authorizer, Vendor: vendor}, gov.trash),
		Control:      gov.control(control.Options{Delimiter: cfg.Delimiter, Vendor: vendor}, catalog).WithMaintenance(maint),
		Collectors:   append(maint.Metrics.Collectors(), buildinfo.Get().Collector()),
		Telemetry:    cfg.Telemetry.server(),
		MaxBodyBytes: cfg.MaxBodyBytes,
		Logger:       logger,
		Ready:        append(roots.readyChecks(), gov.ready...),
		Authn:        gov.authn,
		ReadOnly:     cfg.Governance.ReadOnly,

		MaxConcurrentWrites: cfg.Governance.MaxConcurrentWrites,

		MaxJSONBodyBytes:     cfg.Transport.MaxJSONBodyBytes,
		MaxBufferedBodyBytes: cfg.Transport.MaxBufferedBodyBytes,
		ReadBodyTimeout:      cfg.Transport.ReadBodyTimeout,
		MinBodyRate:          cfg.Transport.MinBodyRate,
		IdleTimeout:          cfg.Transport.IdleTimeout,
		TrustedProxies:       proxies,
		Console:              cfg.Console,
		ConsoleOIDC:          consoleOIDC,
		ConsoleSecureCookies: cfg.ConsoleSecureCookies,
		Delimiter:            cfg.Delimiter,
	})
	if err != nil {
		return err
	}
	logger.Info("catalog roots", slog.String("root", roots.rootURI), slog.String("control_root", roots.controlURI),
		slog.Bool("read_only", cfg.Governance.ReadOnly), slog.Int("max_concurrent_writes", cfg.Governance.MaxConcurrentWrites),
		slog.Int("trash_grace_days", cfg.Governance.TrashGraceDays))
	err = serve(ctx, srv, cfg, logger, addrs)
	stopIndexBuilds(catalog.Namespaces(), cfg.ShutdownTimeout, logger)
	if err != nil {
		return fmt.Errorf("lancecat serve: %w", err)
	}
	return nil
}

// serve serves srv on the listeners cfg names (listen) until ctx ends or one fails.
func serve(ctx context.Context, srv *server.Server, cfg Config, logger *slog.Logger, addrs Addrs) error {
	ctx, cancel := context.WithCancel(ctx) // stops the certificate watch when serving ends
	defer cancel()
	var l server.Listeners
	if err := cfg.TLS.setup(ctx, &l, srv, logger); err != nil {
		return err
	}
	bound, err := listen(cfg, logger, addrs)
	if err != nil {
		return err
	}
	bound.TLS, bound.OpsTLS = l.TLS, l.OpsTLS
	return srv.Serve(ctx, bound)
}

// listen binds the API on cfg.Listen and, when cfg.MetricsAddr is set, the operations listener,
// telling addrs where. Both are bound before either serves, so a taken port fails the start.
func listen(cfg Config, logger *slog.Logger, addrs Addrs) (server.Listeners, error) {
	l := server.Listeners{ShutdownTimeout: cfg.ShutdownTimeout}
	api, err := server.Listen(cfg.Listen)
	if err != nil {
		return l, err
	}
	if cfg.MetricsAddr != "" {
		ops, err := server.Listen(cfg.MetricsAddr)
		if err != nil {
			api.Close()
			return l, fmt.Errorf("--metrics-addr: %w", err)
		}
		l.Ops = ops
	} else {
		logger.Info("metrics and profiles off: --metrics-addr serves /metrics and /debug/pprof/ on a listener of their own")
	}
	l.API = api
	if addrs.API != nil {
		addrs.API <- api.Addr()
	}
	if l.Ops != nil && addrs.Ops != nil {
		addrs.Ops <- l.Ops.Addr()
	}
	return l, nil
}
