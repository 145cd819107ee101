package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TLSFiles name the PEM files a TLS listener serves with. The files are read again on Reload (and
// every poll interval of Watch), so a certificate rotated on disk — by cert-manager, a Kubernetes
// secret update, certbot — is served to new connections without a restart.
type TLSFiles struct {
	CertFile, KeyFile string
	// ClientCAFile, when set, turns on client-certificate verification against the CAs in it.
	ClientCAFile string
	// ClientAuth is how client certificates are checked when ClientCAFile is set: tls.RequireAndVerifyClientCert
	// (the zero value is taken to mean it) or tls.VerifyClientCertIfGiven.
	ClientAuth tls.ClientAuthType
}

// CertReloader holds the certificate (and client CA pool) a TLS listener serves, and replaces
// them when the files change. A reload that fails — a half-written key, a key that does not match
// the certificate — keeps the previous material and is reported, so a botched rotation never takes
// the listener down.
type CertReloader struct {
	files  TLSFiles
	logger *slog.Logger

	mu    sync.Mutex // serialises Reload
	state atomic.Pointer[tlsState]

	reloads *prometheus.CounterVec // Reload outcomes (Collector)
}

type tlsState struct {
	cert     *tls.Certificate
	leaf     *x509.Certificate
	pool     *x509.CertPool
	snapshot []byte // the files' contents this state was built from
}

// NewCertReloader loads files once; an error here (a missing or bad file) fails the start.
func NewCertReloader(files TLSFiles, logger *slog.Logger) (*CertReloader, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if files.ClientAuth == tls.NoClientCert {
		files.ClientAuth = tls.RequireAndVerifyClientCert
	}
	r := &CertReloader{files: files, logger: logger, reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lancecat_tls_reloads_total",
		Help: "Reads of the TLS files by outcome: changed (a new certificate is served), unchanged, failed (the previous one stays).",
	}, []string{"result"})}
	for _, res := range []string{"changed", "unchanged", "failed"} {
		r.reloads.WithLabelValues(res) // every outcome reads 0 before it happens, so rate() and alerts see it
	}
	if _, err := r.Reload(); err != nil {
		return nil, err
	}
	return r, nil
}

// Reload reads the files again. changed says whether what is served changed; on error the
// previous certificate stays.
func (r *CertReloader) Reload() (changed bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	changed, err = r.reload()
	switch {
	case err != nil:
		r.reloads.WithLabelValues("failed").Inc()
	case changed:
		r.reloads.WithLabelValues("changed").Inc()
	default:
		r.reloads.WithLabelValues("unchanged").Inc()
	}
	return changed, err
}

func (r *CertReloader) reload() (changed bool, err error) {
	certPEM, err := os.ReadFile(r.files.CertFile)
	if err != nil {
		return false, fmt.Errorf("tls certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(r.files.KeyFile)
	if err != nil {
		return false, fmt.Errorf("tls key: %w", err)
	}
	var caPEM []byte
	if r.files.ClientCAFile != "" {
		if caPEM, err = os.ReadFile(r.files.ClientCAFile); err != nil {
			return false, fmt.Errorf("tls client CA: %w", err)
		}
	}
	snap := bytes.Join([][]byte{certPEM, keyPEM, caPEM}, []byte{0})
	if old := r.state.Load(); old != nil && bytes.Equal(old.snapshot, snap) {
		return false, nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false, fmt.Errorf("tls certificate %s and key %s: %w", r.files.CertFile, r.files.KeyFile, err)
	}
	leaf := cert.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return false, fmt.Errorf("tls certificate %s: %w", r.files.CertFile, err)
		}
	}
	st := &tlsState{cert: &cert, leaf: leaf, snapshot: snap}
	if caPEM != nil {
		st.pool = x509.NewCertPool()
		if !st.pool.AppendCertsFromPEM(caPEM) {
			return false, fmt.Errorf("tls client CA %s: no PEM certificate in it", r.files.ClientCAFile)
		}
	}
	r.state.Store(st)
	return true, nil
}

// NotAfter is when the certificate served now expires.
func (r *CertReloader) NotAfter() time.Time { return r.state.Load().leaf.NotAfter }

// notAfterDesc is the served certificate's expiry: alert on it (`… - time() < 14 * 86400`), since
// a rotation that keeps failing leaves the old certificate served until it expires.
var notAfterDesc = prometheus.NewDesc("lancecat_tls_certificate_not_after_timestamp_seconds",
	"When the certificate the API port serves now expires (Unix seconds).", nil, nil)

// Describe and Collect make the reloader a prometheus.Collector: the served certificate's expiry
// and the reload outcomes, read at scrape time.
func (r *CertReloader) Describe(ch chan<- *prometheus.Desc) {
	ch <- notAfterDesc
	r.reloads.Describe(ch)
}

// Collect: see Describe.
func (r *CertReloader) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(notAfterDesc, prometheus.GaugeValue, float64(r.NotAfter().Unix()))
	r.reloads.Collect(ch)
}

// Config is the tls.Config a listener serves with: TLS 1.2 at least, the current certificate and
// client CAs looked up per handshake (so a reload reaches the next connection).
func (r *CertReloader) Config() *tls.Config {
	base := &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"},
	}
	base.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return r.state.Load().cert, nil }
	base.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		st := r.state.Load()
		c := base.Clone()
		c.GetConfigForClient = nil
		c.Certificates = []tls.Certificate{*st.cert}
		if st.pool != nil {
			c.ClientCAs = st.pool
			c.ClientAuth = r.files.ClientAuth
		}
		return c, nil
	}
	return base
}

// Watch reloads every interval (a poll: it sees a Kubernetes secret's symlink swap, which file
// notifications miss) and whenever hup receives, until ctx ends. interval ≤ 0: only on hup.
func (r *CertReloader) Watch(ctx context.Context, interval time.Duration, hup <-chan os.Signal) {
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		var why string
		select {
		case <-ctx.Done():
			return
		case <-tick:
			why = "poll"
		case <-hup:
			why = "SIGHUP"
		}
		changed, err := r.Reload()
		switch {
		case err != nil:
			r.logger.Warn("tls reload failed; still serving the previous certificate", slog.String("trigger", why),
				slog.String("error", err.Error()))
		case changed:
			r.logger.Info("tls certificate reloaded", slog.String("trigger", why),
				slog.String("subject", r.state.Load().leaf.Subject.String()), slog.Time("not_after", r.NotAfter()))
		case why == "SIGHUP":
			r.logger.Info("tls reload: files unchanged", slog.String("trigger", why))
		}
	}
}
