package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/lancecat/lancecat/server"
)

// TLSConfig serves HTTPS natively (no proxy needed to terminate TLS). The files are re-read every
// ReloadInterval and on SIGHUP, so rotating a certificate needs no restart.
type TLSConfig struct {
	CertFile, KeyFile string
	// ClientCAFile turns on client-certificate verification (mTLS) against the CAs in it.
	ClientCAFile string
	// ClientAuth: "require" (the default with a CA file: a connection without a valid client
	// certificate is refused) or "verify-if-given" (checked when sent: kubelet probes send none).
	ClientAuth     string
	ReloadInterval time.Duration
	// Metrics serves the operations listener (--metrics-addr) with the same certificate and
	// client-certificate policy. Off by default: Prometheus scrapes plain HTTP unless told otherwise.
	Metrics bool
}

// DefaultTLSReloadInterval is how often the certificate files are checked for a rotation.
const DefaultTLSReloadInterval = time.Minute

func (t *TLSConfig) bindFlags(b binder) {
	b.str(&t.CertFile, "tls-cert-file", "LANCECAT_TLS_CERT_FILE",
		"PEM certificate (chain) to serve HTTPS with, with --tls-key-file; re-read on change and on SIGHUP. Empty: plain HTTP")
	b.str(&t.KeyFile, "tls-key-file", "LANCECAT_TLS_KEY_FILE", "PEM private key of --tls-cert-file")
	b.str(&t.ClientCAFile, "tls-client-ca-file", "LANCECAT_TLS_CLIENT_CA_FILE",
		"PEM CA bundle client certificates are verified against (mTLS); empty: no client certificates asked")
	b.str(&t.ClientAuth, "tls-client-auth", "LANCECAT_TLS_CLIENT_AUTH",
		"with --tls-client-ca-file: require (refuse connections without a valid client certificate) or verify-if-given")
	b.duration(&t.ReloadInterval, "tls-reload-interval", "LANCECAT_TLS_RELOAD_INTERVAL",
		"how often the TLS files are checked for a rotated certificate; 0: only on SIGHUP")
	b.boolean(&t.Metrics, "metrics-tls", "LANCECAT_METRICS_TLS",
		"serve the operations listener (--metrics-addr) over HTTPS with the same certificate and client-certificate policy")
}

func (t TLSConfig) enabled() bool { return t.CertFile != "" }

func (t TLSConfig) clientAuth() (tls.ClientAuthType, error) {
	switch t.ClientAuth {
	case "", "require":
		return tls.RequireAndVerifyClientCert, nil
	case "verify-if-given":
		return tls.VerifyClientCertIfGiven, nil
	}
	return 0, fmt.Errorf("--tls-client-auth %q: want require or verify-if-given", t.ClientAuth)
}

func (t TLSConfig) validate(metricsAddr string) error {
	switch {
	case (t.CertFile == "") != (t.KeyFile == ""):
		return fmt.Errorf("--tls-cert-file and --tls-key-file go together: give both or neither")
	case t.ClientCAFile != "" && !t.enabled():
		return fmt.Errorf("--tls-client-ca-file needs --tls-cert-file and --tls-key-file")
	case t.ClientAuth != "" && t.ClientCAFile == "":
		return fmt.Errorf("--tls-client-auth needs --tls-client-ca-file")
	case t.Metrics && !t.enabled():
		return fmt.Errorf("--metrics-tls needs --tls-cert-file and --tls-key-file")
	case t.Metrics && metricsAddr == "":
		return fmt.Errorf("--metrics-tls needs --metrics-addr")
	case t.ReloadInterval < 0:
		return fmt.Errorf("--tls-reload-interval must not be negative")
	}
	_, err := t.clientAuth()
	return err
}

// setup loads the certificate (a bad file fails the start) and keeps it fresh until ctx ends:
// polled every ReloadInterval and reloaded on SIGHUP. It sets l.TLS (and l.OpsTLS with --metrics-tls)
// and serves the certificate's expiry and the reload outcomes among srv's metrics.
func (t TLSConfig) setup(ctx context.Context, l *server.Listeners, srv *server.Server, logger *slog.Logger) error {
	if !t.enabled() {
		return nil
	}
	auth, err := t.clientAuth()
	if err != nil {
		return err
	}
	r, err := server.NewCertReloader(server.TLSFiles{CertFile: t.CertFile, KeyFile: t.KeyFile,
		ClientCAFile: t.ClientCAFile, ClientAuth: auth}, logger)
	if err != nil {
		return err
	}
	if err := srv.RegisterCollectors(r); err != nil {
		return err
	}
	l.TLS = r.Config()
	if t.Metrics {
		l.OpsTLS = l.TLS
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		r.Watch(ctx, t.ReloadInterval, hup)
	}()
	logger.Info("tls on", slog.String("cert_file", t.CertFile), slog.Time("not_after", r.NotAfter()),
		slog.Bool("client_certificates", t.ClientCAFile != ""), slog.Bool("operations_listener", t.Metrics),
		slog.Duration("reload_interval", t.ReloadInterval))
	return nil
}
