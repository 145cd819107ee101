package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// testCA is a certificate authority made in the test: it signs server and client certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	assert.NilError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	assert.NilError(t, err)
	cert, err := x509.ParseCertificate(der)
	assert.NilError(t, err)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a leaf for 127.0.0.1 (server) or a client; it returns the certificate and key PEM.
func (ca *testCA) issue(t *testing.T, serial int64, cn string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	return ca.issueWith(t, serial, cn, usage, time.Now().Add(time.Hour))
}

// issueWith is issue with the certificate's expiry.
func (ca *testCA) issueWith(t *testing.T, serial int64, cn string, usage x509.ExtKeyUsage, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	assert.NilError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	assert.NilError(t, err)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	assert.NilError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

// writeAtomically replaces path as a rotation tool does: write beside, rename over.
func writeAtomically(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".new"
	assert.NilError(t, os.WriteFile(tmp, data, 0o600))
	assert.NilError(t, os.Rename(tmp, path))
}

// tlsConfig serves a fresh local root on a free port over HTTPS with certFile and keyFile.
func tlsConfig(t *testing.T, certFile, keyFile string) Config {
	cfg := DefaultConfig()
	cfg.Root = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.TLS = TLSConfig{CertFile: certFile, KeyFile: keyFile}
	return cfg
}

// runTLS serves cfg (TLS or not) and returns the API and operations addresses (ops empty when off).
func runTLS(t *testing.T, cfg Config) (api, ops string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	apiAddr, opsAddr := make(chan net.Addr, 1), make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- RunAddrs(ctx, cfg, nil, Addrs{API: apiAddr, Ops: opsAddr}) }()
	t.Cleanup(func() {
		cancel()
		assert.NilError(t, <-done)
	})
	for api == "" || (cfg.MetricsAddr != "" && ops == "") {
		select {
		case a := <-apiAddr:
			api = a.String()
		case a := <-opsAddr:
			ops = a.String()
		case err := <-done:
			t.Fatalf("serve: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("not listening after 30s")
		}
	}
	return api, ops
}

// httpsClient trusts roots (nil: the system's) and presents cert when given.
func httpsClient(roots []byte, cert *tls.Certificate, maxVersion uint16) *http.Client {
	conf := &tls.Config{MaxVersion: maxVersion}
	if maxVersion != 0 {
		conf.MinVersion = tls.VersionTLS10
	}
	if roots != nil {
		conf.RootCAs = x509.NewCertPool()
		conf.RootCAs.AppendCertsFromPEM(roots)
	}
	if cert != nil {
		// Sent whatever CAs the server names (Go's client would otherwise withhold a stranger's).
		conf.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	// A fresh transport per client: no connection is reused across a rotation.
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: conf}}
}

// servedSerial fetches /healthz and returns the status and the serial of the certificate served.
func servedSerial(t *testing.T, c *http.Client, url string) (int, int64) {
	t.Helper()
	resp, err := c.Get(url)
	assert.NilError(t, err)
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	assert.Assert(t, resp.TLS != nil)
	assert.Check(t, resp.TLS.Version >= tls.VersionTLS12)
	return resp.StatusCode, resp.TLS.PeerCertificates[0].SerialNumber.Int64()
}

func tlsFiles(t *testing.T, ca *testCA, serial int64) (dir, certFile, keyFile string) {
	dir = t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	c, k := ca.issue(t, serial, "lancecat", x509.ExtKeyUsageServerAuth)
	assert.NilError(t, os.WriteFile(certFile, c, 0o600))
	assert.NilError(t, os.WriteFile(keyFile, k, 0o600))
	return dir, certFile, keyFile
}

// TestTLSServesHTTPSAndReloadsRotatedCertificates: with --tls-cert-file/--tls-key-file the API is
// HTTPS only (TLS 1.2 at least); a client that does not trust the CA is refused; a certificate
// rotated on disk is served to the next connection without a restart, and a broken rotation (a key
// that does not match) keeps the previous certificate.
func TestTLSServesHTTPSAndReloadsRotatedCertificates(t *testing.T) {
	ca := newTestCA(t, "test CA")
	_, certFile, keyFile := tlsFiles(t, ca, 100)
	cfg := tlsConfig(t, certFile, keyFile)
	cfg.TLS.ReloadInterval = 20 * time.Millisecond
	api, _ := runTLS(t, cfg)
	url := "https://" + api + "/healthz"

	trusting := func() *http.Client { return httpsClient(ca.pem, nil, 0) }
	status, serial := servedSerial(t, trusting(), url)
	assert.Equal(t, status, http.StatusOK)
	assert.Equal(t, serial, int64(100))

	h2 := httpsClient(ca.pem, nil, 0)
	h2.Transport.(*http.Transport).ForceAttemptHTTP2 = true
	resp, err := h2.Get(url)
	assert.NilError(t, err)
	resp.Body.Close()
	assert.Equal(t, resp.Proto, "HTTP/2.0", "HTTP/2 is offered over TLS")

	_, err = httpsClient(nil, nil, 0).Get(url)
	assert.ErrorContains(t, err, "certificate signed by unknown authority")
	_, err = httpsClient(ca.pem, nil, tls.VersionTLS11).Get(url)
	assert.ErrorContains(t, err, "protocol version")
	resp, err = http.Get("http://" + api + "/healthz")
	assert.NilError(t, err)
	resp.Body.Close()
	assert.Equal(t, resp.StatusCode, http.StatusBadRequest, "plain HTTP to the HTTPS port")

	// Rotate: key first, then certificate (as two renames land); the pair matches again at the end.
	c, k := ca.issue(t, 101, "lancecat", x509.ExtKeyUsageServerAuth)
	writeAtomically(t, keyFile, k)
	writeAtomically(t, certFile, c)
	waitServed(t, trusting, url, 101)

	// A broken rotation: a key of another certificate. The previous one stays served.
	_, otherKey := ca.issue(t, 102, "lancecat", x509.ExtKeyUsageServerAuth)
	writeAtomically(t, keyFile, otherKey)
	time.Sleep(200 * time.Millisecond)
	status, serial = servedSerial(t, trusting(), url)
	assert.Equal(t, status, http.StatusOK)
	assert.Equal(t, serial, int64(101))
}

// waitServed polls until the certificate served has serial want (a reload is asynchronous).
func waitServed(t *testing.T, client func() *http.Client, url string, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, serial := servedSerial(t, client(), url)
		if serial == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still serving serial %d, want %d", serial, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTLSReloadsOnSIGHUP: with polling off (--tls-reload-interval 0) a rotation is picked up on
// SIGHUP, and SIGHUP does not stop the server.
func TestTLSReloadsOnSIGHUP(t *testing.T) {
	ca := newTestCA(t, "test CA")
	_, certFile, keyFile := tlsFiles(t, ca, 200)
	cfg := tlsConfig(t, certFile, keyFile)
	api, _ := runTLS(t, cfg)
	url := "https://" + api + "/healthz"
	trusting := func() *http.Client { return httpsClient(ca.pem, nil, 0) }

	c, k := ca.issue(t, 201, "lancecat", x509.ExtKeyUsageServerAuth)
	writeAtomically(t, keyFile, k)
	writeAtomically(t, certFile, c)
	time.Sleep(100 * time.Millisecond)
	_, serial := servedSerial(t, trusting(), url)
	assert.Equal(t, serial, int64(200), "no poll: the old certificate until SIGHUP")

	assert.NilError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	waitServed(t, trusting, url, 201)
}

// TestTLSClientCertificates: with --tls-client-ca-file a connection without a client certificate
// from that CA is refused, one with it is served; --metrics-tls puts the operations listener under
// the same policy. verify-if-given lets a client without a certificate in (kubelet probes).
func TestTLSClientCertificates(t *testing.T) {
	serverCA, clientCA, strangerCA := newTestCA(t, "server CA"), newTestCA(t, "client CA"), newTestCA(t, "stranger CA")
	dir, certFile, keyFile := tlsFiles(t, serverCA, 300)
	caFile := filepath.Join(dir, "client-ca.crt")
	assert.NilError(t, os.WriteFile(caFile, clientCA.pem, 0o600))
	pair := func(ca *testCA) *tls.Certificate {
		c, k := ca.issue(t, 7, "a client", x509.ExtKeyUsageClientAuth)
		cert, err := tls.X509KeyPair(c, k)
		assert.NilError(t, err)
		return &cert
	}
	good, stranger := pair(clientCA), pair(strangerCA)

	cfg := tlsConfig(t, certFile, keyFile)
	cfg.MetricsAddr = "127.0.0.1:0"
	cfg.TLS.ClientCAFile, cfg.TLS.Metrics = caFile, true
	api, ops := runTLS(t, cfg)
	for _, url := range []string{"https://" + api + "/healthz", "https://" + ops + "/metrics"} {
		status, _ := servedSerial(t, httpsClient(serverCA.pem, good, 0), url)
		assert.Equal(t, status, http.StatusOK, url)
		for name, cert := range map[string]*tls.Certificate{"none": nil, "stranger": stranger} {
			_, err := httpsClient(serverCA.pem, cert, 0).Get(url)
			assert.Assert(t, err != nil, "%s: client certificate %s was let in", url, name)
			assert.Check(t, is.Regexp(`certificate|tls|EOF|reset`, err.Error()), name)
		}
	}

	cfg.Root = t.TempDir()
	cfg.MetricsAddr, cfg.TLS.Metrics = "", false
	cfg.TLS.ClientAuth = "verify-if-given"
	api, _ = runTLS(t, cfg)
	status, _ := servedSerial(t, httpsClient(serverCA.pem, nil, 0), "https://"+api+"/healthz")
	assert.Equal(t, status, http.StatusOK)
	_, err := httpsClient(serverCA.pem, stranger, 0).Get("https://" + api + "/healthz")
	assert.Assert(t, err != nil, "verify-if-given: a certificate from another CA must still be refused")
}

// TestTLSConfigValidation: settings that cannot be right fail before anything is opened, naming the flag.
func TestTLSConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		tls  TLSConfig
		ops  string
		want string
	}{
		{"cert without key", TLSConfig{CertFile: "c"}, "", "--tls-cert-file and --tls-key-file go together"},
		{"key without cert", TLSConfig{KeyFile: "k"}, "", "--tls-cert-file and --tls-key-file go together"},
		{"client CA without TLS", TLSConfig{ClientCAFile: "ca"}, "", "--tls-client-ca-file needs"},
		{"client auth without CA", TLSConfig{CertFile: "c", KeyFile: "k", ClientAuth: "require"}, "", "--tls-client-auth needs"},
		{"bad client auth", TLSConfig{CertFile: "c", KeyFile: "k", ClientCAFile: "ca", ClientAuth: "maybe"}, "", `--tls-client-auth "maybe"`},
		{"metrics tls without tls", TLSConfig{Metrics: true}, "127.0.0.1:9090", "--metrics-tls needs --tls-cert-file"},
		{"metrics tls without metrics", TLSConfig{CertFile: "c", KeyFile: "k", Metrics: true}, "", "--metrics-tls needs --metrics-addr"},
		{"negative interval", TLSConfig{CertFile: "c", KeyFile: "k", ReloadInterval: -time.Second}, "", "--tls-reload-interval must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.TLS, cfg.MetricsAddr = tc.tls, tc.ops
			assert.ErrorContains(t, cfg.Validate(), tc.want)
		})
	}
	// A missing file fails the start, not the first handshake.
	cfg := DefaultConfig()
	cfg.Root, cfg.Listen = t.TempDir(), "127.0.0.1:0"
	cfg.TLS = TLSConfig{CertFile: "/nonexistent/tls.crt", KeyFile: "/nonexistent/tls.key"}
	err := Run(context.Background(), cfg, nil, nil)
	assert.Check(t, err != nil && strings.Contains(err.Error(), "tls certificate"), "%v", err)
}

// TestTLSFlagsAndEnv: the flags and LANCECAT_TLS_* variables fill TLSConfig, flags beating env.
func TestTLSFlagsAndEnv(t *testing.T) {
	env := map[string]string{"LANCECAT_TLS_CERT_FILE": "/env/c", "LANCECAT_TLS_KEY_FILE": "/env/k",
		"LANCECAT_TLS_CLIENT_CA_FILE": "/env/ca", "LANCECAT_TLS_CLIENT_AUTH": "verify-if-given",
		"LANCECAT_TLS_RELOAD_INTERVAL": "5s", "LANCECAT_METRICS_TLS": "true"}
	cfg := DefaultConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	errs := cfg.BindFlags(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	assert.NilError(t, fs.Parse([]string{"--tls-cert-file", "/flag/c"}))
	assert.NilError(t, errs.Err())
	assert.DeepEqual(t, cfg.TLS, TLSConfig{CertFile: "/flag/c", KeyFile: "/env/k", ClientCAFile: "/env/ca",
		ClientAuth: "verify-if-given", ReloadInterval: 5 * time.Second, Metrics: true})
	assert.Equal(t, DefaultConfig().TLS.ReloadInterval, time.Minute)
}
