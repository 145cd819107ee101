package app

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// TestTLSMetrics (issue 32): the operations listener says when the served certificate expires and
// how the reloads went, so a rotation that keeps failing is alerted on before the old certificate
// runs out (`lancecat_tls_certificate_not_after_timestamp_seconds - time() < 14*86400`,
// `increase(lancecat_tls_reloads_total{result="failed"}[1h]) > 0`).
func TestTLSMetrics(t *testing.T) {
	ca := newTestCA(t, "test CA")
	_, certFile, keyFile := tlsFiles(t, ca, 200)
	cfg := tlsConfig(t, certFile, keyFile)
	cfg.MetricsAddr = "127.0.0.1:0"
	cfg.TLS.ReloadInterval = 20 * time.Millisecond
	api, ops := runTLS(t, cfg)
	url := "https://" + api + "/healthz"

	notAfter := func(file string) int64 {
		raw, err := os.ReadFile(file)
		assert.NilError(t, err)
		b, _ := pem.Decode(raw)
		c, err := x509.ParseCertificate(b.Bytes)
		assert.NilError(t, err)
		return c.NotAfter.Unix()
	}
	scrape := func() string {
		resp, err := http.Get("http://" + ops + "/metrics")
		assert.NilError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		assert.NilError(t, err)
		return string(body)
	}
	value := func(body, series string) float64 {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
		assert.Assert(t, m != nil, "no %s in:\n%s", series, body)
		v, err := strconv.ParseFloat(m[1], 64)
		assert.NilError(t, err)
		return v
	}

	body := scrape()
	assert.Equal(t, int64(value(body, "lancecat_tls_certificate_not_after_timestamp_seconds")), notAfter(certFile))
	assert.Equal(t, value(body, `lancecat_tls_reloads_total{result="changed"}`), 1.0, "the first load")
	assert.Equal(t, value(body, `lancecat_tls_reloads_total{result="failed"}`), 0.0, "zero before any failure, so alerts see the series")

	// A rotation to a certificate expiring later moves the gauge.
	c, k := ca.issueUntil(t, 201, time.Now().Add(48*time.Hour))
	writeAtomically(t, keyFile, k)
	writeAtomically(t, certFile, c)
	waitServed(t, func() *http.Client { return httpsClient(ca.pem, nil, 0) }, url, 201)
	body = scrape()
	assert.Equal(t, int64(value(body, "lancecat_tls_certificate_not_after_timestamp_seconds")), notAfter(certFile))

	// A broken rotation is counted and the served expiry stays the previous certificate's.
	want := notAfter(certFile)
	_, otherKey := ca.issue(t, 202, "lancecat", x509.ExtKeyUsageServerAuth)
	writeAtomically(t, keyFile, otherKey)
	deadline := time.Now().Add(10 * time.Second)
	for value(scrape(), `lancecat_tls_reloads_total{result="failed"}`) == 0 {
		assert.Assert(t, time.Now().Before(deadline), "no failed reload counted")
		time.Sleep(20 * time.Millisecond)
	}
	assert.Equal(t, int64(value(scrape(), "lancecat_tls_certificate_not_after_timestamp_seconds")), want)
}

// issueUntil is issue for a server certificate expiring at notAfter.
func (ca *testCA) issueUntil(t *testing.T, serial int64, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	return ca.issueWith(t, serial, fmt.Sprintf("lancecat-%d", serial), x509.ExtKeyUsageServerAuth, notAfter)
}
