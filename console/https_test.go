package console_test

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/lancecat/lancecat/console"
)

// TestSecureCookieBehindProxy: the session cookie is Secure on a TLS connection, always with
// SecureCookies, and on a plain one only when a trusted proxy (the direct peer in
// TrustedProxies) says X-Forwarded-Proto: https (its own value: the last one); the header from any
// other peer, or with no proxies configured, changes nothing.
func TestSecureCookieBehindProxy(t *testing.T) {
	// The doors, faked: /v1/me answers for any credential (the sign-in's only call).
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	})
	_, proxyNet, err := net.ParseCIDR("10.0.0.0/8")
	assert.NilError(t, err)
	cases := []struct {
		name   string
		opts   console.Options
		peer   string
		proto  []string
		tls    bool
		secure bool
	}{
		{name: "plain", peer: "192.0.2.1:5000"},
		{name: "tls", peer: "192.0.2.1:5000", tls: true, secure: true},
		{name: "setting", opts: console.Options{SecureCookies: true}, peer: "192.0.2.1:5000", secure: true},
		{name: "header, no proxies", peer: "10.1.2.3:5000", proto: []string{"https"}},
		{name: "header from an untrusted peer", opts: console.Options{TrustedProxies: []*net.IPNet{proxyNet}}, peer: "192.0.2.1:5000", proto: []string{"https"}},
		{name: "header from a trusted proxy", opts: console.Options{TrustedProxies: []*net.IPNet{proxyNet}}, peer: "10.1.2.3:5000", proto: []string{"https"}, secure: true},
		{name: "the proxy appended http", opts: console.Options{TrustedProxies: []*net.IPNet{proxyNet}}, peer: "10.1.2.3:5000", proto: []string{"https, http"}},
		{name: "the proxy appended https", opts: console.Options{TrustedProxies: []*net.IPNet{proxyNet}}, peer: "10.1.2.3:5000", proto: []string{"http", "https"}, secure: true},
		{name: "a trusted proxy says http", opts: console.Options{TrustedProxies: []*net.IPNet{proxyNet}}, peer: "10.1.2.3:5000", proto: []string{"http"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.API = api
			c := console.New(tc.opts)
			req := httptest.NewRequest(http.MethodPost, "/console/login", strings.NewReader(url.Values{"credential": {""}, "next": {"/console/"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.RemoteAddr = tc.peer
			for _, p := range tc.proto {
				req.Header.Add("X-Forwarded-Proto", p)
			}
			if tc.tls {
				req.TLS = &tls.ConnectionState{}
			}
			rec := httptest.NewRecorder()
			c.ServeHTTP(rec, req)
			assert.Equal(t, rec.Code, http.StatusSeeOther, rec.Body.String())
			cookies := rec.Result().Cookies()
			assert.Equal(t, len(cookies), 1)
			assert.Equal(t, cookies[0].Secure, tc.secure)
		})
	}
}
