package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"
)

// ListenAndServe serves the API on addr until ctx ends, then drains in-flight requests for up to
// shutdownTimeout. ready, if not nil, receives the bound address once listening.
func (s *Server) ListenAndServe(ctx context.Context, addr string, shutdownTimeout time.Duration, ready chan<- net.Addr) error {
	ln, err := Listen(addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready <- ln.Addr()
	}
	return s.serve(ctx, ln, s.handler, nil, "api", shutdownTimeout)
}

// Listen binds addr (TCP), so that a taken port fails before anything serves.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return ln, nil
}

// Listeners are where a Server serves: the API, and the operations handler (OpsHandler) when Ops
// is not nil.
type Listeners struct {
	API, Ops net.Listener
	// TLS and OpsTLS, when set, serve HTTPS on API and Ops (CertReloader.Config); nil: plain HTTP.
	TLS, OpsTLS *tls.Config
	// ShutdownTimeout is how long in-flight requests may finish once the context ends.
	ShutdownTimeout time.Duration
}

// Serve serves the API on l.API and, when l.Ops is set, the operations handler on it, until ctx
// ends or either fails (which stops the other); then each drains for up to l.ShutdownTimeout.
func (s *Server) Serve(ctx context.Context, l Listeners) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.serve(gctx, l.API, s.handler, l.TLS, "api", l.ShutdownTimeout) })
	if l.Ops != nil {
		g.Go(func() error {
			if err := s.serve(gctx, l.Ops, s.opsH, l.OpsTLS, "operations", l.ShutdownTimeout); err != nil {
				return fmt.Errorf("operations listener: %w", err)
			}
			return nil
		})
	}
	return g.Wait()
}

// serve serves h on ln until ctx ends, then drains in-flight requests for up to shutdownTimeout.
// listener names it in the log ("api", "operations"). tlsConf, when set, makes it HTTPS.
func (s *Server) serve(ctx context.Context, ln net.Listener, h http.Handler, tlsConf *tls.Config, listener string, shutdownTimeout time.Duration) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		// No ReadTimeout: it would cut long Arrow uploads; each body gets its own deadline (body.go).
		IdleTimeout: s.idle,
		ErrorLog:    slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	if tlsConf != nil {
		// Each server gets its own copy: ServeTLS configures HTTP/2 by writing into it, and the API
		// and operations listeners may be handed the same config.
		srv.TLSConfig = tlsConf.Clone()
	}
	log := s.logger.With(slog.String("listener", listener))
	log.Info("serving", slog.String("address", ln.Addr().String()), slog.Bool("tls", tlsConf != nil))
	errc := make(chan error, 1)
	go func() {
		if tlsConf != nil {
			// The certificate comes from tlsConf (GetCertificate), so no files here.
			errc <- srv.ServeTLS(ln, "", "")
			return
		}
		errc <- srv.Serve(ln)
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", slog.Duration("timeout", shutdownTimeout))
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	log.Info("stopped")
	return nil
}
