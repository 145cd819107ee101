package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/app"
	"github.com/lancecat/lancecat/internal/testenv"
)

// tlsPKI is a test CA's files: the CA, a server certificate and a client certificate of it.
type tlsPKI struct{ caFile, certFile, keyFile, clientCertFile, clientKeyFile string }

func newTLSPKI(t *testing.T) tlsPKI {
	t.Helper()
	dir := t.TempDir()
	caCert, caKey := tlsTestCA(t)
	srvCert, srvKey := tlsTestLeaf(t, caCert, caKey, x509.ExtKeyUsageServerAuth)
	cliCert, cliKey := tlsTestLeaf(t, caCert, caKey, x509.ExtKeyUsageClientAuth)
	return tlsPKI{
		caFile:         writePEM(t, dir, "ca.crt", "CERTIFICATE", caCert.Raw),
		certFile:       writePEM(t, dir, "tls.crt", "CERTIFICATE", srvCert),
		keyFile:        writePEM(t, dir, "tls.key", "PRIVATE KEY", srvKey),
		clientCertFile: writePEM(t, dir, "client.crt", "CERTIFICATE", cliCert),
		clientKeyFile:  writePEM(t, dir, "client.key", "PRIVATE KEY", cliKey),
	}
}

// serve serves a fresh local root over HTTPS with the server certificate, asking for a client
// certificate of the CA when mtls, and answers its https URL, the CA file and (when mtls) the
// client certificate and key files.
func (p tlsPKI) serve(t *testing.T, mtls bool) (url, caFile string, clientCert []string) {
	t.Helper()
	cfg := app.DefaultConfig()
	cfg.LogLevel = "warn"
	cfg.Root = t.TempDir()
	cfg.TLS = app.TLSConfig{CertFile: p.certFile, KeyFile: p.keyFile}
	if mtls {
		cfg.TLS.ClientCAFile = p.caFile
		clientCert = []string{p.clientCertFile, p.clientKeyFile}
	}
	return strings.Replace(serve(t, cfg), "http://", "https://", 1), p.caFile, clientCert
}

// tlsCellName is the subtest of one client over TLS (with a client certificate when mtls).
func tlsCellName(client string, mtls bool) string {
	if mtls {
		return client + "/tls+client-cert"
	}
	return client + "/tls"
}

// TestSDKOverTLS: the official Node SDK in remote mode reaches `lancecat serve --tls-cert-file`
// with the test's CA in clientConfig.tlsConfig.sslCaCert, and with a client certificate when
// --tls-client-ca-file asks for one (scripts/e2e/sdk-tls.mjs); without the CA, or without the
// client certificate, it is refused.
func TestSDKOverTLS(t *testing.T) {
	dirs := testenv.SDKs(t)
	pki := newTLSPKI(t)
	for _, dir := range dirs {
		for _, mtls := range []bool{false, true} {
			t.Run(tlsCellName(testenv.SDKVersion(dir), mtls), func(t *testing.T) {
				url, caFile, args := pki.serve(t, mtls)
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, "node", append([]string{script(t, "sdk-tls.mjs"), url, caFile}, args...)...)
				cmd.Env = append(os.Environ(), "LANCEDB_DIR="+dir, "RUST_LOG=error")
				cmd.WaitDelay = 10 * time.Second
				out, err := cmd.CombinedOutput()
				t.Logf("%s", out)
				assert.NilError(t, err, "SDK over TLS failed")
			})
		}
	}
}

// TestPythonSDKOverTLS: the official Python SDK in remote mode, the same way
// (scripts/e2e/python/sdk_tls.py: ClientConfig(tls_config=TlsConfig(ssl_ca_cert, cert_file, key_file))).
func TestPythonSDKOverTLS(t *testing.T) {
	venvs := pythonVenvs(t)
	pki := newTLSPKI(t)
	for _, venv := range venvs {
		for _, mtls := range []bool{false, true} {
			t.Run(tlsCellName(filepath.Base(venv), mtls), func(t *testing.T) {
				url, caFile, cert := pki.serve(t, mtls)
				args := append([]string{testenv.Script("e2e", "python", "sdk_tls.py"), url, caFile}, cert...)
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, filepath.Join(venv, "bin", "python"), args...)
				cmd.Env = append(os.Environ(), "RUST_LOG=error")
				cmd.WaitDelay = 10 * time.Second
				out, err := cmd.CombinedOutput()
				t.Logf("%s", out)
				assert.NilError(t, err, "Python SDK over TLS failed")
			})
		}
	}
}

func tlsTestCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	assert.NilError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	assert.NilError(t, err)
	cert, err := x509.ParseCertificate(der)
	assert.NilError(t, err)
	return cert, key
}

// tlsTestLeaf issues a certificate for 127.0.0.1 and localhost; it returns its DER and PKCS#8 key.
func tlsTestLeaf(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, usage x509.ExtKeyUsage) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	assert.NilError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "e2e"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}
	cert, err = x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
	assert.NilError(t, err)
	key, err = x509.MarshalPKCS8PrivateKey(k)
	assert.NilError(t, err)
	return cert, key
}

func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	assert.NilError(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
	return p
}
