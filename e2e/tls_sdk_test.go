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

// TestSDKOverTLS: the official Node SDK in remote mode reaches `lancecat serve --tls-cert-file`
// with the test's CA in clientConfig.tlsConfig.sslCaCert, and with a client certificate when
// --tls-client-ca-file asks for one (scripts/e2e/sdk-tls.mjs); without the CA, or without the
// client certificate, it is refused.
func TestSDKOverTLS(t *testing.T) {
	dirs := testenv.SDKs(t)
	pki := t.TempDir()
	caCert, caKey := tlsTestCA(t)
	caFile := writePEM(t, pki, "ca.crt", "CERTIFICATE", caCert.Raw)
	srvCert, srvKey := tlsTestLeaf(t, caCert, caKey, x509.ExtKeyUsageServerAuth)
	certFile := writePEM(t, pki, "tls.crt", "CERTIFICATE", srvCert)
	keyFile := writePEM(t, pki, "tls.key", "PRIVATE KEY", srvKey)
	cliCert, cliKey := tlsTestLeaf(t, caCert, caKey, x509.ExtKeyUsageClientAuth)
	cliCertFile := writePEM(t, pki, "client.crt", "CERTIFICATE", cliCert)
	cliKeyFile := writePEM(t, pki, "client.key", "PRIVATE KEY", cliKey)
	for _, dir := range dirs {
		for _, mtls := range []bool{false, true} {
			name := testenv.SDKVersion(dir) + "/tls"
			if mtls {
				name += "+client-cert"
			}
			t.Run(name, func(t *testing.T) {
				cfg := app.DefaultConfig()
				cfg.LogLevel = "warn"
				cfg.Root = t.TempDir()
				cfg.TLS = app.TLSConfig{CertFile: certFile, KeyFile: keyFile}
				args := []string{}
				if mtls {
					cfg.TLS.ClientCAFile = caFile
					args = append(args, cliCertFile, cliKeyFile)
				}
				url := strings.Replace(serve(t, cfg), "http://", "https://", 1)
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
	pki := t.TempDir()
	caCert, caKey := tlsTestCA(t)
	caFile := writePEM(t, pki, "ca.crt", "CERTIFICATE", caCert.Raw)
	srvCert, srvKey := tlsTestLeaf(t, caCert, caKey, x509.ExtKeyUsageServerAuth)
	certFile := writePEM(t, pki, "tls.crt", "CERTIFICATE", srvCert)
	keyFile := writePEM(t, pki, "tls.key", "PRIVATE KEY", srvKey)
	cliCert, cliKey := tlsTestLeaf(t, caCert, caKey, x509.ExtKeyUsageClientAuth)
	cliCertFile := writePEM(t, pki, "client.crt", "CERTIFICATE", cliCert)
	cliKeyFile := writePEM(t, pki, "client.key", "PRIVATE KEY", cliKey)
	for _, venv := range venvs {
		for _, mtls := range []bool{false, true} {
			name := filepath.Base(venv) + "/tls"
			if mtls {
				name += "+client-cert"
			}
			t.Run(name, func(t *testing.T) {
				cfg := app.DefaultConfig()
				cfg.LogLevel = "warn"
				cfg.Root = t.TempDir()
				cfg.TLS = app.TLSConfig{CertFile: certFile, KeyFile: keyFile}
				args := []string{testenv.Script("e2e", "python", "sdk_tls.py")}
				if mtls {
					cfg.TLS.ClientCAFile = caFile
				}
				url := strings.Replace(serve(t, cfg), "http://", "https://", 1)
				args = append(args, url, caFile)
				if mtls {
					args = append(args, cliCertFile, cliKeyFile)
				}
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
